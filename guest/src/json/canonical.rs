//! One object's canonical bytes in a single pass over its text, where the text already
//! says what the canonical encoding would: members sorted and unique, strings escaped as
//! Go escapes them, integers as Go prints them. Real renders are mostly written so
//! (`YAMLToJSON`, `kubectl`, an earlier canonicalization), and the decoder's tree (a
//! node, a vector and a key for every value, sorted again) was most of the time of
//! canonicalizing them.
//!
//! The pass copies what it can vouch for (escaping in string values the few characters
//! the encoder escapes and a text may have raw: `<`, `>`, `&`, U+2028, U+2029) and
//! re-encodes the rest through the decoder and encoder: the innermost object around
//! anything else (members out of order or repeated, a key with an escape or such a
//! character, a string with another escape than the encoder's or invalid UTF-8, a float,
//! a large integer, `-0`) is decoded and encoded on its own ([`decode_at`]), then the pass goes
//! on after it; so does deep nesting. Invalid JSON and a top level that is not an
//! object go to the decoder whole, which also words the error. So the bytes are always
//! `encode_document(decode_object(text))`.

use super::decode::{DecodeError, decode_at, decode_object};
use super::encode::{Escape, encode_document, encode_node};
use super::scan::{classified_string_run, escaped_string_run, is_short_escape};

/// Past this many open containers the decoder takes over from the innermost open
/// object, with the levels above it counted against its own limit.
const MAX_OPEN: usize = 1000;

/// Appends the canonical encoding of the JSON object `input` to `out`: the bytes of
/// [`encode_document`] of [`decode_object`], with the same errors.
pub fn encode_canonical(input: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    Canonicalizer::default().encode(input, out)
}

/// [`encode_canonical`] for many objects in a row: the pass's stack of open containers
/// is kept from one object to the next rather than allocated for each.
#[derive(Default)]
pub struct Canonicalizer {
    stack: Vec<Open>,
}

impl Canonicalizer {
    /// Appends the canonical encoding of the JSON object `input` to `out`, as
    /// [`encode_canonical`].
    pub fn encode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let start = out.len();
        if pass(input, out, &mut self.stack).is_some() {
            return Ok(());
        }
        out.truncate(start);
        let doc = decode_object(input)?;
        encode_document(&doc, out);
        Ok(())
    }
}

/// An open container.
struct Open {
    object: bool,
    /// Where it starts in the input and in the output.
    input_start: usize,
    output_start: usize,
    /// While a container inside it is open: the last member key of this object so far
    /// (start and end in the input). The innermost container's is in [`walk`]'s hands.
    key: Option<(usize, usize)>,
}

/// The pass: `None` when the decoder must take the whole text.
///
/// It writes nothing while the text reads as its own encoding: what it has vouched for
/// since `copied` is owed, and copied in one piece when something must be written
/// otherwise (an escape, a re-encoded object) or left out (whitespace), and at the end.
/// A compact canonical object is one copy, not one for each token.
///
/// Where it is in the text (`pos`, `copied`) and in the innermost container are local
/// variables, which the helpers take and return by value or inline: in WebAssembly a
/// field of a struct whose address a call may see is a bounds-checked memory access
/// each time it is read, and they are read for every token.
fn pass(input: &[u8], out: &mut Vec<u8>, stack: &mut Vec<Open>) -> Option<()> {
    stack.clear();
    let mut pos = whitespace_end(input, 0);
    if input.get(pos) != Some(&b'{') {
        return None;
    }
    let mut copied = pos;
    let mut after_value = false;
    while walk(input, out, stack, &mut pos, &mut copied, after_value).is_none() {
        pos = redo_innermost_object(input, out, stack, copied)?;
        copied = pos;
        if stack.is_empty() {
            break;
        }
        after_value = true;
    }
    out.extend_from_slice(&input[copied..pos]);
    (whitespace_end(input, pos) == input.len()).then_some(())
}

