//! The decoder: one JSON object's bytes to a [`Document`].
//!
//! The parser is iterative (an explicit stack, not recursion) and the document is an
//! arena of nodes, so 10,000 levels of nesting need neither a deep native stack nor a
//! deep wasm stack, and dropping a document never recurses.

use std::borrow::Cow;
use std::fmt;

/// Go's `encoding/json` rejects nesting deeper than this (the top-level object is 1).
pub const MAX_DEPTH: usize = 10_000;

/// One decoded JSON value. Containers hold indices of their children in the
/// [`Document`]'s arena.
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A literal without fraction or exponent that fits in an `i64`.
    Int(i64),
    /// A literal without fraction or exponent above `i64::MAX` that fits in a `u64`,
    /// kept exact: only [`decode_value`] makes these (Go's decoder would round them to
    /// a float, so renders never hold one).
    Uint(u64),
    /// Any other number, rounded to the nearest `f64`.
    Float(f64),
    /// A string, unescaped, with invalid UTF-8 replaced (one U+FFFD per bad byte).
    Str(Cow<'a, str>),
    /// A string taken from the input as it is, holding nothing Go's encoder escapes:
    /// it is written back with a plain copy.
    PlainStr(&'a str),
    /// An array: the indices of its elements, in order.
    Array(Vec<u32>),
    /// An object: its members sorted by key bytes, each key once with its last value
    /// (Go's decoder lets a later duplicate replace an earlier one).
    Object(Vec<(Cow<'a, str>, u32)>),
}

impl<'a> Node<'a> {
    /// The text of a string node.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            Node::PlainStr(s) => Some(s),
            _ => None,
        }
    }
}

/// A decoded JSON value: an arena of nodes and the index of the root.
#[derive(Debug, Clone, PartialEq)]
pub struct Document<'a> {
    pub(super) nodes: Vec<Node<'a>>,
    pub(super) root: u32,
}

impl<'a> Document<'a> {
    /// The root node (an object, for a document from [`decode_object`]).
    pub fn root(&self) -> &Node<'a> {
        self.node(self.root)
    }

    /// The index of the root node.
    pub fn root_index(&self) -> u32 {
        self.root
    }

    /// The node at `index`.
    pub fn node(&self, index: u32) -> &Node<'a> {
        &self.nodes[index as usize]
    }

    /// The value of member `key` of the root object (the last one, as Go keeps).
    pub fn root_member(&self, key: &str) -> Option<&Node<'a>> {
        self.member(self.root(), key).map(|i| self.node(i))
    }

    /// Puts `node` at `index` in place of what was there: the forms made for people
    /// mask Secret values this way. What a replaced container held stays in the arena,
    /// unreachable.
    pub(crate) fn replace(&mut self, index: u32, node: Node<'a>) {
        self.nodes[index as usize] = node;
    }

    /// The index of member `key` of `object` (the last one, as Go keeps); `None` when
    /// `object` is not an object or has no such member.
    pub fn member(&self, object: &Node<'a>, key: &str) -> Option<u32> {
        match object {
            Node::Object(members) => members
                .binary_search_by(|(k, _)| k.as_bytes().cmp(key.as_bytes()))
                .ok()
                .map(|i| members[i].1),
            _ => None,
        }
    }
}

/// Why bytes are not a JSON object Go's decoder accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset in the input where the problem was found.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for DecodeError {}

/// Decodes exactly one JSON object, as Kubernetes decodes an unstructured object:
/// whitespace (space, tab, CR, LF) may surround it, nothing else may follow it.
pub fn decode_object(input: &[u8]) -> Result<Document<'_>, DecodeError> {
    let doc = decode(input, false, "empty input: expected a JSON object")?;
    let kind = match doc.root() {
        Node::Object(_) => None,
        Node::Null => Some("null"),
        Node::Bool(_) => Some("a boolean"),
        Node::Int(_) | Node::Uint(_) | Node::Float(_) => Some("a number"),
        Node::Str(_) | Node::PlainStr(_) => Some("a string"),
        Node::Array(_) => Some("an array"),
    };
    if let Some(kind) = kind {
        return Err(DecodeError {
            offset: 0,
            message: format!("top-level value is {kind}, not an object"),
        });
    }
    Ok(doc)
}

