//! The history of a Release: the distinct renders it applied, in the order of their
//! first apply. An entry's key carries its time and renderRef; its body
//! `{"renderRef":…,"syncedAt":…,"summary":…}` adds the summary.

use crate::bucket::{Bucket, BucketError};
use crate::error::{Error, Result};
use crate::json::{Node, decode_object, encode_string};
use crate::keys::{HistoryKey, ParsedKey, Release, ReleasePrefix, validate_render_ref};
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
    pub newest: Option<HistoryKey>,
}

/// Summarizes a history from the keys listed under `<prefix>history/` (in any order):
/// keys that do not parse as entries of `release` are not counted. An invalid release
/// is invalid input, so a host can offer any prefix it found and let this decide.
pub fn summarize_history(release: &Release, keys: Vec<String>) -> Result<HistorySummary> {
    let prefix = ReleasePrefix::new(release)?;
    let (entries, _ignored) = split_history_keys(&prefix, keys);
    Ok(HistorySummary {
        entries: u32::try_from(entries.len()).unwrap_or(u32::MAX),
        newest: entries.last().map(|e| HistoryKey {
            synced_at: e.synced_at,
            render_ref: e.render_ref.clone(),
        }),
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
    for listed in entries {
        history.extend(read_entry(bucket, listed)?);
    }
    Ok(history)
}

/// One page of the history, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryPage {
    /// At most the page's limit of entries, newest first.
    pub entries: Vec<HistoryEntry>,
    /// The key to pass as `before` for the next, older page; `None` when no older entry
    /// remains.
    pub next_before: Option<String>,
}

/// At most `limit` entries, newest first, older than the entry key `before` when given:
/// `list(P/history/)`, then `get` of each entry of the page only, newest first. So a
/// page costs `1 + limit` calls however long the history is. An entry deleted between
/// the list and its `get` is left out (the page may then hold fewer).
pub fn list_history_page<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    limit: u32,
    before: Option<&str>,
) -> Result<HistoryPage> {
    let prefix = ReleasePrefix::new(release)?;
    if limit == 0 {
        return Err(Error::InvalidInput(
            "limit 0: a history page holds at least one entry".into(),
        ));
    }
    if let Some(before) = before
        && !matches!(prefix.parse(before), Some(ParsedKey::History(_)))
    {
        return Err(Error::InvalidInput(format!(
            "before {}: not a history entry key of {}; pass the previous page's \
             next-before",
            crate::json::quote(before),
            prefix.as_str().trim_end_matches('/')
        )));
    }
    let (mut entries, _) = list_entries(bucket, &prefix)?;
    if let Some(before) = before {
        entries.retain(|e| e.key.as_str() < before);
    }
    let start = entries.len().saturating_sub(limit as usize);
    let next_before = (start > 0).then(|| entries[start].key.clone());
    let mut page = HistoryPage {
        entries: Vec::with_capacity(entries.len() - start),
        next_before,
    };
    for listed in entries.drain(start..).rev() {
        page.entries.extend(read_entry(bucket, listed)?);
    }
    Ok(page)
}

/// One history entry as [`read_history_entries`] read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryRead {
    /// The entry, with the summary of its body.
    Entry(HistoryEntry),
    /// Listed, but deleted before it was read (a concurrent GC).
    Gone,
    /// Its body does not read: the [`Error::Corrupt`] message of a listing.
    Corrupt(String),
}

/// The entries `keys` names (history entry keys of `release`, as a listing gave them),
/// each read alone in the order given: one `get` a key, no listing. So whoever listed
/// the history once reads any set of its entries linearly, where a page per entry
/// (`list_history_page(1, before)`) lists the whole history again for each. A key that
/// is not an entry key of the release is invalid input, before any bucket call; a
/// body that does not read is [`EntryRead::Corrupt`] in its place and the rest are
/// read; a failed `get` fails the call.
pub fn read_history_entries<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keys: &[String],
) -> Result<Vec<EntryRead>> {
    let prefix = ReleasePrefix::new(release)?;
    let mut listed = Vec::with_capacity(keys.len());
    for key in keys {
        match prefix.parse(key) {
            Some(ParsedKey::History(h)) => listed.push(ListedEntry {
                key: key.clone(),
                synced_at: h.synced_at,
                render_ref: h.render_ref,
            }),
            _ => {
                return Err(Error::InvalidInput(format!(
                    "{}: not a history entry key of {}",
                    crate::json::quote(key),
                    prefix.as_str().trim_end_matches('/')
                )));
            }
        }
    }
    let mut read = Vec::with_capacity(listed.len());
    for entry in listed {
        read.push(match read_entry(bucket, entry) {
            Ok(Some(entry)) => EntryRead::Entry(entry),
            Ok(None) => EntryRead::Gone,
            Err(Error::Corrupt(m)) => EntryRead::Corrupt(m),
            Err(e) => return Err(e),
        });
    }
    Ok(read)
}

