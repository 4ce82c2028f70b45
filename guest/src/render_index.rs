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
//! people protect). A plaintext index on a store that requires encryption is not
//! trusted: it is read past, as a missing one is.

use crate::bucket::{Bucket, BucketError};
use crate::diff::ObjectId;
use crate::encryption::Keyring;
use crate::error::{Error, Result};
use crate::images::{IndexedObject, index_objects};
use crate::json::{Builder, Document, Node, decode_value, encode_document};
use crate::keys::{Release, ReleasePrefix, validate_render_ref};
use crate::store::call_failed;
use std::collections::{BTreeMap, BTreeSet};

/// The format this version writes and reads (also in the key, `index/v1`).
const VERSION: i64 = 1;

/// What each render of a release holds, by renderRef.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReleaseIndex {
    /// Each render's objects, in render order.
    pub renders: BTreeMap<String, Vec<IndexedObject>>,
}

impl ReleaseIndex {
    /// The index as the compact JSON it is stored as:
    /// `{"renders":{"sha256:…":[[apiVersion,kind,namespace,name,hash,[images…]],…]},
    /// "version":1}`, keys sorted, so equal indexes are equal bytes.
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
        let version = b.int(VERSION);
        let root = b.object(vec![("renders", renders), ("version", version)]);
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
        Ok(index)
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
/// open or read is [`Stored::Unusable`], read past as a missing index is; a failed
/// `get` is an error, as any other failed read is.
fn read_stored<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    keyring: &Keyring,
) -> Result<Stored> {
    let key = prefix.index_key();
    let blob = match bucket.get(&key) {
        Ok(blob) => blob,
        Err(BucketError::NotFound) => return Ok(Stored::Absent),
        Err(other) => return Err(call_failed("get", &key, other)),
    };
    let plain = match keyring.open_named(&key, &key, blob.clone()) {
        Ok(plain) => plain,
        Err(e) => return Ok(Stored::Unusable(e.to_string())),
    };
    Ok(match ReleaseIndex::decode(&plain) {
        Ok(index) => Stored::Index(index, blob),
        Err(why) => Stored::Unusable(format!("index {key} does not read: {why}")),
    })
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
        Stored::Index(index, _) => index.renders,
        Stored::Absent | Stored::Unusable(_) => BTreeMap::new(),
    };
    let mut out = BTreeMap::new();
    for &render_ref in refs {
        let objects = match indexed.remove(render_ref) {
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

/// What [`index_release`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// The distinct renders the history names.
    pub renders: u32,
    /// The renders the index names after the call.
    pub indexed: u32,
    /// The renders read to index them.
    pub read: u32,
    /// The renders the index named that the history no longer does, dropped.
    pub pruned: u32,
    /// Each render of the history that could not be read, with why, left out of the
    /// index (a query reads it, and fails if it still cannot).
    pub unreadable: Vec<String>,
    /// What was wrong with the stored index, when a blob was stored that could not be
    /// used (it is replaced).
    pub replaced: Option<String>,
    /// Whether the index was written (or deleted, for an empty history).
    pub written: bool,
}

/// Brings the release index up to date with the history: `list(<prefix>history/)`,
/// `get(<prefix>index/v1)`; with `read_missing`, `get` of each render of the history the
/// index does not name (renders that cannot be read are reported, not indexed); then
/// `put(<prefix>index/v1)` only if the blob to store differs from the one stored (the
/// index of the history's renders alone, sealed under the keyring's first key when it
/// has one), or `delete` of it when the history is empty and an index is stored.
/// Without `read_missing` it only prunes (what a GC leaves to do).
pub fn index_release<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keyring: &Keyring,
    read_missing: bool,
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
        Stored::Absent => (BTreeMap::new(), None),
        Stored::Unusable(why) => {
            report.replaced = Some(why);
            (BTreeMap::new(), Some(Vec::new()))
        }
        Stored::Index(index, blob) => (index.renders, Some(blob)),
    };
    if refs.is_empty() {
        report.pruned = old.len() as u32;
        if stored.is_some() {
            bucket
                .delete(&key)
                .map_err(|e| call_failed("delete", &key, e))?;
            report.written = true;
        }
        return Ok(report);
    }
    let mut index = ReleaseIndex::default();
    for &render_ref in &refs {
        if let Some(objects) = old.remove(render_ref) {
            index.renders.insert(render_ref.to_string(), objects);
            continue;
        }
        if !read_missing {
            continue;
        }
        let read = crate::store::get_render(bucket, release, render_ref, keyring)
            .and_then(|canonical| index_objects(&canonical));
        match read {
            Ok(objects) => {
                report.read += 1;
                index.renders.insert(render_ref.to_string(), objects);
            }
            // A failed call is the store's trouble, not the render's: stop.
            Err(e @ Error::Bucket(_)) => return Err(e),
            Err(e) => report.unreadable.push(format!("{render_ref}: {e}")),
        }
    }
    report.pruned = old.len() as u32;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::MemoryBucket;
    use crate::encryption::EncryptionKey;
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
        )
        .unwrap();
        r
    }

    fn ring() -> Keyring {
        Keyring::new(vec![EncryptionKey::new("k1", &[7; 32]).unwrap()]).unwrap()
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
        let report = index_release(&mut bucket, &release(), &ring, true).unwrap();
        assert_eq!((report.renders, report.read, report.indexed), (1, 1, 1));
        assert!(report.written);
        let again = index_release(&mut bucket, &release(), &ring, true).unwrap();
        assert_eq!((again.read, again.written), (0, false));

        let b = put_and_record(&mut bucket, "nginx:2", 1, &ring);
        let report = index_release(&mut bucket, &release(), &ring, true).unwrap();
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
        let report = index_release(&mut bucket, &release(), &ring, false).unwrap();
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
        index_release(&mut bucket, &release(), &ring, true).unwrap();
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
        let report = index_release(&mut bucket, &release(), &required, true).unwrap();
        assert!(report.replaced.is_some() && report.written);
    }

    #[test]
    fn an_empty_history_leaves_no_index() {
        let ring = Keyring::empty();
        let mut bucket = MemoryBucket::new();
        put_and_record(&mut bucket, "nginx", 0, &ring);
        index_release(&mut bucket, &release(), &ring, true).unwrap();
        crate::store::delete_release(&mut bucket, &release()).unwrap();
        assert!(bucket.list("prod/app/").unwrap().is_empty());
        // An index left behind a history that is gone is deleted by the next prune.
        bucket.put("prod/app/index/v1", b"{}").unwrap();
        let report = index_release(&mut bucket, &release(), &ring, false).unwrap();
        assert!(report.written);
        assert!(bucket.list("prod/app/").unwrap().is_empty());
    }
}