/// Where each JSON object of a stream of them begins and ends: objects one after another,
/// each starting on a line of its own (white space around them, and a line break
/// between one object's end and the next one's start): what a render's canonical bytes
/// are, one object a line, and what `jq -c` writes. An empty stream has none. The error
/// gives the position of the value that failed in the stream (from 0) and what was
/// wrong, as [`decode_object`] says it; two objects on one line are not a stream
/// (`{"a":1}{"b":2}` is one object with trailing data, as Go reads it).
pub fn split_objects(input: &[u8]) -> Result<Vec<std::ops::Range<usize>>, (usize, DecodeError)> {
    let mut found: Vec<std::ops::Range<usize>> = Vec::new();
    let mut pos = 0;
    loop {
        let mut parser = Parser {
            input,
            pos,
            nodes: Vec::new(),
            exact_unsigned: false,
            max_depth: MAX_DEPTH,
        };
        parser.skip_whitespace();
        if parser.pos == input.len() {
            return Ok(found);
        }
        let start = parser.pos;
        let index = found.len();
        if let Some(previous) = found.last()
            && !input[previous.end..start].contains(&b'\n')
        {
            return Err((
                index - 1,
                DecodeError {
                    offset: start,
                    message: format!(
                        "invalid character {} after top-level value",
                        describe(input[start])
                    ),
                },
            ));
        }
        let is_object = input[start] == b'{';
        parser.parse_value().map_err(|e| (index, e))?;
        if !is_object {
            return Err((
                index,
                DecodeError {
                    offset: start,
                    message: "a value of the stream is not an object".to_string(),
                },
            ));
        }
        found.push(start..parser.pos);
        pos = parser.pos;
    }
}

/// Decodes exactly one JSON value of any kind, for data this crate reads itself (a
/// trace) rather than renders: integers from `i64::MAX + 1` to `u64::MAX` stay exact
/// ([`Node::Uint`]), since sizes and periods are `u64`. Otherwise as [`decode_object`].
pub fn decode_value(input: &[u8]) -> Result<Document<'_>, DecodeError> {
    decode(input, true, "empty input: expected a JSON value")
}

fn decode<'a>(
    input: &'a [u8],
    exact_unsigned: bool,
    empty: &str,
) -> Result<Document<'a>, DecodeError> {
    let mut parser = Parser {
        input,
        pos: 0,
        nodes: Vec::new(),
        exact_unsigned,
        max_depth: MAX_DEPTH,
    };
    parser.skip_whitespace();
    if parser.pos == input.len() {
        return Err(parser.error(empty));
    }
    let root = parser.parse_value()?;
    parser.skip_whitespace();
    if parser.pos != input.len() {
        return Err(parser.error(&format!(
            "invalid character {} after top-level value",
            describe(input[parser.pos])
        )));
    }
    Ok(Document {
        nodes: parser.nodes,
        root,
    })
}

/// Decodes the one value starting at `start`, as [`decode_object`] decodes it inside
/// a larger text where it is nested `depth` levels deep (the top-level value is at 1):
/// the depth limit counts those levels. Returns it and the offset right after it; what
/// follows is not looked at. For re-encoding one part of an object on its own.
pub(super) fn decode_at(
    input: &[u8],
    start: usize,
    depth: usize,
) -> Result<(Document<'_>, usize), DecodeError> {
    let mut parser = Parser {
        input,
        pos: start,
        nodes: Vec::new(),
        exact_unsigned: false,
        max_depth: MAX_DEPTH.saturating_sub(depth - 1),
    };
    let root = parser.parse_value()?;
    let end = parser.pos;
    Ok((
        Document {
            nodes: parser.nodes,
            root,
        },
        end,
    ))
}

/// A container being filled while its members are parsed.
enum Open<'a> {
    Array(Vec<u32>),
    Object(Vec<(Cow<'a, str>, u32)>, Cow<'a, str>),
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    nodes: Vec<Node<'a>>,
    /// Integers above `i64::MAX` that fit a `u64` become [`Node::Uint`], not floats.
    exact_unsigned: bool,
    /// [`MAX_DEPTH`], less the levels above the value when it is part of a larger one.
    max_depth: usize,
}

fn describe(byte: u8) -> String {
    match byte {
        b'\n' => "'\\n'".to_string(),
        b'\r' => "'\\r'".to_string(),
        b'\t' => "'\\t'".to_string(),
        0x20..=0x7e => format!("'{}'", byte as char),
        _ => format!("byte 0x{byte:02x}"),
    }
}

impl<'a> Parser<'a> {
    fn error(&self, message: &str) -> DecodeError {
        DecodeError {
            offset: self.pos,
            message: message.to_string(),
        }
    }

