//! A store operation as data: what the CLI runs and a trace records. One place maps
//! each operation onto the [`RenderStore`] method that does it, and it and its result
//! onto the WIT `trace` types the component writes traces and JSON from.

use crate::error::Result;
use crate::runtime::{objects_arg, wit_trace};
use crate::store::{Grace, RenderStore};
use crate::types::{GcPlan, HistoryEntry, NewEntry, Release};

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

impl Operation {
    /// The operation as the WIT `trace.operation`.
    pub(crate) fn to_wit(&self) -> wit_trace::Operation {
        use wit_trace::Operation as O;
        match self.clone() {
            Operation::PutRender { release, objects } => O::PutRender(wit_trace::PutRenderArgs {
                release: (&release).into(),
                objects: objects_arg(&objects),
            }),
            Operation::GetRender {
                release,
                render_ref,
            } => O::GetRender(wit_trace::RenderRefArgs {
                release: (&release).into(),
                render_ref,
            }),
            Operation::HasHistoryRef {
                release,
                render_ref,
            } => O::HasHistoryRef(wit_trace::RenderRefArgs {
                release: (&release).into(),
                render_ref,
            }),
            Operation::RecordHistory { release, entry } => {
                O::RecordHistory(wit_trace::RecordHistoryArgs {
                    release: (&release).into(),
                    entry: (&entry).into(),
                })
            }
            Operation::ListHistory { release } => O::ListHistory((&release).into()),
            Operation::Gc {
                release,
                keep,
                protected,
                dry_run,
                grace,
            } => O::Gc(wit_trace::GcArgs {
                release: (&release).into(),
                keep,
                protected,
                dry_run,
                now: grace.now.into(),
                grace_seconds: grace.seconds,
            }),
            Operation::DeleteRelease { release } => O::DeleteRelease((&release).into()),
        }
    }
}

impl Output {
    /// The output as a successful WIT `trace.outcome`.
    pub(crate) fn to_wit(&self) -> wit_trace::Outcome {
        use wit_trace::Outcome as O;
        match self.clone() {
            Output::RenderRef(r) => O::PutRender(Ok(r)),
            // A trace records the bytes whatever form they crossed in.
            Output::Render(bytes) => O::GetRender(Ok(bytes)),
            Output::Recorded(yes) => O::HasHistoryRef(Ok(yes)),
            Output::Added(yes) => O::RecordHistory(Ok(yes)),
            Output::Entries(entries) => {
                O::ListHistory(Ok(entries.iter().map(Into::into).collect()))
            }
            Output::Plan(plan) => O::Gc(Ok((&plan).into())),
            Output::Deleted(n) => O::DeleteRelease(Ok(n)),
        }
    }
}
