//! The observer's read side: its own store, opened from its own URL, read-only.

use crate::bucket::ReadOnlyBucket;
use crate::error::{BoxError, Error};
use crate::runtime::Runtime;
use crate::store::RenderStore;
use crate::types::{
    HistoryEntry, HistoryPage, HistorySummary, ObjectForm, Release, RenderDiff, SecretValues,
    ShownObject,
};
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

    /// Every release in the store, sorted by namespace and name, with its number of
    /// history entries and the newest one.
    ///
    /// Releases are found with listings with a delimiter (`<namespace>/`, then
    /// `<namespace>/<name>/`), never by listing every key; then one listing of each
    /// release's `history/`, which the component summarizes. A folder whose names are
    /// not a valid namespace and name is not a release: the component says which.
    ///
    /// A list for people to read, not a decision: a namespace folder or a history that
    /// cannot be listed (unreadable, or a link) is left out with a warning in the log,
    /// so one such folder does not hide every other release. A failed listing of the
    /// store's root is an error.
    pub async fn releases(&self) -> Result<Vec<ReleaseSummary>, ObserverError> {
        let store = self.require()?;
        let bucket = store.bucket();
        let mut found = Vec::new();
        for namespace in bucket.list_folders("").await.map_err(Error::from)? {
            let folders = match bucket.list_folders(&namespace).await {
                Ok(folders) => folders,
                Err(e) => {
                    tracing::warn!(
                        "left the folder {namespace:?} out of the release list: listing it \
                         failed: {e}"
                    );
                    continue;
                }
            };
            for folder in folders {
                let (Some(ns), Some(name)) = (
                    namespace.strip_suffix('/'),
                    folder[namespace.len()..].strip_suffix('/'),
                ) else {
                    continue;
                };
                let release = Release::new(ns, name);
                let keys: Vec<String> = match bucket.list(&format!("{folder}history/")).await {
                    Ok(listed) => listed.into_iter().map(|m| m.key).collect(),
                    Err(e) => {
                        tracing::warn!(
                            "left the folder {folder:?} out of the release list: listing \
                             its history failed: {e}"
                        );
                        continue;
                    }
                };
                match self.runtime.summarize_history(&release, &keys).await {
                    Ok(history) => found.push(ReleaseSummary { release, history }),
                    Err(Error::InvalidInput(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(found)
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
    /// values as this observer shows them.
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
        let new = store.get_render(release, render).await?;
        let old = store.get_render(release, &against).await?;
        Ok(self
            .runtime
            .diff_renders(&old, &new, form, self.secrets, context)
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

    /// `against`, or the renderRef of the newest history entry.
    async fn against(
        &self,
        store: &RenderStore,
        release: &Release,
        against: Option<&str>,
    ) -> Result<String, ObserverError> {
        if let Some(r) = against {
            return Ok(r.to_string());
        }
        let history = store.list_history(release).await?;
        match history.last() {
            Some(newest) => Ok(newest.render_ref.clone()),
            None => Err(ObserverError::NoHistory(release.to_string())),
        }
    }
}
