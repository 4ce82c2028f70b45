//! A bucket that can only be read: the observer's.

use super::{Bucket, BucketError, Delimited, Denial, ObjectMeta};
use async_trait::async_trait;
use std::sync::Arc;

/// Passes reads to the inner bucket and refuses `put` and `delete`.
pub struct ReadOnlyBucket {
    inner: Arc<dyn Bucket>,
}

impl ReadOnlyBucket {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Bucket>) -> Self {
        ReadOnlyBucket { inner }
    }
}

fn refused(call: &'static str, key: &str) -> BucketError {
    BucketError::Denied(Denial::ReadOnly {
        call,
        key: key.to_string(),
    })
}

#[async_trait]
impl Bucket for ReadOnlyBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        self.inner.get(key, limit).await
    }
    async fn put(&self, key: &str, _value: Vec<u8>) -> Result<(), BucketError> {
        Err(refused("put", key))
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.inner.list(prefix).await
    }
    async fn list_delimited(&self, prefix: &str) -> Result<Delimited, BucketError> {
        self.inner.list_delimited(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        Err(refused("delete", key))
    }
    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        Ok(keys.iter().map(|k| Err(refused("delete", k))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::ObjectStoreBucket;

    #[tokio::test]
    async fn a_batch_delete_is_refused_key_by_key_and_deletes_nothing() {
        let inner: Arc<dyn Bucket> = Arc::new(ObjectStoreBucket::new(Arc::new(
            object_store::memory::InMemory::new(),
        )));
        inner.put("ns/app/a", b"x".to_vec()).await.unwrap();
        let bucket = ReadOnlyBucket::new(inner.clone());
        let keys = ["ns/app/a", "ns/app/b"].map(String::from);
        let answers = bucket.delete_many(&keys).await.unwrap();
        let refusals: Vec<Denial> = answers
            .into_iter()
            .map(|a| match a {
                Err(BucketError::Denied(reason)) => reason,
                other => panic!("expected a refusal, got {other:?}"),
            })
            .collect();
        let read_only = |key: &str| Denial::ReadOnly {
            call: "delete",
            key: key.to_string(),
        };
        assert_eq!(refusals, [read_only("ns/app/a"), read_only("ns/app/b")]);
        assert_eq!(inner.exists("ns/app/a").await.unwrap(), Some(1));
    }
}
