//! The history of a Release: the distinct renders it applied, in the order of their
//! first apply. An entry's key carries its time and renderRef; its body
//! `{"renderRef":…,"syncedAt":…,"summary":…}` adds the summary.

use crate::bucket::{Bucket, BucketError};
use crate::error::{Error, Result};
use crate::json::{Node, decode_object, encode_string};
use crate::keys::{Release, ReleasePrefix, validate_render_ref};
use crate::store::call_failed;
use crate::time::{SyncTime, format_synced_at};

/// A history entry to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    /// The render applied.
    pub render_ref: String,
    /// When the sync succeeded.
    pub synced_at: SyncTime,
    /// A one-line description for people.
    pub summary: String,
}

/// A stored history entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// The entry's bucket key.
    pub key: String,
    /// The render it records (from the key).
    pub render_ref: String,
    /// When it was synced (from the key).
    pub synced_at: SyncTime,
    /// The summary of the entry body.
    pub summary: String,
}

/// Longest summary an entry takes, in bytes. A summary is one line for people, and every
/// history listing reads every entry body: a huge one would slow each reader, forever.
pub const MAX_SUMMARY_BYTES: usize = 64 * 1024;

/// The entry body: Go's encoding of the entry struct, fields in declaration order.
/// A summary over [`MAX_SUMMARY_BYTES`] is invalid input.
pub fn entry_body(render_ref: &str, synced_at: SyncTime, summary: &str) -> Result<Vec<u8>> {
    if summary.len() > MAX_SUMMARY_BYTES {
        return Err(crate::error::invalid(format!(
            "the summary is {} bytes, over the limit of {MAX_SUMMARY_BYTES}: a summary is one \
             line for people",
            summary.len()
        )));
    }
    let mut out = Vec::with_capacity(128 + summary.len());
    out.extend_from_slice(b"{\"renderRef\":");
    encode_string(render_ref, &mut out);
    out.extend_from_slice(b",\"syncedAt\":");
    encode_string(&format_synced_at(synced_at)?, &mut out);
    out.extend_from_slice(b",\"summary\":");
    encode_string(summary, &mut out);
    out.push(b'}');
    Ok(out)
}

/// A history key as listed, with its parsed parts.
pub(crate) struct ListedEntry {
    pub key: String,
    pub synced_at: SyncTime,
    pub render_ref: String,
}

/// The history keys of the release, as listed, with their parsed parts; unparseable
/// keys are returned apart.
pub(crate) fn list_entries<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
) -> Result<(Vec<ListedEntry>, Vec<String>)> {
    let history = prefix.history();
    let listed = bucket
        .list(&history)
        .map_err(|e| call_failed("list", &history, e))?;
    Ok(split_history_keys(prefix, crate::bucket::keys(listed)))
}

pub(crate) fn split_history_keys(
    prefix: &ReleasePrefix,
    mut keys: Vec<String>,
) -> (Vec<ListedEntry>, Vec<String>) {
    // Listings come sorted; sorting again makes a replayed or hand-made listing safe.
    keys.sort_unstable();
    let mut entries = Vec::with_capacity(keys.len());
    let mut ignored = Vec::new();
    for key in keys {
        match prefix.parse_history_key(&key) {
            Some((synced_at, render_ref)) => entries.push(ListedEntry {
                key,
                synced_at,
                render_ref,
            }),
            None => ignored.push(key),
        }
    }
    (entries, ignored)
}

/// What a listing of a release's `history/` says without reading any entry: the
/// release list of the observer shows it for every release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistorySummary {
    /// How many keys of the listing are history entries.
    pub entries: u32,
    /// The newest entry's time and renderRef; `None` for an empty history.
    pub newest: Option<(SyncTime, String)>,
}

/// Summarizes a history from the keys listed under `<prefix>history/` (in any order):
/// keys that do not parse as entries of `release` are not counted. An invalid release
/// is invalid input, so a host can offer any prefix it found and let this decide.
pub fn summarize_history(release: &Release, keys: Vec<String>) -> Result<HistorySummary> {
    let prefix = ReleasePrefix::new(release)?;
    let (entries, _ignored) = split_history_keys(&prefix, keys);
    Ok(HistorySummary {
        entries: u32::try_from(entries.len()).unwrap_or(u32::MAX),
        newest: entries.last().map(|e| (e.synced_at, e.render_ref.clone())),
    })
}

