//! The per-call view: what one call's instance may reach (its limiter, its bucket scope)
//! and the bucket import served over it, recorded when traced.

use super::CallLog;
use super::bindings::{wit_bucket, wit_trace};
use super::errors::to_wit;
use super::limits::CallLimiter;
use crate::bucket::{Bucket, BucketError, Denial};
use render_store_guest::bucket::{merge_scoped, split_scoped};
use std::sync::Arc;

/// What one call's instance may reach.
pub(crate) struct CallState {
    pub(super) limiter: CallLimiter,
    pub(super) bucket: Option<Scope>,
}

/// The bucket of one call, confined to one release's prefix.
pub(crate) struct Scope {
    pub bucket: Arc<dyn Bucket>,
    pub prefix: String,
    /// Where every call and its answer are recorded, for a trace.
    pub log: Option<Arc<CallLog>>,
}

impl Scope {
    fn check(&self, key: &str) -> Result<(), wit_bucket::BucketError> {
        if key.starts_with(&self.prefix) {
            Ok(())
        } else {
            Err(to_wit(BucketError::Denied(Denial::OutsidePrefix {
                key: key.to_string(),
                prefix: self.prefix.clone(),
            })))
        }
    }
}

impl CallState {
    fn scope(&self, key: &str) -> Result<&Scope, wit_bucket::BucketError> {
        let scope = self
            .bucket
            .as_ref()
            .ok_or_else(|| to_wit(BucketError::Denied(Denial::NoBucket)))?;
        scope.check(key)?;
        Ok(scope)
    }

    /// Where this call's bucket calls are recorded, when it is traced.
    fn call_log(&self) -> Option<&Arc<CallLog>> {
        self.bucket.as_ref().and_then(|s| s.log.as_ref())
    }

    /// Records a call and the answer the component is given, when tracing. `call`
    /// makes the trace's copy, so nothing is copied otherwise.
    fn log(&self, call: impl FnOnce() -> wit_trace::RecordedCall) {
        if let Some(log) = self.call_log() {
            log.push(call());
        }
    }
}

impl super::world::BucketImport for CallState {
    async fn get(&mut self, key: String) -> Result<wit_bucket::Data, wit_bucket::BucketError> {
        // Nothing larger than the call's memory could take is read at all, and no
        // release index larger than an index may be (the component reads past it).
        let mut limit = self.limiter.memory_cap as u64;
        if let Some(cap) = render_store_guest::render_index::read_limit(&key) {
            limit = limit.min(cap);
        }
        let answer = async {
            self.scope(&key)?
                .bucket
                .get(&key, limit)
                .await
                .map_err(to_wit)
        }
        .await;
        self.log(|| {
            wit_trace::RecordedCall::Get(wit_trace::GetCall {
                key,
                answer: answer.clone(),
            })
        });
        answer
    }

    async fn put(
        &mut self,
        key: String,
        value: wit_bucket::Data,
    ) -> Result<(), wit_bucket::BucketError> {
        let copy = self.call_log().map(|_| value.clone());
        let answer = async {
            self.scope(&key)?
                .bucket
                .put(&key, value)
                .await
                .map_err(to_wit)
        }
        .await;
        self.log(|| {
            wit_trace::RecordedCall::Put(wit_trace::PutCall {
                key,
                value: copy.unwrap_or_default(),
                answer: answer.clone(),
            })
        });
        answer
    }

    async fn exists(&mut self, key: String) -> Result<u64, wit_bucket::BucketError> {
        let answer = async {
            match self.scope(&key)?.bucket.exists(&key).await {
                Ok(Some(size)) => Ok(size),
                Ok(None) => Err(wit_bucket::BucketError::NotFound),
                Err(e) => Err(to_wit(e)),
            }
        }
        .await;
        self.log(|| {
            wit_trace::RecordedCall::Exists(wit_trace::ExistsCall {
                key,
                answer: answer.clone(),
            })
        });
        answer
    }

    async fn list(
        &mut self,
        prefix: String,
    ) -> Result<Vec<wit_bucket::ObjectMeta>, wit_bucket::BucketError> {
        let listed = async {
            self.scope(&prefix)?
                .bucket
                .list(&prefix)
                .await
                .map_err(to_wit)
        }
        .await;
        let answer = listed.as_ref().map(|objects| {
            objects
                .iter()
                .map(|o| wit_bucket::ObjectMeta {
                    key: o.key.clone(),
                    size: o.size,
                    modified: wit_bucket::Instant {
                        seconds: o.modified.seconds,
                        nanoseconds: o.modified.nanoseconds,
                    },
                })
                .collect()
        });
        let answer = answer.map_err(Clone::clone);
        self.log(|| {
            wit_trace::RecordedCall::List(wit_trace::ListCall {
                prefix,
                answer: answer.clone(),
            })
        });
        answer
    }

    async fn delete(&mut self, key: String) -> Result<(), wit_bucket::BucketError> {
        let answer = async { self.scope(&key)?.bucket.delete(&key).await.map_err(to_wit) }.await;
        self.log(|| {
            wit_trace::RecordedCall::Delete(wit_trace::DeleteCall {
                key,
                answer: answer.clone(),
            })
        });
        answer
    }

    async fn delete_many(&mut self, keys: Vec<String>) -> DeleteManyAnswer {
        let answer = self.delete_scoped(&keys).await;
        self.log(|| {
            wit_trace::RecordedCall::DeleteMany(wit_trace::DeleteManyCall {
                keys,
                answer: answer.clone(),
            })
        });
        answer
    }
}

/// The WIT answer of `delete-many`: one result per key, or the request's error.
type DeleteManyAnswer = Result<Vec<Result<(), wit_bucket::BucketError>>, wit_bucket::BucketError>;

impl CallState {
    /// `delete-many` as the sandbox serves it: a key outside the release's prefix is
    /// answered `denied` alone, as `delete` would answer it, and the others go to the
    /// bucket in one call.
    async fn delete_scoped(&self, keys: &[String]) -> DeleteManyAnswer {
        let Some(scope) = self.bucket.as_ref() else {
            let no = || Err(to_wit(BucketError::Denied(Denial::NoBucket)));
            return Ok(keys.iter().map(|_| no()).collect());
        };
        let (checks, inside) = split_scoped(keys, |k| scope.check(k));
        let answers = if inside.is_empty() {
            Vec::new()
        } else {
            let answers = scope.bucket.delete_many(&inside).await.map_err(to_wit)?;
            answers.into_iter().map(|a| a.map_err(to_wit)).collect()
        };
        merge_scoped(checks, &inside, answers).map_err(wit_bucket::BucketError::Failed)
    }
}
