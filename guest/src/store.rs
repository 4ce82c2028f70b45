//! The operations on renders and on a whole Release: put-render, get-render,
//! delete-release. Each validates all input before its first bucket call.

use crate::bucket::{Bucket, BucketError, MAX_BATCH};
use crate::diff::{ObjectForm, RenderDiff, diff_canonical};
use crate::error::{Error, Result};
use crate::keys::{Release, ReleasePrefix};
use crate::render::{canonical, render_ref_of_canonical};
use crate::secrets::SecretValues;

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

/// The difference between two stored renders of a release (calls: `get` of `old_ref`,
/// then `get` of `new_ref`, each verified as [`get_render`] verifies it): the renders
/// reach the component once, from the bucket, and never go back out.
pub fn diff_stored<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    old_ref: &str,
    new_ref: &str,
    form: ObjectForm,
    secrets: SecretValues,
    context: u32,
) -> Result<RenderDiff> {
    let old = get_render(bucket, release, old_ref)?;
    let new = get_render(bucket, release, new_ref)?;
    diff_canonical(&old, &new, form, secrets, context)
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
