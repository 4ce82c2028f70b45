//! Buckets: byte blobs under string keys, with one contract for every backend
//! (CONTRACT.md §2):
//!
//! - `get` of an absent key is [`BucketError::NotFound`]; `get` of an object larger than
//!   the caller's bound is [`BucketError::TooLarge`], refused before anything is
//!   allocated for it;
//! - `delete` of an absent key succeeds; `delete_many` answers each key as `delete`
//!   would, in order, with one request where the backend has a batch request;
//! - `list(prefix)` returns every object whose key starts with `prefix` (a plain string
//!   prefix), with its size and last-modified time, complete and in lexical byte order;
//!   an entry the backend cannot represent as a key is left out and reported in the
//!   log, never a reason to fail the whole listing;
//! - `put` is atomic: a reader sees the old content or the new, never a part;
//! - `exists` is a metadata request, not a download; it answers the size;
//! - `list_delimited(prefix)` answers the folders and objects directly under a folder
//!   prefix, with one request a page where the backend has a delimiter listing, and
//!   from a plain listing where it has not.

mod folder;
mod object_store_bucket;
mod read_only;
mod recording;

pub use folder::FolderBucket;
pub use object_store_bucket::ObjectStoreBucket;
pub use read_only::ReadOnlyBucket;
pub use recording::{BucketCall, RecordingBucket};
/// Why a bucket refused a call, and the words of every bucket message: the guest's, so
/// the component and this host word them once.
pub use render_store_guest::bucket::{Denial, messages};

use crate::types::SyncTime;
use async_trait::async_trait;

/// Checks that `key` is a clean `/`-separated path, the rule every bucket applies
/// before it stores or deletes anything (CONTRACT.md §2): not empty, no leading or
/// trailing `/`, no empty, `.` or `..` component, no control character. Buckets written
/// outside this library (a Go or Python bucket through the C ABI) apply it through
/// `rs_check_key`, so the rule is written once.
pub fn check_key(key: &str) -> Result<(), BucketError> {
    let clean = !key.is_empty()
        && key
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && !p.chars().any(char::is_control));
    if clean {
        Ok(())
    } else {
        Err(BucketError::Denied(Denial::InvalidKey {
            key: key.to_string(),
        }))
    }
}

/// One object of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The full key.
    pub key: String,
    /// The size in bytes.
    pub size: u64,
    /// When it was last written, by the backend's clock.
    pub modified: SyncTime,
}

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
    /// being served, a key the backend cannot store, or a write to a read-only bucket;
    /// the reason says which, its text is one of [`messages`].
    #[error("{0}")]
    Denied(Denial),
    /// `get` of an object larger than the caller can take (the call's memory cap),
    /// refused before it was read.
    #[error("{}", messages::too_large(.key, *.size, *.limit))]
    TooLarge {
        /// The key.
        key: String,
        /// The object's size.
        size: u64,
        /// The most the caller could take.
        limit: u64,
    },
    /// The backend failed.
    #[error("{}", messages::backend(.call, .key, .source))]
    Backend {
        /// The call: get, put, exists, list, delete or delete-many (whose key is the
        /// request's first).
        call: &'static str,
        /// The key or prefix.
        key: String,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A failure known only by its text, passed to the component as is: a replayed
    /// answer (see TRACES.md, Replay).
    #[error("{0}")]
    Failed(String),
}

/// A bucket with the contract of this module.
#[async_trait]
pub trait Bucket: Send + Sync + 'static {
    /// The whole content of `key`, if it is at most `limit` bytes: a larger object is
    /// [`BucketError::TooLarge`], refused before its content is read.
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError>;
    /// Stores `value` under `key`, atomically.
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError>;
    /// The size of `key`, or `None` if it does not exist, by a metadata request.
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError>;
    /// Every object whose key starts with `prefix`, sorted by key bytes.
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError>;
    /// Deletes `key`; an absent key is not an error.
    async fn delete(&self, key: &str) -> Result<(), BucketError>;

    /// Deletes every key of `keys`: one answer per key, in the order of `keys`, each as
    /// [`Bucket::delete`] would answer it; the outer error when the whole request
    /// failed, and then any key may or may not be gone. The component asks for at most
    /// 1,000 keys at once. The default deletes one key after another, for backends
    /// without a batch request; a wrapper must pass it on, or its inner bucket's batch
    /// request is lost.
    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let mut answers = Vec::with_capacity(keys.len());
        for key in keys {
            answers.push(self.delete(key).await);
        }
        Ok(answers)
    }

    /// What lies directly under `prefix` (empty, or ending in `/`): a listing with the
    /// delimiter `/` (CONTRACT.md §2), one request a page where the backend has one
    /// (object_store's `list_with_delimiter`), so the releases of a store are found
    /// without listing every key. Complete across pages, or an error (fail closed, as
    /// [`Bucket::list`]). A prefix that is not empty and does not end in `/` is refused
    /// as [`Denial::InvalidKey`].
    ///
    /// The default is the fallback for a bucket without a delimiter listing (a bucket a
    /// C caller implements, a test's wrapper): [`Bucket::list`] of `prefix`, every key
    /// beneath it folded into [`Delimited::from_listing`]. It answers the same, at the
    /// cost of listing every key; a wrapper passes the call on, or its inner bucket's
    /// delimiter listing is lost.
    async fn list_delimited(&self, prefix: &str) -> Result<Delimited, BucketError> {
        check_folder_prefix(prefix)?;
        Ok(Delimited::from_listing(prefix, self.list(prefix).await?))
    }
}

