//! A store operation as data: the guest's [`Operation`] and [`Output`], what the CLI
//! runs and a trace records. One place maps each operation onto the [`RenderStore`]
//! method that does it, and it and its result onto the WIT `trace` types the component
//! writes traces and JSON from.

use crate::error::Result;
use crate::runtime::{objects_arg, wit_trace};
use crate::store::RenderStore;

pub use render_store_guest::trace::{Operation, Output};

impl RenderStore {
    /// Runs `operation` on this store.
    pub async fn run(&self, operation: &Operation) -> Result<Output> {
        let store = self;
        Ok(match operation {
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

/// `operation` as the WIT `trace.operation`. Matched by reference: a render's objects
/// are copied once, into the WIT list, not cloned first.
pub(crate) fn operation_to_wit(operation: &Operation) -> wit_trace::Operation {
    use wit_trace::Operation as O;
    match operation {
        Operation::PutRender { release, objects } => O::PutRender(wit_trace::PutRenderArgs {
            release: release.clone(),
            objects: objects_arg(objects),
        }),
        Operation::GetRender {
            release,
            render_ref,
        } => O::GetRender(wit_trace::RenderRefArgs {
            release: release.clone(),
            render_ref: render_ref.clone(),
        }),
        Operation::HasHistoryRef {
            release,
            render_ref,
        } => O::HasHistoryRef(wit_trace::RenderRefArgs {
            release: release.clone(),
            render_ref: render_ref.clone(),
        }),
        Operation::RecordHistory { release, entry } => {
            O::RecordHistory(wit_trace::RecordHistoryArgs {
                release: release.clone(),
                entry: entry.clone(),
            })
        }
        Operation::ListHistory { release } => O::ListHistory(release.clone()),
        Operation::Gc {
            release,
            keep,
            protected,
            dry_run,
            grace,
        } => O::Gc(wit_trace::GcArgs {
            release: release.clone(),
            keep: *keep,
            protected: protected.clone(),
            dry_run: *dry_run,
            now: grace.now,
            grace_seconds: grace.seconds,
        }),
        Operation::DeleteRelease { release } => O::DeleteRelease(release.clone()),
    }
}

/// `output` as a successful WIT `trace.outcome`.
pub(crate) fn output_to_wit(output: &Output) -> wit_trace::Outcome {
    use wit_trace::Outcome as O;
    match output.clone() {
        Output::RenderRef(r) => O::PutRender(Ok(r)),
        // A trace records the bytes whatever form they crossed in.
        Output::Render(bytes) => O::GetRender(Ok(bytes)),
        Output::Recorded(yes) => O::HasHistoryRef(Ok(yes)),
        Output::Added(yes) => O::RecordHistory(Ok(yes)),
        Output::Entries(entries) => O::ListHistory(Ok(entries.clone())),
        Output::Plan(plan) => O::Gc(Ok(plan.clone())),
        Output::Deleted(n) => O::DeleteRelease(Ok(n)),
    }
}
