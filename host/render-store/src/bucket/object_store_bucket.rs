//! The bucket over an `object_store` backend, normalized to the bucket contract.

use super::{
    Bucket, BucketError, Delimited, Denial, ObjectMeta, check_folder_prefix, check_key, messages,
};
use crate::types::SyncTime;
use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::sync::Arc;

/// How many times a batch delete whose whole request failed is made before its keys are
/// reported as possibly remaining.
const BATCH_ATTEMPTS: usize = 3;

/// A [`Bucket`] over any [`ObjectStore`].
#[derive(Debug, Clone)]
pub struct ObjectStoreBucket {
    store: Arc<dyn ObjectStore>,
}

impl ObjectStoreBucket {
    /// Wraps a backend.
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        ObjectStoreBucket { store }
    }

    /// Asks `delete_stream` to delete one chunk of at most 1,000 keys: an answer a
    /// key, or fewer when the request failed as a whole.
    async fn delete_chunk(&self, chunk: &[(usize, Path)]) -> Vec<object_store::Result<Path>> {
        let locations: Vec<object_store::Result<Path>> =
            chunk.iter().map(|(_, p)| Ok(p.clone())).collect();
        self.store
            .delete_stream(futures::stream::iter(locations).boxed())
            .collect()
            .await
    }
}

/// A key as an object path; keys that are not clean `/`-separated paths
/// ([`check_key`]) are refused, not rewritten.
fn path(key: &str) -> Result<Path, BucketError> {
    check_key(key)?;
    let invalid = || {
        BucketError::Denied(Denial::InvalidKey {
            key: key.to_string(),
        })
    };
    let parsed = Path::parse(key).map_err(|_| invalid())?;
    // Path::parse accepts some keys it then stores under another name; refuse those.
    if parsed.as_ref() != key {
        return Err(invalid());
    }
    Ok(parsed)
}

/// An object of a backend's listing as the bucket contract gives it.
fn meta(meta: object_store::ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        key: meta.location.to_string(),
        size: meta.size,
        modified: SyncTime {
            seconds: meta.last_modified.timestamp(),
            nanoseconds: meta.last_modified.timestamp_subsec_nanos(),
        },
    }
}

fn backend(call: &'static str, key: &str, e: object_store::Error) -> BucketError {
    BucketError::Backend {
        call,
        key: key.to_string(),
        source: Box::new(e),
    }
}

