//! What changed across the fleet in a window of time: every history entry of every
//! release (or of one namespace's) synced in the window, newest first, each with what
//! changed against the entry just older than it in its release
//! ([`crate::Runtime::summarize_changes`], the component's `logic.summarize-changes`).
//!
//! The host reads and converts; which objects, images and Secret keys changed is the
//! component's to say.
//!
//! The times are in the history keys, so the window and its order are known from the
//! listings alone: a page of the list reads only the entries and renders of its own
//! rows, however many entries the window holds.

use crate::error::{Error, Result};
use crate::fleet::{
    FLEET_CONCURRENCY, ReadBudget, Unbudgeted, Unlisted, all_releases, largest_pair,
    sizes_in_folder,
};
use crate::store::RenderStore;
use crate::types::{EntryRead, MAX_RENDER_BYTES, ParsedKey, Release, RenderChanges, SyncTime};
use futures::StreamExt;
use std::collections::BTreeMap;

/// How many releases are read at once. Each holds at most two renders while it is
/// read (an entry's and the one before it), so this bounds the renders in memory to
/// twice as many, however large the fleet.
pub const CHANGES_CONCURRENCY: usize = 4;

/// A history entry synced in the window, with what changed against the entry before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryChanges {
    /// The release.
    pub release: Release,
    /// Its place in the release's history: 0 the newest entry (the `@N` people type).
    pub position: usize,
    /// The entry's key.
    pub key: String,
    /// When it was synced (from the key).
    pub synced_at: SyncTime,
    /// The render it records.
    pub render_ref: String,
    /// The summary of its body.
    pub summary: String,
    /// The render of the entry just older than it in the release, in the window or
    /// not; `None` for the release's oldest entry, which compares against nothing.
    pub previous_render_ref: Option<String>,
    /// What changed from the previous render to this one.
    pub changes: RenderChanges,
}

/// The fleet's changes in a window (or a page of them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetChanges {
    /// The entries of the page, newest first (entries of the same time by namespace,
    /// then name).
    pub entries: Vec<EntryChanges>,
    /// How many entries the listings found in the window, on every page: what the
    /// pages are cut from.
    pub total: usize,
    /// Folders that could not be listed (a namespace, or a release's `history/`): the
    /// answer is partial, and says so, rather than leaving them out in silence.
    pub unlisted: Vec<Unlisted>,
    /// Releases of which an entry or a render the page needed could not be read (a
    /// blob that is corrupt, sealed under a key the keyring lacks, or that the bucket
    /// failed to give), and why: their entries are not in the answer, which is partial.
    pub unread: Vec<(Release, String)>,
}

impl FleetChanges {
    /// Whether the answer covers the whole fleet asked about: nothing unlisted or
    /// unread. A partial answer must not be read as "nothing else changed".
    pub fn complete(&self) -> bool {
        self.unlisted.is_empty() && self.unread.is_empty()
    }
}

/// Which part of the window's list, newest first, a call reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Page {
    /// Entries of the list before the page's first.
    pub skip: usize,
    /// At most this many entries (every one after `skip` when `None`).
    pub limit: Option<usize>,
}

/// Every history entry of the store's releases (of `namespace`'s alone when given)
/// synced from `since` (included) until `until` (excluded), each bound open when
/// `None`, newest first, each with what changed against the entry before it in its
/// release: [`fleet_changes_page`] of the whole list, without a budget.
pub async fn fleet_changes(
    store: &RenderStore,
    namespace: Option<&str>,
    since: Option<SyncTime>,
    until: Option<SyncTime>,
) -> Result<FleetChanges> {
    let whole = Page::default();
    match fleet_changes_page(store, namespace, since, until, whole, &Unbudgeted).await? {
        Ok(found) => Ok(found),
        Err(never) => match never {},
    }
}

