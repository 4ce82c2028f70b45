//! The pure logic of the component, called without a bucket: every answer comes from
//! the component, so Rust, JavaScript and Python hosts agree by construction.

use crate::error::Result;
use crate::runtime::{Runtime, joined_arg, objects_arg};
use crate::types::{
    GcPlan, HistorySummary, ImageUse, IndexedObject, JoinedObjects, ObjectForm, ParsedKey, Release,
    RenderChanges, RenderDiff, SecretValues, ShownObject, SyncTime,
};

impl Runtime {
    /// The canonical bytes of a render given as its objects' JSON bytes.
    pub async fn canonical(&self, objects: &[Vec<u8>]) -> Result<Vec<u8>> {
        self.logic().canonical(&objects_arg(objects)).await
    }

    /// The renderRef of a render: `sha256:` and the hex SHA-256 of its canonical bytes.
    pub async fn render_ref(&self, objects: &[Vec<u8>]) -> Result<String> {
        self.logic().render_ref(&objects_arg(objects)).await
    }

    /// [`Runtime::canonical`] of objects given in one buffer and where each ends
    /// ([`crate::RenderStore::put_render_joined`] says how).
    pub async fn canonical_joined(&self, bytes: &[u8], ends: &[u32]) -> Result<Vec<u8>> {
        self.logic().canonical(&joined_arg(bytes, ends)).await
    }

    /// [`Runtime::render_ref`] of objects given in one buffer and where each ends
    /// ([`crate::RenderStore::put_render_joined`] says how).
    pub async fn render_ref_joined(&self, bytes: &[u8], ends: &[u32]) -> Result<String> {
        self.logic().render_ref(&joined_arg(bytes, ends)).await
    }

    /// The objects of a YAML stream (`helm template`, `kustomize build`), each as the
    /// compact JSON a Go controller reads it as (CONTRACT.md §11): empty and `null`
    /// documents skipped, every other one an object. [`crate::Error::InvalidYaml`]
    /// names the first failing document, its line and column.
    pub async fn yaml_objects(&self, yaml: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.logic()
            .yaml_objects(yaml)
            .await
            .map(|objects| objects.into_iter().map(String::into_bytes).collect())
    }

    /// The objects of a stream of JSON objects, each starting on a line of its own: what
    /// [`crate::RenderStore::get_render`] returns, one object a line, and what `jq -c`
    /// writes. [`crate::Error::InvalidObject`] names a value that is not an object, or a
    /// second object on one line.
    pub async fn json_objects(&self, json: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.logic().json_objects(json).await
    }

    /// Checks that each object is a Kubernetes object as a person's or a tool's render
    /// must be (CONTRACT.md §4): `apiVersion`, `kind`, and `metadata.name` or
    /// `metadata.generateName`; lists (`List`, `*List` with `items`) item by item; no
    /// Secret with the `***` markers of a masked view. The first that fails is
    /// [`crate::Error::InvalidObject`]. Storing does not check this: a controller
    /// stores what it applied.
    pub async fn check_objects(&self, objects: &[Vec<u8>]) -> Result<()> {
        self.logic().check_objects(&objects_arg(objects)).await
    }

    /// Where each object of a stream of JSON objects ends, as [`Runtime::json_objects`]
    /// splits it, the stream being then its own [`JoinedObjects`] (white space around
    /// the objects included, the last end its length): no copy of the render. An empty
    /// stream has none.
    pub async fn json_object_ends(&self, json: &[u8]) -> Result<Vec<u32>> {
        self.logic().json_object_ends(json).await
    }

    /// [`Runtime::check_objects`] of a render held joined, passed to the call as it is.
    pub async fn check_objects_in(&self, objects: &mut JoinedObjects) -> Result<()> {
        self.logic().check_objects(objects).await
    }

    /// [`Runtime::canonical`] of a render held joined, passed to the call as it is.
    pub async fn canonical_in(&self, objects: &mut JoinedObjects) -> Result<Vec<u8>> {
        self.logic().canonical(objects).await
    }

    /// [`Runtime::render_ref`] of a render held joined, passed to the call as it is.
    pub async fn render_ref_in(&self, objects: &mut JoinedObjects) -> Result<String> {
        self.logic().render_ref(objects).await
    }

    /// [`Runtime::check_objects`] of objects given in one buffer and where each ends
    /// ([`crate::RenderStore::put_render_joined`] says how).
    pub async fn check_objects_joined(&self, bytes: &[u8], ends: &[u32]) -> Result<()> {
        self.logic().check_objects(&joined_arg(bytes, ends)).await
    }

    /// [`Runtime::canonical`] of [`Runtime::yaml_objects`], in one sandbox call.
    pub async fn yaml_canonical(&self, yaml: &[u8]) -> Result<Vec<u8>> {
        self.logic().yaml_canonical(yaml).await
    }

    /// [`Runtime::render_ref`] of [`Runtime::yaml_objects`], in one sandbox call: the
    /// renderRef a Go controller computes for the stream.
    pub async fn yaml_render_ref(&self, yaml: &[u8]) -> Result<String> {
        self.logic().yaml_render_ref(yaml).await
    }

    /// Checks a renderRef (`sha256:` and 64 lowercase hex digits) in the component.
    pub async fn validate_render_ref(&self, render_ref: &str) -> Result<()> {
        self.logic().validate_render_ref(render_ref).await
    }

    /// The hex SHA-256 of `bytes`, computed in the component.
    pub async fn sha256_hex(&self, bytes: &[u8]) -> Result<String> {
        self.logic().sha256_hex(bytes).await
    }

    /// `<namespace>/<name>/`, the prefix of every key of `release`, after the
    /// component has checked both names.
    pub async fn release_prefix(&self, release: &Release) -> Result<String> {
        self.logic().release_prefix(release).await
    }

