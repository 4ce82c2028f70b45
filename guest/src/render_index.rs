//! The release index: what each render of a release's history holds (its objects, each
//! with its hash and the images of its pod templates), in one blob a release,
//! `<prefix>index/v1` (CONTRACT.md §3). A fleet query then reads one blob a release
//! where it would read every render the history names.
//!
//! The index is a cache of facts fixed by the renders' content: an entry is keyed by a
//! renderRef, and what a render holds never changes. So an index that is missing, stale
//! or lost to a concurrent writer costs reads, never a wrong answer: a query reads every
//! render the index does not name. It is written when a render is recorded, rebuilt by
//! `index-release`, pruned after GC, deleted with the release, and sealed under the
//! keyring's first key when the store has one (image and object names are metadata
//! people protect).
//!
//! The index is derived data, and a writer of the bucket may plant or edit it
//! (CONTRACT.md §14). With a keyring, only an index sealed under it is read; a
//! plaintext one is read past, as a missing one is, and never merged into a new index
//! or sealed: the index is rebuilt from renders read and verified. Each entry says
//! whether its render was read sealed and bound to the release, and where encryption is
//! required only those entries are trusted. Format 2 (the `version` member; the key
//! keeps `index/v1`) added that mark: an index of format 1, which an earlier build may
//! have sealed around a planted plaintext index, is rebuilt. On a plaintext store the
//! index is trusted as found, as the history is; `check_index` (`verify`) compares it
//! with the renders.

use crate::bucket::{Bucket, BucketError};
use crate::diff::ObjectId;
use crate::encryption::Keyring;
use crate::error::{Error, Result};
use crate::images::{IndexedObject, index_objects};
use crate::json::{Builder, Document, Node, decode_value, encode_document};
use crate::keys::{Release, ReleasePrefix, validate_render_ref};
use crate::store::call_failed;
use std::collections::{BTreeMap, BTreeSet};

/// The format this version writes and reads (the key stays `index/v1`: a reader of
/// format 1 reads past a format 2 index, as this one reads past a format 1 index).
const VERSION: i64 = 2;

/// The largest index read: past it, an index is not decoded but read past and
/// replaced (a planted huge blob must not take a call's memory).
pub const MAX_INDEX_BYTES: usize = 64 << 20;

/// The most a host reads for a `get` of `key` when `key` is a release index
/// (`<prefix>index/v1`): [`MAX_INDEX_BYTES`], so an oversized index is refused by the
/// host before it is read (the component then reads past it, as it would past one it
/// decoded and found too large) instead of being copied into the sandbox. `None` for
/// any other key. The rule is written here once; the Rust host, which links this crate,
/// applies it to each call's `get`.
pub fn read_limit(key: &str) -> Option<u64> {
    // Asked of every `get` a host makes for the component: no allocation.
    key.strip_suffix(crate::keys::INDEX)
        .is_some_and(|prefix| prefix.ends_with('/'))
        .then_some(MAX_INDEX_BYTES as u64)
}

/// What each render of a release holds, by renderRef.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseIndex {
    /// Each render's objects, in render order.
    pub renders: BTreeMap<String, Vec<IndexedObject>>,
    /// The renders whose entry was read from a blob sealed and bound to the release
    /// (CONTRACT.md §14): where encryption is required, only these entries are
    /// trusted, the others read again.
    pub sealed: BTreeSet<String>,
}

