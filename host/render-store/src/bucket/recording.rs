//! A bucket wrapper that records every call, for tests and for inspecting what an
//! operation did.

use super::{Bucket, BucketError, Delimited, ObjectMeta};
use async_trait::async_trait;
use std::sync::{Arc, Mutex};

/// One recorded bucket call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BucketCall {
    /// `get(key)`.
    Get(String),
    /// `put(key, _)`.
    Put(String),
    /// `exists(key)`.
    Exists(String),
    /// `list(prefix)`.
    List(String),
    /// `list_delimited(prefix)`.
    ListDelimited(String),
    /// `delete(key)`.
    Delete(String),
    /// `delete_many(keys)`.
    DeleteMany(Vec<String>),
}

/// Passes every call to the inner bucket and records it.
pub struct RecordingBucket {
    inner: Arc<dyn Bucket>,
    calls: Mutex<Vec<BucketCall>>,
}

impl RecordingBucket {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Bucket>) -> Self {
        RecordingBucket {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The calls recorded since the last `take_calls`, in order.
    pub fn take_calls(&self) -> Vec<BucketCall> {
        std::mem::take(&mut *self.calls.lock().expect("not poisoned"))
    }

    fn record(&self, call: BucketCall) {
        self.calls.lock().expect("not poisoned").push(call);
    }
}

#[async_trait]
impl Bucket for RecordingBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        self.record(BucketCall::Get(key.to_string()));
        self.inner.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        self.record(BucketCall::Put(key.to_string()));
        self.inner.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.record(BucketCall::Exists(key.to_string()));
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.record(BucketCall::List(prefix.to_string()));
        self.inner.list(prefix).await
    }
    async fn list_delimited(&self, prefix: &str) -> Result<Delimited, BucketError> {
        self.record(BucketCall::ListDelimited(prefix.to_string()));
        self.inner.list_delimited(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.record(BucketCall::Delete(key.to_string()));
        self.inner.delete(key).await
    }
    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        self.record(BucketCall::DeleteMany(keys.to_vec()));
        self.inner.delete_many(keys).await
    }
}
