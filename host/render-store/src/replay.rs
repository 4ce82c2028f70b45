//! Replay (TRACES.md): re-runs a traced operation in the sandbox against the recorded
//! answers alone, then compares every call and the result with the trace.

use crate::bucket::{Bucket, BucketError, ObjectMeta};
use crate::runtime::Runtime;
use crate::store::RenderStore;
use crate::trace::{CallError, CallKind, Outcome, Reply, Trace, TracedCall, call_json, record};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The answers a trace recorded for one call on one key, in trace order.
struct Answers {
    recorded: Vec<Result<Reply, CallError>>,
    used: usize,
}

impl Answers {
    /// The first answer not yet used; when all are used, the last again.
    fn next(&mut self) -> Option<Result<Reply, CallError>> {
        let answer = self
            .recorded
            .get(self.used)
            .or(self.recorded.last())?
            .clone();
        self.used += 1;
        Some(answer)
    }
}

/// A bucket that answers from a trace and performs nothing: writes and deletes are
/// answered as they were recorded (or `ok`), reads the trace never saw fail with
/// `not in the trace`.
pub struct ReplayBucket {
    answers: Mutex<HashMap<(CallKind, String), Answers>>,
}

impl ReplayBucket {
    /// A bucket answering from `calls`.
    pub fn new(calls: &[TracedCall]) -> Self {
        let mut answers = HashMap::<_, Answers>::new();
        for call in calls {
            answers
                .entry((call.kind, call.key.clone()))
                .or_insert_with(|| Answers {
                    recorded: Vec::new(),
                    used: 0,
                })
                .recorded
                .push(call.answer.clone());
        }
        ReplayBucket {
            answers: Mutex::new(answers),
        }
    }

    fn answer(&self, kind: CallKind, key: &str) -> Result<Reply, BucketError> {
        let next = self
            .answers
            .lock()
            .expect("not poisoned")
            .get_mut(&(kind, key.to_string()))
            .and_then(Answers::next);
        match (next, kind) {
            (Some(Ok(reply)), _) => Ok(reply),
            (Some(Err(CallError::NotFound)), _) => Err(BucketError::NotFound { key: key.into() }),
            (Some(Err(CallError::Denied(m))), _) => Err(BucketError::Denied(m)),
            (Some(Err(CallError::Failed(m))), _) => Err(BucketError::Failed(m)),
            (None, CallKind::Put | CallKind::Delete) => Ok(Reply::Done),
            (None, _) => Err(BucketError::Failed("not in the trace".into())),
        }
    }
}

/// A recorded answer of the wrong shape for its call cannot come from a parsed trace
/// (the reader checks each answer against its call), but a bucket must answer anyway.
fn wrong_shape(kind: CallKind, key: &str) -> BucketError {
    BucketError::Failed(format!(
        "the trace's answer to {} {key} does not fit the call",
        kind.name()
    ))
}

#[async_trait]
impl Bucket for ReplayBucket {
    async fn get(&self, key: &str, _limit: u64) -> Result<Vec<u8>, BucketError> {
        match self.answer(CallKind::Get, key)? {
            Reply::Bytes(b) => Ok(b),
            _ => Err(wrong_shape(CallKind::Get, key)),
        }
    }
    async fn put(&self, key: &str, _value: Vec<u8>) -> Result<(), BucketError> {
        match self.answer(CallKind::Put, key)? {
            Reply::Done => Ok(()),
            _ => Err(wrong_shape(CallKind::Put, key)),
        }
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        match self.answer(CallKind::Exists, key)? {
            Reply::Size(s) => Ok(s),
            _ => Err(wrong_shape(CallKind::Exists, key)),
        }
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        match self.answer(CallKind::List, prefix)? {
            Reply::Listing(o) => Ok(o),
            _ => Err(wrong_shape(CallKind::List, prefix)),
        }
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        match self.answer(CallKind::Delete, key)? {
            Reply::Done => Ok(()),
            _ => Err(wrong_shape(CallKind::Delete, key)),
        }
    }
}

/// The first call where the replay and the trace part ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The call's position, from 1.
    pub position: usize,
    /// The trace's call there (none: the replay made more calls).
    pub recorded: Option<TracedCall>,
    /// The replay's call there (none: the replay made fewer calls).
    pub replayed: Option<TracedCall>,
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayReport {
    /// The replay's own trace: the calls it made and its result.
    pub replayed: Trace,
    /// The first differing call, if any.
    pub first_difference: Option<Difference>,
    /// Whether the result equals the trace's (for a `trap`, its kind).
    pub result_matches: bool,
}

impl ReplayReport {
    /// Every call and the result match the trace.
    pub fn matches(&self) -> bool {
        self.first_difference.is_none() && self.result_matches
    }

    /// The report as JSON: `matches`, `firstDifference` (`position`, `recorded`,
    /// `replayed`: call lines of TRACES.md or null), `resultMatches`, `calls` and
    /// `result` (the replayed result, `{"ok":…}` or `{"error":…}`).
    pub fn to_json(&self) -> Value {
        let difference = self.first_difference.as_ref().map(|d| {
            json!({
                "position": d.position,
                "recorded": d.recorded.as_ref().map(call_json),
                "replayed": d.replayed.as_ref().map(call_json),
            })
        });
        json!({
            "operation": self.replayed.operation.name(),
            "matches": self.matches(),
            "firstDifference": difference,
            "resultMatches": self.result_matches,
            "calls": self.replayed.calls.len(),
            "result": match &self.replayed.result {
                Ok(v) => json!({ "ok": v }),
                Err(e) => json!({ "error": e }),
            },
        })
    }
}

fn same_result(recorded: &Outcome, replayed: &Outcome) -> bool {
    match (recorded, replayed) {
        (Err(a), Err(b)) if a["kind"] == "trap" || b["kind"] == "trap" => a["kind"] == b["kind"],
        _ => recorded == replayed,
    }
}

/// Re-runs `trace`'s operation in a fresh instance of `runtime`'s component against
/// the trace's answers, and compares.
pub async fn replay(runtime: Arc<Runtime>, trace: &Trace) -> ReplayReport {
    let store = RenderStore::new(runtime, Arc::new(ReplayBucket::new(&trace.calls)));
    let (_, replayed) = record(&store, trace.operation.clone()).await;
    let n = trace.calls.len().max(replayed.calls.len());
    let first_difference = (0..n).find_map(|i| {
        let (recorded, again) = (trace.calls.get(i), replayed.calls.get(i));
        (recorded != again).then(|| Difference {
            position: i + 1,
            recorded: recorded.cloned(),
            replayed: again.cloned(),
        })
    });
    ReplayReport {
        result_matches: same_result(&trace.result, &replayed.result),
        first_difference,
        replayed,
    }
}
