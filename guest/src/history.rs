//! The history of a Release: the distinct renders it applied, in the order of their
//! first apply. An entry's key carries its time and renderRef; its body
//! `{"renderRef":…,"syncedAt":…,"summary":…}` adds the summary, and on a store with a
//! keyring `"macKey":…,"mac":…`: an HMAC-SHA-256, under key material derived from the
//! keyring's first key, over the release, the entry's key, its renderRef, time and
//! summary (CONTRACT.md §14). The body stays plaintext, so GC and `history` work
//! without a key; whoever holds the keyring can tell an entry a key holder wrote from
//! one a writer of the bucket planted or edited ([`EntryTrust`]).

use crate::bucket::{Bucket, BucketError};
use crate::encryption::{Keyring, SealingKey};
use crate::error::{Error, Result};
use crate::json::{Node, decode_object, encode_string};
use crate::keys::{HistoryKey, ParsedKey, Release, ReleasePrefix, validate_render_ref};
use crate::store::call_failed;
use crate::time::{SyncTime, format_synced_at};
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub use crate::wit::types::HistoryEntry;
pub use crate::wit::types::NewEntry;

pub use crate::wit::types::EntryTrust;
impl EntryTrust {
    /// Whether the entry authenticated under the keyring.
    pub fn is_authenticated(&self) -> bool {
        matches!(self, EntryTrust::Authenticated(_))
    }

