//! What changed across the fleet in a window of time: every history entry of every
//! release (or of one namespace's) synced in the window, newest first, each with what
//! changed against the entry just older than it in its release
//! ([`crate::Runtime::summarize_changes`], the component's `logic.summarize-changes`).
//!
//! The host reads and converts; which objects, images and Secret keys changed is the
//! component's to say.

use crate::error::{Error, Result};
use crate::fleet::{Unlisted, all_releases};
use crate::store::RenderStore;
use crate::types::{EntryRead, ParsedKey, Release, RenderChanges, SyncTime};
use futures::StreamExt;

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

/// The fleet's changes in a window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetChanges {
    /// The entries in the window, newest first (entries of the same time by namespace,
    /// then name).
    pub entries: Vec<EntryChanges>,
    /// Folders that could not be listed (a namespace, or a release's `history/`): the
    /// answer is partial, and says so, rather than leaving them out in silence.
    pub unlisted: Vec<Unlisted>,
}

/// Every history entry of the store's releases (of `namespace`'s alone when given)
/// synced from `since` (included) until `until` (excluded), each bound open when
/// `None`, newest first, each with what changed against the entry before it in its
/// release.
///
/// Calls: the delimiter listings of [`crate::fleet::all_releases`]; for each release a
/// listing of its `history/` (no entry read to select the window: the times are in the
/// keys), then, for a release with entries in the window, one read of each of those
/// entries and one read of each render needed (each entry's and the one before the
/// first), each read once. [`CHANGES_CONCURRENCY`] releases at a time, each read entry
/// by entry, so memory holds a few renders, never the fleet's.
///
/// Fail closed: a folder that cannot be listed is in [`FleetChanges::unlisted`]; an
/// entry or a render that does not read fails the call, naming the release and the
/// entry (an entry deleted since it was listed, by a concurrent GC, is left out: it is
/// no longer in the history). All within the store's deadline and cancellation.
pub async fn fleet_changes(
    store: &RenderStore,
    namespace: Option<&str>,
    since: Option<SyncTime>,
    until: Option<SyncTime>,
) -> Result<FleetChanges> {
    store
        .within(unbounded(store, namespace, since, until))
        .await?
}

async fn unbounded(
    store: &RenderStore,
    namespace: Option<&str>,
    since: Option<SyncTime>,
    until: Option<SyncTime>,
) -> Result<FleetChanges> {
    let found = all_releases(store, namespace).await?;
    let mut answer = FleetChanges {
        unlisted: found.unlisted,
        ..FleetChanges::default()
    };
    let window = |t: SyncTime| since.is_none_or(|s| t >= s) && until.is_none_or(|u| t < u);
    let mut releases = futures::stream::iter(found.releases)
        .map(|release| release_changes(store, release, &window))
        .buffered(CHANGES_CONCURRENCY);
    while let Some(read) = releases.next().await {
        match read? {
            Ok(entries) => answer.entries.extend(entries),
            Err(unlisted) => answer.unlisted.push(unlisted),
        }
    }
    answer.entries.sort_by(|a, b| {
        b.synced_at
            .cmp(&a.synced_at)
            .then_with(|| a.release.namespace.cmp(&b.release.namespace))
            .then_with(|| a.release.name.cmp(&b.release.name))
    });
    answer.unlisted.sort_by(|a, b| a.folder.cmp(&b.folder));
    Ok(answer)
}

/// An entry of a release's history as its key says it.
struct Listed {
    key: String,
    synced_at: SyncTime,
    render_ref: String,
}

/// The entries of `release` in the window with their changes, or the history folder
/// that could not be listed.
async fn release_changes(
    store: &RenderStore,
    release: Release,
    window: &impl Fn(SyncTime) -> bool,
) -> Result<std::result::Result<Vec<EntryChanges>, Unlisted>> {
    let rt = store.runtime();
    let folder = format!("{}history/", rt.release_prefix(&release).await?);
    let keys: Vec<String> = match store.bucket().list(&folder).await {
        Ok(listed) => listed.into_iter().map(|m| m.key).collect(),
        Err(e) => {
            return Ok(Err(Unlisted {
                folder,
                error: e.to_string(),
            }));
        }
    };
    let parsed = rt.parse_keys(&release, &keys).await?;
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
    // The window is an interval of times, so its entries are a run of the history.
    let Some(first) = history.iter().position(|e| window(e.synced_at)) else {
        return Ok(Ok(Vec::new()));
    };
    let end = first
        + history[first..]
            .iter()
            .take_while(|e| window(e.synced_at))
            .count();
    let wanted: Vec<String> = history[first..end].iter().map(|e| e.key.clone()).collect();
    let reads = store.read_history_entries(&release, &wanted).await?;
    let mut out = Vec::new();
    // The render just before the next entry: the one it is compared with.
    let mut previous: Option<(String, Vec<u8>)> = match first.checked_sub(1) {
        Some(i) => {
            let e = &history[i];
            Some((
                e.render_ref.clone(),
                read_render(store, &release, history.len() - 1 - i, e).await?,
            ))
        }
        None => None,
    };
    for (offset, read) in reads.into_iter().enumerate() {
        let index = first + offset;
        let entry = &history[index];
        let position = history.len() - 1 - index;
        let summary = match read {
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
        let render = match &previous {
            // A render recorded twice in a row (entries of another writer) is read once.
            Some((r, bytes)) if *r == entry.render_ref => bytes.clone(),
            _ => read_render(store, &release, position, entry).await?,
        };
        let old: &[u8] = previous.as_ref().map_or(&[], |(_, bytes)| bytes.as_slice());
        let changes = rt.summarize_changes(old, &render).await?;
        out.push(EntryChanges {
            release: release.clone(),
            position,
            key: entry.key.clone(),
            synced_at: entry.synced_at,
            render_ref: entry.render_ref.clone(),
            summary,
            previous_render_ref: previous.as_ref().map(|(r, _)| r.clone()),
            changes,
        });
        previous = Some((entry.render_ref.clone(), render));
    }
    Ok(Ok(out))
}

/// The render an entry records, or the error saying which entry's render did not read.
async fn read_render(
    store: &RenderStore,
    release: &Release,
    position: usize,
    entry: &Listed,
) -> Result<Vec<u8>> {
    let within = |m: String| {
        format!(
            "{release} @{position} ({}): its render {} does not read: {m}",
            entry.key, entry.render_ref
        )
    };
    store
        .get_render(release, &entry.render_ref)
        .await
        .map_err(|e| match e {
            Error::NotFound(m) => Error::NotFound(within(m)),
            Error::Corrupt(m) => Error::Corrupt(within(m)),
            Error::EncryptionKey(m) => Error::EncryptionKey(within(m)),
            Error::Bucket(m) => Error::Bucket(within(m)),
            other => other,
        })
}
