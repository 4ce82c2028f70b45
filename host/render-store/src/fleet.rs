//! Finding the releases of a store with delimiter listings (CONTRACT.md §2), a page at a
//! time: one listing of the store's root for its namespaces, one of each namespace for
//! its releases, and nothing per release. On a cloud bucket a listing is one request per
//! 1,000 folders, so finding 10,000 releases in 10 namespaces takes 11 requests, where
//! listing every key took one per 1,000 keys and a listing per release took 10,000.

use crate::bucket::Bucket;
use crate::error::{Error, Result};
use crate::store::RenderStore;
use crate::types::Release;

/// How many listings and reads of a fleet listing are in flight at once: enough to hide
/// a cloud's round trips, few enough that a server's fleet page does not crowd out
/// every other request's calls.
pub const FLEET_CONCURRENCY: usize = 16;

/// A folder a fleet listing could not list: what it holds is not in the answer, which
/// is therefore partial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlisted {
    /// The folder, `<namespace>/` or `<namespace>/<name>/`.
    pub folder: String,
    /// Why, as the bucket said it (it may name paths and backend details: a server
    /// logs it rather than showing it).
    pub error: String,
}

/// Releases found by delimiter listings, in order of namespace and name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseNames {
    /// The releases of this page, sorted by namespace, then name.
    pub releases: Vec<Release>,
    /// The last release of this page, when more follow: the `after` of the next page.
    pub next_after: Option<Release>,
    /// The namespace folders up to this page's end that could not be listed.
    pub unlisted: Vec<Unlisted>,
    /// What the listings met up to this page's end that is not a release: folders whose
    /// names are not a valid namespace or name (with their trailing `/`) and keys lying
    /// directly in the root or a namespace folder. Keys under them are foreign to the
    /// store (`verify` reports them).
    pub others: Vec<String>,
}

/// The releases after `after` (by namespace, then name; all when `None`), at most
/// `limit` of them (all when `None`), of the namespace `namespace` alone when given.
///
/// Calls: `list_delimited("")` (unless `namespace` is given), then `list_delimited` of
/// each namespace folder from `after`'s on, [`FLEET_CONCURRENCY`] at a time, until the
/// page is full: a page of N releases costs one listing of the root and of the
/// namespaces it spans, however many releases the store holds. Which folders are
/// releases the component decides (their names must be a valid namespace and name).
///
/// Fail closed: a root listing that fails is the error; a namespace folder that cannot
/// be listed is in [`ReleaseNames::unlisted`], never taken for an empty namespace.
///
/// It runs within the store's deadline and cancellation, as the store's operations do.
pub async fn find_releases(
    store: &RenderStore,
    namespace: Option<&str>,
    after: Option<&Release>,
    limit: Option<usize>,
) -> Result<ReleaseNames> {
    store
        .within(find_releases_unbounded(store, namespace, after, limit))
        .await?
}

