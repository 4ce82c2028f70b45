//! A store operation as data: what the CLI runs, what a trace records and what a replay
//! re-runs. One place maps each operation onto the [`RenderStore`] method that does it
//! and its result onto the JSON of TRACES.md.

use crate::error::{Error, Result};
use crate::store::{Grace, RenderStore};
use crate::types::{GcPlan, HistoryEntry, NewEntry, Release};
use serde_json::{Value, json};

/// One operation of the WIT `store` interface with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `put-render`: the objects' JSON bytes, in render order.
    PutRender {
        /// The release.
        release: Release,
        /// The objects.
        objects: Vec<Vec<u8>>,
    },
    /// `get-render`.
    GetRender {
        /// The release.
        release: Release,
        /// The render asked for.
        render_ref: String,
    },
    /// `has-history-ref`.
    HasHistoryRef {
        /// The release.
        release: Release,
        /// The render looked for.
        render_ref: String,
    },
    /// `record-history`.
    RecordHistory {
        /// The release.
        release: Release,
        /// The entry to record.
        entry: NewEntry,
    },
    /// `list-history`.
    ListHistory {
        /// The release.
        release: Release,
    },
    /// `gc`.
    Gc {
        /// The release.
        release: Release,
        /// Entries to keep; 0 or less: no GC.
        keep: i64,
        /// Renders kept whatever the history says.
        protected: Vec<String>,
        /// Only plan.
        dry_run: bool,
        /// The grace period and the time it is judged against.
        grace: Grace,
    },
    /// `delete-release`.
    DeleteRelease {
        /// The release.
        release: Release,
    },
}

/// What an operation returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// `put-render`: the renderRef.
    RenderRef(String),
    /// `get-render`: the canonical bytes.
    Render(Vec<u8>),
    /// `has-history-ref`.
    Recorded(bool),
    /// `record-history`: whether an entry was added.
    Added(bool),
    /// `list-history`: the entries, oldest first.
    Entries(Vec<HistoryEntry>),
    /// `gc`: the plan carried out (or, in a dry run, that would be).
    Plan(GcPlan),
    /// `delete-release`: how many keys were deleted.
    Deleted(u32),
}

impl Operation {
    /// The WIT name of the operation (`put-render`, `gc`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Operation::PutRender { .. } => "put-render",
            Operation::GetRender { .. } => "get-render",
            Operation::HasHistoryRef { .. } => "has-history-ref",
            Operation::RecordHistory { .. } => "record-history",
            Operation::ListHistory { .. } => "list-history",
            Operation::Gc { .. } => "gc",
            Operation::DeleteRelease { .. } => "delete-release",
        }
    }

    /// The release the operation serves.
    pub fn release(&self) -> &Release {
        match self {
            Operation::PutRender { release, .. }
            | Operation::GetRender { release, .. }
            | Operation::HasHistoryRef { release, .. }
            | Operation::RecordHistory { release, .. }
            | Operation::ListHistory { release }
            | Operation::Gc { release, .. }
            | Operation::DeleteRelease { release } => release,
        }
    }

    /// Runs the operation on `store`.
    pub async fn run(&self, store: &RenderStore) -> Result<Output> {
        Ok(match self {
            Operation::PutRender { release, objects } => {
                Output::RenderRef(store.put_render(release, objects).await?)
            }
            Operation::GetRender {
                release,
                render_ref,
            } => Output::Render(store.get_render(release, render_ref).await?),
            Operation::HasHistoryRef {
                release,
                render_ref,
            } => Output::Recorded(store.has_history_ref(release, render_ref).await?),
            Operation::RecordHistory { release, entry } => {
                Output::Added(store.record_history(release, entry).await?)
            }
            Operation::ListHistory { release } => {
                Output::Entries(store.list_history(release).await?)
            }
            Operation::Gc {
                release,
                keep,
                protected,
                dry_run,
                grace,
            } => Output::Plan(
                store
                    .gc_with(release, *keep, protected, *dry_run, *grace)
                    .await?,
            ),
            Operation::DeleteRelease { release } => {
                Output::Deleted(store.delete_release(release).await?)
            }
        })
    }
}

impl Output {
    /// The `ok` value of a trace's result line (TRACES.md).
    pub fn to_json(&self) -> Value {
        match self {
            Output::RenderRef(r) => json!({ "renderRef": r }),
            Output::Render(bytes) => json!({ "render": crate::trace::base64_encode(bytes) }),
            Output::Recorded(b) => json!({ "recorded": b }),
            Output::Added(b) => json!({ "added": b }),
            Output::Entries(entries) => json!({
                "entries": entries.iter().map(|e| json!({
                    "key": e.key,
                    "renderRef": e.render_ref,
                    "syncedAt": {
                        "seconds": e.synced_at.seconds,
                        "nanoseconds": e.synced_at.nanoseconds,
                    },
                    "summary": e.summary,
                })).collect::<Vec<_>>()
            }),
            Output::Plan(plan) => crate::json_view::plan_json(plan),
            Output::Deleted(n) => json!({ "deleted": n }),
        }
    }
}

/// The `error` value of a trace's result line: the WIT `error` variant, or `trap` for a
/// call the host stopped.
pub fn error_json(e: &Error) -> Value {
    let (kind, message) = match e {
        Error::InvalidInput(m) => ("invalid-input", m.clone()),
        Error::InvalidObject { index, message } => {
            return json!({ "kind": "invalid-object", "index": index, "message": message });
        }
        Error::NotFound(m) => ("not-found", m.clone()),
        Error::Corrupt(m) => ("corrupt", m.clone()),
        Error::Bucket(m) => ("bucket", m.clone()),
        other => ("trap", other.to_string()),
    };
    json!({ "kind": kind, "message": message })
}
