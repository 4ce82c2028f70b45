//! The controller-side rules of CONTRACT.md §7 and §8, as plain Rust types: no
//! Kubernetes dependency. The caller's apply step comes in as an [`Applier`].
//!
//! Every function takes the store as an `Option`: `None` is "no render store" (an empty
//! URL), which every rule handles.

use crate::error::{BoxError, Error};
use crate::runtime::Runtime;
use crate::store::RenderStore;
use crate::types::{GcPlan, NewEntry, Release, SyncTime};
use async_trait::async_trait;
use std::sync::Arc;

pub use render_store_guest::policy::{
    DEFAULT_GC_GRACE_SECONDS, DEFAULT_KEEP_HISTORY, GC_FUTURE_TOLERANCE_SECONDS, PinDecision,
    ReleaseRefs, Retention, effective_keep_history, index_update, protected_refs,
};

/// `resolvedRetentionPolicy.historyCount`: 0 without a store (nothing is kept);
/// otherwise the effective keepHistory, with 0 for "GC off, no limit".
pub fn history_count(store: Option<&RenderStore>, keep_history: Option<i64>) -> i64 {
    render_store_guest::policy::history_count(store.is_some(), keep_history)
}

/// Why a sync or rollback failed, as the Release's condition reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The pre-apply dry run rejected the render; it was not stored.
    DryRunFailed,
    /// Persisting the render failed, so nothing was applied; retry.
    DeployFailed,
    /// The caller's apply failed; no history, no GC.
    ApplyFailed,
    /// A pin to a render other than the current one cannot be honoured.
    Pinned,
    /// The render to roll back to could not be read.
    RollbackFailed,
}

/// A failed sync, pin or rollback.
#[derive(Debug, thiserror::Error)]
#[error("{reason:?}: {message}")]
pub struct SyncError {
    /// The condition reason.
    pub reason: Reason,
    /// What happened.
    pub message: String,
    /// The error that caused it: the applier's, or the store's ([`Error`]).
    #[source]
    pub source: Option<BoxError>,
}

fn sync_error(reason: Reason, message: impl Into<String>) -> SyncError {
    SyncError {
        reason,
        message: message.into(),
        source: None,
    }
}

/// A failed sync caused by `source`, whose text the message repeats after `context`.
fn caused(reason: Reason, context: &str, source: impl Into<BoxError>) -> SyncError {
    let source = source.into();
    SyncError {
        reason,
        message: format!("{context}{source}"),
        source: Some(source),
    }
}

/// The caller's side of a sync.
#[async_trait]
pub trait Applier: Send {
    /// The pre-apply dry run; a render that fails it is not stored.
    async fn dry_run(&mut self, _objects: &[Vec<u8>]) -> Result<(), BoxError> {
        Ok(())
    }
    /// Hooks, waves, prune, hooks: the whole apply.
    async fn apply(&mut self, objects: &[Vec<u8>]) -> Result<(), BoxError>;
}

/// What a sync is asked to do.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    /// The render: its objects' JSON, in order.
    pub objects: Vec<Vec<u8>>,
    /// The Release's references, read at the start of the reconcile.
    pub refs: ReleaseRefs,
    /// The Release's keepHistory (`None`: unset).
    pub keep_history: Option<i64>,
    /// The history entry's summary.
    pub summary: String,
    /// When the sync happens.
    pub synced_at: SyncTime,
}

/// What a successful sync did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncOutcome {
    /// The renderRef of the applied render.
    pub render_ref: String,
    /// Whether a history entry was added (false: no store, already recorded, or the
    /// record failed and was logged).
    pub recorded: bool,
    /// What GC did (`None`: no store, GC off, or GC failed and was logged).
    pub gc: Option<GcPlan>,
}

/// How a Release's finalization went.
#[derive(Debug)]
pub enum Finalization {
    /// Everything is deleted: remove the finalizer.
    Done {
        /// Keys deleted by this run (0 on a second run).
        deleted: u32,
    },
    /// A delete failed: keep the finalizer and retry.
    Retry(Error),
}

/// The controller's use of the render store.
#[derive(Debug, Clone)]
pub struct Controller {
    store: Option<RenderStore>,
    runtime: Arc<Runtime>,
}

