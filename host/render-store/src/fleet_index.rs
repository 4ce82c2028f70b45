//! The release indexes of a whole store brought up to date (`render-store reindex`):
//! for renders stored before the index existed, or written by a controller that does
//! not keep it (CONTRACT.md §3), [`FLEET_CONCURRENCY`] releases at once.

use crate::error::Result;
use crate::fleet::{FLEET_CONCURRENCY, Unlisted, all_releases};
use crate::store::RenderStore;
use crate::types::{IndexReport, Release};
use futures::StreamExt;

/// What a reindex of many releases did, and what it could not do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetIndex {
    /// Each release indexed, by namespace then name, with what was done.
    pub releases: Vec<(Release, IndexReport)>,
    /// Namespace folders that could not be listed: their releases were not indexed.
    pub unlisted: Vec<Unlisted>,
    /// Releases whose index could not be brought up to date, and why.
    pub failed: Vec<(Release, String)>,
}

impl FleetIndex {
    /// Whether every release was indexed whole: nothing unlisted or failed, and no
    /// render left out because it could not be read.
    pub fn complete(&self) -> bool {
        self.unlisted.is_empty()
            && self.failed.is_empty()
            && self.releases.iter().all(|(_, r)| r.unreadable.is_empty())
    }
}

/// Brings the index of every release of the store (or of `namespace`) up to date with
/// its history, reading the renders each index lacks (`store.index-release`): the
/// delimiter listings of [`all_releases`], then per release one listing of its history,
/// one read of its index, one read of each render it lacks and at most one write,
/// [`FLEET_CONCURRENCY`] releases at once, within the store's deadline.
pub async fn reindex(store: &RenderStore, namespace: Option<&str>) -> Result<FleetIndex> {
    store
        .within(async {
            let names = all_releases(store, namespace).await?;
            let done: Vec<(Release, Result<IndexReport>)> = futures::stream::iter(names.releases)
                .map(|release| async move {
                    let report = store.index_release(&release, true).await;
                    (release, report)
                })
                .buffered(FLEET_CONCURRENCY)
                .collect()
                .await;
            let mut out = FleetIndex {
                unlisted: names.unlisted,
                ..FleetIndex::default()
            };
            for (release, report) in done {
                match report {
                    Ok(report) => out.releases.push((release, report)),
                    // The deadline or a cancel ends the whole run.
                    Err(e) if e.is_cut() => return Err(e),
                    Err(e) => out.failed.push((release, e.to_string())),
                }
            }
            Ok(out)
        })
        .await?
}