    fn unexpected(&self, context: &str) -> DecodeError {
        match self.input.get(self.pos) {
            None => self.error(&format!("unexpected end of input {context}")),
            Some(&b) => self.error(&format!("invalid character {} {context}", describe(b))),
        }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.input.get(self.pos) {
            self.pos += 1;
        }
    }

    fn push(&mut self, node: Node<'a>) -> u32 {
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    /// Parses `"key" :` (after whitespace) and returns the key.
    fn parse_member_key(&mut self) -> Result<Cow<'a, str>, DecodeError> {
        self.skip_whitespace();
        if self.input.get(self.pos) != Some(&b'"') {
            return Err(self.unexpected("looking for beginning of object key string"));
        }
        let key = self.parse_string()?;
        self.skip_whitespace();
        if self.input.get(self.pos) != Some(&b':') {
            return Err(self.unexpected("after object key"));
        }
        self.pos += 1;
        Ok(key)
    }

    /// Parses one value and everything nested in it; returns the root's index.
    fn parse_value(&mut self) -> Result<u32, DecodeError> {
        let mut stack: Vec<Open<'a>> = Vec::new();
        'value: loop {
            self.skip_whitespace();
            let mut done = match self.input.get(self.pos) {
                Some(b'{') | Some(b'[') => {
                    if stack.len() + 1 > self.max_depth {
                        return Err(self.error(&format!("nesting deeper than {MAX_DEPTH} levels")));
                    }
                    let is_object = self.input[self.pos] == b'{';
                    self.pos += 1;
                    self.skip_whitespace();
                    let close = if is_object { b'}' } else { b']' };
                    if self.input.get(self.pos) == Some(&close) {
                        self.pos += 1;
                        self.push(if is_object {
                            Node::Object(Vec::new())
                        } else {
                            Node::Array(Vec::new())
                        })
                    } else if is_object {
                        let key = self.parse_member_key()?;
                        stack.push(Open::Object(Vec::new(), key));
                        continue 'value;
                    } else {
                        stack.push(Open::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    let node = self.parse_string_value()?;
                    self.push(node)
                }
                Some(b't') => self.parse_literal("true", Node::Bool(true))?,
                Some(b'f') => self.parse_literal("false", Node::Bool(false))?,
                Some(b'n') => self.parse_literal("null", Node::Null)?,
                Some(b'-' | b'0'..=b'9') => {
                    let n = self.parse_number()?;
                    self.push(n)
                }
                _ => return Err(self.unexpected("looking for beginning of value")),
            };
            // A value is complete: hand it to the enclosing containers, closing each
            // one whose end follows.
            loop {
                let Some(open) = stack.last_mut() else {
                    return Ok(done);
                };
                self.skip_whitespace();
                let next = self.input.get(self.pos).copied();
                match open {
                    Open::Array(items) => {
                        items.push(done);
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => self.pos += 1,
                            _ => return Err(self.unexpected("after array element")),
                        }
                    }
                    Open::Object(members, key) => {
                        members.push((std::mem::take(key), done));
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                let key = self.parse_member_key()?;
                                if let Some(Open::Object(_, pending)) = stack.last_mut() {
                                    *pending = key;
                                }
                                continue 'value;
                            }
                            Some(b'}') => self.pos += 1,
                            _ => return Err(self.unexpected("after object key:value pair")),
                        }
                    }
                }
                let node = match stack.pop() {
                    Some(Open::Array(items)) => Node::Array(items),
                    Some(Open::Object(members, _)) => Node::Object(sorted_unique(members)),
                    None => unreachable!("the stack was not empty"),
                };
                done = self.push(node);
            }
        }
    }

    fn parse_literal(&mut self, word: &str, node: Node<'a>) -> Result<u32, DecodeError> {
        for &expected in word.as_bytes() {
            if self.input.get(self.pos) != Some(&expected) {
                return Err(self.unexpected(&format!("in literal {word}")));
            }
            self.pos += 1;
        }
        Ok(self.push(node))
    }

    fn skip_digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.input.get(self.pos) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn parse_number(&mut self) -> Result<Node<'a>, DecodeError> {
        let start = self.pos;
        if self.input[self.pos] == b'-' {
            self.pos += 1;
        }
        match self.input.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.skip_digits();
            }
            _ => return Err(self.unexpected("in numeric literal")),
        }
        let mut integer = true;
        if self.input.get(self.pos) == Some(&b'.') {
            integer = false;
            self.pos += 1;
            if self.skip_digits() == 0 {
                return Err(self.unexpected("after decimal point in numeric literal"));
            }
        }
        if let Some(b'e' | b'E') = self.input.get(self.pos) {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.input.get(self.pos) {
                self.pos += 1;
            }
            if self.skip_digits() == 0 {
                return Err(self.unexpected("in exponent of numeric literal"));
            }
        }
        // The grammar above admits only ASCII.
        let text = std::str::from_utf8(&self.input[start..self.pos]).expect("ASCII number");
        if integer && let Ok(i) = text.parse::<i64>() {
            return Ok(Node::Int(i));
        }
        if integer
            && self.exact_unsigned
            && let Ok(u) = text.parse::<u64>()
        {
            return Ok(Node::Uint(u));
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Node::Float(f)),
            _ => Err(DecodeError {
                offset: start,
                message: format!("number {text} is out of the range of a 64-bit float"),
            }),
        }
    }

    /// Parses a string value; one without escapes, invalid UTF-8 or characters the
    /// encoder escapes becomes a [`Node::PlainStr`].
    fn parse_string_value(&mut self) -> Result<Node<'a>, DecodeError> {
        let start = self.pos + 1;
        let (end, kind) = super::scan::classified_string_run(self.input, start);
        if self.input.get(end) == Some(&b'"') && !kind.special {
            let raw = &self.input[start..end];
            let text = if kind.non_ascii {
                std::str::from_utf8(raw).ok()
            } else {
                // SAFETY: the scan saw no byte >= 0x80, and ASCII is valid UTF-8.
                Some(unsafe { std::str::from_utf8_unchecked(raw) })
            };
            if let Some(text) = text {
                self.pos = end + 1;
                return Ok(Node::PlainStr(text));
            }
        }
        self.parse_string().map(Node::Str)
    }

    /// Parses a string literal starting at its opening quote.
    fn parse_string(&mut self) -> Result<Cow<'a, str>, DecodeError> {
        self.pos += 1;
        let start = self.pos;
        // Fast path: no escapes; borrow the bytes when they are valid UTF-8.
        self.pos = super::scan::string_run(self.input, start);
        match self.input.get(self.pos) {
            None => return Err(self.error("unexpected end of input in string literal")),
            Some(b'"') => {
                let raw = &self.input[start..self.pos];
                self.pos += 1;
                return Ok(match std::str::from_utf8(raw) {
                    Ok(s) => Cow::Borrowed(s),
                    Err(_) => {
                        let mut out = String::with_capacity(raw.len() + 8);
                        push_replacing_invalid(&mut out, raw);
                        Cow::Owned(out)
                    }
                });
            }
            Some(b'\\') => {}
            Some(&b) => {
                return Err(self.error(&format!(
                    "invalid character {} in string literal",
                    describe(b)
                )));
            }
        }
        let mut out = String::with_capacity(self.pos - start + 16);
        push_replacing_invalid(&mut out, &self.input[start..self.pos]);
        loop {
            let run = self.pos;
            self.pos = super::scan::string_run(self.input, run);
            push_replacing_invalid(&mut out, &self.input[run..self.pos]);
            match self.input.get(self.pos) {
                None => return Err(self.error("unexpected end of input in string literal")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => self.parse_escape(&mut out)?,
                Some(&b) => {
                    return Err(self.error(&format!(
                        "invalid character {} in string literal",
                        describe(b)
                    )));
                }
            }
        }
    }

    /// Parses an escape starting at its backslash and appends what it stands for.
    fn parse_escape(&mut self, out: &mut String) -> Result<(), DecodeError> {
        self.pos += 1;
        let Some(&c) = self.input.get(self.pos) else {
            return Err(self.error("unexpected end of input in string escape code"));
        };
        self.pos += 1;
        let simple = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self
                    .hex4()
                    .ok_or_else(|| self.error("invalid \\u escape: expected four hex digits"))?;
                out.push(self.code_point(unit));
                return Ok(());
            }
            _ => {
                self.pos -= 1;
                return Err(self.unexpected("in string escape code"));
            }
        };
        out.push(simple);
        Ok(())
    }

    /// Reads four hex digits at the current position.
    fn hex4(&mut self) -> Option<u16> {
        let digits = self.input.get(self.pos..self.pos + 4)?;
        let mut value = 0u16;
        for &d in digits {
            value = value * 16 + (d as char).to_digit(16)? as u16;
        }
        self.pos += 4;
        Some(value)
    }

    /// The character a `\uXXXX` escape stands for: a high surrogate directly followed by
    /// a `\u` low surrogate makes one code point; any other surrogate is U+FFFD (and a
    /// following escape is read on its own), as Go does.
    fn code_point(&mut self, unit: u16) -> char {
        if !(0xD800..0xE000).contains(&unit) {
            return char::from_u32(unit as u32).expect("not a surrogate");
        }
        if unit < 0xDC00 && self.input.get(self.pos..self.pos + 2) == Some(b"\\u") {
            let save = self.pos;
            self.pos += 2;
            match self.hex4() {
                Some(low @ 0xDC00..=0xDFFF) => {
                    let c = 0x10000 + (((unit as u32) - 0xD800) << 10) + (low as u32 - 0xDC00);
                    return char::from_u32(c).expect("valid surrogate pair");
                }
                _ => self.pos = save,
            }
        }
        char::REPLACEMENT_CHARACTER
    }
}