/// The objects of a canonical render (one JSON object a line).
fn canonical_objects(canonical: &[u8]) -> Vec<Vec<u8>> {
    canonical
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

impl Controller {
    /// A controller over `store` (`None`: no render store).
    pub fn new(store: Option<RenderStore>) -> crate::Result<Self> {
        let runtime = match &store {
            Some(s) => s.runtime().clone(),
            None => Runtime::shared()?,
        };
        Ok(Controller { store, runtime })
    }

    /// The store, if there is one.
    pub fn store(&self) -> Option<&RenderStore> {
        self.store.as_ref()
    }

    /// One sync, in the order of CONTRACT.md §7: dry run; persist (a failure
    /// applies nothing: `DeployFailed`); apply; then, only after a full success,
    /// record-history and GC, whose errors are logged and never fail the sync.
    pub async fn sync(
        &self,
        release: &Release,
        request: &SyncRequest,
        applier: &mut dyn Applier,
    ) -> Result<SyncOutcome, SyncError> {
        let objects = &request.objects;
        applier
            .dry_run(objects)
            .await
            .map_err(|e| caused(Reason::DryRunFailed, "", e))?;

        let render_ref = match &self.store {
            Some(store) => store.put_render(release, objects).await.map_err(|e| {
                caused(
                    Reason::DeployFailed,
                    "persisting the render failed, nothing was applied: ",
                    e,
                )
            })?,
            None => self
                .runtime
                .render_ref(objects)
                .await
                .map_err(|e| caused(Reason::DeployFailed, "", e))?,
        };

        applier
            .apply(objects)
            .await
            .map_err(|e| caused(Reason::ApplyFailed, "", e))?;

        let mut outcome = SyncOutcome {
            render_ref: render_ref.clone(),
            recorded: false,
            gc: None,
        };
        let Some(store) = &self.store else {
            return Ok(outcome);
        };
        let entry = NewEntry {
            render_ref: render_ref.clone(),
            synced_at: request.synced_at,
            summary: request.summary.clone(),
        };
        match store.record_history(release, &entry).await {
            Ok(added) => outcome.recorded = added,
            Err(e) => tracing::error!(
                release = %release, render_ref = %render_ref, error = %e,
                "recording history failed; the sync stays successful and the history has a gap"
            ),
        }
        if let Retention::Keep(keep) = effective_keep_history(request.keep_history) {
            let protected = protected_refs(Some(&render_ref), &request.refs);
            match store.gc(release, keep, &protected, false).await {
                Ok(plan) => outcome.gc = Some(plan),
                Err(e) => tracing::error!(
                    release = %release, error = %e,
                    "render-store GC failed; the reconcile goes on"
                ),
            }
        }
        // The release index (CONTRACT.md §3) is a cache of what each render holds: the
        // new render is indexed and what GC removed dropped, in one call after both. A
        // failure loses nothing (queries read what the index lacks) and fails no sync.
        let gc_deleted = outcome.gc.as_ref().is_some_and(GcPlan::deletes_anything);
        if let Some(read_missing) = index_update(outcome.recorded, gc_deleted)
            && let Err(e) = store.index_release(release, read_missing).await
        {
            tracing::warn!(
                release = %release, error = %e,
                "updating the release index failed; the sync stays successful"
            );
        }
        Ok(outcome)
    }

    /// Whether a pin can be honoured: no pin, or a pin to the current render, applies
    /// the current render; a pin to another render needs the store.
    pub fn check_pin(
        &self,
        pin: Option<&str>,
        current_ref: &str,
    ) -> Result<PinDecision, SyncError> {
        render_store_guest::policy::pin_decision(pin, current_ref, self.store.is_some())
            .map_err(|message| sync_error(Reason::Pinned, message))
    }

    /// Applies the last healthy render (a rollback by failure policy): records no
    /// history and runs no GC. Without a store, or without a last healthy render,
    /// returns `Ok(None)` without an apply.
    pub async fn apply_last_healthy(
        &self,
        release: &Release,
        refs: &ReleaseRefs,
        applier: &mut dyn Applier,
    ) -> Result<Option<String>, SyncError> {
        let (Some(store), Some(target)) = (
            &self.store,
            refs.last_healthy.as_deref().filter(|r| !r.is_empty()),
        ) else {
            return Ok(None);
        };
        let canonical = store
            .get_render(release, target)
            .await
            .map_err(|e| caused(Reason::RollbackFailed, &format!("reading {target}: "), e))?;
        applier
            .apply(&canonical_objects(&canonical))
            .await
            .map_err(|e| caused(Reason::ApplyFailed, "", e))?;
        Ok(Some(target.to_string()))
    }

    /// Deletes the Release's renders and history once its inventory is gone. A failed
    /// delete keeps the finalizer ([`Finalization::Retry`]); a second run is a no-op.
    pub async fn finalize(&self, release: &Release) -> Finalization {
        match &self.store {
            None => Finalization::Done { deleted: 0 },
            Some(store) => match store.delete_release(release).await {
                Ok(deleted) => Finalization::Done { deleted },
                Err(e) => {
                    tracing::warn!(release = %release, error = %e, "deleting the release's renders failed; will retry");
                    Finalization::Retry(e)
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_count_is_zero_without_a_store() {
        assert_eq!(history_count(None, None), 0);
        assert_eq!(history_count(None, Some(7)), 0);
        let store = RenderStore::open("mem://").unwrap();
        assert_eq!(history_count(store.as_ref(), None), 10);
        assert_eq!(history_count(store.as_ref(), Some(7)), 7);
        assert_eq!(history_count(store.as_ref(), Some(0)), 0);
    }

    #[test]
    fn canonical_splits_into_objects() {
        assert_eq!(
            canonical_objects(b"{}\n{\"a\":1}\n"),
            [b"{}".to_vec(), b"{\"a\":1}".to_vec()]
        );
        assert!(canonical_objects(b"").is_empty());
    }
}