/// The entries of `page` of the list [`fleet_changes`] gives, each release's rows read
/// within room `budget` gives; `Ok(Err(busy))` when the budget had none.
///
/// Calls: the delimiter listings of [`crate::fleet::all_releases`]; for each release a
/// listing of its `history/` ([`FLEET_CONCURRENCY`] at once; no entry read to select
/// the window or to order it: the times are in the keys); then, for each release with
/// rows on the page, [`CHANGES_CONCURRENCY`] at a time, one read of each of those
/// entries and one read of each render they need (each entry's and the one before it),
/// each read once where the rows follow each other. A budget that weighs (not
/// [`Unbudgeted`]) first gets one listing of the release's `renders/` for their sizes
/// and is asked for room for the largest two of them, held until the release is read:
/// a release's rows hold two renders at a time.
///
/// Fail closed: a folder that cannot be listed is in [`FleetChanges::unlisted`]; a
/// release of which an entry or a render the page needs does not read is in
/// [`FleetChanges::unread`], with why, never taken for one without changes (an entry
/// deleted since it was listed, by a concurrent GC, is left out: it is no longer in
/// the history). A deadline or a cancel ends the call. All within the store's deadline
/// and cancellation.
pub async fn fleet_changes_page<B: ReadBudget>(
    store: &RenderStore,
    namespace: Option<&str>,
    since: Option<SyncTime>,
    until: Option<SyncTime>,
    page: Page,
    budget: &B,
) -> Result<std::result::Result<FleetChanges, B::Busy>> {
    store
        .within(unbounded(store, namespace, since, until, page, budget))
        .await?
}

async fn unbounded<B: ReadBudget>(
    store: &RenderStore,
    namespace: Option<&str>,
    since: Option<SyncTime>,
    until: Option<SyncTime>,
    page: Page,
    budget: &B,
) -> Result<std::result::Result<FleetChanges, B::Busy>> {
    let found = all_releases(store, namespace).await?;
    let mut answer = FleetChanges {
        unlisted: found.unlisted,
        ..FleetChanges::default()
    };
    let listings: Vec<(Release, Result<Listing>)> = futures::stream::iter(found.releases)
        .map(|release| async move {
            let listing = history_of(store, &release).await;
            (release, listing)
        })
        .buffered(FLEET_CONCURRENCY)
        .collect()
        .await;
    let mut histories: Vec<(Release, Vec<Listed>)> = Vec::new();
    for (release, listing) in listings {
        match listing {
            Ok(Listing::Listed(history)) => histories.push((release, history)),
            Ok(Listing::Unlisted(u)) => answer.unlisted.push(u),
            Err(e) if e.is_cut() => return Err(e),
            Err(e) => answer.unread.push((release, e.to_string())),
        }
    }
    // The window's entries, newest first, from the keys alone.
    let window = |t: SyncTime| since.is_none_or(|s| t >= s) && until.is_none_or(|u| t < u);
    let mut rows: Vec<(usize, usize)> = histories
        .iter()
        .enumerate()
        .flat_map(|(r, (_, history))| {
            history
                .iter()
                .enumerate()
                .filter(|(_, e)| window(e.synced_at))
                .map(move |(i, _)| (r, i))
        })
        .collect();
    let time = |&(r, i): &(usize, usize)| histories[r].1[i].synced_at;
    // Stable: entries of one release and time stay in key order. The releases are in
    // namespace and name order already, so time alone orders the rest.
    rows.sort_by_key(|row| std::cmp::Reverse(time(row)));
    answer.total = rows.len();
    let mut shown: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(r, i) in rows
        .iter()
        .skip(page.skip)
        .take(page.limit.unwrap_or(usize::MAX))
    {
        shown.entry(r).or_default().push(i);
    }
    drop(rows);
    let mut reads = futures::stream::iter(shown)
        .map(|(r, mut indices)| {
            let (release, history) = &histories[r];
            indices.sort_unstable();
            async move {
                let rows = release_rows(store, release, history, &indices, budget).await;
                (release, rows)
            }
        })
        .buffered(CHANGES_CONCURRENCY);
    while let Some((release, rows)) = reads.next().await {
        match rows {
            Ok(Ok(entries)) => answer.entries.extend(entries),
            // Dropping the walk gives back the room the other releases hold.
            Ok(Err(busy)) => return Ok(Err(busy)),
            Err(e) if e.is_cut() => return Err(e),
            Err(e) => answer.unread.push((release.clone(), e.to_string())),
        }
    }
    answer.entries.sort_by(|a, b| {
        b.synced_at
            .cmp(&a.synced_at)
            .then_with(|| a.release.namespace.cmp(&b.release.namespace))
            .then_with(|| a.release.name.cmp(&b.release.name))
    });
    answer.unlisted.sort_by(|a, b| a.folder.cmp(&b.folder));
    answer
        .unread
        .sort_by(|a, b| (&a.0.namespace, &a.0.name).cmp(&(&b.0.namespace, &b.0.name)));
    Ok(Ok(answer))
}

/// An entry of a release's history as its key says it.
struct Listed {
    key: String,
    synced_at: SyncTime,
    render_ref: String,
}

/// A release's history as its listing gives it, in time order, or the folder that could
/// not be listed.
enum Listing {
    Listed(Vec<Listed>),
    Unlisted(Unlisted),
}

