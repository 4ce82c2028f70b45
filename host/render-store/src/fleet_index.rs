//! The release indexes of a whole store brought up to date (`render-store reindex`):
//! for renders stored before the index existed, or written by a controller that does
//! not keep it (CONTRACT.md §3), [`crate::fleet::FLEET_CONCURRENCY`] releases at once.

use crate::error::Result;
use crate::fleet::{Unlisted, each_release};
use crate::store::RenderStore;
use crate::types::{IndexReport, Release};

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
/// delimiter listings of [`crate::fleet::all_releases`], then per release one listing of its history,
/// one read of its index, one read of each render it lacks and at most one write,
/// [`crate::fleet::FLEET_CONCURRENCY`] releases at once, within the store's deadline.
/// With `force` every index is rebuilt from the renders alone (`store.rebuild-index`).
pub async fn reindex(
    store: &RenderStore,
    namespace: Option<&str>,
    force: bool,
) -> Result<FleetIndex> {
    let done = each_release(store, namespace, |release| async move {
        if force {
            store.rebuild_index(&release).await
        } else {
            store.index_release(&release, true).await
        }
    })
    .await?;
    let mut out = FleetIndex {
        unlisted: done.unlisted,
        ..FleetIndex::default()
    };
    for (release, report) in done.answers {
        match report {
            Ok(report) => out.releases.push((release, report)),
            Err(e) => out.failed.push((release, e.to_string())),
        }
    }
    Ok(out)
}
