//! The names people type for a release and its renders: a release must hold keys to be
//! read, and a render is named by its whole renderRef, a unique prefix of it, or its
//! place in the history (`@0` the newest entry, `@1` the one before, …).

use crate::failure;
use anyhow::Result;
use render_store::{EntryRead, HistoryEntry, ObjectMeta, ParsedKey, Release, RenderStore};
use std::collections::BTreeMap;

/// The fewest hex digits a renderRef prefix may have: short enough to type, long enough
/// that a collision among a release's renders is practically never met (and reported
/// when it is).
pub const MIN_PREFIX_DIGITS: usize = 8;

const REF_PREFIX: &str = "sha256:";

/// Fails with "no release NS/NAME in the store" when the release holds no key at all:
/// a typo in a release name must not read as an empty history.
///
/// One bounded call, however much the release holds: a delimiter listing of its prefix
/// (one request on a cloud bucket: the release's folders and the keys directly in it),
/// where a listing of the whole prefix would read every key of it.
pub async fn require_release(store: &RenderStore, release: &Release) -> Result<()> {
    match missing_release(store, release).await? {
        Some(missing) => Err(failure::not_found(missing.message())),
        None => Ok(()),
    }
}

/// The release's absence when it holds no key at all, with the release it may be a
/// typo of; `None` when it holds some. The check [`require_release`] makes, for a
/// caller that tells the absence in its own form (the server's pages link the near
/// name).
pub async fn missing_release(
    store: &RenderStore,
    release: &Release,
) -> Result<Option<MissingRelease>> {
    let prefix = store.runtime().release_prefix(release).await?;
    let top = store.bucket().list_delimited(&prefix).await?;
    if top.folders.is_empty() && top.objects.is_empty() {
        return Ok(Some(MissingRelease::find(store, release, prefix).await));
    }
    Ok(None)
}

/// A release that holds no key in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingRelease {
    /// The release asked for.
    pub release: Release,
    /// The key prefix under which nothing is stored.
    pub prefix: String,
    /// The stored release whose name is near enough to be what was meant.
    pub similar: Option<Release>,
}

impl MissingRelease {
    async fn find(store: &RenderStore, release: &Release, prefix: String) -> MissingRelease {
        MissingRelease {
            release: release.clone(),
            prefix,
            similar: similar_release(store, release).await,
        }
    }

    /// What is said before the "did you mean" hint.
    pub fn head(&self) -> String {
        format!(
            "no release {} in the store: nothing is stored under {} (",
            self.release, self.prefix
        )
    }

    /// What is said after the "did you mean" hint.
    pub fn tail(&self) -> &'static str {
        "check the namespace and name; `render-store releases` lists the releases)"
    }

    /// The whole message: [`Self::head`], "did you mean NS/NAME? " when a release is
    /// near, [`Self::tail`].
    pub fn message(&self) -> String {
        let hint = match &self.similar {
            Some(other) => format!("did you mean {other}? "),
            None => String::new(),
        };
        format!("{}{hint}{}", self.head(), self.tail())
    }
}

/// The stored release whose name is nearest to a mistyped `release`, if one is near
/// enough to be a typo: among the releases of its namespace, or, when that namespace
/// holds none, of the namespace nearest to it. Only asked once a release is missing, so
/// a command that finds its release pays nothing; a listing that fails gives no hint.
async fn similar_release(store: &RenderStore, release: &Release) -> Option<Release> {
    let bucket = store.bucket();
    let mut namespace = release.namespace.clone();
    let mut names = folder_names(&bucket.list_delimited(&format!("{namespace}/")).await.ok()?);
    if names.is_empty() {
        let namespaces = folder_names(&bucket.list_delimited("").await.ok()?);
        namespace = nearest(&release.namespace, &namespaces)?.to_string();
        names = folder_names(&bucket.list_delimited(&format!("{namespace}/")).await.ok()?);
        if names.contains(&release.name) {
            return Some(Release::new(namespace, release.name.clone()));
        }
    }
    let name = nearest(&release.name, &names)?;
    Some(Release::new(namespace, name.to_string()))
}

/// The last path element of each folder of a delimiter listing.
fn folder_names(listing: &render_store::Delimited) -> Vec<String> {
    listing
        .folders
        .iter()
        .filter_map(|f| f.trim_end_matches('/').rsplit('/').next())
        .map(str::to_string)
        .collect()
}

