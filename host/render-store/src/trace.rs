//! Traces (TRACES.md): one store operation, every bucket call the component made with
//! the answer it was given, and the result, as JSON lines. Recorded at the WIT boundary,
//! so a trace holds everything the component's decisions depended on.

use crate::bucket::ObjectMeta;
use crate::operation::{Operation, Output, error_json};
use crate::store::Grace;
use crate::store::RenderStore;
use crate::types::{NewEntry, Release, SyncTime};
use base64::Engine as _;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};

/// The `format` of a trace's header line.
pub const FORMAT: &str = "render-store-trace";
/// The version of the format this build writes and reads. Version 2: `exists` answers
/// a size or `null`, `list` answers objects with their size and modification time, and
/// `gc` records the `now` and grace period it ran with.
pub const VERSION: u64 = 2;

/// The five bucket calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
}

impl CallKind {
    /// The call's name in a trace.
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Get => "get",
            CallKind::Put => "put",
            CallKind::Exists => "exists",
            CallKind::List => "list",
            CallKind::Delete => "delete",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [
            CallKind::Get,
            CallKind::Put,
            CallKind::Exists,
            CallKind::List,
            CallKind::Delete,
        ]
        .into_iter()
        .find(|k| k.name() == name)
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
}

/// A failed answer to a bucket call: the WIT `bucket-error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// `not-found`.
    NotFound,
    /// `denied(message)`.
    Denied(String),
    /// `failed(message)`.
    Failed(String),
}

/// One bucket call of a trace and the answer the component was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedCall {
    /// Which call.
    pub kind: CallKind,
    /// The key, or the prefix of a `list`.
    pub key: String,
    /// The value of a `put`.
    pub value: Option<Vec<u8>>,
    /// What the component was given.
    pub answer: Result<Reply, CallError>,
}

/// The outcome of a traced operation: its result in the JSON of TRACES.md, or the
/// error's JSON (`kind`, `message`, and `index` for `invalid-object`).
pub type Outcome = Result<Value, Value>;

/// A whole trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The operation and its arguments.
    pub operation: Operation,
    /// The bucket calls, in order.
    pub calls: Vec<TracedCall>,
    /// What the operation returned.
    pub result: Outcome,
}

/// Where a store records the bucket calls of its operations (see
/// [`RenderStore::with_call_log`]).
#[derive(Debug, Default)]
pub struct CallLog(Mutex<Vec<TracedCall>>);

impl CallLog {
    /// Appends a call.
    pub fn push(&self, call: TracedCall) {
        self.0.lock().expect("not poisoned").push(call);
    }

    /// The calls recorded so far, emptying the log.
    pub fn take(&self) -> Vec<TracedCall> {
        std::mem::take(&mut *self.0.lock().expect("not poisoned"))
    }
}

/// Runs `operation` on `store` and records its trace. The operation's own result is
/// returned beside the trace, which holds it too.
pub async fn record(store: &RenderStore, operation: Operation) -> (crate::Result<Output>, Trace) {
    let log = Arc::new(CallLog::default());
    let output = operation.run(&store.with_call_log(log.clone())).await;
    let trace = Trace {
        result: outcome(&output),
        calls: log.take(),
        operation,
    };
    (output, trace)
}

/// An operation's result as a trace records it.
fn outcome(output: &crate::Result<Output>) -> Outcome {
    match output {
        Ok(o) => Ok(o.to_json()),
        Err(e) => Err(error_json(e)),
    }
}

/// Why a trace cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("trace line {line}: {message}")]
pub struct TraceError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn release_json(r: &Release) -> Value {
    json!({ "namespace": r.namespace, "name": r.name })
}