impl ReleaseIndex {
    /// The index as the compact JSON it is stored as:
    /// `{"renders":{"sha256:…":[[apiVersion,kind,namespace,name,hash,[images…]],…]},
    /// "sealed":["sha256:…",…],"version":2}`, keys sorted, so equal indexes are equal
    /// bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Builder::new();
        let mut renders = Vec::with_capacity(self.renders.len());
        for (render_ref, objects) in &self.renders {
            let rows = objects
                .iter()
                .map(|o| {
                    let fields = [
                        &o.id.api_version,
                        &o.id.kind,
                        &o.id.namespace,
                        &o.id.name,
                        &o.hash,
                    ]
                    .map(|f| b.string(f.as_str()));
                    let images = b.strings(o.images.iter().map(String::as_str));
                    let mut row = fields.to_vec();
                    row.push(images);
                    b.array(row)
                })
                .collect();
            let rows = b.array(rows);
            renders.push((render_ref.as_str(), rows));
        }
        let renders = b.object(renders);
        let sealed = b.strings(self.sealed.iter().map(String::as_str));
        let version = b.int(VERSION);
        let root = b.object(vec![
            ("renders", renders),
            ("sealed", sealed),
            ("version", version),
        ]);
        let mut out = Vec::new();
        encode_document(&b.finish(root), &mut out);
        out
    }

    /// Reads an index from its JSON; why it does not read when it does not.
    pub fn decode(bytes: &[u8]) -> std::result::Result<ReleaseIndex, String> {
        let doc = decode_value(bytes).map_err(|e| format!("it is not JSON: {e}"))?;
        match doc.root_member("version") {
            Some(Node::Int(VERSION)) => {}
            _ => return Err(format!("it is not version {VERSION} of the index")),
        }
        let Some(Node::Object(renders)) = doc.root_member("renders") else {
            return Err("it has no \"renders\" object".into());
        };
        let mut index = ReleaseIndex::default();
        for (render_ref, rows) in renders {
            validate_render_ref(render_ref).map_err(|e| e.to_string())?;
            let objects = elements(doc.node(*rows))
                .ok_or_else(|| format!("the objects of {render_ref} are not a list"))?
                .iter()
                .map(|&row| object_of(&doc, doc.node(row)))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("an object of {render_ref} does not read"))?;
            index.renders.insert(render_ref.to_string(), objects);
        }
        let Some(Node::Array(sealed)) = doc.root_member("sealed") else {
            return Err("it has no \"sealed\" list".into());
        };
        for item in sealed {
            let render_ref = doc
                .node(*item)
                .as_str()
                .filter(|r| index.renders.contains_key(*r))
                .ok_or("its \"sealed\" list names a render it does not index")?;
            index.sealed.insert(render_ref.to_string());
        }
        Ok(index)
    }

    /// The entry of `render_ref` if `keyring` trusts it: every entry on a store that
    /// does not require encryption, only those read sealed and bound where it does.
    fn trusted(&mut self, render_ref: &str, keyring: &Keyring) -> Option<Vec<IndexedObject>> {
        if keyring.required() && !self.sealed.contains(render_ref) {
            return None;
        }
        self.renders.remove(render_ref)
    }
}

/// The elements of an array node.
fn elements<'d>(node: &'d Node<'_>) -> Option<&'d [u32]> {
    match node {
        Node::Array(items) => Some(items),
        _ => None,
    }
}

/// One object of an index: `[apiVersion, kind, namespace, name, hash, [images…]]`.
fn object_of(doc: &Document<'_>, row: &Node<'_>) -> Option<IndexedObject> {
    let fields = elements(row)?;
    let [api_version, kind, namespace, name, hash, images] = fields else {
        return None;
    };
    let text = |i: &u32| doc.node(*i).as_str().map(str::to_string);
    let images = elements(doc.node(*images))?
        .iter()
        .map(text)
        .collect::<Option<Vec<_>>>()?;
    Some(IndexedObject {
        id: ObjectId {
            api_version: text(api_version)?,
            kind: text(kind)?,
            namespace: text(namespace)?,
            name: text(name)?,
        },
        hash: text(hash)?,
        images,
    })
}

/// The stored index of a release, as read.
enum Stored {
    /// No index is stored.
    Absent,
    /// A blob is stored that is not an index this store can trust: why.
    Unusable(String),
    /// The index and the blob it was read from.
    Index(ReleaseIndex, Vec<u8>),
}

/// `get(<prefix>index/v1)`, opened under the keyring and read. A blob that does not
/// open or read, is larger than [`MAX_INDEX_BYTES`], is plaintext on a store with a
/// keyring, or could not be read at all (a failed `get`, a blob over the call's memory
/// cap), is [`Stored::Unusable`]: read past as a missing index is, since the index is
/// a cache whose every entry a query can get from the renders instead (which fail the
/// query if they cannot be read).
fn read_stored<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    keyring: &Keyring,
) -> Result<Stored> {
    let key = prefix.index_key();
    let blob = match bucket.get(&key) {
        Ok(blob) => blob,
        Err(BucketError::NotFound) => return Ok(Stored::Absent),
        Err(other) => {
            return Ok(Stored::Unusable(format!(
                "index {key} could not be read ({other})"
            )));
        }
    };
    Ok(match usable(&key, &blob, keyring) {
        Ok(index) => Stored::Index(index, blob),
        Err(why) => Stored::Unusable(why),
    })
}