/// The candidate nearest to `typed` by edit distance, if it is within a typo's reach:
/// one edit for short names, about one in four characters for longer ones.
fn nearest<'a>(typed: &str, candidates: &'a [String]) -> Option<&'a str> {
    let reach = (typed.chars().count() / 4).max(1);
    candidates
        .iter()
        .map(|c| (edit_distance(typed, c), c))
        .filter(|(d, _)| *d <= reach)
        .min()
        .map(|(_, c)| c.as_str())
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_near_and_other_names_are_not() {
        assert_eq!(edit_distance("metalb", "metallb"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let names = ["metallb".to_string(), "metrics".to_string()];
        assert_eq!(nearest("metalb", &names), Some("metallb"));
        assert_eq!(nearest("ingress", &names), None);
        // Short names allow one edit, no more.
        let short = ["api".to_string()];
        assert_eq!(nearest("apx", &short), Some("api"));
        assert_eq!(nearest("xpx", &short), None);
    }

    #[test]
    fn a_missing_release_is_told_with_the_one_meant() {
        let mut missing = MissingRelease {
            release: Release::new("prod", "ap"),
            prefix: "prod/ap/".into(),
            similar: Some(Release::new("prod", "app")),
        };
        let said = missing.message();
        assert_eq!(
            said,
            "no release prod/ap in the store: nothing is stored under prod/ap/ (did you mean \
             prod/app? check the namespace and name; `render-store releases` lists the releases)"
        );
        assert!(said.starts_with(&missing.head()) && said.ends_with(missing.tail()));
        missing.similar = None;
        assert!(!missing.message().contains("did you mean"));
    }
}

/// Every release of the store, found with delimiter listings (one of the root, one of
/// each namespace: never a listing of every key). A namespace that cannot be listed is
/// an error: a release left out would be left as it is without a word.
pub async fn releases(store: &RenderStore) -> Result<Vec<Release>> {
    let found = render_store::fleet::all_releases(store, None).await?;
    if let Some(u) = found.unlisted.first() {
        anyhow::bail!(
            "listing {} failed, so the releases under it cannot be found: {}",
            u.folder,
            u.error
        );
    }
    Ok(found.releases)
}

/// Every key of `release` (one listing of its prefix), or the error of
/// [`require_release`] when there is none.
pub async fn release_keys(store: &RenderStore, release: &Release) -> Result<Vec<ObjectMeta>> {
    let prefix = store.runtime().release_prefix(release).await?;
    let keys = store.bucket().list(&prefix).await?;
    if keys.is_empty() {
        let missing = MissingRelease::find(store, release, prefix).await;
        return Err(failure::not_found(missing.message()));
    }
    Ok(keys)
}

/// The entries `@N` counts, oldest first: [`listed_history`], except where encryption is
/// required, where each entry is read (one `get` an entry, in one sandboxed call a
/// thousand) and only those whose body authenticates under the keyring are kept, so no
/// position names an entry a writer of the bucket planted (CONTRACT.md §14).
pub async fn history_keys(store: &RenderStore, release: &Release) -> Result<Vec<ListedEntry>> {
    let listed = listed_history(store, release).await?;
    if !store.encryption_required() {
        return Ok(listed);
    }
    let keys: Vec<String> = listed.iter().map(|e| e.key.clone()).collect();
    let read = read_entries(store, release, &keys).await?;
    Ok(listed
        .into_iter()
        .filter(|e| matches!(read.get(&e.key), Some(Ok(h)) if h.trust.counts_where(true)))
        .collect())
}

/// How many entries one sandboxed call reads: a call's answer holds their summaries.
const ENTRIES_A_CALL: usize = 1_000;

/// Each history entry of `keys` (entry keys of `release`, as a listing gave them) read
/// alone, by key: one read an entry, no listing (`read-history-entries`), so a history
/// of any length is read in linear time. The entry, or why it does not read; an entry
/// deleted since the listing is left out.
pub async fn read_entries(
    store: &RenderStore,
    release: &Release,
    keys: &[String],
) -> Result<BTreeMap<String, std::result::Result<HistoryEntry, String>>> {
    let mut out = BTreeMap::new();
    for chunk in keys.chunks(ENTRIES_A_CALL) {
        let read = store.read_history_entries(release, chunk).await?;
        for (key, entry) in chunk.iter().zip(read) {
            match entry {
                EntryRead::Entry(e) => {
                    out.insert(key.clone(), Ok(e));
                }
                EntryRead::Corrupt(m) => {
                    out.insert(key.clone(), Err(m));
                }
                // Deleted since the listing: nothing to check or show.
                EntryRead::Gone => {}
            }
        }
    }
    Ok(out)
}

/// A release's history as one listing of its `history/` gives it, no entry read: each
/// entry's key with its time and renderRef (from the key), oldest first. Keys that are
/// no entry of the release are left out, as every history read leaves them out.
pub async fn listed_history(store: &RenderStore, release: &Release) -> Result<Vec<ListedEntry>> {
    let prefix = format!("{}history/", store.runtime().release_prefix(release).await?);
    let keys: Vec<String> = store
        .bucket()
        .list(&prefix)
        .await?
        .into_iter()
        .map(|m| m.key)
        .collect();
    let parsed = store.runtime().parse_keys(release, &keys).await?;
    let mut entries: Vec<ListedEntry> = keys
        .into_iter()
        .zip(parsed)
        .filter_map(|(key, parsed)| match parsed {
            Some(ParsedKey::History(h)) => Some(ListedEntry {
                key,
                render_ref: h.render_ref,
                synced_at: h.synced_at,
            }),
            _ => None,
        })
        .collect();
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(entries)
}

/// A history entry as a listing names it: its key, and the time and renderRef the key
/// holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedEntry {
    /// The entry's key.
    pub key: String,
    /// The render it records.
    pub render_ref: String,
    /// When it was synced.
    pub synced_at: render_store::SyncTime,
}