    /// The key of a render blob of `release`.
    pub async fn render_key(&self, release: &Release, render_ref: &str) -> Result<String> {
        self.logic().render_key(release, render_ref).await
    }

    /// The key of the release index of `release` (CONTRACT.md §3).
    pub async fn index_key(&self, release: &Release) -> Result<String> {
        self.logic().index_key(release).await
    }

    /// The key of a history entry of `release`.
    pub async fn history_key(
        &self,
        release: &Release,
        synced_at: SyncTime,
        render_ref: &str,
    ) -> Result<String> {
        self.logic()
            .history_key(release, &synced_at, render_ref)
            .await
    }

    /// Parses a key of `release`; `None` for a key that is not one of its renders or
    /// history entries.
    pub async fn parse_key(&self, release: &Release, key: &str) -> Result<Option<ParsedKey>> {
        let key: Option<_> = self.logic().parse_key(release, key).await?;
        Ok(key)
    }

    /// [`Runtime::parse_key`] of each of `keys`, in order, in one sandbox call: a whole
    /// listing parsed at the cost of one call.
    pub async fn parse_keys(
        &self,
        release: &Release,
        keys: &[String],
    ) -> Result<Vec<Option<ParsedKey>>> {
        let parsed: Vec<Option<_>> = self.logic().parse_keys(release, keys).await?;
        Ok(parsed.into_iter().collect())
    }

    /// Parses RFC 3339 to a UTC [`SyncTime`].
    pub async fn parse_synced_at(&self, text: &str) -> Result<SyncTime> {
        self.logic().parse_synced_at(text).await
    }

    /// RFC 3339 in UTC with nanoseconds, trailing zeros trimmed.
    pub async fn format_synced_at(&self, t: SyncTime) -> Result<String> {
        self.logic().format_synced_at(&t).await
    }

    /// [`Runtime::format_synced_at`] of each time, in order, in one sandbox call.
    pub async fn format_synced_at_all(&self, times: &[SyncTime]) -> Result<Vec<String>> {
        let times: Vec<_> = times.to_vec();
        self.logic().format_synced_at_all(&times).await
    }

    /// The GC decision from listings alone (see [`crate::RenderStore::gc`]), at `now`:
    /// entries dated more than [`crate::controller::GC_FUTURE_TOLERANCE_SECONDS`] after it do not
    /// count toward `keep`, nor do entries whose render `render_keys` lacks.
    pub async fn plan_gc(
        &self,
        release: &Release,
        keep: i64,
        history_keys: &[String],
        render_keys: &[String],
        protected: &[String],
        now: SyncTime,
    ) -> Result<GcPlan> {
        self.logic()
            .plan_gc(release, keep, history_keys, render_keys, protected, &now)
            .await
    }

    /// The difference between two canonical renders, changed objects' lines in `form`
    /// with Secret values as `secrets` says and `context` lines around each change
    /// ([`crate::DEFAULT_CONTEXT`]; `u32::MAX` for whole objects).
    pub async fn diff_renders(
        &self,
        old: &[u8],
        new: &[u8],
        form: ObjectForm,
        secrets: SecretValues,
        context: u32,
    ) -> Result<RenderDiff> {
        self.logic()
            .diff_renders(old, new, form, secrets, context)
            .await
    }

    /// Every object of a canonical render, in order, with its text in `form` and
    /// Secret values as `secrets` says (the text [`Runtime::diff_renders`] diffs).
    pub async fn show_objects(
        &self,
        canonical: &[u8],
        form: ObjectForm,
        secrets: SecretValues,
    ) -> Result<Vec<ShownObject>> {
        self.logic()
            .show_objects(canonical, form, secrets)
            .await
            .map(|objects| objects.into_iter().collect())
    }

    /// Checks an image pattern as [`crate::RenderStore::release_images`] takes it: a
    /// repository, a reference, a digest or a glob; [`crate::Error::InvalidInput`]
    /// saying what each looks like when it is none.
    pub async fn check_image_pattern(&self, pattern: &str) -> Result<()> {
        self.logic().check_image_pattern(pattern).await
    }

    /// Every object of a canonical render, in render order, with the SHA-256 of its
    /// canonical line and the images of its pod templates (the rows of an export).
    pub async fn index_objects(&self, canonical: &[u8]) -> Result<Vec<IndexedObject>> {
        self.logic()
            .index_objects(canonical)
            .await
            .map(|objects| objects.into_iter().collect())
    }

    /// Every container of every pod template of a canonical render, in render order,
    /// with its image normalised as container runtimes read it (`nginx` is
    /// `docker.io/library/nginx:latest`).
    pub async fn render_images(&self, canonical: &[u8]) -> Result<Vec<ImageUse>> {
        self.logic()
            .render_images(canonical)
            .await
            .map(|uses| uses.into_iter().collect())
    }

    /// What changed from `old` to `new`, two canonical renders (`old` empty for a
    /// release's first render: everything added): objects added, removed and changed,
    /// container images that differ, and the Secret keys whose values changed, by name
    /// alone (WIT `logic.summarize-changes`).
    pub async fn summarize_changes(&self, old: &[u8], new: &[u8]) -> Result<RenderChanges> {
        self.logic().summarize_changes(old, new).await
    }

    /// A release's history as one listing of `<prefix>history/` shows it (the keys
    /// listed, any order), no entry read. An invalid release is
    /// [`crate::Error::InvalidInput`].
    pub async fn summarize_history(
        &self,
        release: &Release,
        history_keys: &[String],
    ) -> Result<HistorySummary> {
        self.logic().summarize_history(release, history_keys).await
    }
}