#[async_trait]
impl Bucket for ObjectStoreBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        let location = path(key)?;
        let result = match self.store.get(&location).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(BucketError::NotFound {
                    key: key.to_string(),
                });
            }
            Err(e) => return Err(backend("get", key, e)),
        };
        // The size comes with the response headers, before the body is read.
        if result.meta.size > limit {
            return Err(BucketError::TooLarge {
                key: key.to_string(),
                size: result.meta.size,
                limit,
            });
        }
        let bytes = result.bytes().await.map_err(|e| backend("get", key, e))?;
        // The body was collected into one buffer this call alone holds: it becomes the
        // answer without a copy (a copy would hold a render twice for a moment).
        Ok(Vec::from(bytes))
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        let location = path(key)?;
        self.store
            .put(&location, PutPayload::from(value))
            .await
            .map_err(|e| backend("put", key, e))?;
        Ok(())
    }

    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        let location = path(key)?;
        match self.store.head(&location).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(backend("exists", key, e)),
        }
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        // object_store lists by whole path segments; list the segment-aligned parent
        // and filter by the string prefix, so every backend has plain prefix semantics.
        let parent = match prefix.rfind('/') {
            Some(i) => Some(path(&prefix[..i])?),
            None => None,
        };
        let objects: Vec<_> = self
            .store
            .list(parent.as_ref())
            .try_collect()
            .await
            .map_err(|e| backend("list", prefix, e))?;
        let mut listed: Vec<ObjectMeta> = objects
            .into_iter()
            .map(meta)
            .filter(|meta| meta.key.starts_with(prefix))
            .collect();
        // Not every backend lists in key order.
        listed.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        Ok(listed)
    }

    async fn list_delimited(&self, prefix: &str) -> Result<Delimited, BucketError> {
        // object_store's delimiter listing works on whole segments: the prefix must
        // name a folder (or the root). It follows the backend's pages to the end, and
        // a failed page fails the whole listing.
        check_folder_prefix(prefix)?;
        let parent = match prefix.strip_suffix('/') {
            Some(folder) => Some(path(folder)?),
            None => None,
        };
        let listed = self
            .store
            .list_with_delimiter(parent.as_ref())
            .await
            .map_err(|e| backend("list", prefix, e))?;
        let mut folders: Vec<String> = listed
            .common_prefixes
            .into_iter()
            .map(|p| format!("{p}/"))
            .filter(|p| p.starts_with(prefix))
            .collect();
        folders.sort_unstable();
        let mut objects: Vec<ObjectMeta> = listed
            .objects
            .into_iter()
            .map(meta)
            .filter(|m| m.key.starts_with(prefix))
            .collect();
        objects.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        Ok(Delimited { folders, objects })
    }

    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        let location = path(key)?;
        match self.store.delete(&location).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(backend("delete", key, e)),
        }
    }

    /// object_store's `delete_stream`: S3 sends DeleteObjects of up to 1,000 keys,
    /// other backends one delete a key, several at once. Keys that are not clean paths
    /// are answered `denied` and never sent.
    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let mut answers: Vec<Result<(), BucketError>> = Vec::with_capacity(keys.len());
        let mut sent: Vec<(usize, Path)> = Vec::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            match path(key) {
                Ok(p) => {
                    answers.push(Ok(()));
                    sent.push((i, p));
                }
                Err(e) => answers.push(Err(e)),
            }
        }
        // S3 splits a stream into requests of 1,000 keys, and a failed request yields
        // one error for all its keys, which would shift every later answer: so one
        // stream per 1,000 keys, whose answers line up with its keys or not at all.
        for chunk in sent.chunks(1_000) {
            // When the whole request fails, it is made again, up to BATCH_ATTEMPTS in
            // all, a moment apart: deleting is idempotent, and object_store does not
            // retry a POST (Azure's batch) whose connection broke.
            let mut results = self.delete_chunk(chunk).await;
            for attempt in 1..BATCH_ATTEMPTS {
                if results.len() == chunk.len() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(200 * attempt as u64)).await;
                results = self.delete_chunk(chunk).await;
            }
            let first = &keys[chunk[0].0];
            if results.len() != chunk.len() {
                let answered = results.len();
                let error = results.into_iter().find_map(Result::err);
                return Err(match error {
                    Some(e) => backend("delete-many", first, e),
                    None => BucketError::Failed(messages::backend(
                        "delete-many",
                        first,
                        format!("the store answered {answered} of {} keys", chunk.len()),
                    )),
                });
            }
            // Each backend answers in the order it was asked (S3 puts DeleteObjects'
            // per-key errors back in request order).
            for ((i, _), result) in chunk.iter().zip(results) {
                answers[*i] = match result {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                    Err(e) => Err(backend("delete", &keys[*i], e)),
                };
            }
        }
        Ok(answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream::BoxStream;
    use object_store::memory::InMemory;
    use object_store::{
        CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, PutMultipartOptions,
        PutOptions, PutResult,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// An in-memory store whose `delete_stream` fails as a whole request (one error,
    /// nothing deleted) the first `failures` times, as a broken connection does.
    #[derive(Debug)]
    struct BrokenDeletes {
        inner: InMemory,
        failures: AtomicUsize,
    }

    impl std::fmt::Display for BrokenDeletes {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "BrokenDeletes")
        }
    }

    #[async_trait]
    impl ObjectStore for BrokenDeletes {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            self.inner.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            let failing = self
                .failures
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if failing {
                let error = object_store::Error::Generic {
                    store: "BrokenDeletes",
                    source: "error sending request".into(),
                };
                return futures::stream::iter([Err(error)]).boxed();
            }
            self.inner.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    async fn bucket_with(failures: usize, keys: &[String]) -> ObjectStoreBucket {
        let store = BrokenDeletes {
            inner: InMemory::new(),
            failures: AtomicUsize::new(failures),
        };
        let bucket = ObjectStoreBucket::new(Arc::new(store));
        for key in keys {
            bucket.put(key, b"x".to_vec()).await.unwrap();
        }
        bucket
    }

    #[tokio::test]
    async fn a_batch_delete_whose_request_failed_is_made_again() {
        let keys: Vec<String> = (0..3).map(|i| format!("ns/app/renders/{i}")).collect();
        let bucket = bucket_with(BATCH_ATTEMPTS - 1, &keys).await;
        let answers = bucket.delete_many(&keys).await.unwrap();
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        assert!(bucket.list("ns/app/").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_batch_delete_that_fails_every_time_reports_the_request() {
        let keys: Vec<String> = (0..3).map(|i| format!("ns/app/renders/{i}")).collect();
        let bucket = bucket_with(BATCH_ATTEMPTS, &keys).await;
        let e = bucket.delete_many(&keys).await.unwrap_err();
        assert!(
            e.to_string().contains("delete-many")
                && e.to_string().contains("error sending request"),
            "{e}"
        );
        assert_eq!(bucket.list("ns/app/").await.unwrap().len(), 3);
    }
}