/// Whether some entry of the history records `render_ref`: `list(P/history/)` only; the
/// renderRef comes from each key, no entry is read.
pub fn has_history_ref<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    render_ref: &str,
) -> Result<bool> {
    let prefix = ReleasePrefix::new(release)?;
    validate_render_ref(render_ref)?;
    contains_ref(bucket, &prefix, render_ref)
}

fn contains_ref<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    render_ref: &str,
) -> Result<bool> {
    let (entries, _) = list_entries(bucket, prefix)?;
    Ok(entries.iter().any(|e| e.render_ref == render_ref))
}

/// Appends an entry unless the history already records its render: the calls of
/// [`has_history_ref`], then one `put`. Returns whether the entry was added.
pub fn record_history<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    entry: &NewEntry,
) -> Result<bool> {
    let prefix = ReleasePrefix::new(release)?;
    let key = prefix.history_key(entry.synced_at, &entry.render_ref)?;
    let body = entry_body(&entry.render_ref, entry.synced_at, &entry.summary)?;
    if contains_ref(bucket, &prefix, &entry.render_ref)? {
        return Ok(false);
    }
    bucket
        .put(&key, &body)
        .map_err(|e| call_failed("put", &key, e))?;
    Ok(true)
}

/// The history, oldest first: `list(P/history/)`, then `get` of each entry for its
/// summary. An entry deleted between the two (by a concurrent GC) is left out.
pub fn list_history<B: Bucket>(bucket: &mut B, release: &Release) -> Result<Vec<HistoryEntry>> {
    let prefix = ReleasePrefix::new(release)?;
    let (entries, _) = list_entries(bucket, &prefix)?;
    let mut history = Vec::with_capacity(entries.len());
    for ListedEntry {
        key,
        synced_at,
        render_ref,
    } in entries
    {
        let body = match bucket.get(&key) {
            Ok(body) => body,
            Err(BucketError::NotFound) => continue,
            Err(e) => return Err(call_failed("get", &key, e)),
        };
        let summary = summary_of(&key, &body)?;
        history.push(HistoryEntry {
            key,
            render_ref,
            synced_at,
            summary,
        });
    }
    Ok(history)
}

fn summary_of(key: &str, body: &[u8]) -> Result<String> {
    let corrupt = |why: String| {
        Error::Corrupt(format!(
            "history entry {key}: {why}; delete or rewrite the entry to repair the history"
        ))
    };
    let doc =
        decode_object(body).map_err(|e| corrupt(format!("body is not a JSON object ({e})")))?;
    match doc.root_member("summary") {
        None | Some(Node::Null) => Ok(String::new()),
        Some(node) => match node.as_str() {
            Some(s) => Ok(s.to_string()),
            None => Err(corrupt("\"summary\" is not a string".to_string())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_counts_entries_and_names_the_newest_from_keys_alone() {
        let release = Release::new("ns", "app");
        let a = format!("sha256:{}", "a".repeat(64));
        let b = format!("sha256:{}", "b".repeat(64));
        let keys = vec![
            format!("ns/app/history/20240501T120000.000000000Z-{b}"),
            "ns/app/history/notes.txt".to_string(),
            format!("ns/app/history/20240401T120000.000000000Z-{a}"),
            // Another release's key is not this release's entry.
            format!("ns/other/history/20250101T000000.000000000Z-{a}"),
        ];
        let summary = summarize_history(&release, keys).unwrap();
        assert_eq!(summary.entries, 2);
        let (time, newest) = summary.newest.unwrap();
        assert_eq!(newest, b);
        assert_eq!(format_synced_at(time).unwrap(), "2024-05-01T12:00:00Z");
        let empty = summarize_history(&release, vec![]).unwrap();
        assert_eq!((empty.entries, empty.newest), (0, None));
        assert!(summarize_history(&Release::new("Bad_NS", "app"), vec![]).is_err());
    }
}
