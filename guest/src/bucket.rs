//! The one capability the logic is given: a byte bucket. In the component it is the
//! imported WIT `bucket`; natively, anything implementing [`Bucket`], such as
//! [`MemoryBucket`] for tests and benchmarks.

use std::collections::BTreeMap;
use std::fmt;

/// Why a bucket call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BucketError {
    /// The key does not exist (`get` only).
    NotFound,
    /// The host refused the call (a key outside the release, a read-only bucket).
    Denied(String),
    /// The backend failed.
    Failed(String),
}

impl fmt::Display for BucketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BucketError::NotFound => write!(f, "not found"),
            BucketError::Denied(m) => write!(f, "denied: {m}"),
            BucketError::Failed(m) => write!(f, "{m}"),
        }
    }
}

/// Byte blobs under string keys, with the contract of DESIGN.md section 2: `get` of an
/// absent key is [`BucketError::NotFound`], `delete` of an absent key succeeds, `list`
/// returns every key starting with the prefix in lexical byte order, `put` is atomic.
pub trait Bucket {
    /// The whole content of `key`.
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError>;
    /// Stores `value` under `key`, atomically.
    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError>;
    /// Whether `key` exists (a metadata request).
    fn exists(&mut self, key: &str) -> Result<bool, BucketError>;
    /// Every key starting with `prefix`, sorted.
    fn list(&mut self, prefix: &str) -> Result<Vec<String>, BucketError>;
    /// Deletes `key`; an absent key is not an error.
    fn delete(&mut self, key: &str) -> Result<(), BucketError>;
}

/// An in-memory bucket that also records each call as `"<call> <key>"`.
#[derive(Debug, Default, Clone)]
pub struct MemoryBucket {
    /// The stored blobs.
    pub objects: BTreeMap<String, Vec<u8>>,
    /// Every call made, in order, as `"get k"`, `"put k"`, `"exists k"`, `"list p"`,
    /// `"delete k"`.
    pub calls: Vec<String>,
}

impl MemoryBucket {
    /// An empty bucket.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns the calls recorded so far and forgets them.
    pub fn take_calls(&mut self) -> Vec<String> {
        std::mem::take(&mut self.calls)
    }

    fn record(&mut self, call: &str, key: &str) {
        self.calls.push(format!("{call} {key}"));
    }
}

impl Bucket for MemoryBucket {
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError> {
        self.record("get", key);
        self.objects.get(key).cloned().ok_or(BucketError::NotFound)
    }

    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError> {
        self.record("put", key);
        self.objects.insert(key.to_string(), value.to_vec());
        Ok(())
    }

    fn exists(&mut self, key: &str) -> Result<bool, BucketError> {
        self.record("exists", key);
        Ok(self.objects.contains_key(key))
    }

    fn list(&mut self, prefix: &str) -> Result<Vec<String>, BucketError> {
        self.record("list", prefix);
        Ok(self
            .objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect())
    }

    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        self.record("delete", key);
        self.objects.remove(key);
        Ok(())
    }
}
