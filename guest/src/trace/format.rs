//! The trace text (TRACES.md, Format): JSON lines written from a recorded call and read
//! back with every line checked, naming the line of anything wrong.

use super::call::{Answer, Call, CallKind, Reply};
use super::operation::{Operation, Outcome};
use super::shape::{self, text};
use super::{FORMAT, OLDEST_VERSION, VERSION};
use crate::bucket::{BucketError, ObjectMeta};
use crate::gc::Grace;
use crate::history::NewEntry;
use crate::json::{Builder, Document, Node, decode_value, quote};
use crate::keys::Release;
use crate::time::SyncTime;
use base64::Engine as _;
use std::fmt;

/// A trace as read: the operation, the calls, and the recorded result as JSON. The
/// result stays JSON, not typed: a replay compares it with its own as JSON, and a trace
/// may be edited by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// The format version it was written in: [`VERSION`], or an older one still read.
    pub version: u64,
    /// The operation and its arguments.
    pub operation: Operation,
    /// The ids of the keyring the operation ran with, in ring order (the header's
    /// `keyIds`; empty on a plaintext store). Never a key.
    pub key_ids: Vec<String>,
    /// Whether the operation ran with encryption required (the header's
    /// `encryptionRequired`; only a trace with `keyIds` can have it): a replay runs
    /// under the same rule, so a refused plaintext blob is refused again.
    pub encryption_required: bool,
    /// The bucket calls, in order.
    pub calls: Vec<Call>,
    /// The result line's `result`.
    pub result: RecordedResult,
}

/// A trace's recorded result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedResult {
    /// `{"ok": …}` or `{"error": …}`, compact, keys sorted (as [`super::outcome_json`]
    /// writes an outcome).
    pub json: String,
    /// The error's `kind`, when the result is an error.
    pub error_kind: Option<String>,
}

/// Why a trace cannot be read: the WIT's `trace-error`.
pub use crate::wit::trace::TraceError;

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TraceError {}

/// The trace of `operation`: its header, one line per call and the result line, each
/// ending in a newline. `key_ids` and `encryption_required` are the keyring the
/// operation ran with: its ids, and whether it required every blob to be sealed.
pub fn write_trace(
    operation: &Operation,
    key_ids: &[String],
    encryption_required: bool,
    calls: &[Call],
    outcome: &Outcome,
) -> String {
    let mut out = String::new();
    let mut line = |doc: Document<'_>, root: u32| {
        out.push_str(&text(&doc, root, false));
        out.push('\n');
    };
    let mut b = Builder::new();
    let format = b.string(FORMAT);
    let version = b.uint(VERSION);
    let name = b.string(operation.name());
    let arguments = shape::arguments(&mut b, operation);
    let mut fields = vec![
        ("format", format),
        ("version", version),
        ("operation", name),
        ("arguments", arguments),
    ];
    // Only an encrypted store's traces say which keys they need: a plaintext store's
    // trace is the bytes it always was.
    if !key_ids.is_empty() {
        let ids = key_ids.iter().map(|id| b.string(id)).collect();
        fields.push(("keyIds", b.array(ids)));
    }
    // Only when set, for the same reason: every other trace keeps its bytes.
    if encryption_required {
        fields.push(("encryptionRequired", b.bool(true)));
    }
    let header = b.object(fields);
    line(b.finish(header), header);
    for c in calls {
        let mut b = Builder::new();
        let root = shape::call(&mut b, c);
        line(b.finish(root), root);
    }
    let mut b = Builder::new();
    let result = shape::outcome(&mut b, outcome);
    let root = b.object(vec![("result", result)]);
    line(b.finish(root), root);
    out
}

