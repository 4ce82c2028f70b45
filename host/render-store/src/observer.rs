//! The observer's read side: its own store, opened from its own URL, read-only.

use crate::bucket::ReadOnlyBucket;
use crate::error::{BoxError, Error};
use crate::fleet::{FLEET_CONCURRENCY, Unlisted};
use crate::runtime::Runtime;
use crate::store::RenderStore;
use crate::types::{
    EntryRead, HistoryEntry, HistoryPage, HistorySummary, ObjectForm, Release, RenderDiff,
    RenderPage, SecretValues, ShownObject,
};
use futures::StreamExt;
use std::future::Future;
use std::sync::Arc;

/// Why an observer read failed.
#[derive(Debug, thiserror::Error)]
pub enum ObserverError {
    /// There is no render store (an empty URL).
    #[error("there is no render store (the observer was started without --render-store-url)")]
    NoStore,
    /// The store or the component failed.
    #[error(transparent)]
    Store(#[from] Error),
    /// The history is empty: there is nothing to diff against.
    #[error("the history of {0} is empty: give a render to diff against")]
    NoHistory(String),
    /// Rendering the source (the fallback for a missing blob) failed.
    #[error("the render's blob is missing and rendering the source failed: {0}")]
    Source(#[source] BoxError),
}

/// A render read by the observer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderRead {
    /// The renderRef of `canonical`; differs from the one asked for when the source
    /// no longer renders to it.
    pub render_ref: String,
    /// The canonical bytes.
    pub canonical: Vec<u8>,
    /// Whether the blob was missing and the source was rendered instead.
    pub from_source: bool,
}

/// A release found in the store, with what one listing of its history says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseSummary {
    /// The release.
    pub release: Release,
    /// Its number of history entries and the newest one.
    pub history: HistorySummary,
    /// The newest entry's summary: `None` without history; the reason it does not read
    /// (a corrupt body, a failed read) as the error.
    pub newest_summary: Option<Result<String, String>>,
}

/// A page of the releases of a store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleasePage {
    /// The releases, sorted by namespace and name.
    pub releases: Vec<ReleaseSummary>,
    /// The last release of the page when more follow: the `after` of the next page.
    pub next_after: Option<Release>,
    /// Folders (a namespace's, or a release's whose history could not be listed) that
    /// this page could not see: when any, the page is partial.
    pub unlisted: Vec<Unlisted>,
}

/// Read access to the render store for the observer.
///
/// What it shows people (its diffs, [`Observer::show_objects`]) masks Secret values
/// unless it was made with [`Observer::with_secrets`]`(SecretValues::Shown)`: a choice
/// for the whole observer, which no request can change.
#[derive(Debug, Clone)]
pub struct Observer {
    store: Option<RenderStore>,
    runtime: Arc<Runtime>,
    secrets: SecretValues,
}

impl Observer {
    /// Opens the observer's own store from its URL, read-only: the bucket it is given
    /// refuses put and delete. An empty URL gives an observer without a store.
    pub fn open(url: &str) -> crate::Result<Self> {
        Observer::new(RenderStore::open(url)?)
    }

    /// An observer over `store`, made read-only.
    pub fn new(store: Option<RenderStore>) -> crate::Result<Self> {
        let runtime = match &store {
            Some(s) => s.runtime().clone(),
            None => Runtime::shared()?,
        };
        let store = store
            .map(|s| {
                RenderStore::new(
                    s.runtime().clone(),
                    Arc::new(ReadOnlyBucket::new(s.bucket().clone())),
                )
                .with_keyring(s.keyring().clone())
                // The observer reads what its store would: a plaintext blob it refuses
                // is refused in the pages too.
                .with_encryption_required(s.encryption_required())
            })
            .transpose()?;
        Ok(Observer {
            store,
            runtime,
            secrets: SecretValues::Masked,
        })
    }

    /// This observer, showing Secret values as `secrets` says in everything it shows
    /// people.
    pub fn with_secrets(self, secrets: SecretValues) -> Self {
        Observer { secrets, ..self }
    }

    /// Whether what this observer shows people masks Secret values.
    pub fn secrets(&self) -> SecretValues {
        self.secrets
    }

    /// Every object of a canonical render, in order, in `form`, Secret values as this
    /// observer shows them.
    pub async fn show_objects(
        &self,
        canonical: &[u8],
        form: ObjectForm,
    ) -> Result<Vec<ShownObject>, ObserverError> {
        Ok(self
            .runtime
            .show_objects(canonical, form, self.secrets)
            .await?)
    }

    /// The read-only store, if any.
    pub fn store(&self) -> Option<&RenderStore> {
        self.store.as_ref()
    }