/// The index `blob` (stored under `key`) holds if this store can use it; why not.
fn usable(key: &str, blob: &[u8], keyring: &Keyring) -> std::result::Result<ReleaseIndex, String> {
    if blob.len() > MAX_INDEX_BYTES {
        return Err(format!(
            "index {key} is {} bytes, over the {MAX_INDEX_BYTES} an index may be",
            blob.len()
        ));
    }
    if !keyring.is_empty() && !crate::encryption::is_sealed(blob) {
        return Err(format!(
            "index {key} is plaintext on a store with a keyring: a writer of the bucket may \
             have put it there, so it is not used"
        ));
    }
    let plain = keyring
        .open_named(key, key, blob.to_vec())
        .map_err(|e| e.to_string())?;
    ReleaseIndex::decode(&plain).map_err(|why| format!("index {key} does not read: {why}"))
}

/// The objects of each render of `refs` (each once; the order does not matter), from
/// the release index where it names them: `get(<prefix>index/v1)`, then `get` of each
/// render it does not name, verified as `get-render` verifies it, one held at a time. A
/// render that cannot be read fails the call: an answer without it would say "not
/// there" for what could not be seen.
pub fn objects_by_render<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    release: &Release,
    refs: &BTreeSet<&str>,
    keyring: &Keyring,
) -> Result<BTreeMap<String, Vec<IndexedObject>>> {
    let mut indexed = match read_stored(bucket, prefix, keyring)? {
        Stored::Index(index, _) => index,
        Stored::Absent | Stored::Unusable(_) => ReleaseIndex::default(),
    };
    let mut out = BTreeMap::new();
    for &render_ref in refs {
        let objects = match indexed.trusted(render_ref, keyring) {
            Some(objects) => objects,
            None => {
                let canonical = crate::store::get_render(bucket, release, render_ref, keyring)?;
                index_objects(&canonical)?
            }
        };
        out.insert(render_ref.to_string(), objects);
    }
    Ok(out)
}

pub use crate::wit::types::IndexReport;
/// Brings the release index up to date with the history: `list(<prefix>history/)`,
/// `get(<prefix>index/v1)`; with `read_missing`, `get` of each render of the history the
/// index does not name (renders that cannot be read are reported, not indexed); then
/// `put(<prefix>index/v1)` only if the blob to store differs from the one stored (the
/// index of the history's renders alone, sealed under the keyring's first key when it
/// has one), or `delete` of it when the history is empty and an index is stored.
/// Without `read_missing` it only prunes (what a GC leaves to do). With `force` the
/// stored index is not used at all: every render is read again (`reindex --force`).
///
/// Nothing is carried over from an index this store does not trust (plaintext with a
/// keyring, unsealed entries where encryption is required, another format): the new
/// index holds only what this call read from verified renders or opened under the
/// keyring.
pub fn index_release<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keyring: &Keyring,
    read_missing: bool,
    force: bool,
) -> Result<IndexReport> {
    let prefix = ReleasePrefix::new(release)?;
    let (entries, _) = crate::history::list_entries(bucket, &prefix)?;
    let refs: BTreeSet<&str> = entries.iter().map(|e| e.render_ref.as_str()).collect();
    let key = prefix.index_key();
    let mut report = IndexReport {
        renders: refs.len() as u32,
        ..IndexReport::default()
    };
    let (mut old, stored) = match read_stored(bucket, &prefix, keyring)? {
        Stored::Absent => (ReleaseIndex::default(), None),
        Stored::Unusable(why) => {
            report.replaced = Some(why);
            (ReleaseIndex::default(), Some(Vec::new()))
        }
        Stored::Index(_, _) if force => {
            report.replaced = Some("rebuilt as asked (--force)".into());
            (ReleaseIndex::default(), Some(Vec::new()))
        }
        Stored::Index(index, blob) => (index, Some(blob)),
    };
    if refs.is_empty() {
        report.pruned = old.renders.len() as u32;
        if stored.is_some() {
            bucket
                .delete(&key)
                .map_err(|e| call_failed("delete", &key, e))?;
            report.written = true;
        }
        return Ok(report);
    }
    let pruned = old
        .renders
        .keys()
        .filter(|r| !refs.contains(r.as_str()))
        .count();
    let mut index = ReleaseIndex::default();
    for &render_ref in &refs {
        let was_sealed = old.sealed.contains(render_ref);
        if let Some(objects) = old.trusted(render_ref, keyring) {
            if was_sealed {
                index.sealed.insert(render_ref.to_string());
            }
            index.renders.insert(render_ref.to_string(), objects);
            continue;
        }
        if !read_missing {
            continue;
        }
        let read = crate::store::get_render_sealed(bucket, release, render_ref, keyring)
            .and_then(|(canonical, sealed)| Ok((index_objects(&canonical)?, sealed)));
        match read {
            Ok((objects, sealed)) => {
                report.read += 1;
                if sealed {
                    index.sealed.insert(render_ref.to_string());
                }
                index.renders.insert(render_ref.to_string(), objects);
            }
            // A failed call is the store's trouble, not the render's: stop.
            Err(e @ Error::Bucket(_)) => return Err(e),
            Err(e) => report.unreadable.push(format!("{render_ref}: {e}")),
        }
    }
    report.pruned = pruned as u32;
    report.indexed = index.renders.len() as u32;
    let blob = keyring.seal_named(&key, &index.encode());
    if stored.as_deref() != Some(blob.as_slice()) {
        bucket
            .put(&key, &blob)
            .map_err(|e| call_failed("put", &key, e))?;
        report.written = true;
    }
    Ok(report)
}

