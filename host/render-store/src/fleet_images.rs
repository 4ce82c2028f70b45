//! Where each image ran across the fleet, and when: every release's history read by
//! the component (`store.release-images`), [`crate::fleet::FLEET_CONCURRENCY`] releases at once.
//!
//! "Ran" is what the history records: an image was in a release's recorded render from
//! an entry's sync until the next entry's. A rollback adds no entry, so the interval of
//! a render rolled back to is the one recorded.

use crate::error::Result;
use crate::fleet::{ReadBudget, ReleaseRange, Unbudgeted, Unlisted, each_release_of, largest_pair};
use crate::store::RenderStore;
use crate::types::{ImageInterval, MAX_RENDER_BYTES, Release, SyncTime};
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// The last release asked, when a [`ReleaseRange`] with a limit was asked and more
    /// releases follow: the `after` of the next page.
    pub next_after: Option<Release>,
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
/// Calls: the delimiter listings of [`crate::fleet::all_releases`], then for each release the calls
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
    let every = ReleaseRange::default();
    match images_within(
        store,
        namespace,
        pattern,
        (since, until),
        every,
        &Unbudgeted,
    )
    .await?
    {
        Ok(found) => Ok(found),
        Err(never) => match never {},
    }
}

/// [`images`] of the releases of `range` (a page of the fleet, by releases), in the
/// window `(since, until)`, each release read within room `budget` gives;
/// `Ok(Err(busy))` when the budget had none.
///
/// A budget that weighs (not [`Unbudgeted`]) first gets, for each release, the size of
/// its index (one `exists`) and of its renders (one listing of its `renders/`), and is
/// asked for room for the index and the largest two renders (what the component may
/// hold while it reads the release), held until the release is read. Once a release
/// found no room, the releases not yet begun are not read.
pub async fn images_within<B: ReadBudget>(
    store: &RenderStore,
    namespace: Option<&str>,
    pattern: Option<&str>,
    (since, until): (Option<SyncTime>, Option<SyncTime>),
    range: ReleaseRange<'_>,
    budget: &B,
) -> Result<std::result::Result<FleetImages, B::Busy>> {
    if let Some(pattern) = pattern {
        store.runtime().check_image_pattern(pattern).await?;
    }
    let gave_up = AtomicBool::new(false);
    let gave_up = &gave_up;
    let done = each_release_of(store, namespace, range, |release| async move {
        if gave_up.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let bytes = if B::WEIGHS {
            weight(store, &release).await?
        } else {
            0
        };
        let _held = match budget.reserve(&release, bytes).await {
            Ok(held) => held,
            Err(busy) => {
                gave_up.store(true, Ordering::Relaxed);
                return Ok(Some(Err(busy)));
            }
        };
        let found = store
            .release_images(&release, pattern, since, until)
            .await?;
        Ok(Some(Ok(found)))
    })
    .await?;
    let mut out = FleetImages {
        unlisted: done.unlisted,
        next_after: done.next_after,
        ..FleetImages::default()
    };
    for (release, found) in done.answers {
        match found {
            Ok(None) => {}
            Ok(Some(Err(busy))) => return Ok(Err(busy)),
            Ok(Some(Ok(intervals))) if intervals.is_empty() => {}
            Ok(Some(Ok(intervals))) => out.releases.push(ReleaseImages { release, intervals }),
            Err(e) => out.unread.push((release, e.to_string())),
        }
    }
    Ok(Ok(out))
}

/// The stored bytes the component may hold at once while it answers for `release`: its
/// index and its two largest renders. What cannot be weighed (a failed call) weighs
/// the largest render the store takes, so a store that answers badly is never a reason
/// to read unweighed.
async fn weight(store: &RenderStore, release: &Release) -> Result<u64> {
    let rt = store.runtime();
    let unknown = MAX_RENDER_BYTES as u64;
    let index = match store.bucket().exists(&rt.index_key(release).await?).await {
        Ok(size) => size.unwrap_or(0),
        Err(_) => unknown,
    };
    let folder = format!("{}renders/", rt.release_prefix(release).await?);
    let renders = match store.bucket().list(&folder).await {
        Ok(listed) => largest_pair(&listed.iter().map(|m| m.size).collect::<Vec<_>>()),
        Err(_) => unknown.saturating_mul(2),
    };
    Ok(index.saturating_add(renders))
}
