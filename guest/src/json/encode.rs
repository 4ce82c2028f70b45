//! The encoder: a [`Document`] to the bytes Go's `encoding/json` Encoder writes (HTML
//! escaping on, object keys sorted by their UTF-8 bytes, Go's number formatting), or,
//! for this crate's own data (traces, reports), with only the escapes JSON requires.

use super::decode::{Document, Node};
use std::borrow::Cow;

/// Which characters of a string are escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Go's encoder with HTML escaping: renders and entry bodies, whose bytes are
    /// hashed and must equal a Go controller's.
    Go,
    /// Only what JSON requires (`"`, `\` and C0 controls, with the short forms `\b`,
    /// `\f`, `\n`, `\r`, `\t`): the form serde_json, Python's
    /// `json.dumps(ensure_ascii=False)` and `JSON.stringify` write.
    Minimal,
}

/// Appends the compact Go encoding of the document's root to `out`.
///
/// Iterative, like the decoder: nesting depth costs heap, not stack.
pub fn encode_document(doc: &Document<'_>, out: &mut Vec<u8>) {
    encode(doc, doc.root, out, false, Escape::Go);
}

/// Appends the document as Go's `json.MarshalIndent(v, "", "  ")` writes it: one member
/// or element a line, two spaces an indent level, empty containers as `{}` and `[]`.
pub fn encode_document_pretty(doc: &Document<'_>, out: &mut Vec<u8>) {
    encode(doc, doc.root, out, true, Escape::Go);
}

/// Appends node `index` of `doc` and what it holds, compact or in the indented layout
/// of [`encode_document_pretty`], escaping strings as `escape` says.
pub fn encode_node(
    doc: &Document<'_>,
    index: u32,
    out: &mut Vec<u8>,
    pretty: bool,
    escape: Escape,
) {
    encode(doc, index, out, pretty, escape);
}

fn newline(out: &mut Vec<u8>, depth: usize) {
    out.push(b'\n');
    for _ in 0..depth {
        out.extend_from_slice(b"  ");
    }
}

fn encode(doc: &Document<'_>, root: u32, out: &mut Vec<u8>, pretty: bool, escape: Escape) {
    enum Work<'d, 'a> {
        Array(&'d [u32], usize),
        Object(&'d [(Cow<'a, str>, u32)], usize),
    }
    let string = match escape {
        Escape::Go => encode_string,
        Escape::Minimal => encode_string_minimal,
    };
    let mut stack: Vec<Work<'_, '_>> = Vec::new();
    let mut next = Some(doc.node(root));
    loop {
        if let Some(node) = next.take() {
            match node {
                Node::Null => out.extend_from_slice(b"null"),
                Node::Bool(true) => out.extend_from_slice(b"true"),
                Node::Bool(false) => out.extend_from_slice(b"false"),
                Node::Int(i) => push_int(out, *i),
                Node::Uint(u) => push_uint(out, *u),
                Node::Float(f) => push_float(out, *f),
                Node::Str(s) => string(s, out),
                // Nothing Go escapes, so nothing the minimal form escapes either.
                Node::PlainStr(s) => {
                    out.push(b'"');
                    out.extend_from_slice(s.as_bytes());
                    out.push(b'"');
                }
                Node::Array(items) if items.is_empty() => out.extend_from_slice(b"[]"),
                Node::Array(items) => {
                    out.push(b'[');
                    stack.push(Work::Array(items, 0));
                }
                Node::Object(members) if members.is_empty() => out.extend_from_slice(b"{}"),
                Node::Object(members) => {
                    out.push(b'{');
                    stack.push(Work::Object(members, 0));
                }
            }
        }
        let depth = stack.len();
        let Some(top) = stack.last_mut() else {
            return;
        };
        match top {
            Work::Array(items, pos) => {
                if let Some(&child) = items.get(*pos) {
                    if *pos > 0 {
                        out.push(b',');
                    }
                    if pretty {
                        newline(out, depth);
                    }
                    *pos += 1;
                    next = Some(doc.node(child));
                } else {
                    if pretty {
                        newline(out, depth - 1);
                    }
                    out.push(b']');
                    stack.pop();
                }
            }
            Work::Object(members, pos) => {
                if let Some((key, child)) = members.get(*pos) {
                    let child = *child;
                    if *pos > 0 {
                        out.push(b',');
                    }
                    if pretty {
                        newline(out, depth);
                    }
                    *pos += 1;
                    string(key, out);
                    out.extend_from_slice(if pretty { b": " } else { b":" });
                    next = Some(doc.node(child));
                } else {
                    if pretty {
                        newline(out, depth - 1);
                    }
                    out.push(b'}');
                    stack.pop();
                }
            }
        }
    }
}

/// Bytes below 0x80 that Go writes as they are with HTML escaping on.
const fn ascii_safe_table() -> [bool; 128] {
    let mut table = [false; 128];
    let mut b = 0x20;
    while b < 128 {
        table[b] = !matches!(b as u8, b'"' | b'\\' | b'<' | b'>' | b'&');
        b += 1;
    }
    table
}

const ASCII_SAFE: [bool; 128] = ascii_safe_table();