async fn history_of(store: &RenderStore, release: &Release) -> Result<Listing> {
    let rt = store.runtime();
    let folder = format!("{}history/", rt.release_prefix(release).await?);
    let keys: Vec<String> = match store.bucket().list(&folder).await {
        Ok(listed) => listed.into_iter().map(|m| m.key).collect(),
        Err(e) => {
            return Ok(Listing::Unlisted(Unlisted {
                folder,
                error: e.to_string(),
            }));
        }
    };
    let parsed = rt.parse_keys(release, &keys).await?;
    let mut history: Vec<Listed> = keys
        .into_iter()
        .zip(parsed)
        .filter_map(|(key, parsed)| match parsed {
            Some(ParsedKey::History(h)) => Some(Listed {
                key,
                synced_at: h.synced_at,
                render_ref: h.render_ref,
            }),
            _ => None,
        })
        .collect();
    // Key order is time order: the key starts with the time in a fixed-width layout.
    history.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(Listing::Listed(history))
}

/// The rows `indices` (ascending places in `history`, oldest first) of `release` with
/// their changes, read within room for the largest two renders they need.
async fn release_rows<B: ReadBudget>(
    store: &RenderStore,
    release: &Release,
    history: &[Listed],
    indices: &[usize],
    budget: &B,
) -> Result<std::result::Result<Vec<EntryChanges>, B::Busy>> {
    let rt = store.runtime();
    let bytes = if B::WEIGHS {
        let mut refs: Vec<&str> = indices
            .iter()
            .flat_map(|&i| i.checked_sub(1).into_iter().chain([i]))
            .map(|i| history[i].render_ref.as_str())
            .collect();
        refs.sort_unstable();
        refs.dedup();
        let mut keys = Vec::with_capacity(refs.len());
        for r in refs {
            keys.push(rt.render_key(release, r).await?);
        }
        largest_pair(&sizes_in_folder(store, &keys, MAX_RENDER_BYTES as u64).await)
    } else {
        0
    };
    let _held = match budget.reserve(release, bytes).await {
        Ok(held) => held,
        Err(busy) => return Ok(Err(busy)),
    };
    let wanted: Vec<String> = indices.iter().map(|&i| history[i].key.clone()).collect();
    let reads = store.read_history_entries(release, &wanted).await?;
    // The rows, each with its summary; then what each changed, compared in the sandbox
    // in one call (the renders are never handed to the host, and a run of consecutive
    // rows reads each render once).
    let mut rows = Vec::with_capacity(indices.len());
    for (&index, read) in indices.iter().zip(reads) {
        let entry = &history[index];
        let position = history.len() - 1 - index;
        let summary = match read {
            // Where encryption is required an entry that does not authenticate is no
            // change of the release's (CONTRACT.md §14): a planted one adds no row.
            EntryRead::Entry(e) if !e.trust.counts_where(store.encryption_required()) => {
                continue;
            }
            EntryRead::Entry(e) => e.summary,
            // Deleted since the listing (a concurrent GC): no longer in the history.
            EntryRead::Gone => continue,
            EntryRead::Corrupt(why) => {
                return Err(Error::Corrupt(format!(
                    "{release} @{position}: the history entry {} does not read: {why}",
                    entry.key
                )));
            }
        };
        let previous = index.checked_sub(1).map(|i| history[i].render_ref.clone());
        rows.push((entry, position, summary, previous));
    }
    let pairs: Vec<(Option<String>, String)> = rows
        .iter()
        .map(|(entry, _, _, previous)| (previous.clone(), entry.render_ref.clone()))
        .collect();
    let changes = store
        .stored_changes(release, &pairs)
        .await
        .map_err(|e| within_release(release, e))?;
    Ok(Ok(rows
        .into_iter()
        .zip(changes)
        .map(
            |((entry, position, summary, previous), changes)| EntryChanges {
                release: release.clone(),
                position,
                key: entry.key.clone(),
                synced_at: entry.synced_at,
                render_ref: entry.render_ref.clone(),
                summary,
                previous_render_ref: previous,
                changes,
            },
        )
        .collect()))
}

/// An error of reading the release's renders, saying which release.
fn within_release(release: &Release, e: Error) -> Error {
    let within = |m: String| format!("{release}: a render does not read: {m}");
    match e {
        Error::NotFound(m) => Error::NotFound(within(m)),
        Error::Corrupt(m) => Error::Corrupt(within(m)),
        Error::EncryptionKey(m) => Error::EncryptionKey(within(m)),
        Error::Bucket(m) => Error::Bucket(within(m)),
        other => other,
    }
}
