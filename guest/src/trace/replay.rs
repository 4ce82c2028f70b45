//! Replay (TRACES.md, Replay): the traced operation re-run against a bucket that answers
//! from the trace and performs nothing, its calls and result compared with the trace's,
//! and the report every host prints.

use super::call::{Answer, Call, CallKind, Reply};
use super::format::{Trace, TraceError, parse_trace};
use super::operation::{Failure, Operation, Outcome, record_as};
use super::shape::{self, text};
use crate::bucket::{Bucket, BucketError, ObjectMeta};
use crate::encryption::Keyring;
use crate::json::Builder;
use std::collections::BTreeMap;

/// The answers a trace recorded for one call on one key, in trace order.
#[derive(Debug)]
struct Answers {
    recorded: Vec<Answer>,
    used: usize,
}

/// A bucket that answers from a trace and performs nothing. Answers are found by the
/// call and its keys: the one key of most calls, every key of a `delete-many`.
#[derive(Debug)]
struct ReplayBucket {
    answers: BTreeMap<(CallKind, Vec<String>), Answers>,
}

/// What a call's answer is looked up by.
fn lookup(call: &Call) -> Vec<String> {
    match call.kind {
        CallKind::DeleteMany => call.keys.clone(),
        _ => vec![call.key.clone()],
    }
}

impl ReplayBucket {
    fn new(calls: &[Call]) -> Self {
        let mut answers = BTreeMap::<_, Answers>::new();
        for call in calls {
            answers
                .entry((call.kind, lookup(call)))
                .or_insert_with(|| Answers {
                    recorded: Vec::new(),
                    used: 0,
                })
                .recorded
                .push(call.answer.clone());
        }
        ReplayBucket { answers }
    }

    /// The recorded answer of the same call on the same key: the first not yet used,
    /// then the last again. None recorded: a write or delete is `ok`, a read fails.
    fn answer(&mut self, kind: CallKind, keys: Vec<String>) -> Answer {
        let count = keys.len();
        let next = self.answers.get_mut(&(kind, keys)).and_then(|a| {
            let answer = a.recorded.get(a.used).or(a.recorded.last())?.clone();
            a.used += 1;
            Some(answer)
        });
        match (next, kind) {
            (Some(answer), _) => answer,
            (None, CallKind::Put | CallKind::Delete) => Ok(Reply::Done),
            (None, CallKind::DeleteMany) => Ok(Reply::Each(vec![Ok(()); count])),
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

impl Bucket for ReplayBucket {
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError> {
        match self.answer(CallKind::Get, vec![key.to_string()])? {
            Reply::Bytes(b) => Ok(b),
            _ => Err(wrong_shape(CallKind::Get, key)),
        }
    }

    fn put(&mut self, key: &str, _value: &[u8]) -> Result<(), BucketError> {
        match self.answer(CallKind::Put, vec![key.to_string()])? {
            Reply::Done => Ok(()),
            _ => Err(wrong_shape(CallKind::Put, key)),
        }
    }

    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError> {
        match self.answer(CallKind::Exists, vec![key.to_string()])? {
            Reply::Size(s) => Ok(s),
            _ => Err(wrong_shape(CallKind::Exists, key)),
        }
    }

    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        match self.answer(CallKind::List, vec![prefix.to_string()])? {
            Reply::Listing(o) => Ok(o),
            _ => Err(wrong_shape(CallKind::List, prefix)),
        }
    }

    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        match self.answer(CallKind::Delete, vec![key.to_string()])? {
            Reply::Done => Ok(()),
            _ => Err(wrong_shape(CallKind::Delete, key)),
        }
    }

    fn delete_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        match self.answer(CallKind::DeleteMany, keys.to_vec())? {
            Reply::Each(answers) => Ok(answers),
            _ => Err(wrong_shape(CallKind::DeleteMany, &keys.join(" "))),
        }
    }
}

/// The first call where the replay and the trace part ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The call's position, from 1.
    pub position: usize,
    /// The trace's call there (none: the replay made more calls).
    pub recorded: Option<Call>,
    /// The replay's call there (none: the replay made fewer calls).
    pub replayed: Option<Call>,
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The operation replayed.
    pub operation: Operation,
    /// The calls the replay made.
    pub calls: Vec<Call>,
    /// What the replay came to.
    pub outcome: Outcome,
    /// The first differing call, if any.
    pub first_difference: Option<Difference>,
    /// Whether the result equals the trace's (for a `trap`, its kind).
    pub result_matches: bool,
    /// The trace's format version: the replay ran as that version's build did, and its
    /// result is shown in that version's shape.
    pub version: u64,
}

/// Re-runs `trace`'s operation against the trace's answers alone, render blobs sealed
/// and opened under `keyring`, and compares.
pub fn replay(trace: &Trace, keyring: &Keyring) -> Report {
    // The rule the operation ran under is the trace's, as its keys are: a blob refused
    // as plaintext then is refused again.
    let (outcome, calls) = match keyring.clone().require(trace.encryption_required) {
        Ok(keyring) => record_as(
            ReplayBucket::new(&trace.calls),
            &trace.operation,
            trace.version,
            &keyring,
        ),
        // As the operation itself answers such a keyring: before any call.
        Err(e) => (Err(Failure::Error(e)), Vec::new()),
    };
    let n = trace.calls.len().max(calls.len());
    let first_difference = (0..n).find_map(|i| {
        let (recorded, again) = (trace.calls.get(i), calls.get(i));
        (recorded != again).then(|| Difference {
            position: i + 1,
            recorded: recorded.cloned(),
            replayed: again.cloned(),
        })
    });
    let result_matches = match (&trace.result.error_kind, &outcome) {
        // A trap's message is the host's own: only the kind counts.
        (Some(kind), Err(Failure::Trap(_))) => kind == "trap",
        (Some(kind), _) if kind == "trap" => false,
        _ => trace.result.json == shape::outcome_json_as(&outcome, trace.version),
    };
    Report {
        operation: trace.operation.clone(),
        calls,
        outcome,
        first_difference,
        result_matches,
        version: trace.version,
    }
}

