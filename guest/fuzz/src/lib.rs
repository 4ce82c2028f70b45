//! Helpers shared by the fuzz targets: ways to look at the encoder's output that do not
//! go through the guest's own decoder.

use render_store_guest::json::{Document, encode_document, encode_document_pretty};

/// The compact (canonical) encoding of a document.
pub fn compact(doc: &Document<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_document(doc, &mut out);
    out
}

/// The `MarshalIndent(v, "", "  ")` encoding of a document.
pub fn pretty(doc: &Document<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_document_pretty(doc, &mut out);
    out
}

/// Calls `f(i, in_string)` for each byte of JSON text `json` written by the encoder,
/// telling whether the byte is part of a string literal (its quotes included).
fn each_byte(json: &[u8], mut f: impl FnMut(usize, bool)) {
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in json.iter().enumerate() {
        if in_string {
            f(i, true);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else {
            if b == b'"' {
                in_string = true;
            }
            f(i, in_string);
        }
    }
}

/// The one place where Go's canonical form is not a fixed point: a float negative zero
/// (`-0.0` in the input) is written as `-0`, and `-0` decodes as the integer 0, written
/// `0` (golden vectors `num_neg_zero_float` and `num_neg_zero_int`). This returns the
/// encoder's output with every number token `-0` made `0`: what a second
/// decode-and-encode must give. Works on compact and pretty output alike.
pub fn fix_negative_zero(json: &[u8]) -> Vec<u8> {
    let mut drop = vec![false; json.len()];
    each_byte(json, |i, in_string| {
        if !in_string
            && json[i] == b'-'
            && json.get(i + 1) == Some(&b'0')
            && !matches!(json.get(i + 2), Some(b'0'..=b'9' | b'.' | b'e' | b'E'))
        {
            drop[i] = true;
        }
    });
    json.iter()
        .zip(drop)
        .filter(|(_, d)| !d)
        .map(|(b, _)| *b)
        .collect()
}

/// Whether the encoder's output holds a `-0` number token.
pub fn has_negative_zero(json: &[u8]) -> bool {
    fix_negative_zero(json).len() != json.len()
}

/// `json` without the whitespace outside its strings: pretty output made compact.
pub fn strip_whitespace(json: &[u8]) -> Vec<u8> {
    let mut keep = vec![true; json.len()];
    each_byte(json, |i, in_string| {
        if !in_string && matches!(json[i], b' ' | b'\t' | b'\r' | b'\n') {
            keep[i] = false;
        }
    });
    json.iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(b, _)| *b)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_tokens_only() {
        let text = br#"{"-0":-0,"a":[-0,-0.5,-0e1,-01,"x\"-0"],"b":-0}"#;
        assert_eq!(
            fix_negative_zero(text),
            br#"{"-0":0,"a":[0,-0.5,-0e1,-01,"x\"-0"],"b":0}"#.to_vec()
        );
        assert!(!has_negative_zero(br#"{"a":"-0"}"#));
        assert!(has_negative_zero(b"{\n  \"a\": -0\n}"));
    }

    #[test]
    fn whitespace_outside_strings() {
        assert_eq!(
            strip_whitespace(b"{\n  \"a b\": [\n    1\n  ]\n}"),
            br#"{"a b":[1]}"#.to_vec()
        );
    }
}