/// Reads values from `pos` (from after one, with `after_value`) until the top-level
/// object closes, or `None` where the innermost open object must be re-encoded.
///
/// One loop for the whole grammar, a member's key read right after its `,`: no state
/// is dispatched on between tokens.
#[inline(always)]
fn walk(
    input: &[u8],
    out: &mut Vec<u8>,
    stack: &mut Vec<Open>,
    pos: &mut usize,
    copied: &mut usize,
    mut after_value: bool,
) -> Option<()> {
    // The innermost container: whether it is an object, and its last key so far.
    let (mut object, mut previous) = stack.last().map_or((true, None), |o| (o.object, o.key));
    loop {
        if !after_value {
            match peek(input, out, pos, copied)? {
                b'"' => {
                    let (end, escape) = string(input, *pos)?;
                    if escape {
                        out.extend_from_slice(&input[*copied..*pos]);
                        push_escaped(&input[*pos + 1..end - 1], out);
                        *copied = end;
                    }
                    *pos = end;
                }
                open @ (b'{' | b'[') => {
                    let start = *pos;
                    // Where it starts in the output once what is owed before it is
                    // written.
                    let output_start = out.len() + (start - *copied);
                    let opens_object = open == b'{';
                    *pos += 1;
                    let close = if opens_object { b'}' } else { b']' };
                    if peek(input, out, pos, copied) == Some(close) {
                        *pos += 1;
                        // An empty top-level object is the whole value: what follows
                        // is the caller's to check, not a member of a container.
                        if stack.is_empty() {
                            return Some(());
                        }
                    } else {
                        if stack.len() >= MAX_OPEN {
                            return None;
                        }
                        if let Some(top) = stack.last_mut() {
                            top.key = previous;
                        }
                        stack.push(Open {
                            object: opens_object,
                            input_start: start,
                            output_start,
                            key: None,
                        });
                        object = opens_object;
                        previous = None;
                        if object {
                            previous = Some(key(input, out, pos, copied, None)?);
                        }
                        continue;
                    }
                }
                b't' => *pos = literal(input, *pos, b"true")?,
                b'f' => *pos = literal(input, *pos, b"false")?,
                b'n' => *pos = literal(input, *pos, b"null")?,
                b'-' | b'0'..=b'9' => *pos = integer(input, *pos)?,
                _ => return None,
            }
        }
        after_value = false;
        // A value is complete: close the containers that end after it, then go on to
        // the next member or element.
        loop {
            match peek(input, out, pos, copied)? {
                b',' => {
                    *pos += 1;
                    if object {
                        previous = Some(key(input, out, pos, copied, previous)?);
                    }
                    break;
                }
                b'}' if object => {}
                b']' if !object => {}
                _ => return None,
            }
            *pos += 1;
            stack.pop();
            match stack.last() {
                Some(top) => (object, previous) = (top.object, top.key),
                None => return Some(()),
            }
        }
    }
}

/// The byte at `pos`, after any whitespace there (left out of the output). Whitespace
/// is below `!` and no byte the grammar looks for is, so a compact text takes one
/// comparison.
#[inline(always)]
fn peek(input: &[u8], out: &mut Vec<u8>, pos: &mut usize, copied: &mut usize) -> Option<u8> {
    let b = *input.get(*pos)?;
    if b > b' ' {
        return Some(b);
    }
    *pos = skip_whitespace(input, out, *copied, *pos);
    *copied = *pos;
    input.get(*pos).copied()
}

/// Writes what is owed before the whitespace at `pos`; the offset after it.
#[inline(never)]
fn skip_whitespace(input: &[u8], out: &mut Vec<u8>, copied: usize, pos: usize) -> usize {
    out.extend_from_slice(&input[copied..pos]);
    whitespace_end(input, pos)
}

/// The offset of the first byte at or after `pos` that is not JSON whitespace.
fn whitespace_end(input: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\r' | b'\n') = input.get(pos) {
        pos += 1;
    }
    pos
}