/// Reads `text` as a trace and replays it under `keyring`, which must hold the keys
/// the trace was recorded with, in the same order (its header's `keyIds`): the same
/// blobs are sealed only under the same first key, and a trace of a plaintext store
/// replays without one. Whether encryption is required is the trace's
/// (`encryptionRequired`), not the caller's.
pub fn replay_text(text: &str, keyring: &Keyring) -> Result<Report, TraceError> {
    let trace = parse_trace(text)?;
    let given = keyring.ids();
    if given != trace.key_ids {
        let quote = |ids: &[String]| {
            ids.iter()
                .map(|id| format!("{id:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let message = match (trace.key_ids.is_empty(), given.is_empty()) {
            (true, _) => format!(
                "the trace was recorded on a store without encryption; replay it without \
                 a keyring (one with keys {} was given)",
                quote(&given)
            ),
            (false, true) => format!(
                "the trace was recorded on a store encrypted with the keyring of keys {}; \
                 replay needs that keyring, and none was given",
                quote(&trace.key_ids)
            ),
            (false, false) => format!(
                "the trace was recorded with the keyring of keys {}; replay needs that \
                 keyring, in that order, and was given keys {}",
                quote(&trace.key_ids),
                quote(&given)
            ),
        };
        return Err(TraceError { line: 1, message });
    }
    Ok(replay(&trace, keyring))
}

impl Report {
    /// Every call and the result match the trace.
    pub fn matches(&self) -> bool {
        self.first_difference.is_none() && self.result_matches
    }

    /// The report as JSON (compact, keys sorted): `operation`, `matches`,
    /// `firstDifference` (null, or `position`, `recorded` and `replayed`: call lines of
    /// TRACES.md or null), `resultMatches`, `calls` (how many the replay made) and
    /// `result` (the replayed result, `{"ok":…}` or `{"error":…}`).
    pub fn to_json(&self) -> String {
        let mut b = Builder::new();
        let difference = match &self.first_difference {
            None => b.null(),
            Some(d) => {
                let position = b.uint(d.position as u64);
                let recorded = match &d.recorded {
                    Some(c) => shape::call(&mut b, c),
                    None => b.null(),
                };
                let replayed = match &d.replayed {
                    Some(c) => shape::call(&mut b, c),
                    None => b.null(),
                };
                b.object(vec![
                    ("position", position),
                    ("recorded", recorded),
                    ("replayed", replayed),
                ])
            }
        };
        let operation = b.string(self.operation.name());
        let matches = b.bool(self.matches());
        let result_matches = b.bool(self.result_matches);
        let calls = b.uint(self.calls.len() as u64);
        let result = shape::outcome_as(&mut b, &self.outcome, self.version);
        let root = b.object(vec![
            ("operation", operation),
            ("matches", matches),
            ("firstDifference", difference),
            ("resultMatches", result_matches),
            ("calls", calls),
            ("result", result),
        ]);
        text(&b.finish(root), root, false)
    }

    /// The report for people, as `render-store replay` prints it: one line naming the
    /// operation, release and number of calls, the replayed result as indented JSON,
    /// the first differing call (both versions) and the verdict; every line ends in a
    /// newline, and control characters from the trace are written out (see
    /// [`escape_for_terminal`]).
    pub fn to_text(&self) -> String {
        let release = self.operation.release();
        let mut out = format!(
            "replayed {} of {}: {} bucket calls\n",
            self.operation.name(),
            escape_for_terminal(&format!("{}/{}", release.namespace, release.name)),
            self.calls.len()
        );
        let mut b = Builder::new();
        let result = shape::outcome_as(&mut b, &self.outcome, self.version);
        let result = text(&b.finish(result), result, true);
        let lines: Vec<String> = result.lines().map(escape_for_terminal).collect();
        out.push_str(&format!("result: {}\n", lines.join("\n")));
        if let Some(d) = &self.first_difference {
            let line = |c: &Option<Call>| match c {
                Some(c) => escape_for_terminal(&shape::call_json(c)),
                None => "(no call)".to_string(),
            };
            out.push_str(&format!("call {} differs from the trace:\n", d.position));
            out.push_str(&format!("  trace:  {}\n", line(&d.recorded)));
            out.push_str(&format!("  replay: {}\n", line(&d.replayed)));
        }
        if !self.result_matches {
            out.push_str("the result differs from the trace's\n");
        }
        if self.matches() {
            out.push_str("every call and the result match the trace\n");
        }
        out
    }
}

/// `text` with every control character written out, as the Rust CLI writes text from
/// stores and files to a terminal: `\n`, `\r` and `\t` as those two characters, other
/// C0 controls, DEL, C1 controls and Unicode bidirectional controls as `\u{…}`. A
/// newline from a trace cannot forge a report line, nor an escape sequence drive the
/// terminal of whoever reads the report.
pub fn escape_for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                ) =>
            {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}
