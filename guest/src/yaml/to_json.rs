//! The decoded value as JSON, as `sigs.k8s.io/yaml` makes it: keys turned into strings
//! (`convertToJSONableObject`), then Go's `json.Marshal` (YAML-RULES.md Y6-Y8, Y15).
//!
//! Two different YAML keys that become one JSON key (`1` and `"1"`) make Go's result
//! depend on its random map order; here the key written later in the document always
//! wins, which is one of Go's outcomes.

use super::decode::{Value, Values};
use super::error::Located;
use super::resolve::{Scalar, float_key};
use crate::json::{encode_string, push_float};

/// The compact JSON of the document's value; `None` for a null document (skipped).
/// A document that is not a mapping fails at the `object` stage, as Go's decoding into
/// `map[string]interface{}` does.
pub(crate) fn to_json(doc: &Values) -> Result<Option<Vec<u8>>, Located> {
    let root = &doc.values[doc.root as usize];
    let what = match root {
        Value::Mapping(_) => None,
        Value::Scalar(Scalar::Null) => return Ok(None),
        Value::Scalar(Scalar::Str(_) | Scalar::Binary(_)) => Some("string"),
        Value::Scalar(Scalar::Bool(_)) => Some("bool"),
        Value::Scalar(_) => Some("number"),
        Value::Sequence(_) => Some("array"),
    };
    if let Some(what) = what {
        // Go's json.Marshal fails on a bad key or an Inf anywhere before the type check.
        write(doc, &mut Vec::new())?;
        return Err(Located::object(
            doc.source[doc.root as usize],
            format!(
                "json: cannot unmarshal {what} into Go value of type map[string]interface {{}}"
            ),
        ));
    }
    let mut out = Vec::new();
    write(doc, &mut out)?;
    Ok(Some(out))
}

enum Frame {
    Sequence(Vec<u32>, usize),
    Mapping(Vec<(Vec<u8>, u32)>, usize),
}

fn write(doc: &Values, out: &mut Vec<u8>) -> Result<(), Located> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut next = Some(doc.root);
    loop {
        if let Some(id) = next.take() {
            match &doc.values[id as usize] {
                Value::Scalar(s) => scalar(doc, id, s, out)?,
                Value::Sequence(items) => {
                    out.push(b'[');
                    stack.push(Frame::Sequence(items.clone(), 0));
                }
                Value::Mapping(map) => {
                    let mut members = Vec::with_capacity(map.entries.len());
                    for &(key, value) in &map.entries {
                        members.push((json_key(doc, key)?, value));
                    }
                    // Sorted like json.Marshal; among equal JSON keys the stable sort
                    // keeps document order and the last one is kept.
                    members.sort_by(|a, b| a.0.cmp(&b.0));
                    let mut kept: Vec<(Vec<u8>, u32)> = Vec::with_capacity(members.len());
                    for member in members {
                        match kept.last_mut() {
                            Some(last) if last.0 == member.0 => *last = member,
                            _ => kept.push(member),
                        }
                    }
                    out.push(b'{');
                    stack.push(Frame::Mapping(kept, 0));
                }
            }
        }
        let Some(frame) = stack.last_mut() else {
            return Ok(());
        };
        match frame {
            Frame::Sequence(items, at) => {
                if *at == items.len() {
                    out.push(b']');
                    stack.pop();
                } else {
                    if *at > 0 {
                        out.push(b',');
                    }
                    next = Some(items[*at]);
                    *at += 1;
                }
            }
            Frame::Mapping(members, at) => {
                if *at == members.len() {
                    out.push(b'}');
                    stack.pop();
                } else {
                    if *at > 0 {
                        out.push(b',');
                    }
                    match std::str::from_utf8(&members[*at].0) {
                        Ok(key) => encode_string(key, out),
                        Err(_) => encode_binary(&members[*at].0, out),
                    }
                    out.push(b':');
                    next = Some(members[*at].1);
                    *at += 1;
                }
            }
        }
    }
}

fn scalar(doc: &Values, id: u32, s: &Scalar, out: &mut Vec<u8>) -> Result<(), Located> {
    match s {
        Scalar::Null => out.extend_from_slice(b"null"),
        Scalar::Bool(true) => out.extend_from_slice(b"true"),
        Scalar::Bool(false) => out.extend_from_slice(b"false"),
        Scalar::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Scalar::Uint(u) => out.extend_from_slice(u.to_string().as_bytes()),
        Scalar::Float(f) if !f.is_finite() => {
            let text = if f.is_nan() {
                "NaN"
            } else if *f > 0.0 {
                "+Inf"
            } else {
                "-Inf"
            };
            return Err(Located::yaml(
                doc.source[id as usize],
                format!("json: unsupported value: {text}"),
            ));
        }
        Scalar::Float(f) => push_float(out, *f),
        Scalar::Str(s) => encode_string(s, out),
        Scalar::Binary(bytes) => encode_binary(bytes, out),
    }
    Ok(())
}

/// sigs.k8s.io/yaml's key conversion: strings as they are, integers in decimal, floats
/// as float32 `%g`, booleans as `true`/`false`; null and uint64 keys are errors.
///
/// A key is bytes, as a Go string is: a `!!binary` key may hold bytes that are not
/// UTF-8, which json.Marshal sorts as they are and writes as `\ufffd` each.
fn json_key(doc: &Values, key: u32) -> Result<Vec<u8>, Located> {
    let Value::Scalar(s) = &doc.values[key as usize] else {
        unreachable!("keys are scalars")
    };
    let fail = |what: &str| {
        Located::yaml(
            doc.source[key as usize],
            format!("Unsupported map key of type: {what}"),
        )
    };
    Ok(match s {
        Scalar::Str(s) => s.clone().into_bytes(),
        Scalar::Binary(bytes) => bytes.clone(),
        Scalar::Int(i) => i.to_string().into_bytes(),
        Scalar::Float(f) => float_key(*f).into_bytes(),
        Scalar::Bool(b) => b.to_string().into_bytes(),
        Scalar::Null => return Err(fail("%!s(<nil>)")),
        Scalar::Uint(_) => return Err(fail("uint64")),
    })
}

/// Go's json string encoding of bytes that are not UTF-8: valid runs as usual, each
/// invalid byte as `\ufffd`.
fn encode_binary(mut bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    loop {
        let (valid, rest) = match std::str::from_utf8(bytes) {
            Ok(s) => (s, None),
            Err(e) => (
                std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid prefix"),
                Some(&bytes[e.valid_up_to() + 1..]),
            ),
        };
        let start = out.len();
        encode_string(valid, out);
        // Without the quotes encode_string put around the run.
        out.remove(start);
        out.pop();
        match rest {
            Some(rest) => {
                out.extend_from_slice(b"\\ufffd");
                bytes = rest;
            }
            None => break,
        }
    }
    out.push(b'"');
}
