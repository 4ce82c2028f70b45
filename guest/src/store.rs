//! The operations on renders and on a whole Release: put-render, get-render,
//! delete-release. Each validates all input before its first bucket call.

use crate::bucket::{Bucket, BucketError, MAX_BATCH};
use crate::diff::{DiffView, RenderDiff, diff_canonical};
use crate::encryption::Keyring;
use crate::error::{Error, Result};
use crate::keys::{Release, ReleasePrefix};
use crate::render::{canonical_in_place, canonical_into, render_ref_of_canonical};

/// Turns a failed bucket call into the operation's error, naming the call and key.
pub(crate) fn call_failed(call: &str, key: &str, err: BucketError) -> Error {
    match err {
        BucketError::NotFound => Error::NotFound(format!("{key} does not exist")),
        other => Error::Bucket(format!("{call} {key}: {other}")),
    }
}

/// Deletes `keys` in their order, at most [`MAX_BATCH`] a `delete_many` call. A call
/// that fails, or fails for any key, stops here, before any further call: the error
/// names every key of that call that was not deleted and why (for a failed request, the
/// call's first and last key, since any of its keys may or may not be gone). Deleting is
/// idempotent, so the caller's retry finishes the job.
pub(crate) fn delete_in_batches<B: Bucket>(bucket: &mut B, keys: &[String]) -> Result<()> {
    if !bucket.batches() {
        for key in keys {
            bucket
                .delete(key)
                .map_err(|e| call_failed("delete", key, e))?;
        }
        return Ok(());
    }
    for batch in keys.chunks(MAX_BATCH) {
        let (first, last) = (&batch[0], &batch[batch.len() - 1]);
        let answers = bucket.delete_many(batch).map_err(|e| {
            Error::Bucket(format!(
                "delete-many of {} keys ({first} to {last}) failed, so any of them may \
                 remain: {e}",
                batch.len()
            ))
        })?;
        if answers.len() != batch.len() {
            return Err(Error::Bucket(format!(
                "delete-many of {} keys ({first} to {last}): the bucket answered {} \
                 results, not one per key",
                batch.len(),
                answers.len()
            )));
        }
        let failed: Vec<String> = batch
            .iter()
            .zip(&answers)
            .filter_map(|(key, answer)| answer.as_ref().err().map(|e| format!("{key}: {e}")))
            .collect();
        if !failed.is_empty() {
            return Err(Error::Bucket(format!(
                "delete-many: {} of {} keys could not be deleted: {}",
                failed.len(),
                batch.len(),
                failed.join("; ")
            )));
        }
    }
    Ok(())
}

/// Stores a render: `exists(P/renders/ref)`, then `put` of its blob (the canonical
/// bytes, sealed under the keyring's first key when it has one) only if absent or
/// stored with another size. Blobs are write-once, so a blob of the right size is never
/// rewritten; one of another size was torn or truncated (a crash, an operator), or was
/// written before encryption was turned on, and would be unreadable forever if `exists`
/// were trusted. With a keyring, whatever is rewritten is rewritten sealed: never a
/// downgrade, and the content is fixed by the renderRef, so nothing is lost.
///
/// Without a keyring, a stored size that a sealed blob of this render could have makes
/// a `get` first. A genuine-looking sealed blob of this render (its header reads and
/// its size is exactly this render sealed under that header) is never replaced by
/// plaintext, since a host that lost its keyring must not undo the store's encryption:
/// that is an `encryption-key` error. Anything else there (a header that does not read,
/// or a size no sealed blob of this render has under it) was never a sealed blob of
/// this render, so writing the plaintext blob over it downgrades nothing, and a forged
/// header cannot block every later put. Returns the renderRef.
pub fn put_render<B: Bucket, O: AsRef<[u8]>>(
    bucket: &mut B,
    release: &Release,
    objects: &[O],
    keyring: &Keyring,
) -> Result<String> {
    let prefix = ReleasePrefix::new(release)?;
    // The blob is written once: the header (none on a plaintext store), then the
    // canonical bytes, hashed as they are written, sealed in place only if it is put.
    let input_len = objects.iter().map(|o| o.as_ref().len() + 1).sum();
    let mut blob = keyring.header(input_len);
    let header_len = blob.len();
    let render_ref = canonical_into(objects, &mut blob)?;
    store_blob(bucket, &prefix, blob, header_len, render_ref, keyring)
}

/// [`put_render`] of a render given joined, owned: on a plaintext store its canonical
/// bytes are made in its own buffer ([`canonical_in_place`]) and that buffer is the
/// blob, so the render is held once in the call where [`put_render`] holds it twice.
/// Sealed stores take [`put_render`]'s path. Same calls, same answer.
pub fn put_render_joined<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    mut bytes: Vec<u8>,
    ends: &[u32],
    keyring: &Keyring,
) -> Result<String> {
    let prefix = ReleasePrefix::new(release)?;
    if !keyring.is_empty() {
        let objects = crate::render::joined_objects(&bytes, ends)?;
        return put_render(bucket, release, &objects, keyring);
    }
    let render_ref = canonical_in_place(&mut bytes, ends)?;
    store_blob(bucket, &prefix, bytes, 0, render_ref, keyring)
}