pub use crate::wit::types::IndexCheck;
/// Checks the release index against the renders: `list(P/history/)`,
/// `get(P/index/v1)`, then `get` of each render of the history the index names,
/// verified as `get-render` verifies it and indexed again, compared with the entry
/// (objects, hashes, images). A render that does not
/// read is left to the caller's own check of the renders; a failed call fails this one.
/// On a plaintext store this is the only check an index gets: there, whoever can write
/// the bucket can write the index.
pub fn check_index<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keyring: &Keyring,
) -> Result<IndexCheck> {
    let prefix = ReleasePrefix::new(release)?;
    let (entries, _) = crate::history::list_entries(bucket, &prefix)?;
    let refs: BTreeSet<&str> = entries.iter().map(|e| e.render_ref.as_str()).collect();
    let mut check = IndexCheck::default();
    let index = match read_stored(bucket, &prefix, keyring)? {
        Stored::Absent => return Ok(check),
        Stored::Unusable(why) => {
            check.present = true;
            check.unusable = Some(why);
            return Ok(check);
        }
        Stored::Index(index, _) => index,
    };
    check.present = true;
    for (render_ref, objects) in &index.renders {
        if !refs.contains(render_ref.as_str()) {
            // Left from a history since pruned: no query asks for it.
            continue;
        }
        let canonical = match crate::store::get_render(bucket, release, render_ref, keyring) {
            Ok(read) => read,
            Err(e @ Error::Bucket(_)) => return Err(e),
            Err(_) => continue,
        };
        check.read += 1;
        // Whether the blob is still sealed is the blob's own check (verify reads every
        // blob): the entry was made from a verified render, and a renderRef fixes the
        // content, so only what the entry says of the content is compared.
        let actual = index_objects(&canonical)?;
        if &actual != objects {
            check.disagreeing.push(format!(
                "{render_ref}: the index's objects or images are not the render's"
            ));
        }
    }
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::MemoryBucket;
    use crate::encryption::SealingKey;
    use crate::history::{NewEntry, record_history};
    use crate::time::SyncTime;

    fn release() -> Release {
        Release::new("prod", "app")
    }

    fn deployment(image: &str) -> Vec<u8> {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web"}},"spec":{{"template":{{"spec":{{"containers":[{{"name":"c","image":"{image}"}}]}}}}}}}}"#
        )
        .into_bytes()
    }

    fn put_and_record(
        bucket: &mut MemoryBucket,
        image: &str,
        second: i64,
        ring: &Keyring,
    ) -> String {
        let r = crate::store::put_render(bucket, &release(), &[deployment(image)], ring).unwrap();
        record_history(
            bucket,
            &release(),
            &NewEntry {
                render_ref: r.clone(),
                synced_at: SyncTime {
                    seconds: 1_700_000_000 + second,
                    nanoseconds: 0,
                },
                summary: String::new(),
            },
            ring,
        )
        .unwrap();
        r
    }

    fn ring() -> Keyring {
        Keyring::new(vec![SealingKey::new("k1", &[7; 32]).unwrap()]).unwrap()
    }

    #[test]
    fn a_host_bounds_the_read_of_an_index_key_alone() {
        assert_eq!(
            read_limit("prod/app/index/v1"),
            Some(MAX_INDEX_BYTES as u64)
        );
        for other in [
            "prod/app/renders/index/v1x",
            "prod/app/history/x",
            "index/v1",
        ] {
            assert_eq!(read_limit(other), None, "{other}");
        }
    }

    #[test]
    fn an_index_reads_back_as_written() {
        let mut index = ReleaseIndex::default();
        let objects =
            index_objects(&crate::render::canonical(&[deployment("nginx")]).unwrap()).unwrap();
        index
            .renders
            .insert(format!("sha256:{}", "a".repeat(64)), objects);
        assert_eq!(ReleaseIndex::decode(&index.encode()).unwrap(), index);
        for bad in [&b"{}"[..], b"{\"version\":2,\"renders\":{}}", b"[1]"] {
            assert!(ReleaseIndex::decode(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn indexing_reads_only_what_is_missing_and_prunes_what_history_dropped() {
        let ring = Keyring::empty();
        let mut bucket = MemoryBucket::new();
        let a = put_and_record(&mut bucket, "nginx:1", 0, &ring);
        let report = index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        assert_eq!((report.renders, report.read, report.indexed), (1, 1, 1));
        assert!(report.written);
        let again = index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        assert_eq!((again.read, again.written), (0, false));

        let b = put_and_record(&mut bucket, "nginx:2", 1, &ring);
        let report = index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        assert_eq!((report.read, report.indexed), (1, 2));

        // The history loses `a` (as a GC would make it): pruning drops it.
        let history_a = ReleasePrefix::new(&release())
            .unwrap()
            .history_key(
                SyncTime {
                    seconds: 1_700_000_000,
                    nanoseconds: 0,
                },
                &a,
            )
            .unwrap();
        bucket.delete(&history_a).unwrap();
        let report = index_release(&mut bucket, &release(), &ring, false, false).unwrap();
        assert_eq!((report.pruned, report.indexed, report.read), (1, 1, 0));
        let refs: BTreeSet<&str> = [b.as_str()].into();
        let prefix = ReleasePrefix::new(&release()).unwrap();
        let found = objects_by_render(&mut bucket, &prefix, &release(), &refs, &ring).unwrap();
        assert_eq!(found[&b][0].images, ["docker.io/library/nginx:2"]);
    }

    #[test]
    fn a_query_reads_past_a_forged_or_foreign_index_and_a_sealed_one_hides_names() {
        let ring = ring();
        let mut bucket = MemoryBucket::new();
        let a = put_and_record(&mut bucket, "registry.example/secret-app:7", 0, &ring);
        index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        let key = ReleasePrefix::new(&release()).unwrap().index_key();
        let stored = bucket.get(&key).unwrap();
        assert!(!stored.windows(10).any(|w| w == b"secret-app"));
        assert!(!stored.windows(10).any(|w| w == b"Deployment"));

        // A plaintext index planted on an encrypted store that requires encryption
        // lies about the image: it is not trusted, the render is read instead.
        let mut forged = ReleaseIndex::default();
        forged.renders.insert(a.clone(), Vec::new());
        bucket.put(&key, &forged.encode()).unwrap();
        let required = ring.clone().require(true).unwrap();
        let prefix = ReleasePrefix::new(&release()).unwrap();
        let refs: BTreeSet<&str> = [a.as_str()].into();
        let found = objects_by_render(&mut bucket, &prefix, &release(), &refs, &required).unwrap();
        assert_eq!(
            found[&a].len(),
            1,
            "the render was read, not the forged index"
        );
        let report = index_release(&mut bucket, &release(), &required, true, false).unwrap();
        assert!(report.replaced.is_some() && report.written);
    }

    #[test]
    fn a_keyring_holder_never_seals_a_planted_plaintext_index() {
        let ring = ring();
        let mut bucket = MemoryBucket::new();
        let a = put_and_record(&mut bucket, "nginx:1", 0, &ring);
        let key = ReleasePrefix::new(&release()).unwrap().index_key();
        let mut forged = ReleaseIndex::default();
        let backdoor = index_objects(
            &crate::render::canonical(&[deployment("evil.example.com/backdoor:1")]).unwrap(),
        )
        .unwrap();
        forged.renders.insert(a.clone(), backdoor);
        forged.sealed.insert(a.clone());
        bucket.put(&key, &forged.encode()).unwrap();
        // The routine update reads past it and rebuilds from the render.
        let report = index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        assert!(report.replaced.as_deref().unwrap().contains("plaintext"));
        assert_eq!(report.read, 1);
        let prefix = ReleasePrefix::new(&release()).unwrap();
        let refs: BTreeSet<&str> = [a.as_str()].into();
        let strict = ring.clone().require(true).unwrap();
        let found = objects_by_render(&mut bucket, &prefix, &release(), &refs, &strict).unwrap();
        assert_eq!(found[&a][0].images, ["docker.io/library/nginx:1"]);
        let check = check_index(&mut bucket, &release(), &strict).unwrap();
        assert!(check.present && check.unusable.is_none() && check.disagreeing.is_empty());
    }

    #[test]
    fn where_encryption_is_required_entries_of_unsealed_renders_are_read_again() {
        let plain = Keyring::empty();
        let mut bucket = MemoryBucket::new();
        let a = put_and_record(&mut bucket, "nginx:1", 0, &plain);
        // Indexed by a keyring holder while the render was still plaintext.
        let lax = ring();
        index_release(&mut bucket, &release(), &lax, true, false).unwrap();
        let prefix = ReleasePrefix::new(&release()).unwrap();
        let refs: BTreeSet<&str> = [a.as_str()].into();
        let strict = lax.clone().require(true).unwrap();
        // The render is plaintext: under the rule it does not read, so neither does the
        // index entry made from it.
        let err = objects_by_render(&mut bucket, &prefix, &release(), &refs, &strict).unwrap_err();
        assert!(matches!(err, Error::Corrupt(_)), "{err}");
    }

    #[test]
    fn an_edited_plaintext_index_is_reported_and_force_rebuilds_it() {
        let ring = Keyring::empty();
        let mut bucket = MemoryBucket::new();
        let a = put_and_record(&mut bucket, "nginx:1", 0, &ring);
        index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        let key = ReleasePrefix::new(&release()).unwrap().index_key();
        let stored = String::from_utf8(bucket.get(&key).unwrap()).unwrap();
        bucket
            .put(&key, stored.replace("nginx:1", "busybox").as_bytes())
            .unwrap();
        let check = check_index(&mut bucket, &release(), &ring).unwrap();
        assert_eq!(check.disagreeing.len(), 1, "{check:?}");
        assert!(check.disagreeing[0].starts_with(&a));
        // A plain update trusts the entry (a cache keyed by renderRef); force does not.
        let report = index_release(&mut bucket, &release(), &ring, true, true).unwrap();
        assert!(report.written && report.read == 1);
        assert!(
            check_index(&mut bucket, &release(), &ring)
                .unwrap()
                .disagreeing
                .is_empty()
        );
    }

    #[test]
    fn an_oversized_index_is_read_past_reported_and_replaced() {
        let ring = Keyring::empty();
        let mut bucket = MemoryBucket::new();
        let a = put_and_record(&mut bucket, "nginx:1", 0, &ring);
        let key = ReleasePrefix::new(&release()).unwrap().index_key();
        bucket.put(&key, &vec![b' '; MAX_INDEX_BYTES + 1]).unwrap();
        let check = check_index(&mut bucket, &release(), &ring).unwrap();
        assert!(
            check.unusable.as_deref().unwrap().contains("over the"),
            "{check:?}"
        );
        let prefix = ReleasePrefix::new(&release()).unwrap();
        let refs: BTreeSet<&str> = [a.as_str()].into();
        objects_by_render(&mut bucket, &prefix, &release(), &refs, &ring).unwrap();
        let report = index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        assert!(report.written && report.replaced.is_some());
        assert!(bucket.get(&key).unwrap().len() < 4096);
    }

    #[test]
    fn an_empty_history_leaves_no_index() {
        let ring = Keyring::empty();
        let mut bucket = MemoryBucket::new();
        put_and_record(&mut bucket, "nginx", 0, &ring);
        index_release(&mut bucket, &release(), &ring, true, false).unwrap();
        crate::store::delete_release(&mut bucket, &release()).unwrap();
        assert!(bucket.list("prod/app/").unwrap().is_empty());
        // An index left behind a history that is gone is deleted by the next prune.
        bucket.put("prod/app/index/v1", b"{}").unwrap();
        let report = index_release(&mut bucket, &release(), &ring, false, false).unwrap();
        assert!(report.written);
        assert!(bucket.list("prod/app/").unwrap().is_empty());
    }
}
