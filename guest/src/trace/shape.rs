//! The JSON shapes of TRACES.md, in one place: a trace's header arguments, call lines
//! and result, which are also what a replay report and a host's `--json` show. Keys are
//! written sorted and strings with the minimal escapes, the form the Rust host wrote
//! with serde_json before traces moved here.

use super::call::{Call, CallKind, Reply};
use super::operation::{Failure, Operation, Outcome, Output};
use crate::bucket::{BucketError, ObjectMeta};
use crate::error::Error;
use crate::json::{Builder, Document, Escape, encode_node};
use crate::keys::Release;
use crate::time::SyncTime;
use base64::Engine as _;

/// Standard base64 with padding, as every byte string of a trace is written.
pub(crate) fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The JSON text of node `index` of `doc`: compact, or indented by two spaces.
pub(crate) fn text(doc: &Document<'_>, index: u32, pretty: bool) -> String {
    let mut out = Vec::new();
    encode_node(doc, index, &mut out, pretty, Escape::Minimal);
    String::from_utf8(out).expect("the encoder writes UTF-8")
}

fn time<'a>(b: &mut Builder<'a>, t: SyncTime) -> u32 {
    let seconds = b.int(t.seconds);
    let nanoseconds = b.uint(t.nanoseconds.into());
    b.object(vec![("seconds", seconds), ("nanoseconds", nanoseconds)])
}

fn release<'a>(b: &mut Builder<'a>, r: &'a Release) -> u32 {
    let namespace = b.string(r.namespace.as_str());
    let name = b.string(r.name.as_str());
    b.object(vec![("namespace", namespace), ("name", name)])
}

/// A header's `arguments`.
pub(crate) fn arguments<'a>(b: &mut Builder<'a>, op: &'a Operation) -> u32 {
    let mut members = vec![("release", release(b, op.release()))];
    match op {
        Operation::PutRender { objects, .. } => {
            let objects = b.strings(objects.iter().map(|o| base64(o)));
            members.push(("objects", objects));
        }
        Operation::GetRender { render_ref, .. } | Operation::HasHistoryRef { render_ref, .. } => {
            members.push(("renderRef", b.string(render_ref.as_str())));
        }
        Operation::RecordHistory { entry, .. } => {
            let render_ref = b.string(entry.render_ref.as_str());
            let synced_at = time(b, entry.synced_at);
            let summary = b.string(entry.summary.as_str());
            let entry = b.object(vec![
                ("renderRef", render_ref),
                ("syncedAt", synced_at),
                ("summary", summary),
            ]);
            members.push(("entry", entry));
        }
        Operation::Gc {
            keep,
            protected,
            dry_run,
            grace,
            ..
        } => {
            members.push(("keep", b.int(*keep)));
            members.push(("protected", b.strings(protected.iter().map(String::as_str))));
            members.push(("dryRun", b.bool(*dry_run)));
            members.push(("now", time(b, grace.now)));
            members.push(("graceSeconds", b.uint(grace.seconds)));
        }
        Operation::ListHistory { .. } | Operation::DeleteRelease { .. } => {}
    }
    b.object(members)
}

fn listing<'a>(b: &mut Builder<'a>, objects: &'a [ObjectMeta]) -> u32 {
    let items = objects
        .iter()
        .map(|o| {
            let key = b.string(o.key.as_str());
            let size = b.uint(o.size);
            let modified = time(b, o.modified.into());
            b.object(vec![("key", key), ("size", size), ("modified", modified)])
        })
        .collect();
    b.array(items)
}

/// A bucket error as an answer's `error` holds it.
fn bucket_error<'a>(b: &mut Builder<'a>, e: &'a BucketError) -> u32 {
    let (kind, message) = match e {
        BucketError::NotFound => ("not-found", None),
        BucketError::Denied(m) => ("denied", Some(m)),
        BucketError::Failed(m) => ("failed", Some(m)),
    };
    let mut error = vec![("kind", b.string(kind))];
    if let Some(m) = message {
        error.push(("message", b.string(m.as_str())));
    }
    b.object(error)
}