/// Refuses a delimiter listing's prefix that names no folder: not empty and not ending
/// in `/` (object_store's delimiter listings work on whole segments).
pub fn check_folder_prefix(prefix: &str) -> Result<(), BucketError> {
    if prefix.is_empty()
        || (prefix.ends_with('/') && check_key(&prefix[..prefix.len() - 1]).is_ok())
    {
        Ok(())
    } else {
        Err(BucketError::Denied(Denial::InvalidKey {
            key: prefix.to_string(),
        }))
    }
}

/// A listing with the delimiter `/`: what lies directly under a prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delimited {
    /// Every distinct `prefix + segment + "/"` that some key under the prefix starts
    /// with, sorted by bytes: the "common prefixes" of a cloud listing. (A `file://`
    /// store lists its sub-folders, so a folder left empty is among them.)
    pub folders: Vec<String>,
    /// The objects whose key is `prefix + name` with no `/` in `name`, sorted by key.
    pub objects: Vec<ObjectMeta>,
}

impl Delimited {
    /// The delimiter listing a complete listing of `prefix` (every key that starts with
    /// it) implies: the fallback of [`Bucket::list_delimited`].
    pub fn from_listing(prefix: &str, listed: Vec<ObjectMeta>) -> Delimited {
        let mut out = Delimited::default();
        for meta in listed {
            let Some(rest) = meta.key.strip_prefix(prefix) else {
                continue;
            };
            match rest.find('/') {
                Some(end) => {
                    let folder = &meta.key[..prefix.len() + end + 1];
                    // Not every bucket lists in order: compare with every folder kept.
                    if out.folders.last().map(String::as_str) != Some(folder) {
                        out.folders.push(folder.to_string());
                    }
                }
                None => out.objects.push(meta),
            }
        }
        out.folders.sort_unstable();
        out.folders.dedup();
        out.objects.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// The shared vectors of every bucket message (tests/vectors/messages.json).
    const VECTORS: &str = include_str!("../../../../tests/vectors/messages.json");

    fn text<'a>(case: &'a Value, field: &str) -> &'a str {
        case[field]
            .as_str()
            .unwrap_or_else(|| panic!("{field} of {case}"))
    }

    /// The buckets refuse in the vectors' words: a key no backend can store, a write to
    /// a read-only bucket, a `file://` key holding the staging mark.
    #[tokio::test]
    async fn the_buckets_refuse_in_the_shared_words() {
        use crate::bucket::{Bucket, BucketError, FolderBucket, ObjectStoreBucket, ReadOnlyBucket};
        use std::sync::Arc;
        let vectors: Value = serde_json::from_str(VECTORS).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let folder = Arc::new(FolderBucket::open(dir.path()).unwrap());
        let memory = ObjectStoreBucket::new(Arc::new(object_store::memory::InMemory::new()));
        let read_only = ReadOnlyBucket::new(folder.clone());
        let denied = |r: Result<(), BucketError>| match r {
            Err(BucketError::Denied(m)) => m.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        };
        let mut checked = 0;
        for case in vectors["cases"].as_array().unwrap() {
            let want = text(case, "want");
            match text(case, "message") {
                "invalid-key" => {
                    let key = text(case, "key");
                    assert_eq!(denied(memory.put(key, vec![1]).await), want);
                    assert_eq!(denied(folder.put(key, vec![1]).await), want);
                    assert_eq!(denied(folder.delete(key).await), want);
                }
                "read-only" => {
                    let key = text(case, "key");
                    let refused = match text(case, "call") {
                        "put" => read_only.put(key, vec![1]).await,
                        _ => read_only.delete(key).await,
                    };
                    assert_eq!(denied(refused), want);
                }
                "staging-mark" => {
                    assert_eq!(denied(folder.put(text(case, "key"), vec![1]).await), want);
                }
                _ => continue,
            }
            checked += 1;
        }
        assert!(checked >= 10, "{checked}");
    }
}
