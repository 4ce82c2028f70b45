//! Where each image ran across the fleet, and when: every release's history read by
//! the component (`store.release-images`), [`crate::fleet::FLEET_CONCURRENCY`] releases at once.
//!
//! "Ran" is what the history records: an image was in a release's recorded render from
//! an entry's sync until the next entry's. A rollback adds no entry, so the interval of
//! a render rolled back to is the one recorded.

use crate::error::Result;
use crate::fleet::{Unlisted, each_release};
use crate::store::RenderStore;
use crate::types::{ImageInterval, Release, SyncTime};

/// The image intervals of one release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseImages {
    /// The release.
    pub release: Release,
    /// Its intervals that matched, sorted by image then start.
    pub intervals: Vec<ImageInterval>,
}

/// What an images query found, and what it could not see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetImages {
    /// Each release with a matching interval, by namespace then name.
    pub releases: Vec<ReleaseImages>,
    /// Namespace folders that could not be listed: their releases are not in the
    /// answer.
    pub unlisted: Vec<Unlisted>,
    /// Releases whose history or renders could not be read, and why: not in the answer.
    pub unread: Vec<(Release, String)>,
}

impl FleetImages {
    /// Whether the answer covers the whole fleet asked about: nothing unlisted or
    /// unread. A partial answer must not be read as "not anywhere".
    pub fn complete(&self) -> bool {
        self.unlisted.is_empty() && self.unread.is_empty()
    }
}

/// The intervals, across the releases of the store (or of `namespace`), during which an
/// image matching `pattern` (every image when `None`) was in a release's recorded render
/// and which meet the window from `since` until `until`.
///
/// Calls: the delimiter listings of [`all_releases`], then for each release the calls
/// of `store.release-images` (one listing of its history, one read of its index, and
/// one read of each render the index does not name: none once it is indexed),
/// [`crate::fleet::FLEET_CONCURRENCY`] releases at once, within the store's deadline. A bad
/// pattern is [`crate::Error::InvalidInput`] before any call; a release that cannot be read is
/// in [`FleetImages::unread`], never taken for one without the image.
pub async fn images(
    store: &RenderStore,
    namespace: Option<&str>,
    pattern: Option<&str>,
    since: Option<SyncTime>,
    until: Option<SyncTime>,
) -> Result<FleetImages> {
    if let Some(pattern) = pattern {
        store.runtime().check_image_pattern(pattern).await?;
    }
    let done = each_release(store, namespace, |release| async move {
        store.release_images(&release, pattern, since, until).await
    })
    .await?;
    let mut out = FleetImages {
        unlisted: done.unlisted,
        ..FleetImages::default()
    };
    for (release, found) in done.answers {
        match found {
            Ok(intervals) if intervals.is_empty() => {}
            Ok(intervals) => out.releases.push(ReleaseImages { release, intervals }),
            Err(e) => out.unread.push((release, e.to_string())),
        }
    }
    Ok(out)
}