fn operation_arguments(op: &Operation) -> Value {
    let mut args = json!({ "release": release_json(op.release()) });
    let extra = match op {
        Operation::PutRender { objects, .. } => json!({
            "objects": objects.iter().map(|o| base64_encode(o)).collect::<Vec<_>>()
        }),
        Operation::GetRender { render_ref, .. } | Operation::HasHistoryRef { render_ref, .. } => {
            json!({ "renderRef": render_ref })
        }
        Operation::RecordHistory { entry, .. } => json!({ "entry": {
            "renderRef": entry.render_ref,
            "syncedAt": time_json(entry.synced_at),
            "summary": entry.summary,
        }}),
        Operation::Gc {
            keep,
            protected,
            dry_run,
            grace,
            ..
        } => json!({
            "keep": keep,
            "protected": protected,
            "dryRun": dry_run,
            "now": time_json(grace.now),
            "graceSeconds": grace.seconds,
        }),
        Operation::ListHistory { .. } | Operation::DeleteRelease { .. } => json!({}),
    };
    if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
        args.extend(extra);
    }
    args
}

fn time_json(t: SyncTime) -> Value {
    json!({ "seconds": t.seconds, "nanoseconds": t.nanoseconds })
}

/// A call's line, without the newline.
pub fn call_json(call: &TracedCall) -> Value {
    let mut line = json!({ "call": call.kind.name(), "key": call.key });
    if let Some(value) = &call.value {
        line["value"] = json!(base64_encode(value));
    }
    line["answer"] = match &call.answer {
        Ok(Reply::Bytes(b)) => json!({ "ok": base64_encode(b) }),
        Ok(Reply::Done) => json!({ "ok": null }),
        Ok(Reply::Size(size)) => json!({ "ok": size }),
        Ok(Reply::Listing(objects)) => json!({ "ok": objects.iter().map(|o| json!({
            "key": o.key,
            "size": o.size,
            "modified": time_json(o.modified),
        })).collect::<Vec<_>>() }),
        Err(CallError::NotFound) => json!({ "error": { "kind": "not-found" } }),
        Err(CallError::Denied(m)) => json!({ "error": { "kind": "denied", "message": m } }),
        Err(CallError::Failed(m)) => json!({ "error": { "kind": "failed", "message": m } }),
    };
    line
}

fn result_json(result: &Outcome) -> Value {
    match result {
        Ok(v) => json!({ "result": { "ok": v } }),
        Err(e) => json!({ "result": { "error": e } }),
    }
}

impl Trace {
    /// The trace as JSON lines, each ending in a newline.
    pub fn to_jsonl(&self) -> String {
        let header = json!({
            "format": FORMAT,
            "version": VERSION,
            "operation": self.operation.name(),
            "arguments": operation_arguments(&self.operation),
        });
        let mut out = String::new();
        let lines = std::iter::once(header)
            .chain(self.calls.iter().map(call_json))
            .chain(std::iter::once(result_json(&self.result)));
        for line in lines {
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }

    /// Reads a trace, checking every line against TRACES.md.
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                let at = Reader { line: i + 1 };
                let value = serde_json::from_str::<Value>(l)
                    .map_err(|e| at.error(format!("not JSON: {e}")))?;
                Ok((at, value))
            });
        let (at, header) = lines.next().ok_or(TraceError {
            line: 1,
            message: "the trace is empty".into(),
        })??;
        let operation = at.header(&header)?;
        let mut rest = lines.collect::<Result<Vec<_>, TraceError>>()?;
        let (at, last) = rest.pop().ok_or_else(|| {
            at.error("the trace ends after its header: the result line is missing".into())
        })?;
        let result = at.result(&last)?;
        let calls = rest
            .iter()
            .map(|(at, v)| at.call(v))
            .collect::<Result<_, _>>()?;
        Ok(Trace {
            operation,
            calls,
            result,
        })
    }
}

/// Reads the fields of one line, naming the line in every error.
struct Reader {
    line: usize,
}

impl Reader {
    fn error(&self, message: String) -> TraceError {
        TraceError {
            line: self.line,
            message,
        }
    }

