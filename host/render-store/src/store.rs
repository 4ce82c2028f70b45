//! The async API of the render store: the operations of CONTRACT.md §5, each one
//! call into a fresh sandboxed instance of the component.

use crate::bucket::Bucket;
use crate::deadline::{Bounds, CancelToken};
use crate::error::Result;
use crate::keyring::Keyring;
use crate::runtime::{CallLog, Runtime, Scope, joined_arg, objects_arg, wit};
use crate::store_url::{ClientSettings, open_bucket_with};
use crate::types::{
    AuthenticateReport, EntryRead, GcPlan, Grace, HistoryEntry, HistoryPage, ImageInterval,
    IndexCheck, IndexReport, IndexedObject, JoinedObjects, NewEntry, ObjectBlame, ObjectForm,
    Release, RenderChanges, RenderDiff, RenderPage, SecretValues, SyncTime,
};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One call of the component for a store: [`call_export!`] in the release's scope,
/// within the store's bounds (its deadline and its cancellation). Every method calls
/// through this, so none can leave the bounds out.
macro_rules! store_call {
    ($store:expr, $release:expr, $($call:tt)+) => {
        $store.bounded(async {
            call_export!(&$store.runtime, Some($store.scope($release)), $($call)+)
        })
    };
}

// After the macro, which the generated calls use.
mod calls;
mod json_calls;
pub use calls::{LogicCalls, StoreCalls, TraceCalls};
pub use json_calls::{RUNTIME_FUNCTIONS, STORE_FUNCTIONS};

/// A render store: a bucket and the runtime that runs the component over it.
///
/// Cheap to clone; clones share the bucket and the runtime.
#[derive(Clone)]
pub struct RenderStore {
    runtime: Arc<Runtime>,
    bucket: Arc<dyn Bucket>,
    log: Option<Arc<CallLog>>,
    gc_grace: Duration,
    keyring: Arc<Keyring>,
    encryption_required: bool,
    bounds: Bounds,
}