/// A listed entry with the summary of its body; `None` when it was deleted since the
/// listing.
fn read_entry<B: Bucket>(bucket: &mut B, listed: ListedEntry) -> Result<Option<HistoryEntry>> {
    let ListedEntry {
        key,
        synced_at,
        render_ref,
    } = listed;
    let body = match bucket.get(&key) {
        Ok(body) => body,
        Err(BucketError::NotFound) => return Ok(None),
        Err(e) => return Err(call_failed("get", &key, e)),
    };
    let summary = summary_of(&key, &body)?;
    Ok(Some(HistoryEntry {
        key,
        render_ref,
        synced_at,
        summary,
    }))
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
        let newest = summary.newest.unwrap();
        assert_eq!(newest.render_ref, b);
        assert_eq!(
            format_synced_at(newest.synced_at).unwrap(),
            "2024-05-01T12:00:00Z"
        );
        let empty = summarize_history(&release, vec![]).unwrap();
        assert_eq!((empty.entries, empty.newest), (0, None));
        assert!(summarize_history(&Release::new("Bad_NS", "app"), vec![]).is_err());
    }

    #[test]
    fn entries_are_read_by_key_one_get_each_whatever_the_history_holds() {
        let release = Release::new("ns", "app");
        let mut bucket = crate::MemoryBucket::new();
        let mut keys = Vec::new();
        for i in 0..4u8 {
            let render_ref = format!("sha256:{}", format!("{i:x}").repeat(64));
            let entry = NewEntry {
                render_ref: render_ref.clone(),
                synced_at: SyncTime {
                    seconds: 1_767_225_600 + i64::from(i),
                    nanoseconds: 0,
                },
                summary: format!("sync {i}"),
            };
            record_history(&mut bucket, &release, &entry).unwrap();
            keys.push(
                ReleasePrefix::new(&release)
                    .unwrap()
                    .history_key(entry.synced_at, &render_ref)
                    .unwrap(),
            );
        }
        bucket.put(&keys[1], b"not json").unwrap();
        bucket.delete(&keys[2]).unwrap();
        bucket.take_calls();
        let read = read_history_entries(&mut bucket, &release, &keys[..]).unwrap();
        assert!(
            matches!(&read[0], EntryRead::Entry(e) if e.summary == "sync 0" && e.key == keys[0])
        );
        assert!(matches!(&read[1], EntryRead::Corrupt(m) if m.contains(&keys[1])));
        assert_eq!(read[2], EntryRead::Gone);
        assert!(matches!(&read[3], EntryRead::Entry(e) if e.summary == "sync 3"));
        let calls = bucket.take_calls();
        assert_eq!(
            calls,
            keys.iter().map(|k| format!("get {k}")).collect::<Vec<_>>()
        );
        // A key that is no entry of the release: refused before any call.
        for bad in [
            "ns/app/renders/x",
            "ns/other/history/20260101T000000.000000000Z-x",
        ] {
            let keys = [keys[0].clone(), bad.to_string()];
            assert!(matches!(
                read_history_entries(&mut bucket, &release, &keys),
                Err(Error::InvalidInput(_))
            ));
        }
        assert_eq!(bucket.take_calls(), Vec::<String>::new());
    }

    #[test]
    fn a_history_page_reads_only_its_entries_newest_first_and_pages_back() {
        let release = Release::new("ns", "app");
        let mut bucket = crate::MemoryBucket::new();
        let refs: Vec<String> = (0..5)
            .map(|i| format!("sha256:{}", format!("{i:x}").repeat(64)))
            .collect();
        for (i, r) in refs.iter().enumerate() {
            let entry = NewEntry {
                render_ref: r.clone(),
                synced_at: SyncTime {
                    seconds: 1_767_225_600 + i as i64,
                    nanoseconds: 0,
                },
                summary: format!("sync {i}"),
            };
            assert!(record_history(&mut bucket, &release, &entry).unwrap());
        }
        bucket.take_calls();
        let page = list_history_page(&mut bucket, &release, 2, None).unwrap();
        let summaries: Vec<_> = page.entries.iter().map(|e| e.summary.as_str()).collect();
        assert_eq!(summaries, ["sync 4", "sync 3"]);
        let calls = bucket.take_calls();
        assert_eq!(calls.len(), 3, "{calls:?}");
        assert_eq!(calls[0], "list ns/app/history/");
        assert_eq!(calls[1], format!("get {}", page.entries[0].key));
        let next = page.next_before.clone().unwrap();
        assert_eq!(next, page.entries[1].key);
        let page = list_history_page(&mut bucket, &release, 2, Some(&next)).unwrap();
        let summaries: Vec<_> = page.entries.iter().map(|e| e.summary.as_str()).collect();
        assert_eq!(summaries, ["sync 2", "sync 1"]);
        let last = list_history_page(&mut bucket, &release, 2, page.next_before.as_deref());
        let last = last.unwrap();
        assert_eq!(last.entries.len(), 1);
        assert_eq!(last.entries[0].summary, "sync 0");
        assert_eq!(last.next_before, None);
        // The whole history in one page, and the pages together are the history reversed.
        let all = list_history_page(&mut bucket, &release, 100, None).unwrap();
        let mut history = list_history(&mut bucket, &release).unwrap();
        history.reverse();
        assert_eq!(all.entries, history);
        assert_eq!(all.next_before, None);
        // A limit of 0 and a cursor that is not an entry key of the release are refused
        // before any bucket call.
        bucket.take_calls();
        assert!(matches!(
            list_history_page(&mut bucket, &release, 0, None),
            Err(Error::InvalidInput(_))
        ));
        for bad in [
            "ns/app/renders/x",
            "ns/other/history/20260101T000000.000000000Z-x",
            "",
        ] {
            assert!(matches!(
                list_history_page(&mut bucket, &release, 1, Some(bad)),
                Err(Error::InvalidInput(_))
            ));
        }
        assert_eq!(bucket.take_calls(), Vec::<String>::new());
    }
}