    /// The runtime, for the pure logic.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    fn require(&self) -> Result<&RenderStore, ObserverError> {
        self.store.as_ref().ok_or(ObserverError::NoStore)
    }

    /// The history, oldest first.
    pub async fn history(&self, release: &Release) -> Result<Vec<HistoryEntry>, ObserverError> {
        Ok(self.require()?.list_history(release).await?)
    }

    /// At most `limit` history entries, newest first, older than `before` when given.
    pub async fn history_page(
        &self,
        release: &Release,
        limit: u32,
        before: Option<&str>,
    ) -> Result<HistoryPage, ObserverError> {
        Ok(self
            .require()?
            .list_history_page(release, limit, before)
            .await?)
    }

    /// A page of the releases in the store (or in `namespace`), after `after` (by
    /// namespace, then name), at most `limit` of them, each with its number of history
    /// entries, the newest one and that entry's summary.
    ///
    /// Releases are found with delimiter listings ([`crate::fleet::find_releases`]):
    /// one listing of the root and one of each namespace the page spans, never a
    /// listing of every key. Then, for each release of the page alone, one listing of
    /// its `history/` (the component summarizes it and decides which folders are
    /// releases) and one read of its newest entry, [`FLEET_CONCURRENCY`] releases at
    /// once. A page therefore costs about twice its length in bucket calls, however
    /// many releases the store holds.
    ///
    /// Fail closed: a failed listing of the root is the error; a namespace or a history
    /// that cannot be listed is named in [`ReleasePage::unlisted`] (the page is then
    /// partial), never shown as a release with no history or left out without a word.
    pub async fn releases_page(
        &self,
        namespace: Option<&str>,
        after: Option<&Release>,
        limit: usize,
    ) -> Result<ReleasePage, ObserverError> {
        let store = self.require()?;
        let names =
            crate::fleet::find_releases(store, namespace, after, Some(limit.max(1))).await?;
        self.summarize_releases(names).await
    }

    /// The page of the releases `names` found (by [`crate::fleet::find_releases`], or a
    /// selection of its answer): for each of them alone, one listing of its `history/`
    /// and one read of its newest entry, [`FLEET_CONCURRENCY`] releases at once, as
    /// [`Observer::releases_page`] reads them.
    pub async fn summarize_releases(
        &self,
        names: crate::fleet::ReleaseNames,
    ) -> Result<ReleasePage, ObserverError> {
        let store = self.require()?;
        let summaries: Vec<_> = futures::stream::iter(names.releases)
            .map(|release| self.summarize(store, release))
            .buffered(FLEET_CONCURRENCY)
            .collect()
            .await;
        let mut page = ReleasePage {
            releases: Vec::with_capacity(summaries.len()),
            next_after: names.next_after,
            unlisted: names.unlisted,
        };
        for summary in summaries {
            match summary? {
                Ok(found) => page.releases.push(found),
                Err(unlisted) => page.unlisted.push(unlisted),
            }
        }
        page.unlisted.sort_by(|a, b| a.folder.cmp(&b.folder));
        for u in &page.unlisted {
            tracing::warn!(
                "the release list is partial: {:?} could not be listed: {}",
                u.folder,
                u.error
            );
        }
        Ok(page)
    }

    /// One release of a fleet page: its history listed and summarized, its newest entry
    /// read; the release as [`Unlisted`] when its history cannot be listed.
    async fn summarize(
        &self,
        store: &RenderStore,
        release: Release,
    ) -> Result<Result<ReleaseSummary, Unlisted>, ObserverError> {
        let folder = format!("{}/{}/", release.namespace, release.name);
        let keys: Vec<String> = match store.bucket().list(&format!("{folder}history/")).await {
            Ok(listed) => listed.into_iter().map(|m| m.key).collect(),
            Err(e) => {
                return Ok(Err(Unlisted {
                    folder,
                    error: e.to_string(),
                }));
            }
        };
        let history = self.runtime.summarize_history(&release, &keys).await?;
        drop(keys);
        let newest_summary = match &history.newest {
            None => None,
            Some(newest) => {
                let key = self
                    .runtime
                    .history_key(&release, newest.synced_at, &newest.render_ref)
                    .await?;
                Some(match store.read_history_entries(&release, &[key]).await {
                    Ok(read) => match read.into_iter().next() {
                        Some(EntryRead::Entry(e)) => Ok(e.summary),
                        // Deleted since the listing (a GC): nothing to say of it.
                        Some(EntryRead::Gone) | None => Ok(String::new()),
                        Some(EntryRead::Corrupt(m)) => Err(m),
                    },
                    Err(e) => Err(e.to_string()),
                })
            }
        };
        Ok(Ok(ReleaseSummary {
            release,
            history,
            newest_summary,
        }))
    }

    /// Page `page` (from 1) of a stored render's objects, in `form`, Secret values as
    /// this observer shows them, pages of at most `page_bytes` of text: only the page
    /// leaves the sandbox ([`RenderStore::show_render_page`]).
    pub async fn render_page(
        &self,
        release: &Release,
        render_ref: &str,
        form: ObjectForm,
        page_bytes: u64,
        page: u32,
    ) -> Result<RenderPage, ObserverError> {
        Ok(self
            .require()?
            .show_render_page(release, render_ref, form, self.secrets, page_bytes, page)
            .await?)
    }

    /// A stored render's canonical bytes, verified.
    pub async fn render(
        &self,
        release: &Release,
        render_ref: &str,
    ) -> Result<Vec<u8>, ObserverError> {
        Ok(self.require()?.get_render(release, render_ref).await?)
    }

    /// A pinned or rolled-back render: the stored blob, or, when it is missing (or there
    /// is no store), the source rendered by `render_source` and canonicalized.
    pub async fn render_or_source<F, Fut>(
        &self,
        release: &Release,
        render_ref: &str,
        render_source: F,
    ) -> Result<RenderRead, ObserverError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<Vec<u8>>, BoxError>>,
    {
        if let Some(store) = &self.store {
            match store.get_render(release, render_ref).await {
                Ok(canonical) => {
                    return Ok(RenderRead {
                        render_ref: render_ref.to_string(),
                        canonical,
                        from_source: false,
                    });
                }
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let objects = render_source().await.map_err(ObserverError::Source)?;
        let canonical = self.runtime.canonical(&objects).await?;
        let render_ref = self.runtime.render_ref(&objects).await?;
        Ok(RenderRead {
            render_ref,
            canonical,
            from_source: true,
        })
    }

    /// The difference from `against` (default: the newest history entry) to `render`,
    /// changed objects shown in `form` with `context` lines around each change, Secret
    /// values as this observer shows them. Both renders are read and diffed in one
    /// sandboxed call (`store.diff-renders`): they cross into the sandbox once, from
    /// the bucket, and never back out.
    pub async fn diff(
        &self,
        release: &Release,
        render: &str,
        against: Option<&str>,
        form: ObjectForm,
        context: u32,
    ) -> Result<RenderDiff, ObserverError> {
        let store = self.require()?;
        let against = self.against(store, release, against).await?;
        Ok(store
            .diff_renders(release, &against, render, form, self.secrets, context)
            .await?)
    }

    /// The difference from `against` (default: the newest history entry) to a render
    /// that is not stored, given as its canonical bytes ([`Runtime::canonical`] or
    /// [`Runtime::yaml_canonical`]): what applying it would change. Reads only.
    pub async fn diff_local(
        &self,
        release: &Release,
        canonical: &[u8],
        against: Option<&str>,
        form: ObjectForm,
        context: u32,
    ) -> Result<RenderDiff, ObserverError> {
        let store = self.require()?;
        let against = self.against(store, release, against).await?;
        let old = store.get_render(release, &against).await?;
        Ok(self
            .runtime
            .diff_renders(&old, canonical, form, self.secrets, context)
            .await?)
    }

    /// `against`, or the renderRef of the newest history entry, from one listing of the
    /// history (the renderRef is in the entry's key: no entry is read).
    async fn against(
        &self,
        store: &RenderStore,
        release: &Release,
        against: Option<&str>,
    ) -> Result<String, ObserverError> {
        if let Some(r) = against {
            return Ok(r.to_string());
        }
        match self.newest(store, release).await? {
            Some(newest) => Ok(newest),
            None => Err(ObserverError::NoHistory(release.to_string())),
        }
    }

    /// The renderRef of the newest history entry of `release`, if any: one listing of
    /// its history, summarized by the component.
    pub async fn newest_render(&self, release: &Release) -> Result<Option<String>, ObserverError> {
        self.newest(self.require()?, release).await
    }

    async fn newest(
        &self,
        store: &RenderStore,
        release: &Release,
    ) -> Result<Option<String>, ObserverError> {
        let prefix = self.runtime.release_prefix(release).await?;
        let keys: Vec<String> = store
            .bucket()
            .list(&format!("{prefix}history/"))
            .await
            .map_err(Error::from)?
            .into_iter()
            .map(|m| m.key)
            .collect();
        let summary = self.runtime.summarize_history(release, &keys).await?;
        Ok(summary.newest.map(|n| n.render_ref))
    }
}