impl std::fmt::Debug for RenderStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderStore")
            .field("runtime", &self.runtime)
            .field("keyring", &self.keyring)
            .field("encryption_required", &self.encryption_required)
            .field("bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

impl RenderStore {
    /// Opens the store a render-store URL names, with the shared runtime. An empty URL
    /// gives `Ok(None)`: no render store, which every caller must handle. The store is
    /// plaintext: [`RenderStore::with_keyring`] encrypts it.
    pub fn open(url: &str) -> Result<Option<RenderStore>> {
        Self::open_with(url, &ClientSettings::DEFAULT)
    }

    /// [`RenderStore::open`] whose cloud backend waits and retries as `client` says
    /// (the URL's own `timeout`, `connect_timeout`, `retries` and `retry_timeout` win).
    pub fn open_with(url: &str, client: &ClientSettings) -> Result<Option<RenderStore>> {
        match open_bucket_with(url, client)? {
            None => Ok(None),
            Some(bucket) => Ok(Some(RenderStore::new(Runtime::shared()?, bucket))),
        }
    }

    /// A store over any bucket, run by `runtime`.
    pub fn new(runtime: Arc<Runtime>, bucket: Arc<dyn Bucket>) -> Self {
        RenderStore {
            runtime,
            bucket,
            log: None,
            gc_grace: Grace::DEFAULT,
            keyring: Arc::new(Keyring::default()),
            encryption_required: false,
            bounds: Bounds::default(),
        }
    }

    /// This store, whose calls all end by `deadline`: a call still running then is cut
    /// where it waits (the bucket request in flight too) and fails with
    /// [`crate::Error::DeadlineExceeded`]; one made after it fails before any bucket
    /// call. A store keeps the earlier of its deadline and each call's
    /// [`RenderStore::with_timeout`]. Needs a tokio runtime with its timer, as every
    /// backend's I/O does. Dropping a call's future cuts it the same way, without the
    /// error (CONTRACT.md §15).
    pub fn with_deadline(&self, deadline: Instant) -> Self {
        let mut bounds = self.bounds.clone();
        bounds.deadline = Some(bounds.deadline.map_or(deadline, |d| d.min(deadline)));
        RenderStore {
            bounds,
            ..self.clone()
        }
    }

    /// This store, each of whose calls ends `timeout` after it starts, as at a
    /// [`RenderStore::with_deadline`].
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        let mut bounds = self.bounds.clone();
        bounds.timeout = Some(timeout);
        RenderStore {
            bounds,
            ..self.clone()
        }
    }

    /// This store, whose calls end with [`crate::Error::Cancelled`] once `token` is
    /// cancelled (in flight: cut where they wait; later: before any bucket call).
    pub fn with_cancel(&self, token: CancelToken) -> Self {
        let mut bounds = self.bounds.clone();
        bounds.cancel = Some(token);
        RenderStore {
            bounds,
            ..self.clone()
        }
    }

    /// Runs `call` (bucket calls of [`RenderStore::bucket`], a tool's own steps) within
    /// this store's deadline and cancellation, as the store's operations run: its
    /// output, or [`crate::Error::DeadlineExceeded`] / [`crate::Error::Cancelled`].
    pub async fn within<F: Future>(&self, call: F) -> Result<F::Output> {
        self.bounds.run(call).await
    }

    /// An operation within the store's bounds.
    async fn bounded<T>(&self, call: impl Future<Output = Result<T>>) -> Result<T> {
        self.bounds.run(call).await?
    }

    /// This store, its render blobs sealed under `keyring`'s first key and opened under
    /// any of its keys (CONTRACT.md, Encryption at rest); an empty keyring is a
    /// plaintext store.
    pub fn with_keyring(&self, keyring: Keyring) -> Self {
        RenderStore {
            keyring: Arc::new(keyring),
            ..self.clone()
        }
    }

    /// The store's keyring (empty on a plaintext store).
    pub fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// This store, requiring (or not) that every render blob be sealed under a key of
    /// its keyring (CONTRACT.md, Encryption at rest): a plaintext blob is then
    /// [`crate::Error::Corrupt`] where it is read and rewritten sealed by a put, so a
    /// writer of the bucket without the key cannot plant a render. Requiring it of a
    /// store without a keyring is [`crate::Error::InvalidInput`], here and in the
    /// component alike (a keyring given afterwards keeps the flag, and an empty one is
    /// refused by the component before any bucket call).
    pub fn with_encryption_required(&self, required: bool) -> Result<Self> {
        if required && self.keyring.is_empty() {
            return Err(crate::Error::InvalidInput(
                crate::keyring::REQUIRED_WITHOUT_KEYS.into(),
            ));
        }
        Ok(RenderStore {
            encryption_required: required,
            ..self.clone()
        })
    }

    /// Whether every render blob must be sealed under a key of the keyring.
    pub fn encryption_required(&self) -> bool {
        self.encryption_required
    }

    /// The keyring and its rule, as the component's store functions take them.
    fn encryption(&self) -> wit::Encryption {
        wit::Encryption {
            keyring: self.keyring.wit().clone(),
            required: self.encryption_required,
        }
    }

    /// This store, with another grace period for [`RenderStore::gc`] (default
    /// [`Grace::DEFAULT`]; zero deletes unreferenced blobs whatever their age).
    pub fn with_gc_grace(&self, period: Duration) -> Self {
        RenderStore {
            gc_grace: period,
            ..self.clone()
        }
    }

    /// This store, recording every bucket call of its operations and the answer the
    /// component was given into `log` (for traces: `trace::record`).
    pub(crate) fn with_call_log(&self, log: Arc<CallLog>) -> Self {
        RenderStore {
            log: Some(log),
            ..self.clone()
        }
    }

    /// The runtime, for the pure logic ([`Runtime::render_ref`] and the like).
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The bucket, for listing (`ls`) and repairs outside the operations.
    pub fn bucket(&self) -> &Arc<dyn Bucket> {
        &self.bucket
    }

    /// The bucket scoped to `release`. The prefix is built from the names as given: if
    /// they are invalid, the component rejects them before any bucket call.
    fn scope(&self, release: &Release) -> Scope {
        Scope {
            bucket: self.bucket.clone(),
            prefix: format!("{}/{}/", release.namespace, release.name),
            log: self.log.clone(),
        }
    }

    /// Stores a render (its objects' JSON bytes, in order) unless its blob exists.
    /// Returns its renderRef.
    pub async fn put_render(&self, release: &Release, objects: &[Vec<u8>]) -> Result<String> {
        self.calls()
            .put_render(release, &objects_arg(objects))
            .await
    }

    /// [`RenderStore::put_render`] of objects given in one buffer: object `i` is
    /// `bytes[ends[i - 1]..ends[i]]` (from 0 for the first). `ends` must never decrease
    /// and end at `bytes.len()`; anything else is [`crate::Error::InvalidInput`], before
    /// any bucket call. One copy of the render, however many objects it has.
    pub async fn put_render_joined(
        &self,
        release: &Release,
        bytes: &[u8],
        ends: &[u32],
    ) -> Result<String> {
        self.calls()
            .put_render(release, &joined_arg(bytes, ends))
            .await
    }

    /// [`RenderStore::put_render`] of a render held joined, passed to the sandboxed call
    /// as it is: the host holds the render once, where the other forms copy it into the
    /// call's argument.
    pub async fn put_render_in(
        &self,
        release: &Release,
        objects: &mut JoinedObjects,
    ) -> Result<String> {
        self.calls().put_render(release, objects).await
    }

    /// The canonical bytes of a stored render, verified against the renderRef:
    /// [`crate::Error::NotFound`] when absent, [`crate::Error::Corrupt`] when changed,
    /// [`crate::Error::EncryptionKey`] when sealed under a key the keyring lacks.
    pub async fn get_render(&self, release: &Release, render_ref: &str) -> Result<Vec<u8>> {
        self.calls().get_render(release, render_ref).await
    }

    /// Seals every render blob of `release` not yet sealed under the keyring's first key
    /// under it, each replaced atomically so a crash loses nothing (CONTRACT.md,
    /// Encryption at rest). Returns how many were rewritten and how many already were
    /// sealed under the first key. An empty keyring is [`crate::Error::InvalidInput`].
    pub async fn rekey_release(&self, release: &Release) -> Result<(u32, u32)> {
        self.calls().rekey_release(release).await
    }

    /// At most `limit` history entries, newest first, older than the entry key `before`
    /// when given (the previous page's [`HistoryPage::next_before`]): one listing, then
    /// one read per entry of the page, however long the history is.
    pub async fn list_history_page(
        &self,
        release: &Release,
        limit: u32,
        before: Option<&str>,
    ) -> Result<HistoryPage> {
        self.calls().list_history_page(release, limit, before).await
    }

    /// The history entries `keys` names (entry keys of `release`, as a listing of its
    /// `history/` gave them), one `get` each in the order given and no listing: an
    /// entry whose body does not read is [`EntryRead::Corrupt`] in its place, one
    /// deleted since the listing [`EntryRead::Gone`]. A key that is not an entry key of
    /// the release is [`crate::Error::InvalidInput`], before any bucket call.
    pub async fn read_history_entries(
        &self,
        release: &Release,
        keys: &[String],
    ) -> Result<Vec<EntryRead>> {
        let read: Vec<_> = self.calls().read_history_entries(release, keys).await?;
        Ok(read.into_iter().collect())
    }

    /// The difference between two stored renders of `release`, each read and verified
    /// in the component (calls: `get` of `old_ref`, then of `new_ref`): the renders never
    /// cross the sandbox boundary as arguments. Secret values as `secrets` says, with
    /// `context` lines around each change.
    pub async fn diff_renders(
        &self,
        release: &Release,
        old_ref: &str,
        new_ref: &str,
        form: ObjectForm,
        secrets: SecretValues,
        context: u32,
    ) -> Result<RenderDiff> {
        self.calls()
            .diff_renders(release, old_ref, new_ref, form, secrets, context)
            .await
    }

    /// Page `page` (from 1) of a stored render's objects for people, read and verified
    /// in the component, listed by kind, namespace, name and apiVersion, each in `form`
    /// with Secret values as `secrets` says, cut into pages whose texts are at most
    /// `page_bytes` long: only the page's texts leave the sandbox, so a render of any
    /// size is shown holding it once. A page past the last has no object.
    #[allow(clippy::too_many_arguments)] // the view's parts, as the WIT function takes them
    pub async fn show_render_page(
        &self,
        release: &Release,
        render_ref: &str,
        form: ObjectForm,
        secrets: SecretValues,
        page_bytes: u64,
        page: u32,
    ) -> Result<RenderPage> {
        self.calls()
            .show_render_page(release, render_ref, form, secrets, page_bytes, page)
            .await
    }

    /// The intervals of the release's history during which each image matching
    /// `pattern` was in the recorded render (every image when `None`), those that meet
    /// the window from `since` until `until`, sorted by image then start. A pattern is a
    /// repository (`nginx`), a reference (`nginx:1.25`), a digest (`@sha256:HEX`) or a
    /// glob (`*/nginx:1.*`); a bad one is [`crate::Error::InvalidInput`] before any call.
    /// Every render the history names is read, once each, in the sandbox; one that
    /// cannot be read fails the call.
    pub async fn release_images(
        &self,
        release: &Release,
        pattern: Option<&str>,
        since: Option<SyncTime>,
        until: Option<SyncTime>,
    ) -> Result<Vec<ImageInterval>> {
        self.calls()
            .release_images(release, pattern, since.as_ref(), until.as_ref())
            .await
            .map(|intervals| intervals.into_iter().collect())
    }

    /// Brings the release index (CONTRACT.md §3: what each render of the history holds,
    /// one blob a release) up to date with the history: renders it does not name are
    /// read and indexed when `read_missing` (what `record` and `reindex` do), renders the
    /// history no longer names are dropped (what a GC leaves to do), and the blob is
    /// written only when it changes, sealed under the keyring's first key when there is
    /// one. An empty history leaves no index.
    pub async fn index_release(
        &self,
        release: &Release,
        read_missing: bool,
    ) -> Result<IndexReport> {
        self.calls().index_release(release, read_missing).await
    }

    /// [`RenderStore::index_release`] with every render read again, the stored index not
    /// used at all (`reindex --force`).
    pub async fn rebuild_index(&self, release: &Release) -> Result<IndexReport> {
        self.calls().rebuild_index(release).await
    }

    /// What changed between stored renders of `release`, for each pair `(old, new)`
    /// (`old` `None` for a release's first render), the renders read and compared in
    /// the sandbox, never handed to the host: a run of consecutive pairs reads each
    /// render once and holds at most two.
    pub async fn stored_changes(
        &self,
        release: &Release,
        pairs: &[(Option<String>, String)],
    ) -> Result<Vec<RenderChanges>> {
        self.calls()
            .stored_changes(release, pairs)
            .await
            .map(|changes| changes.into_iter().collect())
    }

    /// Checks the release index against the renders it names (what `verify` reports):
    /// whether one is stored, why it cannot be used, and each entry that disagrees with
    /// its render.
    pub async fn check_index(&self, release: &Release) -> Result<IndexCheck> {
        self.calls().check_index(release).await.map(|c| IndexCheck {
            present: c.present,
            unusable: c.unusable,
            disagreeing: c.disagreeing,
            read: c.read,
        })
    }

    /// Brings the release's history entries under the keyring's first key: entries
    /// authenticated under another key of the ring are given a MAC under the first
    /// (rotation); with `vouch`, so are entries that do not authenticate at all (the
    /// operator checked them with `verify`), except those whose body disagrees with
    /// their key. An empty keyring is [`crate::Error::InvalidInput`].
    pub async fn authenticate_history(
        &self,
        release: &Release,
        vouch: bool,
    ) -> Result<AuthenticateReport> {
        self.calls()
            .authenticate_history(release, vouch)
            .await
            .map(|r| AuthenticateReport {
                rewritten: r.rewritten,
                kept: r.kept,
                left: r.left,
            })
    }

    /// The objects of each render of `refs` (each once, in the order given), each with
    /// its hash and the images of its pod templates: from the release index where it
    /// names the render, else by reading the render in the sandbox. A render that cannot
    /// be read fails the call.
    pub async fn render_objects(
        &self,
        release: &Release,
        refs: &[String],
    ) -> Result<Vec<(String, Vec<IndexedObject>)>> {
        self.calls()
            .render_objects(release, refs)
            .await
            .map(|renders| {
                renders
                    .into_iter()
                    .map(|r| (r.render_ref, r.objects.into_iter().collect()))
                    .collect()
            })
    }

    /// Which entry of the release's history last changed each field of `object`
    /// (`KIND/NAME` or `NAMESPACE/KIND/NAME`), or each field under `field` (a path as
    /// the diff's hunk headers write it), in the newest render that holds the object,
    /// values shown as `secrets` says. Every render of the history is read, one at a
    /// time, in the sandbox. [`crate::Error::NotFound`] when no render holds the object.
    pub async fn blame_object(
        &self,
        release: &Release,
        object: &str,
        field: Option<&str>,
        secrets: SecretValues,
    ) -> Result<ObjectBlame> {
        self.calls()
            .blame_object(release, object, field, secrets)
            .await
    }

    /// Whether a history entry records `render_ref`.
    pub async fn has_history_ref(&self, release: &Release, render_ref: &str) -> Result<bool> {
        self.calls().has_history_ref(release, render_ref).await
    }

    /// Appends a history entry unless one records the same render. Returns whether it
    /// was added. With a keyring the entry's body carries its MAC; where encryption is
    /// required an entry naming the same render counts only if it authenticates
    /// (CONTRACT.md §14).
    pub async fn record_history(&self, release: &Release, entry: &NewEntry) -> Result<bool> {
        self.calls().record_history(release, entry).await
    }

    /// The history, oldest first, each entry judged under the keyring
    /// ([`crate::EntryTrust`]).
    pub async fn list_history(&self, release: &Release) -> Result<Vec<HistoryEntry>> {
        self.calls()
            .list_history(release)
            .await
            .map(|entries| entries.into_iter().collect())
    }

    /// Garbage collection: keeps the newest `keep` entries and the renders they and
    /// `protected` name (empty strings ignored), and every blob younger than the
    /// store's grace period ([`RenderStore::with_gc_grace`]); `keep <= 0` does nothing.
    /// With `dry_run` nothing is deleted and the plan of a real run is returned.
    pub async fn gc(
        &self,
        release: &Release,
        keep: i64,
        protected: &[String],
        dry_run: bool,
    ) -> Result<GcPlan> {
        let grace = Grace::ending_now(self.gc_grace);
        self.gc_with(release, keep, protected, dry_run, grace).await
    }

    /// [`RenderStore::gc`] with an explicit grace period and "now" (a replay passes the
    /// recorded ones).
    pub async fn gc_with(
        &self,
        release: &Release,
        keep: i64,
        protected: &[String],
        dry_run: bool,
        grace: Grace,
    ) -> Result<GcPlan> {
        self.calls()
            .gc(release, keep, protected, dry_run, &grace.now, grace.seconds)
            .await
    }

    /// Deletes every key of the release. Returns how many were deleted.
    pub async fn delete_release(&self, release: &Release) -> Result<u32> {
        self.calls().delete_release(release).await
    }
}