async fn find_releases_unbounded(
    store: &RenderStore,
    namespace: Option<&str>,
    after: Option<&Release>,
    limit: Option<usize>,
) -> Result<ReleaseNames> {
    let bucket = store.bucket();
    let rt = store.runtime();
    let mut found = ReleaseNames::default();
    let mut namespaces: Vec<String> = match namespace {
        Some(ns) => {
            // The component judges the name; a release name that is surely valid goes
            // with it.
            rt.release_prefix(&Release::new(ns, "a")).await?;
            vec![ns.to_string()]
        }
        None => {
            let root = bucket.list_delimited("").await?;
            found.others.extend(root.objects.into_iter().map(|o| o.key));
            root.folders
                .into_iter()
                .map(|f| f.trim_end_matches('/').to_string())
                .collect()
        }
    };
    namespaces.sort_unstable();
    if let Some(after) = after {
        namespaces.retain(|ns| *ns >= after.namespace);
    }
    let want = limit.map(|n| n.saturating_add(1));
    // Candidates in order, validated as they come, until one more than the page holds
    // is found (the sign that another page follows).
    let mut valid: Vec<Release> = Vec::new();
    let mut unlisted: Vec<Unlisted> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    'chunks: for chunk in namespaces.chunks(FLEET_CONCURRENCY) {
        let listings = futures::future::join_all(
            chunk
                .iter()
                .map(|ns| list_namespace(bucket.as_ref(), ns.clone())),
        )
        .await;
        for (ns, listing) in chunk.iter().zip(listings) {
            let listing = match listing {
                Ok(l) => l,
                Err(e) => {
                    unlisted.push(Unlisted {
                        folder: format!("{ns}/"),
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            others.extend(listing.objects.into_iter().map(|o| o.key));
            let mut names: Vec<String> = listing
                .folders
                .iter()
                .map(|f| f[ns.len() + 1..].trim_end_matches('/').to_string())
                .collect();
            names.sort_unstable();
            for name in names {
                if after.is_some_and(|a| a.namespace == *ns && name <= a.name) {
                    continue;
                }
                let release = Release::new(ns.clone(), name);
                match rt.release_prefix(&release).await {
                    Ok(_) => valid.push(release),
                    Err(Error::InvalidInput(_)) => {
                        others.push(format!("{}/{}/", release.namespace, release.name));
                    }
                    Err(e) => return Err(e),
                }
                if want.is_some_and(|w| valid.len() >= w) {
                    break 'chunks;
                }
            }
        }
    }
    if let Some(limit) = limit
        && valid.len() > limit
    {
        valid.truncate(limit);
        let last = valid.last().cloned();
        found.next_after = last;
    }
    // What lies past this page's end is the next page's to report.
    let end = found
        .next_after
        .as_ref()
        .map(|r| (r.namespace.clone(), r.name.clone()));
    let within = |ns: &str, name: &str| {
        end.as_ref()
            .is_none_or(|(e_ns, e_name)| (ns, name) <= (e_ns.as_str(), e_name.as_str()))
    };
    found.unlisted = unlisted
        .into_iter()
        .filter(|u| within(u.folder.trim_end_matches('/'), ""))
        .collect();
    found.others.extend(others.into_iter().filter(|o| {
        let mut parts = o.splitn(3, '/');
        within(parts.next().unwrap_or(""), parts.next().unwrap_or(""))
    }));
    found.releases = valid;
    Ok(found)
}

async fn list_namespace(
    bucket: &dyn Bucket,
    ns: String,
) -> std::result::Result<crate::bucket::Delimited, crate::bucket::BucketError> {
    bucket.list_delimited(&format!("{ns}/")).await
}

/// Every release of the store (or of `namespace`), page after page of
/// [`find_releases`], with what could not be listed and what is not a release.
pub async fn all_releases(store: &RenderStore, namespace: Option<&str>) -> Result<ReleaseNames> {
    find_releases(store, namespace, None, None).await
}

/// What a question asked of every release answered: each release with its answer, in
/// release order, and the folders that could not be listed (whose releases were not
/// asked).
pub(crate) struct EachRelease<T> {
    pub answers: Vec<(Release, Result<T>)>,
    pub unlisted: Vec<Unlisted>,
    /// The last release asked, when a page of them was asked and more follow.
    pub next_after: Option<Release>,
}

/// Which releases a fleet question asks, in order of namespace and name: those after
/// `after` (all when `None`), at most `limit` of them (all when `None`). A server pages
/// a fleet answer by releases this way, with no total: each page lists only as far as
/// its own releases ([`find_releases`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReleaseRange<'a> {
    /// The release the range starts after: a page's `next_after`.
    pub after: Option<&'a Release>,
    /// The most releases the range holds.
    pub limit: Option<usize>,
}

/// Asks `each` of every release of the store (or of `namespace`), found by
/// [`all_releases`], [`FLEET_CONCURRENCY`] releases at once, within the store's
/// deadline. A release's error is its answer, except a deadline or a cancel, which ends
/// the whole walk: what was not asked must not read as answered.
pub(crate) async fn each_release<T, F, Fut>(
    store: &RenderStore,
    namespace: Option<&str>,
    each: F,
) -> Result<EachRelease<T>>
where
    F: Fn(Release) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    each_release_of(store, namespace, ReleaseRange::default(), each).await
}

/// [`each_release`] of the releases of `range` alone, found by [`find_releases`].
pub(crate) async fn each_release_of<T, F, Fut>(
    store: &RenderStore,
    namespace: Option<&str>,
    range: ReleaseRange<'_>,
    each: F,
) -> Result<EachRelease<T>>
where
    F: Fn(Release) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    use futures::StreamExt;
    store
        .within(async {
            let names = find_releases_unbounded(store, namespace, range.after, range.limit).await?;
            let mut answers: Vec<(Release, Result<T>)> = futures::stream::iter(names.releases)
                .map(|release| {
                    let answer = each(release.clone());
                    async move { (release, answer.await) }
                })
                .buffered(FLEET_CONCURRENCY)
                .collect()
                .await;
            if let Some(at) = answers
                .iter()
                .position(|(_, a)| a.as_ref().is_err_and(|e| e.is_cut()))
                && let (_, Err(cut)) = answers.swap_remove(at)
            {
                return Err(cut);
            }
            Ok(EachRelease {
                answers,
                unlisted: names.unlisted,
                next_after: names.next_after,
            })
        })
        .await?
}

