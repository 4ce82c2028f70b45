//! The fast path's last step: a document the fast composer took, written straight as
//! JSON, in the form `sigs.k8s.io/yaml.YAMLToJSON` prints or in the canonical form of
//! CONTRACT.md §4. The general steps build Go values ([`super::decode`]), print JSON
//! ([`super::to_json`]) and decode that JSON again for the canonical encoder; on real
//! manifests those copies and allocations were most of the time left after the fast
//! composer, and what they compute is simple for the trees the fast composer makes (no
//! tags, no anchors or aliases).
//!
//! What is not simple is left to the general steps, which also word the errors: a merge
//! key, two keys that become one JSON key (Go's map rules and its map order decide
//! there), a zero float key (`0.0` and `-0.0` are one Go key), a null or uint64 key, an infinite or NaN value, a root that is neither a
//! mapping nor null. [`write`] then answers `None`, having written nothing that counts.

use super::fast::{Kind, NONE, Tree};
use super::resolve::{Resolved, float_key, resolve};
use crate::json::{encode_string, push_float, push_int, push_uint};
use std::borrow::Cow;

/// Which JSON an object is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// What `YAMLToJSON` prints: `yaml-objects`' answer.
    Objects,
    /// The canonical bytes (CONTRACT.md §4) of that object: the same text except where
    /// Go's JSON decoder reads `YAMLToJSON`'s numbers back differently (an integer above
    /// `i64::MAX` becomes a float, `-0` becomes `0`).
    Canonical,
}

/// What [`write`] did with a document.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Written {
    /// Its object was appended.
    Object,
    /// It is empty or `null`: not part of the render.
    Skipped,
}

/// Appends the JSON of the tree's document to `out` in `form`; `None` when the general
/// steps must decide it (`out` then holds a partial object the caller drops).
pub(crate) fn write(tree: &Tree<'_>, form: Form, out: &mut Vec<u8>) -> Option<Written> {
    enum Frame {
        /// The next item, or [`NONE`]; whether one was written.
        Sequence { next: u32, started: bool },
        /// This mapping's members are `members[start..]`; the next is `members[at]`.
        Mapping { start: usize, at: usize },
    }
    let Some(root) = tree.root else {
        return Some(Written::Skipped);
    };
    match &tree.nodes[root as usize].kind {
        Kind::Mapping { .. } => {}
        Kind::Scalar { value, plain: true } if resolve(value, true) == Resolved::Null => {
            return Some(Written::Skipped);
        }
        _ => return None,
    }
    // Every open mapping's members, sorted by JSON key, innermost last: one vector for
    // the whole document instead of one per mapping.
    let mut members: Vec<(Cow<'_, str>, u32)> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut next = Some(root);
    loop {
        if let Some(id) = next.take() {
            match &tree.nodes[id as usize].kind {
                Kind::Scalar { value, plain } => scalar(value, *plain, form, out)?,
                Kind::Sequence { first: NONE, .. } => out.extend_from_slice(b"[]"),
                Kind::Sequence { first, .. } => {
                    out.push(b'[');
                    stack.push(Frame::Sequence {
                        next: *first,
                        started: false,
                    });
                }
                Kind::Mapping { first: NONE, .. } => out.extend_from_slice(b"{}"),
                Kind::Mapping { first, .. } => {
                    let start = members.len();
                    let mut key = *first;
                    while key != NONE {
                        let value = tree.nodes[key as usize].next;
                        if value == NONE {
                            return None;
                        }
                        members.push((json_key(tree, key)?, value));
                        key = tree.nodes[value as usize].next;
                    }
                    let these = &mut members[start..];
                    // json.Marshal's order. Manifests mostly come sorted already; equal
                    // keys are left to the general steps.
                    if !these.is_sorted_by(|a, b| a.0.as_bytes() < b.0.as_bytes()) {
                        these.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                        if these.windows(2).any(|w| w[0].0 == w[1].0) {
                            return None;
                        }
                    }
                    out.push(b'{');
                    stack.push(Frame::Mapping { start, at: start });
                }
            }
        }
        let Some(top) = stack.last_mut() else {
            return Some(Written::Object);
        };
        match top {
            Frame::Sequence {
                next: item,
                started,
            } => {
                if *item == NONE {
                    out.push(b']');
                    stack.pop();
                } else {
                    if *started {
                        out.push(b',');
                    }
                    *started = true;
                    next = Some(*item);
                    *item = tree.nodes[*item as usize].next;
                }
            }
            // A mapping's members are the last ones while it is on top: those of the
            // mappings inside it are gone once they are written.
            Frame::Mapping { start, at } => {
                if *at == members.len() {
                    out.push(b'}');
                    members.truncate(*start);
                    stack.pop();
                } else {
                    if *at > *start {
                        out.push(b',');
                    }
                    let (key, value) = &members[*at];
                    encode_string(key, out);
                    out.push(b':');
                    next = Some(*value);
                    *at += 1;
                }
            }
        }
    }
}

/// A value scalar as `YAMLToJSON` writes it, or as the canonical encoding writes that.
fn scalar(value: &str, plain: bool, form: Form, out: &mut Vec<u8>) -> Option<()> {
    if !plain {
        encode_string(value, out);
        return Some(());
    }
    match resolve(value, true) {
        Resolved::Null => out.extend_from_slice(b"null"),
        Resolved::Bool(true) => out.extend_from_slice(b"true"),
        Resolved::Bool(false) => out.extend_from_slice(b"false"),
        Resolved::Int(i) => push_int(out, i),
        Resolved::Uint(u) => match form {
            Form::Objects => push_uint(out, u),
            // Past i64 the JSON decoder reads a float, rounded to nearest as `as` does.
            Form::Canonical => push_float(out, u as f64),
        },
        Resolved::Float(f) if !f.is_finite() => return None,
        // `-0` is an integer to the JSON decoder.
        Resolved::Float(f) if f == 0.0 && form == Form::Canonical => out.push(b'0'),
        Resolved::Float(f) => push_float(out, f),
        Resolved::Str | Resolved::Timestamp => encode_string(value, out),
    }
    Some(())
}

/// sigs.k8s.io/yaml's key conversion of a key scalar, borrowed where it is the text;
/// `None` for a merge key and for the keys Go refuses (null, uint64).
fn json_key<'t>(tree: &'t Tree<'_>, id: u32) -> Option<Cow<'t, str>> {
    let Kind::Scalar { value, plain } = &tree.nodes[id as usize].kind else {
        return None;
    };
    if !*plain {
        return Some(Cow::Borrowed(value));
    }
    if value == "<<" {
        return None;
    }
    Some(match resolve(value, true) {
        Resolved::Str | Resolved::Timestamp => Cow::Borrowed(value),
        Resolved::Int(i) => Cow::Owned(i.to_string()),
        Resolved::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
        // `0.0` and `-0.0` are one Go key with two JSON spellings: the general steps.
        Resolved::Float(0.0) => return None,
        Resolved::Float(f) => Cow::Owned(float_key(f)),
        Resolved::Null | Resolved::Uint(_) => return None,
    })
}