/// Members sorted by key bytes, each key once with its last value, in place.
fn sorted_unique(mut members: Vec<(Cow<'_, str>, u32)>) -> Vec<(Cow<'_, str>, u32)> {
    // Stable, so equal keys keep their written order and the last of a run is the last
    // written.
    members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut kept = 0;
    for i in 0..members.len() {
        if members
            .get(i + 1)
            .is_some_and(|next| next.0 == members[i].0)
        {
            continue;
        }
        members.swap(kept, i);
        kept += 1;
    }
    members.truncate(kept);
    members
}

/// Appends `bytes`, replacing each byte that does not start a valid UTF-8 sequence with
/// U+FFFD: Go's `utf8.DecodeRune` steps one byte past an invalid one, so `E2 82` gives
/// two replacements (`String::from_utf8_lossy` would give one).
pub(crate) fn push_replacing_invalid(out: &mut String, mut bytes: &[u8]) {
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                out.push_str(std::str::from_utf8(&bytes[..valid]).expect("valid prefix"));
                out.push(char::REPLACEMENT_CHARACTER);
                bytes = &bytes[valid + 1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fails(input: &str) -> DecodeError {
        decode_object(input.as_bytes()).expect_err(input)
    }

    #[test]
    fn per_byte_replacement_differs_from_lossy() {
        let mut out = String::new();
        push_replacing_invalid(&mut out, b"a\xE2\x82b");
        assert_eq!(out, "a\u{FFFD}\u{FFFD}b");
        assert_eq!(String::from_utf8_lossy(b"a\xE2\x82b"), "a\u{FFFD}b");
    }

    #[test]
    fn surrogates() {
        let doc =
            decode_object(br#"{"a":"\ud83d\ude00","b":"\ude00\ud83d","c":"\ud800x"}"#).unwrap();
        let text = |k| doc.root_member(k).and_then(Node::as_str);
        assert_eq!(text("a"), Some("😀"));
        assert_eq!(text("b"), Some("\u{FFFD}\u{FFFD}"));
        assert_eq!(text("c"), Some("\u{FFFD}x"));
    }

    #[test]
    fn numbers() {
        let doc =
            decode_object(br#"{"i":-0,"big":9223372036854775808,"f":1.5,"u":1e-400}"#).unwrap();
        assert_eq!(doc.root_member("i"), Some(&Node::Int(0)));
        assert_eq!(
            doc.root_member("big"),
            Some(&Node::Float(9223372036854775808.0))
        );
        assert_eq!(doc.root_member("f"), Some(&Node::Float(1.5)));
        assert_eq!(doc.root_member("u"), Some(&Node::Float(0.0)));
        assert!(fails(r#"{"n":1e400}"#).message.contains("out of the range"));
        fails(r#"{"n":01}"#);
        fails(r#"{"n":1.}"#);
        fails(r#"{"n":-}"#);
    }

    #[test]
    fn structure_errors_say_where() {
        let e = fails(r#"{"a":1,}"#);
        assert_eq!(e.offset, 7);
        assert!(fails("").message.contains("empty"));
        assert!(fails("[]").message.contains("array"));
        assert!(
            fails(r#"{"a":1} x"#)
                .message
                .contains("after top-level value")
        );
        fails(r#"{"a":tru}"#);
        fails("{\"a\":\"\u{1}\"}");
    }

    #[test]
    fn depth_limit_is_go_s() {
        let ok = format!(
            "{}{}",
            "{\"a\":".repeat(MAX_DEPTH - 1) + "{",
            "}".repeat(MAX_DEPTH)
        );
        decode_object(ok.as_bytes()).unwrap();
        let deep = format!(
            "{}{}",
            "{\"a\":".repeat(MAX_DEPTH) + "{",
            "}".repeat(MAX_DEPTH + 1)
        );
        assert!(fails(&deep).message.contains("nesting"));
    }
}