/// put-render's calls for a blob made: `blob` is the header (`header_len` bytes, none on
/// a plaintext store) and the canonical bytes of `render_ref`, not yet sealed.
fn store_blob<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    mut blob: Vec<u8>,
    header_len: usize,
    render_ref: String,
    keyring: &Keyring,
) -> Result<String> {
    let plain_len = blob.len() - header_len;
    let key = prefix.render_key(&render_ref)?;
    let stored = bucket
        .exists(&key)
        .map_err(|e| call_failed("exists", &key, e))?;
    if stored != Some(keyring.blob_len(plain_len)) {
        if let Some(size) = stored
            && keyring.is_empty()
            && crate::encryption::may_be_sealed(plain_len, size)
        {
            let found = match bucket.get(&key) {
                Ok(found) => found,
                // Deleted since `exists` (a GC): absent now, so the put below writes it.
                Err(BucketError::NotFound) => Vec::new(),
                Err(e) => return Err(call_failed("get", &key, e)),
            };
            if let Some(id) = crate::encryption::genuine_sealed_id(&found, plain_len) {
                return Err(Error::EncryptionKey(format!(
                    "blob {key} is encrypted with key {id:?} (its header and size are those \
                     of this render sealed under that key), and no keyring was given: \
                     put-render does not replace an encrypted blob with plaintext. Open the \
                     store with a keyring that holds that key; if this store never had a \
                     key of that id, the blob was written outside the render store: delete \
                     it, then put the render again"
                )));
            }
        }
        keyring.seal_in_place(prefix.release_name(), &render_ref, &mut blob);
        bucket
            .put(&key, &blob)
            .map_err(|e| call_failed("put", &key, e))?;
    }
    Ok(render_ref)
}

/// The blob stored for `render_ref` (`get`), as the bucket holds it.
fn get_blob<B: Bucket>(
    bucket: &mut B,
    prefix: &ReleasePrefix,
    render_ref: &str,
) -> Result<(String, Vec<u8>)> {
    let key = prefix.render_key(render_ref)?;
    let blob = bucket.get(&key).map_err(|e| match e {
        BucketError::NotFound => Error::NotFound(format!(
            "render {render_ref} of {} is not in the store",
            prefix.as_str().trim_end_matches('/')
        )),
        other => call_failed("get", &key, other),
    })?;
    Ok((key, blob))
}

/// The canonical bytes a blob holds, opened under the keyring and verified against
/// their key.
fn verified(
    keyring: &Keyring,
    prefix: &ReleasePrefix,
    key: &str,
    render_ref: &str,
    blob: Vec<u8>,
) -> Result<Vec<u8>> {
    let bytes = keyring.open(key, prefix.release_name(), render_ref, blob)?;
    let actual = render_ref_of_canonical(&bytes);
    if actual != render_ref {
        return Err(Error::Corrupt(format!(
            "blob {key} hashes to {actual}, not to its key; it was changed or damaged \
             outside the render store and must not be used"
        )));
    }
    // Canonical bytes are UTF-8 by construction, and get-render hands them out as text
    // to a caller whose bucket answered text: bytes that hash right but are not text
    // were never written by a render store, whichever form they came in.
    if std::str::from_utf8(&bytes).is_err() {
        return Err(Error::Corrupt(format!(
            "blob {key} is not UTF-8 text, which no canonical render is; it must not be used"
        )));
    }
    Ok(bytes)
}

/// The canonical bytes stored for `render_ref` (`get`), opened under the keyring when
/// the blob is sealed, verified against their key.
pub fn get_render<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    render_ref: &str,
    keyring: &Keyring,
) -> Result<Vec<u8>> {
    get_render_sealed(bucket, release, render_ref, keyring).map(|(bytes, _)| bytes)
}

/// [`get_render`], with whether the blob was sealed and bound to the release (what an
/// index entry records, so that where encryption is required only entries read from
/// such blobs are trusted).
pub fn get_render_sealed<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    render_ref: &str,
    keyring: &Keyring,
) -> Result<(Vec<u8>, bool)> {
    let prefix = ReleasePrefix::new(release)?;
    let (key, blob) = get_blob(bucket, &prefix, render_ref)?;
    let bound = crate::encryption::is_bound(&blob);
    Ok((verified(keyring, &prefix, &key, render_ref, blob)?, bound))
}

