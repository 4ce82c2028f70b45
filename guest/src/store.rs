//! The operations on renders and on a whole Release: put-render, get-render,
//! delete-release. Each validates all input before its first bucket call.

use crate::bucket::{Bucket, BucketError};
use crate::diff::{ObjectForm, RenderDiff, diff_canonical};
use crate::error::{Error, Result};
use crate::keys::{Release, ReleasePrefix};
use crate::render::{canonical, render_ref_of_canonical};

/// Turns a failed bucket call into the operation's error, naming the call and key.
pub(crate) fn call_failed(call: &str, key: &str, err: BucketError) -> Error {
    match err {
        BucketError::NotFound => Error::NotFound(format!("{key} does not exist")),
        other => Error::Bucket(format!("{call} {key}: {other}")),
    }
}

/// Stores a render: `exists(P/renders/ref)`, then `put` of the canonical bytes only if
/// absent or stored with another size. Blobs are write-once, so a blob of the right
/// size is never rewritten; one of another size was torn or truncated (a crash, an
/// operator) and would be `corrupt` forever if `exists` were trusted. Returns the
/// renderRef.
pub fn put_render<B: Bucket, O: AsRef<[u8]>>(
    bucket: &mut B,
    release: &Release,
    objects: &[O],
) -> Result<String> {
    let prefix = ReleasePrefix::new(release)?;
    let bytes = canonical(objects)?;
    let render_ref = render_ref_of_canonical(&bytes);
    let key = prefix.render_key(&render_ref)?;
    let stored = bucket
        .exists(&key)
        .map_err(|e| call_failed("exists", &key, e))?;
    if stored != Some(bytes.len() as u64) {
        bucket
            .put(&key, &bytes)
            .map_err(|e| call_failed("put", &key, e))?;
    }
    Ok(render_ref)
}

/// The canonical bytes stored for `render_ref` (`get`), verified against their key.
pub fn get_render<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    render_ref: &str,
) -> Result<Vec<u8>> {
    let prefix = ReleasePrefix::new(release)?;
    let key = prefix.render_key(render_ref)?;
    let bytes = bucket.get(&key).map_err(|e| match e {
        BucketError::NotFound => Error::NotFound(format!(
            "render {render_ref} of {} is not in the store",
            prefix.as_str().trim_end_matches('/')
        )),
        other => call_failed("get", &key, other),
    })?;
    let actual = render_ref_of_canonical(&bytes);
    if actual != render_ref {
        return Err(Error::Corrupt(format!(
            "blob {key} hashes to {actual}, not to its key; it was changed or damaged \
             outside the render store and must not be used"
        )));
    }
    // Canonical bytes are UTF-8 by construction and the WIT hands them out as a string:
    // bytes that hash right but are not text were never written by a render store.
    if std::str::from_utf8(&bytes).is_err() {
        return Err(Error::Corrupt(format!(
            "blob {key} is not UTF-8 text, which no canonical render is; it must not be used"
        )));
    }
    Ok(bytes)
}

/// The difference between two stored renders of a release (calls: `get` of `old_ref`,
/// then `get` of `new_ref`, each verified as [`get_render`] verifies it): the renders
/// reach the component once, from the bucket, and never go back out.
pub fn diff_stored<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    old_ref: &str,
    new_ref: &str,
    form: ObjectForm,
) -> Result<RenderDiff> {
    let old = get_render(bucket, release, old_ref)?;
    let new = get_render(bucket, release, new_ref)?;
    diff_canonical(&old, &new, form)
}

/// Deletes every key under the release's prefix: `list(P)`, then `delete` of each key
/// that starts with `P`. Returns the number of keys deleted.
pub fn delete_release<B: Bucket>(bucket: &mut B, release: &Release) -> Result<u32> {
    let prefix = ReleasePrefix::new(release)?;
    let p = prefix.as_str();
    let listed = bucket.list(p).map_err(|e| call_failed("list", p, e))?;
    let mut deleted = 0;
    for key in listed.iter().map(|o| &o.key).filter(|k| k.starts_with(p)) {
        bucket
            .delete(key)
            .map_err(|e| call_failed("delete", key, e))?;
        deleted += 1;
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryBucket;

    #[test]
    fn a_truncated_blob_is_rewritten_by_the_next_put_and_a_whole_one_is_not() {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        let objects = [br#"{"kind":"ConfigMap","data":{"a":"b"}}"#];
        let r = put_render(&mut bucket, &release, &objects).unwrap();
        let key = format!("ns/app/renders/{r}");
        let whole = bucket.objects[&key].clone();
        bucket.objects.insert(key.clone(), whole[..5].to_vec());
        assert!(matches!(
            get_render(&mut bucket, &release, &r),
            Err(Error::Corrupt(_))
        ));
        bucket.take_calls();
        put_render(&mut bucket, &release, &objects).unwrap();
        assert_eq!(
            bucket.take_calls(),
            [format!("exists {key}"), format!("put {key}")]
        );
        assert_eq!(get_render(&mut bucket, &release, &r).unwrap(), whole);
        bucket.take_calls();
        put_render(&mut bucket, &release, &objects).unwrap();
        assert_eq!(bucket.take_calls(), [format!("exists {key}")]);
    }
}