/// `{"ok": …}` or `{"error": …}` for one key of a `delete-many`.
fn each<'a>(b: &mut Builder<'a>, answer: &'a Result<(), BucketError>) -> u32 {
    match answer {
        Ok(()) => {
            let ok = b.null();
            b.object(vec![("ok", ok)])
        }
        Err(e) => {
            let error = bucket_error(b, e);
            b.object(vec![("error", error)])
        }
    }
}

/// A call line: `keys` for a `delete-many`, `key` for every other call.
pub(crate) fn call<'a>(b: &mut Builder<'a>, c: &'a Call) -> u32 {
    let mut members = vec![("call", b.string(c.kind.name()))];
    if c.kind == CallKind::DeleteMany {
        members.push(("keys", b.strings(c.keys.iter().map(String::as_str))));
    } else {
        members.push(("key", b.string(c.key.as_str())));
    }
    if let Some(value) = &c.value {
        members.push(("value", b.string(base64(value))));
    }
    let answer = match &c.answer {
        Ok(reply) => {
            let ok = match reply {
                Reply::Bytes(bytes) => b.string(base64(bytes)),
                Reply::Done | Reply::Size(None) => b.null(),
                Reply::Size(Some(size)) => b.uint(*size),
                Reply::Listing(objects) => listing(b, objects),
                Reply::Each(answers) => {
                    let items = answers.iter().map(|a| each(b, a)).collect();
                    b.array(items)
                }
            };
            b.object(vec![("ok", ok)])
        }
        Err(e) => {
            let error = bucket_error(b, e);
            b.object(vec![("error", error)])
        }
    };
    members.push(("answer", answer));
    b.object(members)
}

/// An entry's trust as a trace writes it: `{"authenticated":ID}` or
/// `{"unauthenticated":WHY}`; nothing for an entry read without a keyring, so a
/// plaintext store's traces read as before.
fn trust<'a>(b: &mut Builder<'a>, trust: &'a crate::history::EntryTrust) -> Option<u32> {
    use crate::history::EntryTrust;
    let (name, text) = match trust {
        EntryTrust::Unchecked => return None,
        EntryTrust::Authenticated(id) => ("authenticated", id),
        EntryTrust::Unauthenticated(why) => ("unauthenticated", why),
    };
    let text = b.string(text.as_str());
    Some(b.object(vec![(name, text)]))
}

/// The `ok` value of an output, as trace `version` writes it.
fn output<'a>(b: &mut Builder<'a>, o: &'a Output, version: u64) -> u32 {
    let (name, value) = match o {
        Output::RenderRef(r) => ("renderRef", b.string(r.as_str())),
        Output::Render(bytes) => ("render", b.string(base64(bytes))),
        Output::Recorded(yes) => ("recorded", b.bool(*yes)),
        Output::Added(yes) => ("added", b.bool(*yes)),
        Output::Deleted(n) => ("deleted", b.uint((*n).into())),
        Output::Entries(entries) => {
            let items = entries
                .iter()
                .map(|e| {
                    let key = b.string(e.key.as_str());
                    let render_ref = b.string(e.render_ref.as_str());
                    let synced_at = time(b, e.synced_at);
                    let summary = b.string(e.summary.as_str());
                    let mut members = vec![
                        ("key", key),
                        ("renderRef", render_ref),
                        ("syncedAt", synced_at),
                        ("summary", summary),
                    ];
                    if let Some(trust) = trust(b, &e.trust) {
                        members.push(("trust", trust));
                    }
                    b.object(members)
                })
                .collect();
            ("entries", b.array(items))
        }
        Output::Plan(plan) => {
            let mut lists = vec![
                ("deleteHistory", &plan.delete_history),
                ("keepHistory", &plan.keep_history),
                ("deleteRenders", &plan.delete_renders),
                ("keepRenders", &plan.keep_renders),
                ("ignored", &plan.ignored),
                ("recentRenders", &plan.recent_renders),
            ];
            if version >= super::SKIPPING_GC {
                lists.push(("futureHistory", &plan.future_history));
                lists.push(("danglingHistory", &plan.dangling_history));
            }
            // Only where there are some: a plaintext store's plan reads as before.
            if version >= super::AUTHENTICATED_ENTRIES && !plan.unauthenticated_history.is_empty() {
                lists.push(("unauthenticatedHistory", &plan.unauthenticated_history));
            }
            let members = lists
                .into_iter()
                .map(|(name, keys)| (name, b.strings(keys.iter().map(String::as_str))))
                .collect();
            return b.object(members);
        }
    };
    b.object(vec![(name, value)])
}

