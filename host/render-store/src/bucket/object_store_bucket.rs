//! The bucket over an `object_store` backend, normalized to the bucket contract.

use super::{Bucket, BucketError, ObjectMeta, messages};
use crate::types::SyncTime;
use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::sync::Arc;

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
}

/// A key as an object path; keys that are not clean `/`-separated paths (empty
/// segments, `.` or `..`, control characters) are refused, not rewritten.
fn path(key: &str) -> Result<Path, BucketError> {
    let invalid = || BucketError::Denied(messages::invalid_key(key));
    if key.is_empty() || key.starts_with('/') || key.ends_with('/') {
        return Err(invalid());
    }
    let parsed = Path::parse(key).map_err(|_| invalid())?;
    // Path::parse accepts some keys it then stores under another name; refuse those.
    if parsed.as_ref() != key {
        return Err(invalid());
    }
    Ok(parsed)
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
        Ok(bytes.to_vec())
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
            .map(|meta| ObjectMeta {
                key: meta.location.to_string(),
                size: meta.size,
                modified: SyncTime {
                    seconds: meta.last_modified.timestamp(),
                    nanoseconds: meta.last_modified.timestamp_subsec_nanos(),
                },
            })
            .filter(|meta| meta.key.starts_with(prefix))
            .collect();
        // Not every backend lists in key order.
        listed.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        Ok(listed)
    }

    async fn list_folders(&self, prefix: &str) -> Result<Vec<String>, BucketError> {
        // object_store's delimiter listing works on whole segments: the prefix must
        // name a folder (or the root).
        let parent = match prefix.strip_suffix('/') {
            Some(folder) => Some(path(folder)?),
            None if prefix.is_empty() => None,
            None => return Err(BucketError::Denied(messages::invalid_key(prefix))),
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
        Ok(folders)
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
            let locations: Vec<object_store::Result<Path>> =
                chunk.iter().map(|(_, p)| Ok(p.clone())).collect();
            let results: Vec<object_store::Result<Path>> = self
                .store
                .delete_stream(futures::stream::iter(locations).boxed())
                .collect()
                .await;
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
