//! Bucket calls as a trace holds them, and a bucket that records them.

use crate::bucket::{Bucket, BucketError, Denial, ObjectMeta, merge_scoped, split_scoped};

/// The six bucket calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallKind {
    /// `get`.
    Get,
    /// `put`.
    Put,
    /// `exists`.
    Exists,
    /// `list`.
    List,
    /// `delete`.
    Delete,
    /// `delete-many`.
    DeleteMany,
}

impl CallKind {
    const ALL: [CallKind; 6] = [
        CallKind::Get,
        CallKind::Put,
        CallKind::Exists,
        CallKind::List,
        CallKind::Delete,
        CallKind::DeleteMany,
    ];

    /// The call's name in a trace (the WIT function's).
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Get => "get",
            CallKind::Put => "put",
            CallKind::Exists => "exists",
            CallKind::List => "list",
            CallKind::Delete => "delete",
            CallKind::DeleteMany => "delete-many",
        }
    }

    /// The call named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// A successful answer to a bucket call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `get`: the content.
    Bytes(Vec<u8>),
    /// `put`, `delete`: done.
    Done,
    /// `exists`: the size, or `None` when absent.
    Size(Option<u64>),
    /// `list`: the objects.
    Listing(Vec<ObjectMeta>),
    /// `delete-many`: one answer per key, in order.
    Each(Vec<Result<(), BucketError>>),
}

/// What the component was given for a call.
pub type Answer = Result<Reply, BucketError>;

/// One bucket call and the answer the component was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Which call.
    pub kind: CallKind,
    /// The key, or the prefix of a `list`; empty for a `delete-many`.
    pub key: String,
    /// The keys of a `delete-many` (and of nothing else).
    pub keys: Vec<String>,
    /// The value of a `put` (and of nothing else).
    pub value: Option<Vec<u8>>,
    /// What the component was given.
    pub answer: Answer,
}

/// A bucket that passes every call to `inner` and records it with its answer.
#[derive(Debug)]
pub struct Recorder<B> {
    inner: B,
    calls: Vec<Call>,
}

impl<B: Bucket> Recorder<B> {
    /// Records the calls made to `inner`.
    pub fn new(inner: B) -> Self {
        Recorder {
            inner,
            calls: Vec::new(),
        }
    }

    /// The calls made so far, in order.
    pub fn into_calls(self) -> Vec<Call> {
        self.calls
    }

    fn log<T>(
        &mut self,
        kind: CallKind,
        key: &str,
        value: Option<&[u8]>,
        answer: Result<T, BucketError>,
        reply: impl FnOnce(&T) -> Reply,
    ) -> Result<T, BucketError> {
        self.calls.push(Call {
            kind,
            key: key.to_string(),
            keys: Vec::new(),
            value: value.map(<[u8]>::to_vec),
            answer: answer.as_ref().map(reply).map_err(Clone::clone),
        });
        answer
    }
}

impl<B: Bucket> Bucket for Recorder<B> {
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError> {
        let answer = self.inner.get(key);
        self.log(CallKind::Get, key, None, answer, |b| {
            Reply::Bytes(b.clone())
        })
    }

    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError> {
        let answer = self.inner.put(key, value);
        self.log(CallKind::Put, key, Some(value), answer, |_| Reply::Done)
    }

    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError> {
        let answer = self.inner.exists(key);
        self.log(CallKind::Exists, key, None, answer, |s| Reply::Size(*s))
    }

    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        let answer = self.inner.list(prefix);
        self.log(CallKind::List, prefix, None, answer, |o| {
            Reply::Listing(o.clone())
        })
    }

    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        let answer = self.inner.delete(key);
        self.log(CallKind::Delete, key, None, answer, |_| Reply::Done)
    }

    fn delete_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let answer = self.inner.delete_many(keys);
        self.calls.push(Call {
            kind: CallKind::DeleteMany,
            key: String::new(),
            keys: keys.to_vec(),
            value: None,
            answer: answer.clone().map(Reply::Each),
        });
        answer
    }
}

/// The host's check of every call (the `bucket` interface in WIT): a key outside the
/// release's prefix is answered `denied`, with the Rust host's words, and `inner` is not
/// asked. Replay applies it as the recording host did.
#[derive(Debug)]
pub(crate) struct Scoped<B> {
    pub(crate) inner: B,
    /// `<namespace>/<name>/` of the names as given: the component checks them before
    /// any call.
    pub(crate) prefix: String,
}

impl<B: Bucket> Scoped<B> {
    fn check(&self, key: &str) -> Result<(), BucketError> {
        if key.starts_with(&self.prefix) {
            return Ok(());
        }
        Err(BucketError::Denied(
            Denial::OutsidePrefix {
                key: key.to_string(),
                prefix: self.prefix.clone(),
            }
            .to_string(),
        ))
    }
}

impl<B: Bucket> Bucket for Scoped<B> {
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError> {
        self.check(key)?;
        self.inner.get(key)
    }

    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError> {
        self.check(key)?;
        self.inner.put(key, value)
    }

    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError> {
        self.check(key)?;
        self.inner.exists(key)
    }

    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.check(prefix)?;
        self.inner.list(prefix)
    }

    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        self.check(key)?;
        self.inner.delete(key)
    }

    /// Keys outside the prefix are answered `denied` one by one, as the Rust host
    /// answers them; the others go to `inner` in one call, if any remain.
    fn delete_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let (checks, inside) = split_scoped(keys, |k| self.check(k));
        let answers = if inside.is_empty() {
            Vec::new()
        } else {
            self.inner.delete_many(&inside)?
        };
        merge_scoped(checks, &inside, answers).map_err(BucketError::Failed)
    }
}