/// The `error` value of a failure: the WIT `error` variant, or `trap`.
fn failure<'a>(b: &mut Builder<'a>, f: &'a Failure) -> u32 {
    let (kind, message) = match f {
        Failure::Error(Error::InvalidInput(m)) => ("invalid-input", m),
        Failure::Error(Error::InvalidObject(crate::error::ObjectError { index, message })) => {
            let members = vec![
                ("kind", b.string("invalid-object")),
                ("index", b.uint(*index as u64)),
                ("message", b.string(message.as_str())),
            ];
            return b.object(members);
        }
        Failure::Error(Error::InvalidYaml(e)) => {
            let members = vec![
                ("kind", b.string("invalid-yaml")),
                ("stage", b.string(e.stage.as_str())),
                ("document", b.uint(e.document as u64)),
                ("line", b.uint(e.line as u64)),
                ("column", b.uint(e.column as u64)),
                ("message", b.string(e.message.as_str())),
            ];
            return b.object(members);
        }
        Failure::Error(Error::NotFound(m)) => ("not-found", m),
        Failure::Error(Error::Corrupt(m)) => ("corrupt", m),
        Failure::Error(Error::Bucket(m)) => ("bucket", m),
        Failure::Error(Error::EncryptionKey(m)) => ("encryption-key", m),
        Failure::Trap(m) => ("trap", m),
    };
    let members = vec![
        ("kind", b.string(kind)),
        ("message", b.string(message.as_str())),
    ];
    b.object(members)
}

/// `{"ok": …}` or `{"error": …}`, as this build writes it.
pub(crate) fn outcome<'a>(b: &mut Builder<'a>, o: &'a Outcome) -> u32 {
    outcome_as(b, o, super::VERSION)
}

/// [`outcome`] as trace `version` wrote it: before version 4, a GC plan has no lists of
/// skipped entries (that build made none).
pub(crate) fn outcome_as<'a>(b: &mut Builder<'a>, o: &'a Outcome, version: u64) -> u32 {
    match o {
        Ok(out) => {
            let ok = output(b, out, version);
            b.object(vec![("ok", ok)])
        }
        Err(f) => {
            let error = failure(b, f);
            b.object(vec![("error", error)])
        }
    }
}

/// An outcome as a trace's result line and a replay report hold it, compact:
/// `{"ok": …}` with the operation's value (TRACES.md, Result) or `{"error": {"kind",
/// "message", and "index" for invalid-object}}`. The `ok` value is what a host's
/// `--json` prints for the operation.
pub fn outcome_json(o: &Outcome) -> String {
    outcome_json_as(o, super::VERSION)
}

/// [`outcome_json`] as trace `version` wrote it.
pub(crate) fn outcome_json_as(o: &Outcome, version: u64) -> String {
    let mut b = Builder::new();
    let root = outcome_as(&mut b, o, version);
    text(&b.finish(root), root, false)
}

/// A call line of a trace, compact, without its newline.
pub fn call_json(c: &Call) -> String {
    let mut b = Builder::new();
    let root = call(&mut b, c);
    text(&b.finish(root), root, false)
}