/// Reads a trace, checking every line against TRACES.md. Blank lines are skipped and a
/// `\r` before a newline is ignored.
pub fn parse_trace(text: &str) -> Result<Trace, TraceError> {
    let lines: Vec<(u32, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (u32::try_from(i + 1).unwrap_or(u32::MAX), l))
        .collect();
    let Some((first, rest)) = lines.split_first() else {
        return Err(TraceError {
            line: 1,
            message: "the trace is empty".into(),
        });
    };
    let header = parse(first)?;
    let (version, operation) = header.header()?;
    let key_ids = header.key_ids()?;
    let encryption_required = header.encryption_required(&key_ids)?;
    // Every line is JSON before any call is judged, as the Rust host read them.
    let mut rest = rest.iter().map(parse).collect::<Result<Vec<_>, _>>()?;
    let last = rest.pop().ok_or_else(|| {
        header.error("the trace ends after its header: the result line is missing".into())
    })?;
    let result = last.result()?;
    let calls = rest.iter().map(Line::call).collect::<Result<_, _>>()?;
    Ok(Trace {
        version,
        operation,
        key_ids,
        encryption_required,
        calls,
        result,
    })
}

fn parse<'a>(&(line, l): &(u32, &'a str)) -> Result<Line<'a>, TraceError> {
    decode_value(l.as_bytes())
        .map(|doc| Line { line, doc })
        .map_err(|e| TraceError {
            line,
            message: format!("not JSON: {e}"),
        })
}

/// One line, decoded; its readers name the line in every error.
struct Line<'a> {
    line: u32,
    doc: Document<'a>,
}

impl<'a> Line<'a> {
    fn error(&self, message: String) -> TraceError {
        TraceError {
            line: self.line,
            message,
        }
    }