/// Rewrites every render blob of the release that is not sealed under the keyring's
/// first key (plaintext, or sealed under an older key): `list(P/renders/)`, then for
/// each blob in key order `get`, and, when it must change, `put` of the blob sealed
/// under the first key. Each `put` replaces a readable blob by another readable blob
/// atomically, so a crash at any moment leaves every blob readable with the ring, and
/// running it again finishes the job. A blob that cannot be read (corrupt, or under a
/// key the ring lacks) stops it with that error, before any later blob. Returns how
/// many blobs were rewritten and how many were already sealed under the first key.
pub fn rekey_release<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keyring: &Keyring,
) -> Result<(u32, u32)> {
    let prefix = ReleasePrefix::new(release)?;
    if keyring.is_empty() {
        return Err(Error::InvalidInput(
            "rekey needs a keyring: new blobs are sealed under its first key".into(),
        ));
    }
    let renders = prefix.renders();
    let mut listed: Vec<String> = bucket
        .list(&renders)
        .map_err(|e| call_failed("list", &renders, e))?
        .into_iter()
        .map(|o| o.key)
        .collect();
    listed.sort_unstable();
    let (mut rewritten, mut kept) = (0u32, 0u32);
    for key in listed {
        let Some(render_ref) = key
            .strip_prefix(renders.as_str())
            .filter(|r| crate::keys::validate_render_ref(r).is_ok())
        else {
            continue;
        };
        let render_ref = render_ref.to_string();
        let (key, blob) = get_blob(bucket, &prefix, &render_ref)?;
        if keyring.sealed_under_first(&blob) {
            // Still verified: a rekey that reports success has read every blob whole.
            verified(keyring, &prefix, &key, &render_ref, blob)?;
            kept += 1;
            continue;
        }
        let bytes = verified(keyring, &prefix, &key, &render_ref, blob)?;
        let sealed = keyring.seal(prefix.release_name(), &render_ref, bytes);
        bucket
            .put(&key, &sealed)
            .map_err(|e| call_failed("put", &key, e))?;
        rewritten += 1;
    }
    Ok((rewritten, kept))
}

/// The difference between two stored renders of a release (calls: `get` of `old_ref`,
/// then `get` of `new_ref`, each verified as [`get_render`] verifies it): the renders
/// reach the component once, from the bucket, and never go back out.
pub fn diff_stored<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    old_ref: &str,
    new_ref: &str,
    view: DiffView,
    keyring: &Keyring,
) -> Result<RenderDiff> {
    let old = get_render(bucket, release, old_ref, keyring)?;
    let new = get_render(bucket, release, new_ref, keyring)?;
    diff_canonical(&old, &new, view.form, view.secrets, view.context)
}

/// What changed between stored renders of a release, for each pair `(old, new)` of
/// `pairs` (`old` `None` for a release's first render): [`crate::render_changes`] of the
/// two renders, each read (`get`) and verified as [`get_render`] verifies it, in the
/// order of the pairs. A pair whose `old` is the previous pair's `new` reuses it, so a
/// run of consecutive entries reads each render once; at most two renders are held at
/// a time, in the sandbox, never handed to the host. A render that cannot be read
/// fails the call.
pub fn stored_changes<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    pairs: &[(Option<String>, String)],
    keyring: &Keyring,
) -> Result<Vec<crate::RenderChanges>> {
    ReleasePrefix::new(release)?;
    for (old, new) in pairs {
        if let Some(old) = old {
            crate::keys::validate_render_ref(old)?;
        }
        crate::keys::validate_render_ref(new)?;
    }
    let mut held: Option<(String, Vec<u8>)> = None;
    let mut out = Vec::with_capacity(pairs.len());
    for (old, new) in pairs {
        let old_bytes = match old {
            None => Vec::new(),
            Some(r) => match held.take() {
                Some((h, bytes)) if h == *r => bytes,
                _ => get_render(bucket, release, r, keyring)?,
            },
        };
        // The previous render, if it was not this pair's old one, goes before the new
        // one is read: at most two are held.
        drop(held.take());
        // A render recorded twice in a row is compared with itself, held once.
        let new_bytes = match old.as_deref() == Some(new.as_str()) {
            true => None,
            false => Some(get_render(bucket, release, new, keyring)?),
        };
        out.push(crate::render_changes(
            &old_bytes,
            new_bytes.as_deref().unwrap_or(&old_bytes),
        )?);
        held = Some((new.clone(), new_bytes.unwrap_or(old_bytes)));
    }
    Ok(out)
}

/// Page `page` of a stored render's objects for people ([`crate::diff::render_page`]):
/// `get` of the render, verified as [`get_render`] verifies it, then only the page's
/// texts made, so the render is held once.
#[allow(clippy::too_many_arguments)] // the view's parts, as the WIT function takes them
pub fn show_render_page<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    render_ref: &str,
    form: crate::ObjectForm,
    secrets: crate::SecretValues,
    page_bytes: u64,
    page: u32,
    keyring: &Keyring,
) -> Result<crate::diff::RenderPage> {
    let canonical = get_render(bucket, release, render_ref, keyring)?;
    crate::diff::render_page(&canonical, form, secrets, page_bytes, page)
}