    /// Whether an entry so judged counts as history on a store where encryption is
    /// (`required`) or is not required: numbered by `@N`, shown by the fleet views,
    /// counted by `record`'s dedup and GC's `keep`. Every entry counts without the
    /// rule; with it, only an authenticated one. Hosts ask this rather than spell it.
    pub fn counts_where(&self, required: bool) -> bool {
        !required || self.is_authenticated()
    }
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

/// The MAC of an entry's fields under `key` (hex): HMAC-SHA-256 under the key's entry
/// subkey over a domain line, then the release, the entry key, the renderRef, the time
/// as the body writes it and the summary, each but the last ended by a NUL (none of the
/// others can hold one), so no two field lists give the same input.
fn entry_mac(
    key: &SealingKey,
    release: &str,
    entry_key: &str,
    render_ref: &str,
    synced_at: &str,
    summary: &str,
) -> String {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(&key.entry_mac_key()).expect("HMAC takes any key");
    mac.update(b"convoy render-store history entry v1\0");
    for field in [release, entry_key, render_ref, synced_at] {
        mac.update(field.as_bytes());
        mac.update(b"\0");
    }
    mac.update(summary.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// The body of the entry `entry` stored under `entry_key` of `prefix`: [`entry_body`],
/// and with a keyring the `macKey` and `mac` fields that authenticate it under the
/// ring's first key.
pub(crate) fn authenticated_body(
    prefix: &ReleasePrefix,
    entry_key: &str,
    entry: &NewEntry,
    keyring: &Keyring,
) -> Result<Vec<u8>> {
    let mut body = entry_body(&entry.render_ref, entry.synced_at, &entry.summary)?;
    let Some(key) = keyring
        .keys()
        .first()
        .filter(|_| keyring.authenticates_entries())
    else {
        return Ok(body);
    };
    let mac = entry_mac(
        key,
        prefix.release_name(),
        entry_key,
        &entry.render_ref,
        &format_synced_at(entry.synced_at)?,
        &entry.summary,
    );
    body.pop();
    body.extend_from_slice(b",\"macKey\":");
    encode_string(key.id(), &mut body);
    body.extend_from_slice(b",\"mac\":");
    encode_string(&mac, &mut body);
    body.push(b'}');
    Ok(body)
}

/// How the body `doc` of the entry `listed` disagrees with its key, if it does. Go's
/// controller writes both fields; a body without them, or with others than its key's,
/// is not what any writer of ours made.
fn disagreement(
    listed: &ListedEntry,
    doc: &crate::json::Document<'_>,
    time: &str,
) -> Option<String> {
    let text = |name: &str| doc.root_member(name).and_then(|n| n.as_str());
    if text("renderRef") != Some(listed.render_ref.as_str()) {
        return Some(format!(
            "its body names renderRef {}, its key {}",
            crate::json::quote(text("renderRef").unwrap_or("(none)")),
            listed.render_ref
        ));
    }
    if text("syncedAt") != Some(time) {
        return Some(format!(
            "its body says it was synced at {}, its key at {time}",
            crate::json::quote(text("syncedAt").unwrap_or("(none)"))
        ));
    }
    None
}

/// What `keyring` says of the entry `listed` whose body was read as `doc` (`time`: its
/// key's time as a body writes it; `disagrees`: [`disagreement`] of the two).
fn trust_of(
    prefix: &ReleasePrefix,
    listed: &ListedEntry,
    doc: &crate::json::Document<'_>,
    (summary, time): (&str, &str),
    disagrees: Option<String>,
    keyring: &Keyring,
) -> EntryTrust {
    let text = |name: &str| doc.root_member(name).and_then(|n| n.as_str());
    if let Some(why) = disagrees {
        return EntryTrust::Unauthenticated(why);
    }
    if !keyring.authenticates_entries() {
        return EntryTrust::Unchecked;
    }
    let (Some(id), Some(mac)) = (text("macKey"), text("mac")) else {
        return EntryTrust::Unauthenticated(
            "it carries no MAC: a writer without the keyring made it (a controller that \
             does not use the render store's component, or whoever can write the bucket)"
                .into(),
        );
    };
    let Some(key) = keyring.keys().iter().find(|k| k.id() == id) else {
        return EntryTrust::Unauthenticated(format!(
            "its MAC names key {}, which the keyring (keys {}) does not hold",
            crate::json::quote(id),
            keyring
                .ids()
                .iter()
                .map(|i| crate::json::quote(i))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let expected = entry_mac(
        key,
        prefix.release_name(),
        &listed.key,
        &listed.render_ref,
        time,
        summary,
    );
    // Compared in constant time: the MAC is a secret's function, and a forger who
    // could time a comparison could find it byte by byte.
    let same = expected.len() == mac.len()
        && expected
            .bytes()
            .zip(mac.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if same {
        EntryTrust::Authenticated(id.to_string())
    } else {
        EntryTrust::Unauthenticated(format!(
            "its MAC does not verify under key {}: its key, renderRef, time or summary \
             was changed, or it was copied from elsewhere",
            crate::json::quote(id)
        ))
    }
}

/// A history key as listed, with its parsed parts.
#[derive(Debug, Clone)]
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

/// The entries of the release a view may take as its history, oldest first: every
/// listed entry, except where encryption is required (and entries are authenticated),
/// where each body is read (`get` each, in key order) and only the entries that
/// authenticate are kept, so no planted entry adds an interval to `images` or a step to
/// `blame` (CONTRACT.md §14). A body that does not read is left out there too.
pub(crate) fn trusted_entries<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    keyring: &Keyring,
) -> Result<Vec<ListedEntry>> {
    let (entries, _) = list_entries(bucket, prefix)?;
    if !keyring.counts_only_authenticated() {
        return Ok(entries);
    }
    let mut trusted = Vec::with_capacity(entries.len());
    for listed in entries {
        if authenticates(bucket, prefix, &listed, keyring)? {
            trusted.push(listed);
        }
    }
    Ok(trusted)
}

/// Whether the entry `listed` authenticates under `keyring`: `get` of its body. One
/// deleted since the listing, or whose body does not read, authenticates nothing (a
/// planted one must not stop whoever asks); a failed call is an error.
pub(crate) fn authenticates<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    listed: &ListedEntry,
    keyring: &Keyring,
) -> Result<bool> {
    match read_entry(bucket, prefix, listed.clone(), keyring) {
        Ok(Some(entry)) => Ok(entry.trust.is_authenticated()),
        Ok(None) | Err(Error::Corrupt(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Which of `entries` (oldest first, as a listing gives them) the running render is at:
/// the newest that records `running` and counts as history where encryption is
/// `required` or not ([`EntryTrust::counts_where`]), by its index; none when no entry
/// that counts records it. The history keeps each render at its first apply, so after a
/// rollback the running entry is an older one, not the newest.
pub fn running_entry(entries: &[HistoryEntry], running: &str, required: bool) -> Option<u32> {
    entries
        .iter()
        .rposition(|e| e.render_ref == running && e.trust.counts_where(required))
        .and_then(|i| u32::try_from(i).ok())
}

pub use crate::wit::types::HistorySummary;
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

/// Appends an entry unless the history already records its render: `list(P/history/)`,
/// then one `put`. With a keyring the body carries its MAC. Where encryption is required
/// (and entries are authenticated), an entry that records the same render counts only
/// if it authenticates: the bodies of the listed entries naming that renderRef are read
/// (`get` of each, newest first, until one authenticates), so an entry planted by a
/// writer of the bucket cannot keep the real one out. Returns whether the entry was
/// added.
pub fn record_history<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    entry: &NewEntry,
    keyring: &Keyring,
) -> Result<bool> {
    let prefix = ReleasePrefix::new(release)?;
    let key = prefix.history_key(entry.synced_at, &entry.render_ref)?;
    let body = authenticated_body(&prefix, &key, entry, keyring)?;
    let (entries, _) = list_entries(bucket, &prefix)?;
    let same: Vec<ListedEntry> = entries
        .into_iter()
        .filter(|e| e.render_ref == entry.render_ref)
        .collect();
    if keyring.counts_only_authenticated() {
        for listed in same.iter().rev() {
            if authenticates(bucket, &prefix, listed, keyring)? {
                return Ok(false);
            }
        }
    } else if !same.is_empty() {
        return Ok(false);
    }
    bucket
        .put(&key, &body)
        .map_err(|e| call_failed("put", &key, e))?;
    Ok(true)
}

/// The history, oldest first: `list(P/history/)`, then `get` of each entry for its
/// summary, each judged under `keyring` ([`EntryTrust`]). An entry deleted between the
/// two (by a concurrent GC) is left out.
pub fn list_history<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keyring: &Keyring,
) -> Result<Vec<HistoryEntry>> {
    let prefix = ReleasePrefix::new(release)?;
    let (entries, _) = list_entries(bucket, &prefix)?;
    let mut history = Vec::with_capacity(entries.len());
    for listed in entries {
        history.extend(read_entry(bucket, &prefix, listed, keyring)?);
    }
    Ok(history)
}

pub use crate::wit::types::HistoryPage;
/// At most `limit` entries, newest first, older than the entry key `before` when given:
/// `list(P/history/)`, then `get` of each entry of the page only, newest first. So a
/// page costs `1 + limit` calls however long the history is. An entry deleted between
/// the list and its `get` is left out (the page may then hold fewer).
pub fn list_history_page<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    limit: u32,
    before: Option<&str>,
    keyring: &Keyring,
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
        page.entries
            .extend(read_entry(bucket, &prefix, listed, keyring)?);
    }
    Ok(page)
}

pub use crate::wit::types::EntryRead;
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
    keyring: &Keyring,
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
        read.push(match read_entry(bucket, &prefix, entry, keyring) {
            Ok(Some(entry)) => EntryRead::Entry(entry),
            Ok(None) => EntryRead::Gone,
            Err(Error::Corrupt(m)) => EntryRead::Corrupt(m),
            Err(e) => return Err(e),
        });
    }
    Ok(read)
}

/// A listed entry with the summary of its body, judged under `keyring`; `None` when it
/// was deleted since the listing.
pub(crate) fn read_entry<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    listed: ListedEntry,
    keyring: &Keyring,
) -> Result<Option<HistoryEntry>> {
    Ok(read_checked(bucket, prefix, listed, keyring)?.map(|(entry, _)| entry))
}

/// [`read_entry`], with whether the body agrees with the key.
fn read_checked<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    listed: ListedEntry,
    keyring: &Keyring,
) -> Result<Option<(HistoryEntry, bool)>> {
    let body = match bucket.get(&listed.key) {
        Ok(body) => body,
        Err(BucketError::NotFound) => return Ok(None),
        Err(e) => return Err(call_failed("get", &listed.key, e)),
    };
    let corrupt = |why: String| {
        Error::Corrupt(format!(
            "history entry {}: {why}; delete or rewrite the entry to repair the history",
            listed.key
        ))
    };
    let doc =
        decode_object(&body).map_err(|e| corrupt(format!("body is not a JSON object ({e})")))?;
    let summary = match doc.root_member("summary") {
        None | Some(Node::Null) => String::new(),
        Some(node) => match node.as_str() {
            Some(s) => s.to_string(),
            None => return Err(corrupt("\"summary\" is not a string".to_string())),
        },
    };
    let time = format_synced_at(listed.synced_at).unwrap_or_default();
    let disagrees = disagreement(&listed, &doc, &time);
    let agrees = disagrees.is_none();
    let trust = trust_of(prefix, &listed, &doc, (&summary, &time), disagrees, keyring);
    let ListedEntry {
        key,
        synced_at,
        render_ref,
    } = listed;
    Ok(Some((
        HistoryEntry {
            key,
            render_ref,
            synced_at,
            summary,
            trust,
        },
        agrees,
    )))
}

pub use crate::wit::types::AuthenticateReport;
/// Brings the release's history entries under the keyring's first key:
/// `list(P/history/)`, then for each entry in key order `get`, and `put` of its body with
/// a MAC under the first key when it authenticates under another key of the ring (a
/// rotation), or, with `vouch`, when it does not authenticate at all (an operator who
/// checked the history with `verify` vouches for entries written before the store had
/// a keyring, or by a writer without it). A body that disagrees with its key is never
/// vouched for. An empty keyring is invalid input. Each `put` replaces one entry, so
/// a crash at any point leaves every entry as it was or rewritten, and a rerun
/// finishes.
pub fn authenticate_history<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keyring: &Keyring,
    vouch: bool,
) -> Result<AuthenticateReport> {
    let prefix = ReleasePrefix::new(release)?;
    let Some(first) = keyring.keys().first() else {
        return Err(Error::InvalidInput(
            "authenticating history entries needs a keyring: their MACs are made with its \
             first key"
                .into(),
        ));
    };
    let (entries, _) = list_entries(bucket, &prefix)?;
    let mut report = AuthenticateReport::default();
    for listed in entries {
        let Some((entry, agrees)) = read_checked(bucket, &prefix, listed, keyring)? else {
            continue;
        };
        let rewrite = match &entry.trust {
            EntryTrust::Authenticated(id) if id == first.id() => {
                report.kept += 1;
                false
            }
            EntryTrust::Authenticated(_) => true,
            EntryTrust::Unauthenticated(_) if vouch && agrees => true,
            EntryTrust::Unauthenticated(why) => {
                report.left.push(format!("{}: {why}", entry.key));
                false
            }
            // A ring that judges no entry (a trace of an earlier build) rewrites none.
            EntryTrust::Unchecked => false,
        };
        if rewrite {
            let body = authenticated_body(
                &prefix,
                &entry.key,
                &NewEntry {
                    render_ref: entry.render_ref.clone(),
                    synced_at: entry.synced_at,
                    summary: entry.summary.clone(),
                },
                keyring,
            )?;
            bucket
                .put(&entry.key, &body)
                .map_err(|e| call_failed("put", &entry.key, e))?;
            report.rewritten += 1;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::MemoryBucket;

    #[test]
    fn the_running_entry_is_the_newest_that_records_it_and_counts() {
        let listed = |r: &str, trust: EntryTrust| HistoryEntry {
            key: String::new(),
            render_ref: reference(r.chars().next().unwrap()),
            synced_at: at(0),
            summary: String::new(),
            trust,
        };
        let ok = || EntryTrust::Authenticated("k1".into());
        let planted = || EntryTrust::Unauthenticated("no MAC".into());
        let entries = vec![
            listed("a", ok()),
            listed("b", ok()),
            listed("a", planted()),
            listed("c", ok()),
        ];
        // A rollback to a: the newest entry recording it, not the newest entry.
        assert_eq!(running_entry(&entries, &reference('a'), false), Some(2));
        // Under the rule, the planted entry does not count: the genuine one runs.
        assert_eq!(running_entry(&entries, &reference('a'), true), Some(0));
        assert_eq!(running_entry(&entries, &reference('c'), true), Some(3));
        assert_eq!(running_entry(&entries, &reference('d'), false), None);
        assert_eq!(running_entry(&[], &reference('a'), false), None);
    }

    fn ring(id: &str, byte: u8) -> Keyring {
        Keyring::new(vec![SealingKey::new(id, &[byte; 32]).unwrap()]).unwrap()
    }

    fn at(seconds: i64) -> SyncTime {
        SyncTime {
            seconds: 1_700_000_000 + seconds,
            nanoseconds: 0,
        }
    }

    fn entry(r: &str, seconds: i64, summary: &str) -> NewEntry {
        NewEntry {
            render_ref: r.to_string(),
            synced_at: at(seconds),
            summary: summary.to_string(),
        }
    }

    fn reference(c: char) -> String {
        format!("sha256:{}", c.to_string().repeat(64))
    }

    /// Writes an entry as a writer of the bucket without the keyring would: the body
    /// Go's controller writes, no MAC.
    fn plant(bucket: &mut MemoryBucket, release: &Release, e: &NewEntry) -> String {
        let key = ReleasePrefix::new(release)
            .unwrap()
            .history_key(e.synced_at, &e.render_ref)
            .unwrap();
        let body = entry_body(&e.render_ref, e.synced_at, &e.summary).unwrap();
        bucket.put(&key, &body).unwrap();
        key
    }

    #[test]
    fn with_a_keyring_an_entry_authenticates_and_planted_edited_or_moved_ones_do_not() {
        let release = Release::new("prod", "app");
        let keys = ring("k1", 1);
        let mut bucket = MemoryBucket::new();
        let (a, b) = (reference('a'), reference('b'));
        assert!(record_history(&mut bucket, &release, &entry(&a, 0, "v1"), &keys).unwrap());
        let planted = plant(&mut bucket, &release, &entry(&b, 10, "v4 bump nginx"));
        let history = list_history(&mut bucket, &release, &keys).unwrap();
        assert_eq!(history[0].trust, EntryTrust::Authenticated("k1".into()));
        assert!(
            matches!(&history[1].trust, EntryTrust::Unauthenticated(w) if w.contains("no MAC")),
            "{:?}",
            history[1].trust
        );
        // Without the keyring nothing is checked, and the bodies read as before.
        let plain = list_history(&mut bucket, &release, &Keyring::empty()).unwrap();
        assert!(plain.iter().all(|e| e.trust == EntryTrust::Unchecked));
        assert_eq!(plain[0].summary, "v1");

        // An edited summary, a body moved under another key, a key the ring lacks.
        let genuine = history[0].key.clone();
        let body = bucket.get(&genuine).unwrap();
        let edited = String::from_utf8(body.clone())
            .unwrap()
            .replace("\"v1\"", "\"v9\"");
        bucket.put(&genuine, edited.as_bytes()).unwrap();
        let read = list_history(&mut bucket, &release, &keys).unwrap();
        assert!(
            matches!(&read[0].trust, EntryTrust::Unauthenticated(w) if w.contains("does not verify"))
        );
        bucket.put(&genuine, &body).unwrap();
        let other = Release::new("kube-system", "ops");
        let moved = ReleasePrefix::new(&other)
            .unwrap()
            .history_key(at(0), &a)
            .unwrap();
        bucket.put(&moved, &body).unwrap();
        let read = list_history(&mut bucket, &other, &keys).unwrap();
        assert!(!read[0].trust.is_authenticated(), "{:?}", read[0].trust);
        let read = list_history(&mut bucket, &release, &ring("k2", 2)).unwrap();
        assert!(
            matches!(&read[0].trust, EntryTrust::Unauthenticated(w) if w.contains("\"k1\"")),
            "{:?}",
            read[0].trust
        );

        // A body that disagrees with its key is reported on any store.
        let wrong = entry_body(&a, at(999_999_999), "later").unwrap();
        bucket.put(&planted, &wrong).unwrap();
        for ring in [Keyring::empty(), keys.clone()] {
            let read = list_history(&mut bucket, &release, &ring).unwrap();
            assert!(
                matches!(&read[1].trust, EntryTrust::Unauthenticated(w) if w.contains("its body names renderRef")),
                "{:?}",
                read[1].trust
            );
        }
    }

    #[test]
    fn where_encryption_is_required_a_planted_entry_does_not_keep_the_real_one_out() {
        let release = Release::new("prod", "app");
        let keys = ring("k1", 1).require(true).unwrap();
        let mut bucket = MemoryBucket::new();
        let a = reference('a');
        plant(&mut bucket, &release, &entry(&a, 0, "planted"));
        // Without the rule the planted key counts as the render's entry.
        let lax = ring("k1", 1);
        assert!(!record_history(&mut bucket, &release, &entry(&a, 5, "real"), &lax).unwrap());
        assert!(record_history(&mut bucket, &release, &entry(&a, 5, "real"), &keys).unwrap());
        // A planted body that does not even read stops nothing either.
        let b = reference('b');
        let junk = ReleasePrefix::new(&release)
            .unwrap()
            .history_key(at(1), &b)
            .unwrap();
        bucket.put(&junk, b"junk!").unwrap();
        assert!(record_history(&mut bucket, &release, &entry(&b, 6, "real"), &keys).unwrap());
        // Now an authenticated entry records it: the next record adds none.
        assert!(!record_history(&mut bucket, &release, &entry(&a, 9, "again"), &keys).unwrap());
        let prefix = ReleasePrefix::new(&release).unwrap();
        assert_eq!(list_entries(&mut bucket, &prefix).unwrap().0.len(), 4);
    }

    #[test]
    fn authenticating_rewrites_what_is_vouched_for_and_rotates_but_never_a_disagreeing_body() {
        let release = Release::new("prod", "app");
        let old = ring("k0", 9);
        let new = Keyring::new(vec![
            SealingKey::new("k1", &[1; 32]).unwrap(),
            SealingKey::new("k0", &[9; 32]).unwrap(),
        ])
        .unwrap();
        let mut bucket = MemoryBucket::new();
        let (a, b, c) = (reference('a'), reference('b'), reference('c'));
        record_history(&mut bucket, &release, &entry(&a, 0, "old key"), &old).unwrap();
        plant(&mut bucket, &release, &entry(&b, 1, "before the keyring"));
        let bad = plant(&mut bucket, &release, &entry(&c, 2, "edited"));
        bucket
            .put(&bad, &entry_body(&a, at(2), "edited").unwrap())
            .unwrap();
        let rotated = authenticate_history(&mut bucket, &release, &new, false).unwrap();
        assert_eq!(
            (rotated.rewritten, rotated.kept, rotated.left.len()),
            (1, 0, 2)
        );
        let vouched = authenticate_history(&mut bucket, &release, &new, true).unwrap();
        assert_eq!((vouched.rewritten, vouched.kept), (1, 1));
        assert_eq!(vouched.left.len(), 1);
        assert!(vouched.left[0].starts_with(&bad), "{:?}", vouched.left);
        let read = list_history(&mut bucket, &release, &ring("k1", 1)).unwrap();
        let trusted: Vec<bool> = read.iter().map(|e| e.trust.is_authenticated()).collect();
        assert_eq!(trusted, [true, true, false]);
        assert!(authenticate_history(&mut bucket, &release, &Keyring::empty(), true).is_err());
    }

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
            record_history(&mut bucket, &release, &entry, &Keyring::empty()).unwrap();
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
        let read =
            read_history_entries(&mut bucket, &release, &keys[..], &Keyring::empty()).unwrap();
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
                read_history_entries(&mut bucket, &release, &keys, &Keyring::empty()),
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
            assert!(record_history(&mut bucket, &release, &entry, &Keyring::empty()).unwrap());
        }
        bucket.take_calls();
        let page = list_history_page(&mut bucket, &release, 2, None, &Keyring::empty()).unwrap();
        let summaries: Vec<_> = page.entries.iter().map(|e| e.summary.as_str()).collect();
        assert_eq!(summaries, ["sync 4", "sync 3"]);
        let calls = bucket.take_calls();
        assert_eq!(calls.len(), 3, "{calls:?}");
        assert_eq!(calls[0], "list ns/app/history/");
        assert_eq!(calls[1], format!("get {}", page.entries[0].key));
        let next = page.next_before.clone().unwrap();
        assert_eq!(next, page.entries[1].key);
        let page =
            list_history_page(&mut bucket, &release, 2, Some(&next), &Keyring::empty()).unwrap();
        let summaries: Vec<_> = page.entries.iter().map(|e| e.summary.as_str()).collect();
        assert_eq!(summaries, ["sync 2", "sync 1"]);
        let last = list_history_page(
            &mut bucket,
            &release,
            2,
            page.next_before.as_deref(),
            &Keyring::empty(),
        );
        let last = last.unwrap();
        assert_eq!(last.entries.len(), 1);
        assert_eq!(last.entries[0].summary, "sync 0");
        assert_eq!(last.next_before, None);
        // The whole history in one page, and the pages together are the history reversed.
        let all = list_history_page(&mut bucket, &release, 100, None, &Keyring::empty()).unwrap();
        let mut history = list_history(&mut bucket, &release, &Keyring::empty()).unwrap();
        history.reverse();
        assert_eq!(all.entries, history);
        assert_eq!(all.next_before, None);
        // A limit of 0 and a cursor that is not an entry key of the release are refused
        // before any bucket call.
        bucket.take_calls();
        assert!(matches!(
            list_history_page(&mut bucket, &release, 0, None, &Keyring::empty()),
            Err(Error::InvalidInput(_))
        ));
        for bad in [
            "ns/app/renders/x",
            "ns/other/history/20260101T000000.000000000Z-x",
            "",
        ] {
            assert!(matches!(
                list_history_page(&mut bucket, &release, 1, Some(bad), &Keyring::empty()),
                Err(Error::InvalidInput(_))
            ));
        }
        assert_eq!(bucket.take_calls(), Vec::<String>::new());
    }
}