    fn object<'v>(&self, v: &'v Value, what: &str) -> Result<&'v Map<String, Value>, TraceError> {
        v.as_object()
            .ok_or_else(|| self.error(format!("{what} must be a JSON object")))
    }

    fn field<'v>(&self, o: &'v Map<String, Value>, name: &str) -> Result<&'v Value, TraceError> {
        o.get(name)
            .ok_or_else(|| self.error(format!("field {name:?} is missing")))
    }

    fn str<'v>(&self, o: &'v Map<String, Value>, name: &str) -> Result<&'v str, TraceError> {
        self.field(o, name)?
            .as_str()
            .ok_or_else(|| self.error(format!("field {name:?} must be a string")))
    }

    fn bytes(&self, v: &Value, what: &str) -> Result<Vec<u8>, TraceError> {
        let text = v
            .as_str()
            .ok_or_else(|| self.error(format!("{what} must be a base64 string")))?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| self.error(format!("{what} is not standard base64: {e}")))
    }

    fn strings(&self, v: &Value, what: &str) -> Result<Vec<String>, TraceError> {
        v.as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect()
            })
            .ok_or_else(|| self.error(format!("{what} must be an array of strings")))
    }

    fn u64(&self, v: &Value, what: &str) -> Result<u64, TraceError> {
        v.as_u64()
            .ok_or_else(|| self.error(format!("{what} must be a 64-bit unsigned integer")))
    }

    fn time(&self, v: &Value, what: &str) -> Result<SyncTime, TraceError> {
        let at = self.object(v, what)?;
        Ok(SyncTime {
            seconds: self
                .field(at, "seconds")?
                .as_i64()
                .ok_or_else(|| self.error("\"seconds\" must be a 64-bit integer".into()))?,
            nanoseconds: self
                .field(at, "nanoseconds")?
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n < 1_000_000_000)
                .ok_or_else(|| {
                    self.error("\"nanoseconds\" must be an integer below 1000000000".into())
                })?,
        })
    }

    fn listing(&self, v: &Value) -> Result<Vec<ObjectMeta>, TraceError> {
        let items = v
            .as_array()
            .ok_or_else(|| self.error("a list's answer must be an array of objects".into()))?;
        items
            .iter()
            .map(|item| {
                let o = self.object(item, "an object of a listing")?;
                Ok(ObjectMeta {
                    key: self.str(o, "key")?.to_string(),
                    size: self.u64(self.field(o, "size")?, "\"size\"")?,
                    modified: self.time(self.field(o, "modified")?, "\"modified\"")?,
                })
            })
            .collect()
    }

    fn header(&self, v: &Value) -> Result<Operation, TraceError> {
        let o = self.object(v, "the header")?;
        if o.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(self.error(format!(
                "not a render-store trace: the first line must have \"format\":\"{FORMAT}\""
            )));
        }
        let version = o.get("version").and_then(Value::as_u64);
        if version != Some(VERSION) {
            return Err(self.error(format!(
                "trace version {} is not supported: this build reads version {VERSION}",
                o.get("version").unwrap_or(&Value::Null)
            )));
        }
        let args = self.object(self.field(o, "arguments")?, "\"arguments\"")?;
        let release = self.object(self.field(args, "release")?, "\"release\"")?;
        let release = Release::new(self.str(release, "namespace")?, self.str(release, "name")?);
        let render_ref = || self.str(args, "renderRef").map(str::to_string);
        Ok(match self.str(o, "operation")? {
            "put-render" => {
                let objects = self
                    .field(args, "objects")?
                    .as_array()
                    .ok_or_else(|| self.error("\"objects\" must be an array".into()))?
                    .iter()
                    .map(|v| self.bytes(v, "an object"))
                    .collect::<Result<_, _>>()?;
                Operation::PutRender { release, objects }
            }
            "get-render" => Operation::GetRender {
                release,
                render_ref: render_ref()?,
            },
            "has-history-ref" => Operation::HasHistoryRef {
                release,
                render_ref: render_ref()?,
            },
            "record-history" => {
                let entry = self.object(self.field(args, "entry")?, "\"entry\"")?;
                let synced_at = self.time(self.field(entry, "syncedAt")?, "\"syncedAt\"")?;
                Operation::RecordHistory {
                    release,
                    entry: NewEntry {
                        render_ref: self.str(entry, "renderRef")?.to_string(),
                        synced_at,
                        summary: self.str(entry, "summary")?.to_string(),
                    },
                }
            }
            "list-history" => Operation::ListHistory { release },
            "gc" => Operation::Gc {
                release,
                keep: self
                    .field(args, "keep")?
                    .as_i64()
                    .ok_or_else(|| self.error("\"keep\" must be an integer".into()))?,
                protected: self.strings(self.field(args, "protected")?, "\"protected\"")?,
                dry_run: self
                    .field(args, "dryRun")?
                    .as_bool()
                    .ok_or_else(|| self.error("\"dryRun\" must be true or false".into()))?,
                grace: Grace {
                    now: self.time(self.field(args, "now")?, "\"now\"")?,
                    seconds: self.u64(self.field(args, "graceSeconds")?, "\"graceSeconds\"")?,
                },
            },
            "delete-release" => Operation::DeleteRelease { release },
            other => {
                return Err(self.error(format!(
                    "unknown operation {other:?}: expected put-render, get-render, \
                     has-history-ref, record-history, list-history, gc or delete-release"
                )));
            }
        })
    }

    fn call(&self, v: &Value) -> Result<TracedCall, TraceError> {
        let o = self.object(v, "a call line")?;
        let name = self.str(o, "call")?;
        let kind = CallKind::parse(name).ok_or_else(|| {
            self.error(format!(
                "unknown call {name:?}: expected get, put, exists, list or delete"
            ))
        })?;
        let key = self.str(o, "key")?.to_string();
        let value = match (kind, o.get("value")) {
            (CallKind::Put, Some(v)) => Some(self.bytes(v, "the value")?),
            (CallKind::Put, None) => return Err(self.error("a put needs its \"value\"".into())),
            (_, Some(_)) => return Err(self.error(format!("a {name} has no \"value\""))),
            (_, None) => None,
        };
        let answer = self.object(self.field(o, "answer")?, "\"answer\"")?;
        let answer = match (answer.get("ok"), answer.get("error")) {
            (Some(ok), None) => Ok(match (kind, ok) {
                (CallKind::Get, v) => Reply::Bytes(self.bytes(v, "a get's answer")?),
                (CallKind::Put | CallKind::Delete, Value::Null) => Reply::Done,
                (CallKind::Exists, Value::Null) => Reply::Size(None),
                (CallKind::Exists, v @ Value::Number(_)) => {
                    Reply::Size(Some(self.u64(v, "an exists answer")?))
                }
                (CallKind::List, v) => Reply::Listing(self.listing(v)?),
                _ => {
                    return Err(self.error(format!(
                        "{ok} is not an answer to {name}: see TRACES.md for each call's answer"
                    )));
                }
            }),
            (None, Some(error)) => {
                let error = self.object(error, "\"error\"")?;
                let message = || self.str(error, "message").map(str::to_string);
                Err(match self.str(error, "kind")? {
                    "not-found" => CallError::NotFound,
                    "denied" => CallError::Denied(message()?),
                    "failed" => CallError::Failed(message()?),
                    other => {
                        return Err(self.error(format!(
                            "unknown bucket error {other:?}: expected not-found, denied or \
                             failed"
                        )));
                    }
                })
            }
            _ => {
                return Err(
                    self.error("\"answer\" must have exactly one of \"ok\" and \"error\"".into())
                );
            }
        };
        Ok(TracedCall {
            kind,
            key,
            value,
            answer,
        })
    }

    fn result(&self, v: &Value) -> Result<Outcome, TraceError> {
        let result = self
            .object(v, "the last line")?
            .get("result")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                self.error("the last line must be the result: {\"result\":{…}}".into())
            })?;
        match (result.get("ok"), result.get("error")) {
            (Some(ok), None) => Ok(Ok(ok.clone())),
            (None, Some(error)) => {
                self.str(self.object(error, "\"error\"")?, "kind")?;
                Ok(Err(error.clone()))
            }
            _ => Err(self.error("\"result\" must have exactly one of \"ok\" and \"error\"".into())),
        }
    }
}