/// The renderRef `name` stands for in `release`: a whole renderRef as it is; `@N` the
/// render of the N-th newest history entry (from 0); `sha256:HEX…` or `HEX…` with at
/// least [`MIN_PREFIX_DIGITS`] digits the one stored render whose renderRef starts so.
pub async fn resolve_ref(store: &RenderStore, release: &Release, name: &str) -> Result<String> {
    if let Some(position) = name.strip_prefix('@') {
        return history_position(store, release, name, position).await;
    }
    resolve_stored(store, release, name).await
}

/// [`resolve_ref`] with the release's history listed already ([`history_keys`]): `@N`
/// costs nothing more, whatever the history's length.
pub async fn resolve_ref_in(
    store: &RenderStore,
    release: &Release,
    history: &[ListedEntry],
    name: &str,
) -> Result<String> {
    match name.strip_prefix('@') {
        Some(position) => position_in(history, release, name, position),
        None => resolve_stored(store, release, name).await,
    }
}

/// A whole renderRef or a prefix of one, resolved among the stored renders.
async fn resolve_stored(store: &RenderStore, release: &Release, name: &str) -> Result<String> {
    let digits = name.strip_prefix(REF_PREFIX).unwrap_or(name);
    if digits.len() == 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        // A whole renderRef, or not a name of ours: the operation checks it in its own
        // words.
        return Ok(name.to_string());
    }
    if digits.len() < MIN_PREFIX_DIGITS {
        return Err(failure::input(format!(
            "{name:?} is too short to name a render: give at least {MIN_PREFIX_DIGITS} hex \
             digits of its renderRef, or @N for the N-th newest history entry"
        )));
    }
    let wanted = format!("{REF_PREFIX}{}", digits.to_ascii_lowercase());
    let renders_prefix = format!(
        "{}renders/{wanted}",
        store.runtime().release_prefix(release).await?
    );
    let mut matches = Vec::new();
    for object in store.bucket().list(&renders_prefix).await? {
        if let Some(ParsedKey::Render(r)) = store.runtime().parse_key(release, &object.key).await? {
            matches.push(r);
        }
    }
    match matches.len() {
        1 => Ok(matches.remove(0)),
        0 => Err(failure::not_found(format!(
            "no render of {release} has a renderRef starting with {wanted}"
        ))),
        _ => Err(failure::input(format!(
            "{wanted} names {} renders of {release}; give more digits:\n  {}",
            matches.len(),
            matches.join("\n  ")
        ))),
    }
}

async fn history_position(
    store: &RenderStore,
    release: &Release,
    name: &str,
    position: &str,
) -> Result<String> {
    let history = history_keys(store, release).await?;
    position_in(&history, release, name, position)
}

/// The renderRef of `@N` (`name`, `position` its number) in a history listed already:
/// from the entry's key, no entry read.
pub fn position_in(
    history: &[ListedEntry],
    release: &Release,
    name: &str,
    position: &str,
) -> Result<String> {
    entry_at(history, release, name, position).map(|(_, e)| e.render_ref.clone())
}

/// The entry `@N` (`name`, `position` its number) names in a history listed already,
/// with N: what [`position_in`] resolves, for commands that need the entry itself.
pub fn entry_at<'a>(
    history: &'a [ListedEntry],
    release: &Release,
    name: &str,
    position: &str,
) -> Result<(usize, &'a ListedEntry)> {
    let Ok(n) = position.parse::<usize>() else {
        return Err(failure::input(format!(
            "{name:?} is not a history position: @0 is the newest entry, @1 the one before"
        )));
    };
    match history.iter().rev().nth(n) {
        Some(entry) => Ok((n, entry)),
        None => Err(failure::not_found(format!(
            "{release} has {} history entries: {name} is not one of them (@0 is the newest)",
            history.len()
        ))),
    }
}