/// The innermost open object decoded and encoded on its own, in place of what the pass
/// wrote or owes of it (what is owed before it is written): the offset after it, where
/// the pass goes on. `None` if it does not decode.
#[inline(never)]
fn redo_innermost_object(
    input: &[u8],
    out: &mut Vec<u8>,
    stack: &mut Vec<Open>,
    copied: usize,
) -> Option<usize> {
    let level = stack.iter().rposition(|open| open.object)?;
    let open = &stack[level];
    let (doc, end) = decode_at(input, open.input_start, level + 1).ok()?;
    if open.input_start >= copied {
        out.extend_from_slice(&input[copied..open.input_start]);
    } else {
        out.truncate(open.output_start);
    }
    encode_node(&doc, doc.root_index(), out, false, Escape::Go);
    stack.truncate(level);
    Some(end)
}

/// The offset after the literal `word` at `pos`, if it is there.
#[inline(always)]
fn literal(input: &[u8], pos: usize, word: &[u8]) -> Option<usize> {
    input[pos..].starts_with(word).then_some(pos + word.len())
}

/// The offset after the number at `pos` when it is an integer the encoder writes as it
/// stands: no fraction or exponent, no `-0`, at most 18 digits (so it is an `i64`). The
/// grammar alone is checked: what follows is judged by the next step.
#[inline(always)]
fn integer(input: &[u8], pos: usize) -> Option<usize> {
    let negative = input[pos] == b'-';
    let digits_start = pos + usize::from(negative);
    let mut end = digits_start;
    while input.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let digits = &input[digits_start..end];
    let canonical = match digits {
        [] => false,
        [b'0'] => !negative,
        [b'0', ..] => false,
        _ => digits.len() <= 18,
    };
    if !canonical || matches!(input.get(end), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some(end)
}

/// The string literal at `pos` when the encoder writes it back unchanged but for
/// characters it escapes that are written raw (`<`, `>`, `&`, U+2028, U+2029): the
/// offset after its closing quote, and whether there are such characters.
#[inline(always)]
fn string(input: &[u8], pos: usize) -> Option<(usize, bool)> {
    let mut i = pos + 1;
    let mut non_ascii = false;
    let mut special = false;
    loop {
        // The scan passes the short escapes; any other (`\u`, or one the encoder never
        // writes) ends its run and is judged here.
        let (end, kind) = escaped_string_run(input, i);
        non_ascii |= kind.non_ascii;
        special |= kind.special;
        match input.get(end)? {
            b'"' => {
                i = end;
                break;
            }
            b'\\' => i = canonical_escape(input, end)?,
            _ => return None,
        }
    }
    let raw = &input[pos + 1..i];
    if non_ascii && std::str::from_utf8(raw).is_err() {
        return None;
    }
    Some((i + 1, special && needs_escape(raw)))
}

/// The member key at `pos` and its `:`, when the key has no escape, needs none, and
/// sorts after the object's `previous` key: the key's start and end, `pos` after the
/// `:`.
#[inline(always)]
fn key(
    input: &[u8],
    out: &mut Vec<u8>,
    pos: &mut usize,
    copied: &mut usize,
    previous: Option<(usize, usize)>,
) -> Option<(usize, usize)> {
    if peek(input, out, pos, copied)? != b'"' {
        return None;
    }
    let start = *pos + 1;
    let (end, kind) = classified_string_run(input, start);
    if input.get(end) != Some(&b'"') {
        return None;
    }
    let key = &input[start..end];
    if kind.non_ascii && std::str::from_utf8(key).is_err() {
        return None;
    }
    if kind.special && needs_escape(key) {
        return None;
    }
    if let Some((a, b)) = previous
        && !sorts_after(key, &input[a..b])
    {
        return None;
    }
    *pos = end + 1;
    if peek(input, out, pos, copied)? != b':' {
        return None;
    }
    *pos += 1;
    Some((start, end))
}

/// Whether `key` sorts after `previous` by bytes (and is not equal to it). The keys of
/// an object mostly differ in their first byte: that is compared here, the rest by
/// [`sorts_after_from`] (not inlined, for the code of the pass to stay small).
#[inline(always)]
fn sorts_after(key: &[u8], previous: &[u8]) -> bool {
    match (key.first(), previous.first()) {
        (Some(a), Some(b)) if a != b => a > b,
        _ => sorts_after_from(key, previous),
    }
}

/// [`sorts_after`] in full: eight bytes at a time, the first differing byte found from
/// the lowest set bit of the words' difference (a byte swap to compare them as
/// big-endian numbers is a dozen instructions in WebAssembly), rather than by a call to
/// `memcmp`.
#[inline(never)]
fn sorts_after_from(key: &[u8], previous: &[u8]) -> bool {
    let common = key.len().min(previous.len());
    let mut i = 0;
    while i + 8 <= common {
        let a = u64::from_le_bytes(key[i..i + 8].try_into().expect("eight bytes"));
        let b = u64::from_le_bytes(previous[i..i + 8].try_into().expect("eight bytes"));
        if a != b {
            let at = i + (a ^ b).trailing_zeros() as usize / 8;
            return key[at] > previous[at];
        }
        i += 8;
    }
    while i < common {
        if key[i] != previous[i] {
            return key[i] > previous[i];
        }
        i += 1;
    }
    key.len() > previous.len()
}

/// The offset after the escape whose backslash is at `i`, when it is the escape the
/// encoder writes for the character it stands for.
fn canonical_escape(input: &[u8], i: usize) -> Option<usize> {
    match *input.get(i + 1)? {
        c if is_short_escape(c) => Some(i + 2),
        b'u' => {
            let ok = match input.get(i + 2..i + 6)? {
                b"003c" | b"003e" | b"0026" | b"2028" | b"2029" => true,
                // A control character without a short form, in lowercase hex.
                [b'0', b'0', high @ (b'0' | b'1'), low] => {
                    let low = match low {
                        b'0'..=b'9' => low - b'0',
                        b'a'..=b'f' => low - b'a' + 10,
                        _ => return None,
                    };
                    let unit = (high - b'0') << 4 | low;
                    !matches!(unit, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D)
                }
                _ => false,
            };
            ok.then_some(i + 6)
        }
        _ => None,
    }
}

/// Writes a string literal whose escapes are the encoder's own, escaping the characters
/// it has raw that the encoder escapes (`<`, `>`, `&`, U+2028, U+2029): what the
/// encoder writes for it. Its escapes are copied: they hold none of those bytes.
fn push_escaped(raw: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let (mut run, mut i) = (0, 0);
    while i < raw.len() {
        let (escape, len): (&[u8], usize) = match raw[i] {
            b'<' => (b"\\u003c", 1),
            b'>' => (b"\\u003e", 1),
            b'&' => (b"\\u0026", 1),
            0xE2 if raw.get(i + 1) == Some(&0x80) && raw.get(i + 2) == Some(&0xA8) => {
                (b"\\u2028", 3)
            }
            0xE2 if raw.get(i + 1) == Some(&0x80) && raw.get(i + 2) == Some(&0xA9) => {
                (b"\\u2029", 3)
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&raw[run..i]);
        out.extend_from_slice(escape);
        i += len;
        run = i;
    }
    out.extend_from_slice(&raw[run..]);
    out.push(b'"');
}

/// Whether raw string bytes (valid UTF-8) hold a character the encoder escapes beyond
/// what the run scanner stops at: `<`, `>`, `&`, U+2028 or U+2029.
fn needs_escape(raw: &[u8]) -> bool {
    raw.iter().enumerate().any(|(i, &b)| match b {
        b'<' | b'>' | b'&' => true,
        0xE2 => raw.get(i + 1) == Some(&0x80) && matches!(raw.get(i + 2), Some(0xA8 | 0xA9)),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::super::encode::encode_string;
    use super::*;

    fn general(input: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        encode_document(&decode_object(input)?, &mut out);
        Ok(out)
    }

    fn same(input: &str) {
        let mut out = b"prefix".to_vec();
        let ours = encode_canonical(input.as_bytes(), &mut out).map(|()| out[6..].to_vec());
        assert_eq!(ours, general(input.as_bytes()), "{input}");
    }

    #[test]
    fn canonical_text_is_copied_and_the_rest_re_encoded() {
        for input in [
            r#"{}"#,
            r#" { "a" : [ 1 , -2 , true , false , null , { } , [ ] ] } "#,
            r#"{"a":"x\"y\\z\n\r\t\b\f\u0001\u001f\u003c\u003e\u0026\u2028\u2029é"}"#,
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"c":1,"b":[{"y":1,"x":2}]},"b":0}"#,
            r#"{"a":[{"k":1.5},{"k":-0},{"k":1e2},{"k":0.10},{"k":123456789012345678901}]}"#,
            r#"{"a":[0,-1,9223372036854775807,-9223372036854775808,123456789012345678]}"#,
            r#"{"a":"\u00e9\/\u0041\u001F\u0008\ud83d\ude00\ud800"}"#,
            r#"{"a":"<&>","b":"\u2028 raw"}"#,
            "{\"a\":\"\u{2028}\u{2029}\u{2014}\"}",
            "{\"a\":\"\\n<\\u003c&\\\"\\u2028x\u{2029}>\\\\u003c\u{2014}\"}",
            "{\"a\":[\"<\",{\"b\":\"&\"},\"\\u0041<\"]}",
            r#"{"\u0061":1,"b":2}"#,
            r#"{"":1,"a":2}"#,
            r#"{"a":1,"":2}"#,
            r#"{"<":1}"#,
            r#"{"a":[[[{"b":{"d":1,"c":2}}]]]}"#,
        ] {
            same(input);
        }
    }

    #[test]
    fn escape_dense_strings_are_copied_as_the_encoder_writes_them() {
        // Runs of escapes with every offset from the string's start, so that they cross
        // the scanner's 16-byte blocks and an escape begins on a block's last byte; `\u`
        // escapes (the encoder's and others), escapes the encoder does not write, raw
        // characters it escapes, and the text cut short after a backslash.
        let escapes = [
            r#"\""#,
            r"\\",
            r"\n",
            r"\r",
            r"\t",
            r"\b",
            r"\f",
            r"\u001f",
            r"\u003c",
            r"\u2028",
            r"\u0041",
            r"\u00e9",
            r"\ud83d\ude00",
            r"\/",
            r"\x",
            r"\u12",
            "<",
            "\u{2028}",
            "é",
        ];
        for prefix in 0..34 {
            let text = "x".repeat(prefix);
            for escape in escapes {
                for run in [
                    escape.to_string(),
                    format!(r#"{escape}\"\\{escape}"#),
                    format!(r#"\n\"{escape}\\\\\\{escape}\t\""#),
                    format!(r#"{escape}{escape}{escape}{escape}{escape}{escape}{escape}{escape}"#),
                ] {
                    same(&format!(
                        r#"{{"a":"{text}{run}","b":["{run}{text}",{{"c":"{run}"}}]}}"#
                    ));
                    same(&format!(r#"{{"a":"{text}{run}{text}"}}"#));
                    // Ending inside the string: after the run, and after a lone backslash.
                    same(&format!(r#"{{"a":"{text}{run}"#));
                    same(&format!(r#"{{"a":"{text}{run}\"#));
                }
            }
        }
    }

    #[test]
    fn escape_dense_documents_in_string_values_match_the_general_path() {
        // What the grafana-dashboards render holds: an indented JSON document as a
        // string value.
        let mut doc = String::from("{\n");
        for i in 0..40 {
            doc.push_str(&format!(
                "{}\"k{i}\": [\n{}\"v\\\\{i}\",\n{}{{ }}\n{}],\n",
                " ".repeat(i % 13),
                " ".repeat(i % 7 + 4),
                " ".repeat(i % 5),
                " ".repeat(i % 3)
            ));
        }
        doc.push('}');
        let mut value = Vec::new();
        encode_string(&doc, &mut value);
        let value = String::from_utf8(value).unwrap();
        same(&format!(
            r#"{{"apiVersion":"v1","data":{{"d.json":{value}}},"kind":"ConfigMap"}}"#
        ));
        same(&format!(
            r#"{{"data":{{"a.json":{value},"b.json":{value}}}}}"#
        ));
    }

    #[test]
    fn keys_sort_as_their_bytes() {
        let keys: [&[u8]; 12] = [
            b"",
            b"a",
            b"ab",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefgi",
            b"abcdefgh\xff",
            b"app.kubernetes.io/component",
            b"app.kubernetes.io/instance",
            b"app.kubernetes.io/instance2",
            b"b",
            b"\xc3\xa9",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(sorts_after(a, b), a > b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn invalid_text_fails_as_the_decoder_fails() {
        for input in [
            &b""[..],
            b"[]",
            b"{",
            b"{\"a\":1} x",
            b"{\"a\":01}",
            b"{\"a\":-}",
            b"{\"a\":tru}",
            b"{\"a\":\"\x01\"}",
            b"{\"a\":\"\\x\"}",
            b"{\"b\":1,\"a\":[1,}",
            b"{\"a\":\"\xff\"}",
            b"{\"\xff\":1}",
            b"{\"a\":1,}",
            b"{\"a\" 1}",
            // Found by the fuzzer: text after an empty top-level object was read as
            // the rest of a container.
            b"{}}",
            b"{} }",
            b"{},\"a\":1}",
            b"{}]",
            b"{} {}",
            b"{\"a\":{}}}",
        ] {
            let mut out = Vec::new();
            let ours = encode_canonical(input, &mut out).map(|()| out);
            assert_eq!(ours, general(input), "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn one_canonicalizer_serves_objects_in_a_row() {
        // Whatever an object leaves on the stack (an error, a re-encoded object, deep
        // nesting), the next one is canonicalized as if alone.
        let deep = format!("{}{}", r#"{"a":["#.repeat(600), "]}".repeat(600));
        let inputs: [&[u8]; 8] = [
            br#"{"a":[{"b":[1,{"c":"#,
            br#"{"b":1,"a":{"y":[1],"x":2}}"#,
            deep.as_bytes(),
            br#"{"a":[1,2],"b":{"c":[]}}"#,
            b"{\"a\":\"\xff\"}",
            br#"{"k":{"z":1},"j":"<"}"#,
            b"[]",
            br#"{"a":{"b":{"c":{"d":1}}}}"#,
        ];
        let mut canonicalizer = Canonicalizer::default();
        for input in inputs.iter().chain(inputs.iter().rev()) {
            let mut out = b"x".to_vec();
            let ours = canonicalizer
                .encode(input, &mut out)
                .map(|()| out[1..].to_vec());
            assert_eq!(ours, general(input), "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn depth_counts_the_levels_above_a_re_encoded_object() {
        // 10,000 levels pass and 10,001 fail, whether or not an object deep inside is
        // re-encoded on its own (here the innermost, out of order).
        for (levels, inner) in [
            (10_000, "{}"),
            (10_001, "{}"),
            (10_000, r#"{"b":1,"a":2}"#),
            (10_001, r#"{"b":1,"a":2}"#),
        ] {
            let text = format!(
                "{}{inner}{}",
                r#"{"a":"#.repeat(levels - 1),
                "}".repeat(levels - 1)
            );
            let mut out = Vec::new();
            let ours = encode_canonical(text.as_bytes(), &mut out).map(|()| out);
            assert_eq!(ours, general(text.as_bytes()), "{levels} {inner}");
        }
    }
}