/// Deletes every key under the release's prefix: `list(P)`, then `delete_many` of the
/// keys that start with `P`, in key order, [`MAX_BATCH`] a call, the keys before
/// `P/renders/` (the history among them) in batches of their own. Returns the number
/// of keys deleted.
pub fn delete_release<B: Bucket>(bucket: &mut B, release: &Release) -> Result<u32> {
    let prefix = ReleasePrefix::new(release)?;
    let p = prefix.as_str();
    let listed = bucket.list(p).map_err(|e| call_failed("list", p, e))?;
    let mut keys: Vec<String> = listed
        .into_iter()
        .map(|o| o.key)
        .filter(|k| k.starts_with(p))
        .collect();
    // The contract promises key order whatever order the bucket listed in.
    keys.sort_unstable();
    // No batch mixes blobs with the entries before them: a batch fails as a whole or in
    // part, so a failed entry batch must stop before any blob an entry names is gone.
    let renders = prefix.renders();
    let split = keys.partition_point(|k| k.as_str() < renders.as_str());
    delete_in_batches(bucket, &keys[..split])?;
    delete_in_batches(bucket, &keys[split..])?;
    Ok(u32::try_from(keys.len()).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryBucket;
    use crate::encryption::Keyring;

    #[test]
    fn a_truncated_blob_is_rewritten_by_the_next_put_and_a_whole_one_is_not() {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        let objects = [br#"{"kind":"ConfigMap","data":{"a":"b"}}"#];
        let r = put_render(&mut bucket, &release, &objects, &Keyring::empty()).unwrap();
        let key = format!("ns/app/renders/{r}");
        let whole = bucket.objects[&key].clone();
        bucket.objects.insert(key.clone(), whole[..5].to_vec());
        assert!(matches!(
            get_render(&mut bucket, &release, &r, &Keyring::empty()),
            Err(Error::Corrupt(_))
        ));
        bucket.take_calls();
        put_render(&mut bucket, &release, &objects, &Keyring::empty()).unwrap();
        assert_eq!(
            bucket.take_calls(),
            [format!("exists {key}"), format!("put {key}")]
        );
        assert_eq!(
            get_render(&mut bucket, &release, &r, &Keyring::empty()).unwrap(),
            whole
        );
        bucket.take_calls();
        put_render(&mut bucket, &release, &objects, &Keyring::empty()).unwrap();
        assert_eq!(bucket.take_calls(), [format!("exists {key}")]);
    }

    fn ring(ids: &[(&str, u8)]) -> Keyring {
        use crate::encryption::SealingKey;
        Keyring::new(
            ids.iter()
                .map(|&(id, b)| SealingKey::new(id, &[b; 32]).unwrap())
                .collect(),
        )
        .unwrap()
    }

    const SECRET: &[u8] =
        br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"Zq8rVb3LwX1mNcT7"}}"#;

    #[test]
    fn an_encrypted_put_stores_no_secret_byte_deduplicates_and_reads_back() {
        let release = Release::new("ns", "app");
        let keys = ring(&[("k1", 1)]);
        let mut bucket = MemoryBucket::new();
        let r = put_render(&mut bucket, &release, &[SECRET], &keys).unwrap();
        assert_eq!(r, crate::render_ref(&[SECRET]).unwrap());
        let key = format!("ns/app/renders/{r}");
        assert!(
            !bucket.objects[&key]
                .windows(8)
                .any(|w| SECRET.windows(8).any(|s| s == w)
                    && w.iter().all(u8::is_ascii_alphanumeric))
        );
        bucket.take_calls();
        put_render(&mut bucket, &release, &[SECRET], &keys).unwrap();
        assert_eq!(bucket.take_calls(), [format!("exists {key}")]);
        let plain = crate::canonical(&[SECRET]).unwrap();
        assert_eq!(get_render(&mut bucket, &release, &r, &keys).unwrap(), plain);
        let err = get_render(&mut bucket, &release, &r, &Keyring::empty()).unwrap_err();
        assert!(
            matches!(&err, Error::EncryptionKey(m) if m.contains("\"k1\"")),
            "{err}"
        );
        // Every flipped byte is refused, whichever way it reads.
        let blob = bucket.objects[&key].clone();
        for i in 0..blob.len() {
            let mut bad = blob.clone();
            bad[i] ^= 0x20;
            bucket.objects.insert(key.clone(), bad);
            let err = get_render(&mut bucket, &release, &r, &keys).unwrap_err();
            assert!(
                matches!(err, Error::Corrupt(_) | Error::EncryptionKey(_)),
                "{i}: {err}"
            );
        }
    }

    #[test]
    fn turning_encryption_on_reads_old_plaintext_and_the_next_put_seals_it() {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        let r = put_render(&mut bucket, &release, &[SECRET], &Keyring::empty()).unwrap();
        let keys = ring(&[("k1", 1)]);
        let plain = crate::canonical(&[SECRET]).unwrap();
        assert_eq!(get_render(&mut bucket, &release, &r, &keys).unwrap(), plain);
        put_render(&mut bucket, &release, &[SECRET], &keys).unwrap();
        let key = format!("ns/app/renders/{r}");
        assert!(bucket.objects[&key].starts_with(crate::encryption::MAGIC));
        assert_eq!(get_render(&mut bucket, &release, &r, &keys).unwrap(), plain);
        // A host without the keyring reads the blob before it would rewrite it, and
        // leaves it sealed.
        let sealed = bucket.objects[&key].clone();
        bucket.take_calls();
        let err = put_render(&mut bucket, &release, &[SECRET], &Keyring::empty()).unwrap_err();
        assert!(
            matches!(&err, Error::EncryptionKey(m) if m.contains("\"k1\"")),
            "{err}"
        );
        assert_eq!(
            bucket.take_calls(),
            [format!("exists {key}"), format!("get {key}")]
        );
        assert_eq!(bucket.objects[&key], sealed);
        for id in ["k", &"k".repeat(64)] {
            let long = ring(&[(id, 1)]);
            let blob = long.seal("prod/app", &r, plain.clone());
            assert!(crate::encryption::may_be_sealed(
                plain.len(),
                blob.len() as u64
            ));
        }
        assert!(!crate::encryption::may_be_sealed(
            plain.len(),
            plain.len() as u64 - 1
        ));
    }

    /// The blob of `plain_len` canonical bytes a writer of the bucket forges: `header`,
    /// then random-looking bytes up to `size`.
    fn forged(header: &str, size: usize) -> Vec<u8> {
        let mut blob = header.as_bytes().to_vec();
        let mut x = 0x9e37_79b9_u32;
        while blob.len() < size {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            blob.push(x as u8);
        }
        blob.truncate(size);
        blob
    }

    #[test]
    fn a_forged_header_on_a_plaintext_store_is_replaced_unless_it_looks_genuine() {
        let release = Release::new("ns", "app");
        let plain = crate::canonical(&[SECRET]).unwrap();
        let r = crate::render_ref(&[SECRET]).unwrap();
        let key = format!("ns/app/renders/{r}");
        // What a sealed blob of this render under a header of that length would be.
        let genuine = |header: &str| header.len() + plain.len() + 16;
        let finding = "render-store-encrypted v1 zz 0123456789abcdef\n";
        let cases = [
            // The finding: the header of a key no keyring held, then random bytes.
            (finding, genuine(finding) + 7),
            (finding, genuine(finding) - 1),
            (finding, genuine(finding) + 1),
            // Headers that do not read, at the size a real one of their length has.
            (
                "render-store-encrypted v1 zz 0123456789ABCDEF\n",
                genuine(finding),
            ),
            (
                "render-store-encrypted v9 zz 0123456789abcdef\n",
                genuine(finding),
            ),
            (
                "render-store-encrypted v1 z!z 0123456789abcdef\n",
                genuine(finding) + 1,
            ),
            (
                "render-store-encrypted v1 zz 0123456789abcde\n",
                genuine(finding) - 1,
            ),
            (
                "render-store-encrypted v1 zz 0123456789abcdef",
                genuine(finding),
            ),
            // The size of plaintext: put-render's size check passes it (the CLI's put
            // reads it back and repairs it).
            (finding, plain.len() + 30),
        ];
        for (header, size) in cases {
            let mut bucket = MemoryBucket::new();
            bucket.objects.insert(key.clone(), forged(header, size));
            let size_read = crate::encryption::may_be_sealed(plain.len(), size as u64);
            put_render(&mut bucket, &release, &[SECRET], &Keyring::empty())
                .unwrap_or_else(|e| panic!("{header:?} {size}: {e}"));
            let calls = bucket.take_calls();
            let mut want = vec![format!("exists {key}")];
            if size_read {
                want.push(format!("get {key}"));
            }
            want.push(format!("put {key}"));
            assert_eq!(calls, want, "{header:?} {size}");
            assert_eq!(
                get_render(&mut bucket, &release, &r, &Keyring::empty()).unwrap(),
                plain,
                "{header:?} {size}"
            );
            // And the next put is one call again.
            bucket.take_calls();
            put_render(&mut bucket, &release, &[SECRET], &Keyring::empty()).unwrap();
            assert_eq!(bucket.take_calls(), [format!("exists {key}")]);
        }
        // A forgery of exactly the genuine size cannot be told from a sealed blob
        // without the key: it is refused as one, with what to do, and left as it was.
        let mut bucket = MemoryBucket::new();
        let exact = forged(finding, genuine(finding));
        bucket.objects.insert(key.clone(), exact.clone());
        let err = put_render(&mut bucket, &release, &[SECRET], &Keyring::empty()).unwrap_err();
        let Error::EncryptionKey(m) = &err else {
            panic!("{err}")
        };
        assert!(
            m.contains("\"zz\"")
                && m.contains("never had a key of that id")
                && m.contains("delete it"),
            "{m}"
        );
        assert_eq!(
            bucket.take_calls(),
            [format!("exists {key}"), format!("get {key}")]
        );
        assert_eq!(bucket.objects[&key], exact);
        // A host with a keyring rewrites it sealed when its size is not the size the
        // ring's blob has; at that very size put-render's check passes it like any
        // same-size damage, and the read says so (the CLI's put repairs it then).
        let keys = ring(&[("key-1", 1)]);
        put_render(&mut bucket, &release, &[SECRET], &keys).unwrap();
        assert_eq!(get_render(&mut bucket, &release, &r, &keys).unwrap(), plain);
        bucket.objects.insert(key.clone(), exact);
        let same_length = ring(&[("k1", 1)]);
        put_render(&mut bucket, &release, &[SECRET], &same_length).unwrap();
        let err = get_render(&mut bucket, &release, &r, &same_length).unwrap_err();
        assert!(
            matches!(&err, Error::EncryptionKey(m) if m.contains("\"zz\"")),
            "{err}"
        );
    }

    #[test]
    fn with_a_keyring_whatever_put_render_rewrites_is_sealed_and_required_refuses_plaintext() {
        let release = Release::new("ns", "app");
        let plain = crate::canonical(&[SECRET]).unwrap();
        let r = crate::render_ref(&[SECRET]).unwrap();
        let key = format!("ns/app/renders/{r}");
        let keys = ring(&[("k1", 1)]);
        let required = keys.clone().require(true).unwrap();
        for planted in [
            plain.clone(),
            forged(
                "render-store-encrypted v1 zz 0123456789abcdef\n",
                plain.len() + 63,
            ),
            forged(
                "render-store-encrypted v1 k1 0123456789abcdef\n",
                plain.len() + 61,
            ),
            plain[..10].to_vec(),
        ] {
            for ring in [&keys, &required] {
                let mut bucket = MemoryBucket::new();
                bucket.objects.insert(key.clone(), planted.clone());
                put_render(&mut bucket, &release, &[SECRET], ring).unwrap();
                assert_eq!(
                    bucket.take_calls(),
                    [format!("exists {key}"), format!("put {key}")]
                );
                assert!(keys.sealed_under_first(&bucket.objects[&key]));
                assert_eq!(get_render(&mut bucket, &release, &r, ring).unwrap(), plain);
            }
        }
        // A plaintext blob planted over a sealed one: read by default (a store where
        // encryption was turned on holds both), refused where encryption is required.
        let mut bucket = MemoryBucket::new();
        put_render(&mut bucket, &release, &[SECRET], &keys).unwrap();
        bucket.objects.insert(key.clone(), plain.clone());
        assert_eq!(get_render(&mut bucket, &release, &r, &keys).unwrap(), plain);
        let err = get_render(&mut bucket, &release, &r, &required).unwrap_err();
        assert!(
            matches!(&err, Error::Corrupt(m) if m.contains("encryption is required") && m.contains(&key) && m.contains("plaintext")),
            "{err}"
        );
        let other = put_render(
            &mut bucket,
            &release,
            &[&br#"{"kind":"ConfigMap"}"#[..]],
            &keys,
        )
        .unwrap();
        let err = diff_stored(
            &mut bucket,
            &release,
            &other,
            &r,
            DiffView {
                form: crate::ObjectForm::Json,
                secrets: crate::SecretValues::Masked,
                context: 3,
            },
            &required,
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::Corrupt(m) if m.contains("is plaintext")),
            "{err}"
        );
        // Rekey under the rule stops at the plaintext blob: sealing it would vouch for
        // what a writer without the key may have put there.
        let rotated = ring(&[("k2", 2), ("k1", 1)]).require(true).unwrap();
        let err = rekey_release(&mut bucket, &release, &rotated).unwrap_err();
        assert!(
            matches!(&err, Error::Corrupt(m) if m.contains("is plaintext")),
            "{err}"
        );
        // A put with the keyring rewrites it sealed; then rotation works under the rule.
        put_render(&mut bucket, &release, &[SECRET], &required).unwrap();
        assert_eq!(
            get_render(&mut bucket, &release, &r, &required).unwrap(),
            plain
        );
        // (The stopped run may have rewritten the other blob, before this one in key
        // order, already.)
        let (rewritten, kept) = rekey_release(&mut bucket, &release, &rotated).unwrap();
        assert_eq!((rewritten + kept, rewritten >= 1), (2, true));
        assert_eq!(
            rekey_release(&mut bucket, &release, &rotated).unwrap(),
            (0, 2)
        );
        assert_eq!(
            get_render(&mut bucket, &release, &r, &rotated).unwrap(),
            plain
        );
    }

    /// A bucket that fails every call from the `n`th on, as a process killed there would
    /// stop making them.
    struct DiesAt {
        inner: MemoryBucket,
        left: usize,
    }

    impl DiesAt {
        fn call(&mut self) -> std::result::Result<(), BucketError> {
            if self.left == 0 {
                return Err(BucketError::Failed("killed".into()));
            }
            self.left -= 1;
            Ok(())
        }
    }

    impl Bucket for DiesAt {
        fn get(&mut self, key: &str) -> std::result::Result<Vec<u8>, BucketError> {
            self.call()?;
            self.inner.get(key)
        }
        fn put(&mut self, key: &str, value: &[u8]) -> std::result::Result<(), BucketError> {
            self.call()?;
            self.inner.put(key, value)
        }
        fn exists(&mut self, key: &str) -> std::result::Result<Option<u64>, BucketError> {
            self.call()?;
            self.inner.exists(key)
        }
        fn list(
            &mut self,
            prefix: &str,
        ) -> std::result::Result<Vec<crate::ObjectMeta>, BucketError> {
            self.call()?;
            self.inner.list(prefix)
        }
        fn delete(&mut self, key: &str) -> std::result::Result<(), BucketError> {
            self.call()?;
            self.inner.delete(key)
        }
    }

    #[test]
    fn rekey_stopped_at_any_call_leaves_every_blob_readable_and_a_rerun_finishes() {
        let release = Release::new("ns", "app");
        let old = ring(&[("k0", 0)]);
        let mut start = MemoryBucket::new();
        let mut refs = Vec::new();
        for (n, keys) in [
            (1, &Keyring::empty()),
            (2, &old),
            (3, &old),
            (4, &Keyring::empty()),
        ] {
            let object = format!(r#"{{"kind":"ConfigMap","data":{{"n":"{n}"}}}}"#);
            refs.push(put_render(&mut start, &release, &[object.as_bytes()], keys).unwrap());
        }
        let new = ring(&[("k1", 1), ("k0", 0)]);
        for dies_at in 0.. {
            let mut bucket = DiesAt {
                inner: start.clone(),
                left: dies_at,
            };
            let finished = rekey_release(&mut bucket, &release, &new).is_ok();
            let mut bucket = bucket.inner;
            for r in &refs {
                get_render(&mut bucket, &release, r, &new).unwrap();
            }
            let (rewritten, kept) = rekey_release(&mut bucket, &release, &new).unwrap();
            assert_eq!((rewritten + kept) as usize, refs.len());
            assert_eq!(rekey_release(&mut bucket, &release, &new).unwrap(), (0, 4));
            let only_new = ring(&[("k1", 1)]);
            for r in &refs {
                get_render(&mut bucket, &release, r, &only_new).unwrap();
            }
            if finished {
                assert_eq!(
                    rekey_release(&mut start.clone(), &release, &new).unwrap(),
                    (4, 0)
                );
                break;
            }
        }
        let err = rekey_release(&mut start, &release, &Keyring::empty()).unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)));
        let err = rekey_release(&mut start, &release, &ring(&[("k2", 2)])).unwrap_err();
        assert!(
            matches!(&err, Error::EncryptionKey(m) if m.contains("\"k0\"")),
            "{err}"
        );
    }

    /// The sizes of the `delete-many` calls recorded, in order.
    fn batches(calls: &[String]) -> Vec<usize> {
        calls
            .iter()
            .filter_map(|c| c.strip_prefix("delete-many "))
            .map(|keys| keys.split(' ').count())
            .collect()
    }

    fn filled(n: usize) -> MemoryBucket {
        let mut bucket = MemoryBucket::new();
        for i in 0..n {
            bucket
                .objects
                .insert(format!("ns/app/renders/x{i:05}"), Vec::new());
        }
        bucket
    }

    #[test]
    fn delete_release_deletes_in_batches_of_1000_in_key_order() {
        let mut bucket = filled(2_500);
        bucket.objects.insert("ns/app2/kept".into(), Vec::new());
        let deleted = delete_release(&mut bucket, &Release::new("ns", "app")).unwrap();
        assert_eq!(deleted, 2_500);
        let calls = bucket.take_calls();
        assert_eq!(calls[0], "list ns/app/");
        assert_eq!(calls.len(), 4, "one listing and three batches");
        assert_eq!(batches(&calls), [1_000, 1_000, 500]);
        let keys: Vec<&str> = calls[1..]
            .iter()
            .flat_map(|c| c["delete-many ".len()..].split(' '))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
        assert_eq!(bucket.objects.keys().collect::<Vec<_>>(), ["ns/app2/kept"]);
    }

    #[test]
    fn delete_release_never_batches_an_entry_with_a_blob() {
        let mut bucket = MemoryBucket::new();
        for k in [
            "history/h1",
            "history/h2",
            "renders/r1",
            "renders/r2",
            "x/foreign",
        ] {
            bucket.objects.insert(format!("ns/app/{k}"), Vec::new());
        }
        bucket
            .undeletable
            .insert("ns/app/history/h2".into(), "busy".into());
        let err = delete_release(&mut bucket, &Release::new("ns", "app")).unwrap_err();
        assert!(matches!(&err, Error::Bucket(m) if m.contains("ns/app/history/h2: busy")));
        assert_eq!(
            bucket.take_calls()[1..],
            ["delete-many ns/app/history/h1 ns/app/history/h2"]
        );
        assert!(bucket.objects.contains_key("ns/app/renders/r1"));
        bucket.undeletable.clear();
        assert_eq!(
            delete_release(&mut bucket, &Release::new("ns", "app")).unwrap(),
            4
        );
        assert_eq!(
            bucket.take_calls()[1..],
            [
                "delete-many ns/app/history/h2",
                "delete-many ns/app/renders/r1 ns/app/renders/r2 ns/app/x/foreign"
            ]
        );
    }

    #[test]
    fn a_batch_with_failures_names_every_failed_key_and_stops() {
        let mut bucket = filled(2_500);
        bucket
            .undeletable
            .insert("ns/app/renders/x00010".into(), "disk on fire".into());
        bucket
            .undeletable
            .insert("ns/app/renders/x00999".into(), "access denied".into());
        let err = delete_release(&mut bucket, &Release::new("ns", "app")).unwrap_err();
        let Error::Bucket(message) = err else {
            panic!("not a bucket error: {err:?}");
        };
        assert!(
            message.starts_with("delete-many: 2 of 1000 keys could not be deleted: "),
            "{message}"
        );
        assert!(
            message.contains("ns/app/renders/x00010: disk on fire"),
            "{message}"
        );
        assert!(
            message.contains("ns/app/renders/x00999: access denied"),
            "{message}"
        );
        assert_eq!(
            batches(&bucket.take_calls()),
            [1_000],
            "no batch after a failure"
        );
        // The batch's other keys are gone; the later batches' keys are untouched.
        assert_eq!(bucket.objects.len(), 2 + 1_500);
    }

    /// A bucket whose batch requests fail as a whole, or answer too few results.
    struct Broken {
        answers: Option<usize>,
    }

    impl Bucket for Broken {
        fn get(&mut self, _: &str) -> std::result::Result<Vec<u8>, BucketError> {
            Err(BucketError::NotFound)
        }
        fn put(&mut self, _: &str, _: &[u8]) -> std::result::Result<(), BucketError> {
            Ok(())
        }
        fn exists(&mut self, _: &str) -> std::result::Result<Option<u64>, BucketError> {
            Ok(None)
        }
        fn list(&mut self, p: &str) -> std::result::Result<Vec<crate::ObjectMeta>, BucketError> {
            Ok(["a", "b", "c"]
                .map(|k| crate::ObjectMeta {
                    key: format!("{p}{k}"),
                    size: 0,
                    modified: Default::default(),
                })
                .into())
        }
        fn delete(&mut self, _: &str) -> std::result::Result<(), BucketError> {
            unreachable!("the logic deletes in batches")
        }
        fn delete_many(
            &mut self,
            keys: &[String],
        ) -> std::result::Result<Vec<std::result::Result<(), BucketError>>, BucketError> {
            match self.answers {
                None => Err(BucketError::Failed("connection reset".into())),
                Some(n) => Ok(keys.iter().take(n).map(|_| Ok(())).collect()),
            }
        }
    }

    #[test]
    fn a_failed_request_or_a_short_answer_fails_with_the_batch_named() {
        let app = Release::new("ns", "app");
        let err = delete_release(&mut Broken { answers: None }, &app).unwrap_err();
        assert_eq!(
            err,
            Error::Bucket(
                "delete-many of 3 keys (ns/app/a to ns/app/c) failed, so any of them may \
                 remain: connection reset"
                    .into()
            )
        );
        let err = delete_release(&mut Broken { answers: Some(2) }, &app).unwrap_err();
        assert!(
            matches!(&err, Error::Bucket(m) if m.contains("answered 2 results, not one per key")),
            "{err:?}"
        );
    }
}
