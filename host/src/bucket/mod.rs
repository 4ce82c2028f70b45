//! Buckets: byte blobs under string keys, with one contract for every backend
//! (DESIGN.md section 2):
//!
//! - `get` of an absent key is [`BucketError::NotFound`];
//! - `delete` of an absent key succeeds;
//! - `list(prefix)` returns every key that starts with `prefix` (a plain string prefix),
//!   complete and in lexical byte order;
//! - `put` is atomic: a reader sees the old content or the new, never a part;
//! - `exists` is a metadata request, not a download.

mod object_store_bucket;
mod read_only;
mod recording;

pub use object_store_bucket::ObjectStoreBucket;
pub use read_only::ReadOnlyBucket;
pub use recording::{BucketCall, RecordingBucket};

use async_trait::async_trait;

/// Why a bucket call failed.
#[derive(Debug, thiserror::Error)]
pub enum BucketError {
    /// The key does not exist (`get`).
    #[error("{key} does not exist")]
    NotFound {
        /// The key asked for.
        key: String,
    },
    /// The call was refused before reaching the backend: a key outside the release
    /// being served, a key the backend cannot store, or a write to a read-only bucket.
    #[error("{0}")]
    Denied(String),
    /// The backend failed.
    #[error("{call} {key}: {source}")]
    Backend {
        /// The call: get, put, exists, list or delete.
        call: &'static str,
        /// The key or prefix.
        key: String,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A failure known only by its text, passed to the component as is: a replayed
    /// answer (see [`crate::replay`]).
    #[error("{0}")]
    Failed(String),
}

/// A bucket with the contract of this module.
#[async_trait]
pub trait Bucket: Send + Sync + 'static {
    /// The whole content of `key`.
    async fn get(&self, key: &str) -> Result<Vec<u8>, BucketError>;
    /// Stores `value` under `key`, atomically.
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError>;
    /// Whether `key` exists, by a metadata request.
    async fn exists(&self, key: &str) -> Result<bool, BucketError>;
    /// Every key that starts with `prefix`, sorted by bytes.
    async fn list(&self, prefix: &str) -> Result<Vec<String>, BucketError>;
    /// Deletes `key`; an absent key is not an error.
    async fn delete(&self, key: &str) -> Result<(), BucketError>;
}
