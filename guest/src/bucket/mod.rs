//! The one capability the logic is given: a byte bucket. In the component it is the
//! imported WIT `bucket`; natively, anything implementing [`Bucket`], such as
//! [`MemoryBucket`] for tests and benchmarks.

mod denial;
pub mod messages;

pub use denial::Denial;

use crate::time::SyncTime;
use std::collections::BTreeMap;
use std::fmt;

pub use crate::wit::bucket::ObjectMeta;

/// The keys of a listing, in its order.
pub fn keys(objects: Vec<ObjectMeta>) -> Vec<String> {
    objects.into_iter().map(|o| o.key).collect()
}

pub use crate::wit::bucket::BucketError;

impl fmt::Display for BucketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BucketError::NotFound => write!(f, "not found"),
            BucketError::Denied(m) => write!(f, "denied: {m}"),
            BucketError::Failed(m) => write!(f, "{m}"),
        }
    }
}

/// Byte blobs under string keys, with the contract of CONTRACT.md §2: `get` of an
/// absent key is [`BucketError::NotFound`], `delete` of an absent key succeeds, `list`
/// returns every object whose key starts with the prefix in lexical byte order of the
/// keys, `put` is atomic.
pub trait Bucket {
    /// The whole content of `key`.
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError>;
    /// Stores `value` under `key`, atomically.
    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError>;
    /// The size of `key`, or `None` if it does not exist (a metadata request).
    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError>;
    /// Every object whose key starts with `prefix`, sorted by key.
    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError>;
    /// Deletes `key`; an absent key is not an error.
    fn delete(&mut self, key: &str) -> Result<(), BucketError>;
    /// Deletes every key of `keys` (at most [`MAX_BATCH`]): one answer per key, in
    /// order, or the error of the whole request. The default asks [`Bucket::delete`]
    /// for each key, which is what a bucket without a batch request does anyway.
    fn delete_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        Ok(keys.iter().map(|k| self.delete(k)).collect())
    }
    /// Whether the logic deletes with [`Bucket::delete_many`]. Only the replay of a
    /// version 2 trace, recorded before batches existed, says no: the logic then makes
    /// one `delete` a key and stops at the first failure, as it did then, so the calls
    /// and the error match the trace.
    fn batches(&self) -> bool {
        true
    }
}

/// A `delete-many` through a scope that refuses some keys: each key's answer when the
/// scope refuses it (`check`'s error, as `delete` of that key would answer), `Ok` for
/// the others, in order; and the keys the scope lets through, which go to the bucket in
/// one call if any remain. [`merge_scoped`] puts the bucket's answers back in order.
pub fn split_scoped<E>(
    keys: &[String],
    check: impl Fn(&str) -> Result<(), E>,
) -> (Vec<Result<(), E>>, Vec<String>) {
    let checks: Vec<Result<(), E>> = keys.iter().map(|k| check(k)).collect();
    let inside = keys
        .iter()
        .zip(&checks)
        .filter(|(_, c)| c.is_ok())
        .map(|(k, _)| k.clone())
        .collect();
    (checks, inside)
}

/// The answer of a `delete-many` split by [`split_scoped`]: the refusals where they
/// were, the bucket's `answers` for the keys it was given in their place. An answer
/// with another count than the keys sent (`inside`) is the whole request's failure,
/// worded by [`messages::miscounted`].
pub fn merge_scoped<E>(
    checks: Vec<Result<(), E>>,
    inside: &[String],
    answers: Vec<Result<(), E>>,
) -> Result<Vec<Result<(), E>>, String> {
    if answers.len() != inside.len() {
        return Err(messages::miscounted(
            inside.first().map_or("", String::as_str),
            answers.len(),
            inside.len(),
        ));
    }
    let mut answers = answers.into_iter();
    Ok(checks
        .into_iter()
        .map(|c| c.and_then(|()| answers.next().expect("counted")))
        .collect())
}

/// The most keys one `delete_many` call carries: S3's DeleteObjects takes at most 1,000,
/// and the WIT promises hosts no more.
pub const MAX_BATCH: usize = 1_000;

/// A borrowed bucket is a bucket, so a wrapper (a trace's recorder) can be lent one and
/// the caller keeps it.
impl<B: Bucket + ?Sized> Bucket for &mut B {
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError> {
        (**self).get(key)
    }
    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError> {
        (**self).put(key, value)
    }
    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError> {
        (**self).exists(key)
    }
    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        (**self).list(prefix)
    }
    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        (**self).delete(key)
    }
    fn delete_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        (**self).delete_many(keys)
    }
    fn batches(&self) -> bool {
        (**self).batches()
    }
}

/// An in-memory bucket that also records each call as `"<call> <key>"`.
#[derive(Debug, Default, Clone)]
pub struct MemoryBucket {
    /// The stored blobs.
    pub objects: BTreeMap<String, Vec<u8>>,
    /// When each blob was put, by [`MemoryBucket::clock`]; a blob inserted into
    /// `objects` directly lists as modified at the epoch.
    pub modified: BTreeMap<String, SyncTime>,
    /// The time a `put` records.
    pub clock: SyncTime,
    /// Every call made, in order, as `"get k"`, `"put k"`, `"exists k"`, `"list p"`,
    /// `"delete k"`, and `"delete-many k1 k2 …"` (keys separated by spaces).
    pub calls: Vec<String>,
    /// Keys whose deletion fails with [`BucketError::Failed`], to test how the logic
    /// handles a batch with failures.
    pub undeletable: BTreeMap<String, String>,
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
        self.modified.insert(key.to_string(), self.clock);
        Ok(())
    }

    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError> {
        self.record("exists", key);
        Ok(self.objects.get(key).map(|v| v.len() as u64))
    }

    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.record("list", prefix);
        Ok(self
            .objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| ObjectMeta {
                key: k.clone(),
                size: v.len() as u64,
                modified: self.modified.get(k).copied().unwrap_or_default().into(),
            })
            .collect())
    }

    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        self.record("delete", key);
        self.remove(key)
    }

    fn delete_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        self.record("delete-many", &keys.join(" "));
        Ok(keys.iter().map(|k| self.remove(k)).collect())
    }
}

impl MemoryBucket {
    fn remove(&mut self, key: &str) -> Result<(), BucketError> {
        if let Some(why) = self.undeletable.get(key) {
            return Err(BucketError::Failed(why.clone()));
        }
        self.objects.remove(key);
        self.modified.remove(key);
        Ok(())
    }
}
