//! The JSON decoder and both encoders on arbitrary bytes.
//!
//! Invariants:
//! - decode never panics; when it succeeds, the root is an object and every member of
//!   it is found by `root_member`;
//! - compact = encode(decode(x)) is UTF-8 without a raw newline; it decodes, and
//!   re-encodes to itself (except Go's float `-0` → integer `0`, see
//!   `fix_negative_zero`), and equals canonical([x]) without its `\n`;
//! - pretty = encode_pretty(decode(x)) is UTF-8, decodes to what compact encodes, and
//!   without its whitespace outside strings is compact itself;
//! - the string encoder: any string, encoded and decoded back, is itself;
//! - differential, against serde_json (an independent parser): an object serde_json
//!   accepts is accepted with the same keys, strings and numbers; an object the guest
//!   accepts that is valid UTF-8, has no `\uD800`-`\uDFFF` escape and nests less than
//!   serde_json's limit is accepted by serde_json.

#![no_main]

use libfuzzer_sys::fuzz_target;
use render_store_fuzz::{compact, fix_negative_zero, pretty, strip_whitespace};
use render_store_guest::canonical;
use render_store_guest::json::{Document, Node, decode_object, encode_string};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    check_decode_encode(data);
    check_string_encoding(data);
    check_against_serde_json(data);
});

fn check_decode_encode(data: &[u8]) {
    let Ok(doc) = decode_object(data) else {
        assert!(canonical(&[data]).is_err());
        return;
    };
    let Node::Object(members) = doc.root() else {
        panic!("decode_object gave a non-object root");
    };
    for (key, child) in members {
        assert_eq!(
            doc.root_member(key),
            Some(doc.node(*child)),
            "root_member({key:?})"
        );
    }
    for pair in members.windows(2) {
        assert!(
            pair[0].0.as_bytes() < pair[1].0.as_bytes(),
            "members sorted and unique"
        );
    }

    let once = compact(&doc);
    let text = std::str::from_utf8(&once).expect("compact output is UTF-8");
    assert!(!once.contains(&b'\n'), "raw newline in {text:?}");
    let mut with_newline = once.clone();
    with_newline.push(b'\n');
    assert_eq!(canonical(&[data]).unwrap(), with_newline, "canonical([x])");

    let fixed = fix_negative_zero(&once);
    let doc2 = decode_object(&once).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    let twice = compact(&doc2);
    assert_eq!(
        String::from_utf8_lossy(&twice),
        String::from_utf8_lossy(&fixed),
        "encode(decode(encode(decode(x))))"
    );
    if fixed != once {
        let doc3 = decode_object(&twice).expect("second pass decodes");
        assert_eq!(compact(&doc3), twice, "second pass is a fixed point");
    }

    let indented = pretty(&doc);
    let pretty_text = std::str::from_utf8(&indented).expect("pretty output is UTF-8");
    assert_eq!(
        strip_whitespace(&indented),
        once,
        "pretty without whitespace: {pretty_text:?}"
    );
    let doc4 = decode_object(&indented).unwrap_or_else(|e| panic!("{pretty_text:?}: {e}"));
    assert_eq!(compact(&doc4), fixed, "compact(decode(pretty))");
    assert_eq!(
        pretty(&doc2),
        fix_negative_zero(&indented),
        "pretty of the second pass"
    );
}

fn check_string_encoding(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    let mut object = b"{\"k\":".to_vec();
    encode_string(&s, &mut object);
    object.push(b'}');
    let doc = decode_object(&object)
        .unwrap_or_else(|e| panic!("encoded string {:?}: {e}", String::from_utf8_lossy(&object)));
    assert_eq!(
        doc.root_member("k").and_then(Node::as_str),
        Some(&*s),
        "string round trip"
    );
    assert_eq!(compact(&doc), object, "an encoded string is canonical");
}

/// serde_json's default recursion limit.
const SERDE_DEPTH_LIMIT: usize = 128;

fn check_against_serde_json(data: &[u8]) {
    let ours = decode_object(data);
    match serde_json::from_slice::<Value>(data) {
        Ok(Value::Object(map)) => {
            let doc = ours
                .unwrap_or_else(|e| panic!("serde_json accepts an object the guest rejects: {e}"));
            same_object(&doc, doc.root(), &map);
        }
        Ok(_) => assert!(ours.is_err(), "a non-object top-level value was accepted"),
        Err(e) => {
            let Ok(doc) = ours else { return };
            if std::str::from_utf8(data).is_err()
                || has_surrogate_escape(data)
                || depth(&doc) >= SERDE_DEPTH_LIMIT
            {
                return;
            }
            panic!("the guest accepts an object serde_json rejects: {e}");
        }
    }
}

/// Whether `\u` followed by `d8`-`df` (any case) appears anywhere: a possibly lone
/// surrogate, which Go and the guest replace and serde_json rejects.
fn has_surrogate_escape(data: &[u8]) -> bool {
    data.windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}

/// Levels of nesting, the root object being 1.
fn depth(doc: &Document<'_>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(doc.root(), 1)];
    while let Some((node, level)) = stack.pop() {
        deepest = deepest.max(level);
        match node {
            Node::Array(items) => stack.extend(items.iter().map(|&i| (doc.node(i), level + 1))),
            Node::Object(members) => {
                stack.extend(members.iter().map(|(_, i)| (doc.node(*i), level + 1)))
            }
            _ => {}
        }
    }
    deepest
}

fn same_object(doc: &Document<'_>, node: &Node<'_>, map: &serde_json::Map<String, Value>) {
    let Node::Object(members) = node else {
        panic!("guest has {node:?} where serde_json has an object");
    };
    assert_eq!(members.len(), map.len(), "member count");
    // serde_json's Map is a BTreeMap: sorted by key bytes, the last duplicate kept.
    for ((key, child), (theirs, value)) in members.iter().zip(map) {
        assert_eq!(key.as_ref(), theirs.as_str(), "member key");
        same_value(doc, doc.node(*child), value);
    }
}

fn same_value(doc: &Document<'_>, node: &Node<'_>, value: &Value) {
    match (node, value) {
        (Node::Null, Value::Null) => {}
        (Node::Bool(a), Value::Bool(b)) => assert_eq!(a, b),
        (Node::Str(_) | Node::PlainStr(_), Value::String(s)) => {
            assert_eq!(node.as_str(), Some(s.as_str()), "string")
        }
        (Node::Int(i), Value::Number(n)) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(j), _, _) => assert_eq!(*i, j, "integer"),
            (None, Some(u), _) => panic!("guest integer {i}, serde_json {u}"),
            // serde_json reads `-0` as the float -0.0; Go and the guest as the integer 0.
            (None, None, Some(f)) => assert!(*i == 0 && f == 0.0, "guest {i}, serde_json {f}"),
            _ => unreachable!(),
        },
        (Node::Float(f), Value::Number(n)) => {
            let theirs = n.as_f64().expect("serde_json numbers are f64-convertible");
            assert_eq!(f.to_bits(), theirs.to_bits(), "float {f} vs serde_json {n}");
        }
        (Node::Array(items), Value::Array(values)) => {
            assert_eq!(items.len(), values.len(), "array length");
            for (&item, value) in items.iter().zip(values) {
                same_value(doc, doc.node(item), value);
            }
        }
        (Node::Object(_), Value::Object(map)) => same_object(doc, node, map),
        _ => panic!("guest has {node:?}, serde_json has {value}"),
    }
}