/// Room in a caller's memory budget for what a fleet query reads of one release (its
/// renders, its index), taken before the release is read and given back when it is
/// done. A server's fleet pages take it from the budget its diff pages take from, so
/// concurrent queries queue for room instead of holding the store's largest renders
/// together; the CLI, alone in its process, takes none ([`Unbudgeted`]).
pub trait ReadBudget: Sync {
    /// The room held: given back when dropped.
    type Held: Send;
    /// Why no room was had (none came free in time): the query is not answered.
    type Busy: Send;
    /// Whether the budget weighs what is read: when not, no call is made to learn the
    /// sizes of what a release's reading holds.
    const WEIGHS: bool = true;

    /// Room for reading `bytes` of stored objects of `release` at once (their stored
    /// sizes, as listings give them: what a read holds for each is the budget's to
    /// weigh).
    fn reserve(
        &self,
        release: &Release,
        bytes: u64,
    ) -> impl std::future::Future<Output = std::result::Result<Self::Held, Self::Busy>> + Send;
}

/// No budget: every release is read as soon as the walk reaches it, and the sizes a
/// budget would weigh are never asked for (no call is made to learn them).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unbudgeted;

impl ReadBudget for Unbudgeted {
    type Held = ();
    type Busy = std::convert::Infallible;
    const WEIGHS: bool = false;

    async fn reserve(
        &self,
        _release: &Release,
        _bytes: u64,
    ) -> std::result::Result<(), std::convert::Infallible> {
        Ok(())
    }
}

/// The stored sizes of `keys` (all in one folder) from one listing of that folder:
/// what a budget weighs before the objects are read. A key the listing does not hold
/// weighs nothing (its read will say it is missing); when the listing fails, each
/// weighs `unknown`, so a store that answers badly is never a reason to read unweighed.
pub(crate) async fn sizes_in_folder(
    store: &RenderStore,
    keys: &[String],
    unknown: u64,
) -> Vec<u64> {
    let Some(folder) = keys
        .first()
        .and_then(|k| k.rsplit_once('/'))
        .map(|(folder, _)| format!("{folder}/"))
    else {
        return Vec::new();
    };
    match store.bucket().list(&folder).await {
        Ok(listed) => {
            let sizes: std::collections::HashMap<String, u64> =
                listed.into_iter().map(|m| (m.key, m.size)).collect();
            keys.iter()
                .map(|k| sizes.get(k).copied().unwrap_or(0))
                .collect()
        }
        Err(_) => vec![unknown; keys.len()],
    }
}

/// The sum of the two largest of `sizes`: what a reader holding two renders at a time
/// holds at most.
pub(crate) fn largest_pair(sizes: &[u64]) -> u64 {
    let mut top = [0u64; 2];
    for &s in sizes {
        if s > top[0] {
            top = [s, top[0]];
        } else if s > top[1] {
            top[1] = s;
        }
    }
    top[0].saturating_add(top[1])
}