/// Appends `s` as a Go JSON string literal with HTML escaping: `<`, `>`, `&`, U+2028,
/// U+2029 and control characters escaped, everything else raw UTF-8.
pub fn encode_string(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        i = super::scan::plain_run(bytes, i);
        let Some(&b) = bytes.get(i) else {
            break;
        };
        if b < 0x80 {
            if ASCII_SAFE[b as usize] {
                i += 1;
                continue;
            }
            out.extend_from_slice(&bytes[run..i]);
            push_ascii_escape(b, out);
            i += 1;
            run = i;
        } else if b == 0xE2 && bytes[i + 1] == 0x80 && (bytes[i + 2] & 0xFE) == 0xA8 {
            // U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR.
            out.extend_from_slice(&bytes[run..i]);
            out.extend_from_slice(if bytes[i + 2] == 0xA8 {
                b"\\u2028"
            } else {
                b"\\u2029"
            });
            i += 3;
            run = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Appends the escape of an ASCII byte both encoders escape: the short form JSON has for
/// it, else `\u00xx`.
#[inline]
fn push_ascii_escape(b: u8, out: &mut Vec<u8>) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => {
            let mut escape = *b"\\u0000";
            hex::encode_to_slice([b], &mut escape[4..]).expect("two digits, two bytes");
            out.extend_from_slice(&escape);
        }
    }
}

/// Appends `s` as a JSON string literal with only the escapes JSON requires
/// ([`Escape::Minimal`]).
pub fn encode_string_minimal(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        push_ascii_escape(b, out);
        run = i + 1;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// `s` quoted as a JSON string with only the escapes JSON requires: how the bucket
/// messages of wit/render-store.wit quote a key (serde_json's `to_string`,
/// `JSON.stringify`), which differs from Rust's `{:?}` on DEL, C1 controls and more.
pub fn quote(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    encode_string_minimal(s, &mut out);
    String::from_utf8(out).expect("escaping valid UTF-8 keeps it valid")
}

pub(crate) fn push_int(out: &mut Vec<u8>, value: i64) {
    if value < 0 {
        out.push(b'-');
    }
    push_uint(out, value.unsigned_abs());
}

pub(crate) fn push_uint(out: &mut Vec<u8>, value: u64) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut magnitude = value;
    loop {
        pos -= 1;
        buf[pos] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[pos..]);
}

/// Go's float64 formatting in `encoding/json`: the shortest digits that round-trip,
/// plain decimal for `1e-6 <= |x| < 1e21`, otherwise `d[.ddd]e±N` with the exponent
/// sign always written and no leading zeros.
pub(crate) fn push_float(out: &mut Vec<u8>, value: f64) {
    use std::io::Write;
    let magnitude = value.abs();
    if magnitude == 0.0 || (1e-6..1e21).contains(&magnitude) {
        // Rust's Display is the shortest round-trip form, never with an exponent, and
        // writes `1.0` as `1` and `-0.0` as `-0`, as Go does.
        write!(out, "{value}").expect("writing to a Vec cannot fail");
    } else {
        let start = out.len();
        write!(out, "{value:e}").expect("writing to a Vec cannot fail");
        let e = start
            + out[start..]
                .iter()
                .position(|&b| b == b'e')
                .expect("exponent form");
        if out.get(e + 1) != Some(&b'-') {
            out.insert(e + 1, b'+');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(f: f64) -> String {
        let mut out = Vec::new();
        push_float(&mut out, f);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_follow_go() {
        assert_eq!(float(1.0), "1");
        assert_eq!(float(-0.0), "-0");
        assert_eq!(float(1e20), "100000000000000000000");
        assert_eq!(float(1e21), "1e+21");
        assert_eq!(float(1e-7), "1e-7");
        assert_eq!(float(1.5e-7), "1.5e-7");
        assert_eq!(float(0.000001), "0.000001");
        assert_eq!(float(5e-324), "5e-324");
        assert_eq!(float(9223372036854775808.0), "9223372036854776000");
        assert_eq!(float(-1.7976931348623157e308), "-1.7976931348623157e+308");
    }

    #[test]
    fn pretty_is_go_s_marshal_indent() {
        let doc = crate::json::decode_object(br#"{"b":[1,{}],"a":{"x":[]},"c":"<"}"#).unwrap();
        let mut out = Vec::new();
        encode_document_pretty(&doc, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\n  \"a\": {\n    \"x\": []\n  },\n  \"b\": [\n    1,\n    {}\n  ],\n  \"c\": \"\\u003c\"\n}"
        );
    }

    #[test]
    fn ints() {
        for i in [0, 7, -7, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            push_int(&mut out, i);
            assert_eq!(String::from_utf8(out).unwrap(), i.to_string());
        }
    }

    #[test]
    fn strings_escape_like_go() {
        let mut out = Vec::new();
        encode_string(
            "<a&b>\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}/é\u{2028}\u{2029}\u{FFFD}",
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"\\u003ca\\u0026b\\u003e\\\"\\\\\\n\\r\\t\\b\\f\\u0001\u{7f}/é\\u2028\\u2029\u{FFFD}\""
        );
    }

    #[test]
    fn quote_is_json_not_rust_debug() {
        // The cases where Rust's `{:?}` and JSON part ways: DEL, C1, U+2028 stay as
        // they are; C0 controls take `\u00xx` or a short form.
        let text = "k\u{7f}\u{85}\u{2028}\u{1}\n\"\\";
        assert_eq!(quote(text), "\"k\u{7f}\u{85}\u{2028}\\u0001\\n\\\"\\\\\"");
        assert_ne!(quote(text), format!("{text:?}"));
    }
}