    fn node(&self, index: u32) -> &Node<'a> {
        self.doc.node(index)
    }

    /// The compact JSON of a node, as an error message quotes it.
    fn quote(&self, index: u32) -> String {
        text(&self.doc, index, false)
    }

    fn object(&self, index: u32, what: &str) -> Result<u32, TraceError> {
        match self.node(index) {
            Node::Object(_) => Ok(index),
            _ => Err(self.error(format!("{what} must be a JSON object"))),
        }
    }

    fn get(&self, object: u32, name: &str) -> Option<u32> {
        self.doc.member(self.node(object), name)
    }

    fn field(&self, object: u32, name: &str) -> Result<u32, TraceError> {
        self.get(object, name)
            .ok_or_else(|| self.error(format!("field {} is missing", quote(name))))
    }

    fn str(&self, object: u32, name: &str) -> Result<&str, TraceError> {
        let v = self.field(object, name)?;
        self.node(v)
            .as_str()
            .ok_or_else(|| self.error(format!("field {} must be a string", quote(name))))
    }

    fn as_i64(&self, index: u32) -> Option<i64> {
        match self.node(index) {
            Node::Int(i) => Some(*i),
            _ => None,
        }
    }

    fn as_u64(&self, index: u32) -> Option<u64> {
        match self.node(index) {
            Node::Int(i) => u64::try_from(*i).ok(),
            Node::Uint(u) => Some(*u),
            _ => None,
        }
    }

    fn u64(&self, index: u32, what: &str) -> Result<u64, TraceError> {
        self.as_u64(index)
            .ok_or_else(|| self.error(format!("{what} must be a 64-bit unsigned integer")))
    }

    fn bytes(&self, index: u32, what: &str) -> Result<Vec<u8>, TraceError> {
        let text = self
            .node(index)
            .as_str()
            .ok_or_else(|| self.error(format!("{what} must be a base64 string")))?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| self.error(format!("{what} is not standard base64: {e}")))
    }

    fn strings(&self, index: u32, what: &str) -> Result<Vec<String>, TraceError> {
        let wrong = || self.error(format!("{what} must be an array of strings"));
        let Node::Array(items) = self.node(index) else {
            return Err(wrong());
        };
        items
            .iter()
            .map(|&i| self.node(i).as_str().map(str::to_string).ok_or_else(wrong))
            .collect()
    }

    fn time(&self, index: u32, what: &str) -> Result<SyncTime, TraceError> {
        let at = self.object(index, what)?;
        let seconds = self
            .as_i64(self.field(at, "seconds")?)
            .ok_or_else(|| self.error("\"seconds\" must be a 64-bit integer".into()))?;
        let nanoseconds = self
            .as_u64(self.field(at, "nanoseconds")?)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n < 1_000_000_000)
            .ok_or_else(|| {
                self.error("\"nanoseconds\" must be an integer below 1000000000".into())
            })?;
        Ok(SyncTime {
            seconds,
            nanoseconds,
        })
    }

    fn listing(&self, index: u32) -> Result<Vec<ObjectMeta>, TraceError> {
        let Node::Array(items) = self.node(index) else {
            return Err(self.error("a list's answer must be an array of objects".into()));
        };
        items
            .iter()
            .map(|&item| {
                let o = self.object(item, "an object of a listing")?;
                Ok(ObjectMeta {
                    key: self.str(o, "key")?.to_string(),
                    size: self.u64(self.field(o, "size")?, "\"size\"")?,
                    modified: self
                        .time(self.field(o, "modified")?, "\"modified\"")?
                        .into(),
                })
            })
            .collect()
    }

    fn key_ids(&self) -> Result<Vec<String>, TraceError> {
        let o = self.object(self.doc.root_index(), "the header")?;
        match self.get(o, "keyIds") {
            None => Ok(Vec::new()),
            Some(ids) => self.strings(ids, "\"keyIds\""),
        }
    }

    fn encryption_required(&self, key_ids: &[String]) -> Result<bool, TraceError> {
        let o = self.object(self.doc.root_index(), "the header")?;
        let required = match self.get(o, "encryptionRequired") {
            None => false,
            Some(v) => match self.node(v) {
                Node::Bool(b) => *b,
                _ => {
                    return Err(self.error("\"encryptionRequired\" must be true or false".into()));
                }
            },
        };
        if required && key_ids.is_empty() {
            return Err(self.error(
                "\"encryptionRequired\" is true but the header has no \"keyIds\": encryption \
                 is required only with a keyring"
                    .into(),
            ));
        }
        Ok(required)
    }

    fn header(&self) -> Result<(u64, Operation), TraceError> {
        let o = self.object(self.doc.root_index(), "the header")?;
        if self.get(o, "format").and_then(|f| self.node(f).as_str()) != Some(FORMAT) {
            return Err(self.error(format!(
                "not a render-store trace: the first line must have \"format\":\"{FORMAT}\""
            )));
        }
        let version_at = self.get(o, "version");
        let Some(version) = version_at
            .and_then(|v| self.as_u64(v))
            .filter(|v| (OLDEST_VERSION..=VERSION).contains(v))
        else {
            let shown = version_at.map_or_else(|| "null".to_string(), |v| self.quote(v));
            return Err(self.error(format!(
                "trace version {shown} is not supported: this build reads versions \
                 {OLDEST_VERSION} to {VERSION}"
            )));
        };
        let args = self.object(self.field(o, "arguments")?, "\"arguments\"")?;
        let release = self.object(self.field(args, "release")?, "\"release\"")?;
        let release = Release::new(self.str(release, "namespace")?, self.str(release, "name")?);
        let render_ref = || self.str(args, "renderRef").map(str::to_string);
        let operation = match self.str(o, "operation")? {
            "put-render" => {
                let Node::Array(items) = self.node(self.field(args, "objects")?) else {
                    return Err(self.error("\"objects\" must be an array".into()));
                };
                let objects = items
                    .iter()
                    .map(|&v| self.bytes(v, "an object"))
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
                    .as_i64(self.field(args, "keep")?)
                    .ok_or_else(|| self.error("\"keep\" must be an integer".into()))?,
                protected: self.strings(self.field(args, "protected")?, "\"protected\"")?,
                dry_run: match self.node(self.field(args, "dryRun")?) {
                    Node::Bool(b) => *b,
                    _ => return Err(self.error("\"dryRun\" must be true or false".into())),
                },
                grace: Grace {
                    now: self.time(self.field(args, "now")?, "\"now\"")?,
                    seconds: self.u64(self.field(args, "graceSeconds")?, "\"graceSeconds\"")?,
                },
            },
            "delete-release" => Operation::DeleteRelease { release },
            other => {
                return Err(self.error(format!(
                    "unknown operation {}: expected put-render, get-render, \
                     has-history-ref, record-history, list-history, gc or delete-release",
                    quote(other)
                )));
            }
        };
        Ok((version, operation))
    }

    fn call(&self) -> Result<Call, TraceError> {
        let o = self.object(self.doc.root_index(), "a call line")?;
        let name = self.str(o, "call")?;
        let kind = CallKind::parse(name).ok_or_else(|| {
            self.error(format!(
                "unknown call {}: expected get, put, exists, list, delete or \
                 delete-many",
                quote(name)
            ))
        })?;
        let (key, keys) = match kind {
            CallKind::DeleteMany => {
                if self.get(o, "key").is_some() {
                    return Err(self.error("a delete-many has \"keys\", not \"key\"".into()));
                }
                let keys = self.strings(self.field(o, "keys")?, "\"keys\"")?;
                (String::new(), keys)
            }
            _ => (self.str(o, "key")?.to_string(), Vec::new()),
        };
        let value = match (kind, self.get(o, "value")) {
            (CallKind::Put, Some(v)) => Some(self.bytes(v, "the value")?),
            (CallKind::Put, None) => return Err(self.error("a put needs its \"value\"".into())),
            (_, Some(_)) => return Err(self.error(format!("a {name} has no \"value\""))),
            (_, None) => None,
        };
        let answer = self.answer(kind, self.field(o, "answer")?)?;
        if kind == CallKind::DeleteMany
            && let Ok(Reply::Each(answers)) = &answer
            && answers.len() != keys.len()
        {
            return Err(self.error(format!(
                "a delete-many of {} keys has {} answers: it needs one per key",
                keys.len(),
                answers.len()
            )));
        }
        Ok(Call {
            kind,
            key,
            keys,
            value,
            answer,
        })
    }

    fn answer(&self, kind: CallKind, index: u32) -> Result<Answer, TraceError> {
        let answer = self.object(index, "\"answer\"")?;
        match (self.get(answer, "ok"), self.get(answer, "error")) {
            (Some(ok), None) => Ok(Ok(match (kind, self.node(ok)) {
                (CallKind::Get, _) => Reply::Bytes(self.bytes(ok, "a get's answer")?),
                (CallKind::Put | CallKind::Delete, Node::Null) => Reply::Done,
                (CallKind::Exists, Node::Null) => Reply::Size(None),
                (CallKind::Exists, Node::Int(_) | Node::Uint(_) | Node::Float(_)) => {
                    Reply::Size(Some(self.u64(ok, "an exists answer")?))
                }
                (CallKind::List, _) => Reply::Listing(self.listing(ok)?),
                (CallKind::DeleteMany, Node::Array(items)) => Reply::Each(
                    items
                        .iter()
                        .map(|&item| Ok(self.answer(CallKind::Delete, item)?.map(|_| ())))
                        .collect::<Result<_, TraceError>>()?,
                ),
                _ => {
                    return Err(self.error(format!(
                        "{} is not an answer to {}: see TRACES.md for each call's answer",
                        self.quote(ok),
                        kind.name()
                    )));
                }
            })),
            (None, Some(error)) => {
                let error = self.object(error, "\"error\"")?;
                let message = || self.str(error, "message").map(str::to_string);
                Ok(Err(match self.str(error, "kind")? {
                    "not-found" => BucketError::NotFound,
                    "denied" => BucketError::Denied(message()?),
                    "failed" => BucketError::Failed(message()?),
                    other => {
                        return Err(self.error(format!(
                            "unknown bucket error {}: expected not-found, denied or \
                             failed",
                            quote(other)
                        )));
                    }
                }))
            }
            _ => Err(self.error("\"answer\" must have exactly one of \"ok\" and \"error\"".into())),
        }
    }

    fn result(&self) -> Result<RecordedResult, TraceError> {
        let result = self
            .get(
                self.object(self.doc.root_index(), "the last line")?,
                "result",
            )
            .filter(|&r| matches!(self.node(r), Node::Object(_)))
            .ok_or_else(|| {
                self.error("the last line must be the result: {\"result\":{…}}".into())
            })?;
        // Only the one member is kept, as the Rust host kept it.
        let (name, value, error_kind) = match (self.get(result, "ok"), self.get(result, "error")) {
            (Some(ok), None) => ("ok", ok, None),
            (None, Some(error)) => {
                let error = self.object(error, "\"error\"")?;
                ("error", error, Some(self.str(error, "kind")?.to_string()))
            }
            _ => {
                return Err(
                    self.error("\"result\" must have exactly one of \"ok\" and \"error\"".into())
                );
            }
        };
        Ok(RecordedResult {
            json: format!("{{\"{name}\":{}}}", self.quote(value)),
            error_kind,
        })
    }
}
