//! A fast composer for the YAML that real manifests are made of, building the document
//! [`super::compose`] builds from libyaml-safer's events straight from the bytes
//! (libyaml-safer decodes into a queue of chars first, over half the time of the whole
//! path on a large stream).
//!
//! It knows only a subset: block mappings and sequences (compact and indentless ones
//! included), plain scalars (multi-line too), single- and double-quoted scalars (the
//! usual escapes, multi-line too), literal and folded block scalars with chomping and
//! an auto-detected indentation, `{}` and one-line flow sequences of scalars, comments, and a
//! `---` first line. It returns `None` the moment it meets anything else or anything it
//! is not sure about (tabs, CRs, non-printable or line-breaking characters, anchors,
//! aliases, tags, other flow collections, explicit keys, directives, `...`, odd
//! indentation, over-long keys, a key spanning lines, an empty block scalar, an explicit
//! indentation indicator, `\/` and `\'` escapes, anything libyaml would reject), and the
//! caller then composes the document with libyaml-safer, which also reports errors with
//! their positions. So it never needs to be right about an error, only about the trees
//! of the documents it accepts; the differential tests hold it to that.
//!
//! Its [`Tree`] is its own, not [`super::compose`]'s: scalars borrow their text from
//! the chunk wherever it is written as it reads (no escapes, no folding), and children
//! are linked, not held in a vector each, since a string and a vector for every node
//! were most of the fast path's time. [`Tree::into_composed`] makes the general tree of it
//! for the documents [`super::direct`] leaves to the general steps.
//!
//! Node positions are not kept: they only serve error messages, and any error found
//! after a fast composition sends the document through the slow path again.
//!
//! No recursion: open collections live on an explicit, bounded stack.

use super::compose;
use super::error::Pos;
use crate::json::text_run;
use std::borrow::Cow;

/// The end of a list of children.
pub(crate) const NONE: u32 = u32::MAX;

/// A node of the fast tree.
#[derive(Debug)]
pub(crate) enum Kind<'a> {
    Scalar {
        value: Cow<'a, str>,
        /// Plain, so resolved implicitly (the fast path takes no tags).
        plain: bool,
    },
    /// The first and last child, or [`NONE`].
    Sequence { first: u32, last: u32 },
    /// Keys and values alternating, as children.
    Mapping { first: u32, last: u32 },
}

/// A node and its place among its parent's children.
#[derive(Debug)]
pub(crate) struct Node<'a> {
    pub kind: Kind<'a>,
    /// The next child of the same parent, or [`NONE`].
    pub next: u32,
}

/// The first YAML document of a chunk; `root` is `None` when it has none.
#[derive(Debug, Default)]
pub(crate) struct Tree<'a> {
    pub nodes: Vec<Node<'a>>,
    pub root: Option<u32>,
}

impl Tree<'_> {
    /// The children of a collection whose first child is `first`, in order.
    pub(crate) fn children(&self, first: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors((first != NONE).then_some(first), |&id| {
            let next = self.nodes[id as usize].next;
            (next != NONE).then_some(next)
        })
    }

    /// The same document as [`super::compose`] builds it (node ids kept), for the
    /// general steps.
    pub(crate) fn into_composed(self) -> compose::Tree {
        let nodes = self
            .nodes
            .iter()
            .map(|node| compose::Node {
                kind: match &node.kind {
                    Kind::Scalar { value, plain } => compose::Kind::Scalar {
                        value: value.to_string(),
                        tag: None,
                        plain: *plain,
                    },
                    Kind::Sequence { first, .. } => {
                        compose::Kind::Sequence(self.children(*first).collect())
                    }
                    Kind::Mapping { first, .. } => {
                        compose::Kind::Mapping(self.children(*first).collect())
                    }
                },
                pos: Pos::default(),
            })
            .collect();
        compose::Tree {
            nodes,
            root: self.root,
        }
    }
}

/// Deeper documents go to the slow path, which applies go-yaml's limits.
const MAX_OPEN: usize = 1000;

/// libyaml refuses a simple key longer than 1024 characters; well under it is safe.
const MAX_KEY: usize = 1000;

struct Open {
    /// Column of the collection's keys or dashes.
    col: usize,
    id: u32,
    seq: bool,
    /// A sequence at its mapping's column (`key:\n- a`): a line at that column without a
    /// dash closes it.
    indentless: bool,
}

struct Composer<'a> {
    text: &'a [u8],
    /// The same text, known to be UTF-8: scalars are borrowed from it.
    str: &'a str,
    tree: Tree<'a>,
    stack: Vec<Open>,
}

/// The tree of the chunk's document, or `None` when the slow path must compose it.
pub(crate) fn compose(text: &[u8]) -> Option<Tree<'_>> {
    let mut c = Composer {
        text,
        str: acceptable(text)?,
        tree: Tree::default(),
        stack: Vec::new(),
    };
    c.run()?;
    Some(c.tree)
}

/// The characters the fast path handles, all lines ending with LF, and no line (but the
/// first) starting with `---` or `...`: the text as a `str` when it passes.
fn acceptable(text: &[u8]) -> Option<&str> {
    if text.last() != Some(&b'\n') {
        return None;
    }
    // libyaml-safer judges the encoding from the first bytes with rules of its own (it
    // refuses `EF BA BF`, U+FEBF, as a bad byte order mark): a text starting with a
    // byte of any mark is left to it.
    if matches!(text.first(), Some(0xEF | 0xFE | 0xFF | 0x00)) {
        return None;
    }
    let mut ascii = true;
    let mut at = 0;
    while at < text.len() {
        let (end, high) = text_run(text, at);
        ascii &= !high;
        // Tabs, CRs and other control characters.
        if text.get(end) != Some(&b'\n') {
            return None;
        }
        let line = &text[end + 1..];
        if line.starts_with(b"---") || line.starts_with(b"...") {
            return None;
        }
        at = end + 1;
    }
    let s = std::str::from_utf8(text).ok()?;
    // YAML's printable set, less NEL, LS and PS (line breaks to libyaml) and the BOM.
    let printable = |c: char| {
        c.is_ascii()
            || matches!(c, '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
                && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}')
    };
    if !ascii && !s.chars().all(printable) {
        return None;
    }
    Some(s)
}

fn scalar(value: Cow<'_, str>, plain: bool) -> Kind<'_> {
    Kind::Scalar { value, plain }
}

/// Bytes to a String; the whole chunk was checked to be UTF-8 and only whole
/// characters are copied.
fn text_of<'a>(bytes: Vec<u8>) -> Option<Cow<'a, str>> {
    String::from_utf8(bytes).ok().map(Cow::Owned)
}

impl<'a> Composer<'a> {
    /// The text from `start` to `end`, borrowed; `None` if that would split a character.
    fn slice(&self, start: usize, end: usize) -> Option<Cow<'a, str>> {
        self.str.get(start..end).map(Cow::Borrowed)
    }

    fn at(&self, i: usize) -> u8 {
        self.text.get(i).copied().unwrap_or(b'\n')
    }

    fn spaces(&self, mut i: usize) -> usize {
        while self.at(i) == b' ' {
            i += 1;
        }
        i
    }

    fn line_end(&self, i: usize) -> usize {
        i + self.text[i..]
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.text.len() - i)
    }

    fn is_dash_entry(&self, c: usize) -> bool {
        self.at(c) == b'-' && matches!(self.at(c + 1), b' ' | b'\n')
    }

    /// The next line from `ls` with content other than a comment: its start and indent.
    fn next_content_line(&self, mut ls: usize) -> Option<(usize, usize)> {
        while ls < self.text.len() {
            let c = self.spaces(ls);
            match self.at(c) {
                b'\n' | b'#' => ls = self.line_end(c) + 1,
                _ => return Some((ls, c - ls)),
            }
        }
        None
    }

    /// A new node, not yet anyone's child.
    fn node(&mut self, kind: Kind<'a>) -> Option<u32> {
        let id = u32::try_from(self.tree.nodes.len())
            .ok()
            .filter(|&id| id != NONE)?;
        self.tree.nodes.push(Node { kind, next: NONE });
        Some(id)
    }

    /// Makes `child` the last child of `parent`.
    fn link(&mut self, parent: u32, child: u32) -> Option<()> {
        let (Kind::Sequence { first, last } | Kind::Mapping { first, last }) =
            &mut self.tree.nodes[parent as usize].kind
        else {
            return None;
        };
        let previous = std::mem::replace(last, child);
        if previous == NONE {
            *first = child;
        } else {
            self.tree.nodes[previous as usize].next = child;
        }
        Some(())
    }

    /// A new node, the next child of the innermost open collection (or the root).
    fn add(&mut self, kind: Kind<'a>) -> Option<u32> {
        let id = self.node(kind)?;
        match self.stack.last() {
            Some(open) => self.link(open.id, id)?,
            None => {
                if self.tree.root.is_some() {
                    return None;
                }
                self.tree.root = Some(id);
            }
        }
        Some(id)
    }

    fn open(&mut self, col: usize, seq: bool, indentless: bool) -> Option<()> {
        if self.stack.len() >= MAX_OPEN {
            return None;
        }
        let kind = if seq {
            Kind::Sequence {
                first: NONE,
                last: NONE,
            }
        } else {
            Kind::Mapping {
                first: NONE,
                last: NONE,
            }
        };
        let id = self.add(kind)?;
        self.stack.push(Open {
            col,
            id,
            seq,
            indentless,
        });
        Some(())
    }

    fn run(&mut self) -> Option<()> {
        let mut pos = 0;
        let explicit = self.text.starts_with(b"---");
        if explicit {
            // The splitter keeps a `---` line only as a chunk's first; only white space
            // or a comment may follow it here.
            let after = self.spaces(3);
            if !(self.at(after) == b'\n' || (after > 3 && self.at(after) == b'#')) {
                return None;
            }
            pos = self.line_end(after) + 1;
        } else if matches!(self.at(0), b'%' | b'.') {
            return None;
        }
        while let Some((ls, col)) = self.next_content_line(pos) {
            let c = ls + col;
            while let Some(top) = self.stack.last() {
                if top.col > col || (top.indentless && top.col == col && !self.is_dash_entry(c)) {
                    self.stack.pop();
                } else {
                    break;
                }
            }
            pos = match self.stack.last() {
                None => {
                    // The root: only a block collection (a second root is an error).
                    if self.tree.root.is_some() {
                        return None;
                    }
                    if self.is_dash_entry(c) {
                        self.open(col, true, false)?;
                    } else {
                        self.key(c)?;
                        self.open(col, false, false)?;
                    }
                    ls
                }
                Some(top) if top.col != col => return None,
                Some(top) if top.seq => {
                    if !self.is_dash_entry(c) {
                        return None;
                    }
                    self.item(c, col)?
                }
                Some(_) => self.entry(c, col)?,
            };
        }
        if self.tree.root.is_none() && explicit {
            // `---` and nothing else: libyaml gives an empty plain scalar.
            self.add(scalar(Cow::Borrowed(""), true))?;
        }
        Some(())
    }

    /// A mapping entry whose key starts at `c` (column `col`, the mapping's).
    fn entry(&mut self, c: usize, col: usize) -> Option<usize> {
        let (key, plain, after) = self.key(c)?;
        self.add(scalar(key, plain))?;
        self.value(after, col, true)
    }

    /// A sequence item whose dash is at `c` (column `col`, the sequence's).
    fn item(&mut self, c: usize, col: usize) -> Option<usize> {
        let p = self.spaces(c + 1);
        if self.at(p) == b'\n' || self.at(p) == b'#' {
            return self.value_below(self.line_end(p) + 1, col, false);
        }
        if self.is_dash_entry(p) {
            return None;
        }
        let pcol = col + (p - c);
        if let Some((key, plain, after)) = self.key(p) {
            // A compact mapping: `- key: value`, its keys at the column of the first.
            self.open(pcol, false, false)?;
            self.add(scalar(key, plain))?;
            return self.value(after, pcol, true);
        }
        self.inline(p, col)
    }

    /// The value after a `:` at `after - 1`, in a mapping (`in_map`) at `col`, or after
    /// a dash with nothing else on its line.
    fn value(&mut self, after: usize, col: usize, in_map: bool) -> Option<usize> {
        let p = self.spaces(after);
        if self.at(p) == b'\n' || self.at(p) == b'#' {
            return self.value_below(self.line_end(p) + 1, col, in_map);
        }
        self.inline(p, col)
    }

    /// A value starting on a later line than its key or dash, whose collection is at
    /// column `col`: a nested collection, a scalar, or nothing (null).
    fn value_below(&mut self, ls: usize, col: usize, in_map: bool) -> Option<usize> {
        if let Some((ls2, col2)) = self.next_content_line(ls) {
            let c = ls2 + col2;
            if col2 > col {
                if self.is_dash_entry(c) {
                    self.open(col2, true, false)?;
                    return Some(ls2);
                }
                if self.key(c).is_some() {
                    self.open(col2, false, false)?;
                    return Some(ls2);
                }
                return self.inline(c, col);
            }
            if col2 == col && in_map && self.is_dash_entry(c) {
                self.open(col2, true, true)?;
                return Some(ls2);
            }
        }
        self.add(scalar(Cow::Borrowed(""), true))?;
        Some(ls)
    }

    /// A scalar (or `{}`, `[]`) starting at `p` in a collection at column `col`; returns
    /// where the next line starts.
    fn inline(&mut self, p: usize, col: usize) -> Option<usize> {
        match self.at(p) {
            b'|' | b'>' => {
                let (value, next) = self.block_scalar(p, col)?;
                self.add(scalar(value, false))?;
                Some(next)
            }
            q @ (b'"' | b'\'') => {
                let (value, end) = self.quoted(p, col, q == b'"')?;
                self.add(scalar(value, false))?;
                self.after_value(end)
            }
            b'{' => {
                if self.at(p + 1) != b'}' {
                    return None;
                }
                let next = self.after_value(p + 2)?;
                self.add(Kind::Mapping {
                    first: NONE,
                    last: NONE,
                })?;
                Some(next)
            }
            b'[' => {
                let (items, end) = self.flow_sequence(p)?;
                let next = self.after_value(end)?;
                let id = self.add(Kind::Sequence {
                    first: NONE,
                    last: NONE,
                })?;
                for item in items {
                    let child = self.node(item)?;
                    self.link(id, child)?;
                }
                Some(next)
            }
            _ => {
                if !self.plain_start(p) {
                    return None;
                }
                let (value, next) = self.plain(p, col)?;
                self.add(scalar(value, true))?;
                Some(next)
            }
        }
    }

    /// A one-line flow sequence of scalars at `p` (`["a", b]`, as in RBAC rules and
    /// container commands): its items and the index after `]`. Plain items are held to
    /// a few safe characters, since flow context ends plain scalars at more indicators.
    fn flow_sequence(&self, p: usize) -> Option<(Vec<Kind<'a>>, usize)> {
        let mut items = Vec::new();
        let mut i = self.spaces(p + 1);
        if self.at(i) == b']' {
            return Some((items, i + 1));
        }
        loop {
            match self.at(i) {
                q @ (b'"' | b'\'') => {
                    let (value, end) = self.quoted(i, usize::MAX, q == b'"')?;
                    items.push(scalar(value, false));
                    i = end;
                }
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'/' => {
                    let start = i;
                    while matches!(self.at(i), b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'/' | b'.' | b'-')
                    {
                        i += 1;
                    }
                    items.push(scalar(self.slice(start, i)?, true));
                }
                _ => return None,
            }
            i = self.spaces(i);
            match self.at(i) {
                b']' => return Some((items, i + 1)),
                b',' => i = self.spaces(i + 1),
                _ => return None,
            }
        }
    }

    /// After a value ending at `end` on its line: spaces, then the line's end or a
    /// comment. Returns the next line's start.
    fn after_value(&self, end: usize) -> Option<usize> {
        let p = self.spaces(end);
        match self.at(p) {
            b'\n' => Some(p + 1),
            b'#' if p > end => Some(self.line_end(p) + 1),
            _ => None,
        }
    }

    /// Whether a plain scalar may start at `p` (YAML's indicators may not, except `-`,
    /// `?` and `:` before a non-blank).
    fn plain_start(&self, p: usize) -> bool {
        match self.at(p) {
            b'-' | b'?' | b':' => !matches!(self.at(p + 1), b' ' | b'\n'),
            b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
            | b'"' | b'%' | b'@' | b'`' | b'\n' | b' ' => false,
            _ => true,
        }
    }

    /// A simple key at `p`: its text, whether it is plain, and where its `:` ends.
    fn key(&self, p: usize) -> Option<(Cow<'a, str>, bool, usize)> {
        let (value, plain, end) = match self.at(p) {
            q @ (b'"' | b'\'') => {
                let (value, end) = self.quoted(p, 0, q == b'"')?;
                // A key spanning lines is an error for libyaml.
                if self.text[p..end].contains(&b'\n') {
                    return None;
                }
                let colon = self.spaces(end);
                (value, false, colon)
            }
            _ => {
                if !self.plain_start(p) {
                    return None;
                }
                match self.plain_line(p)? {
                    (end, Stop::Colon(colon)) => {
                        let value = self.slice(p, end)?;
                        (value, true, colon)
                    }
                    _ => return None,
                }
            }
        };
        if end - p > MAX_KEY || self.at(end) != b':' || !matches!(self.at(end + 1), b' ' | b'\n') {
            return None;
        }
        Some((value, plain, end + 1))
    }

    /// One line of a plain scalar from `p`: where its text ends (trailing spaces left
    /// out) and what stopped it.
    fn plain_line(&self, p: usize) -> Option<(usize, Stop)> {
        let mut i = p;
        let mut end = p;
        loop {
            match self.at(i) {
                b'\n' => return Some((end, Stop::Eol(i))),
                b' ' => {
                    i += 1;
                    if self.at(i) == b'#' {
                        return Some((end, Stop::Comment(self.line_end(i))));
                    }
                }
                b':' if matches!(self.at(i + 1), b' ' | b'\n') => {
                    return Some((end, Stop::Colon(i)));
                }
                _ => {
                    i += 1;
                    end = i;
                }
            }
        }
    }

    /// A plain value at `p` in a collection at column `col`, with the lines that
    /// continue it folded in; returns it and where the next line starts.
    fn plain(&self, p: usize, col: usize) -> Option<(Cow<'a, str>, usize)> {
        let (first_end, stop) = self.plain_line(p)?;
        let mut ls = match stop {
            Stop::Eol(eol) => eol + 1,
            Stop::Comment(eol) => return Some((self.slice(p, first_end)?, eol + 1)),
            Stop::Colon(_) => return None,
        };
        // Copied only once a second line continues it.
        let mut folded: Option<Vec<u8>> = None;
        let mut blank_lines = 0;
        let mut resume = ls;
        while ls < self.text.len() {
            let c = self.spaces(ls);
            if self.at(c) == b'\n' {
                blank_lines += 1;
                ls = c + 1;
                continue;
            }
            // Only a line indented past the collection, not a comment, continues it.
            if c - ls <= col || self.at(c) == b'#' {
                break;
            }
            let (end, stop) = self.plain_line(c)?;
            let out = folded.get_or_insert_with(|| self.text[p..first_end].to_vec());
            if blank_lines == 0 {
                out.push(b' ');
            }
            out.extend(std::iter::repeat_n(b'\n', blank_lines));
            blank_lines = 0;
            out.extend_from_slice(&self.text[c..end]);
            match stop {
                Stop::Eol(eol) => ls = eol + 1,
                Stop::Comment(eol) => {
                    ls = eol + 1;
                    resume = ls;
                    break;
                }
                Stop::Colon(_) => return None,
            }
            resume = ls;
        }
        let value = match folded {
            Some(out) => text_of(out)?,
            None => self.slice(p, first_end)?,
        };
        Some((value, resume))
    }

    /// A quoted scalar whose opening quote is at `p`, in a collection at column `col`:
    /// its value and the index just past the closing quote.
    fn quoted(&self, p: usize, col: usize, double: bool) -> Option<(Cow<'a, str>, usize)> {
        // Most quoted scalars hold no escape and end on their line: their text is
        // borrowed as it stands.
        let quote = if double { b'"' } else { b'\'' };
        let mut j = p + 1;
        loop {
            match self.at(j) {
                b'\n' => break,
                b'\\' if double => break,
                b if b == quote => {
                    if !double && self.at(j + 1) == b'\'' {
                        break;
                    }
                    return Some((self.slice(p + 1, j)?, j + 1));
                }
                _ => j += 1,
            }
        }
        let mut out = Vec::new();
        let mut i = p + 1;
        loop {
            // Inside one line.
            let mut escaped_break = false;
            loop {
                match self.at(i) {
                    b'\n' => break,
                    b' ' => {
                        let start = i;
                        i = self.spaces(i);
                        // White space before a line break is dropped by the folding.
                        if self.at(i) != b'\n' {
                            out.extend_from_slice(&self.text[start..i]);
                        }
                    }
                    b'\'' if !double => {
                        if self.at(i + 1) == b'\'' {
                            out.push(b'\'');
                            i += 2;
                        } else {
                            return Some((text_of(out)?, i + 1));
                        }
                    }
                    b'"' if double => return Some((text_of(out)?, i + 1)),
                    b'\\' if double => {
                        if self.at(i + 1) == b'\n' && i + 1 < self.text.len() {
                            escaped_break = true;
                            i += 1;
                            break;
                        }
                        i = self.escape(i, &mut out)?;
                    }
                    b => {
                        out.push(b);
                        i += 1;
                    }
                }
            }
            // At a line break inside the scalar: fold it with the blank lines after it.
            let mut blank_lines = 0;
            let mut ls = i + 1;
            let c = loop {
                if ls >= self.text.len() {
                    return None;
                }
                let c = self.spaces(ls);
                if self.at(c) != b'\n' {
                    break c;
                }
                blank_lines += 1;
                ls = c + 1;
            };
            // libyaml does not check this indentation; the slow path judges it.
            if c - ls <= col {
                return None;
            }
            if escaped_break {
                // `\` at a line's end joins the lines without a space.
            } else if blank_lines == 0 {
                out.push(b' ');
            }
            out.extend(std::iter::repeat_n(b'\n', blank_lines));
            i = c;
        }
    }

    /// The escape whose backslash is at `i`, appended to `out`; returns the index after.
    fn escape(&self, i: usize, out: &mut Vec<u8>) -> Option<usize> {
        let simple = match self.at(i + 1) {
            b'0' => Some('\0'),
            b'a' => Some('\u{7}'),
            b'b' => Some('\u{8}'),
            b't' => Some('\t'),
            b'n' => Some('\n'),
            b'v' => Some('\u{B}'),
            b'f' => Some('\u{C}'),
            b'r' => Some('\r'),
            b'e' => Some('\u{1B}'),
            b' ' => Some(' '),
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'N' => Some('\u{85}'),
            b'_' => Some('\u{A0}'),
            b'L' => Some('\u{2028}'),
            b'P' => Some('\u{2029}'),
            // `\/` (go-yaml refuses it), `\'` (go-yaml takes it, libyaml not), and
            // unknown escapes: the slow path.
            b'x' | b'u' | b'U' => None,
            _ => return None,
        };
        let (c, next) = match simple {
            Some(c) => (c, i + 2),
            None => {
                let digits = match self.at(i + 1) {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self.text.get(i + 2..i + 2 + digits)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                let code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                (char::from_u32(code)?, i + 2 + digits)
            }
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        Some(next)
    }

    /// A literal or folded block scalar whose indicator is at `p`, in a collection at
    /// column `col` (libyaml's `parser.indent`): its value and the start of the first
    /// line after it.
    fn block_scalar(&self, p: usize, col: usize) -> Option<(Cow<'a, str>, usize)> {
        let literal = self.at(p) == b'|';
        // -1 strip, 0 clip, 1 keep.
        let mut chomp = 0i8;
        let mut i = p + 1;
        match self.at(i) {
            b'-' => chomp = -1,
            b'+' => chomp = 1,
            _ => {}
        }
        if chomp != 0 {
            i += 1;
        }
        let h = self.spaces(i);
        match self.at(h) {
            b'\n' => {}
            b'#' if h > i => {}
            // An indentation indicator, a second chomping one, anything else.
            _ => return None,
        }
        let mut ls = self.line_end(h) + 1;
        // Leading blank lines, then the first content line fixes the indentation.
        let mut trailing = 0usize;
        let mut widest_blank = 0;
        let indent = loop {
            if ls >= self.text.len() {
                return None;
            }
            let c = self.spaces(ls);
            if self.at(c) == b'\n' {
                widest_blank = widest_blank.max(c - ls);
                trailing += 1;
                ls = c + 1;
                continue;
            }
            break c - ls;
        };
        // An empty scalar (content not indented past the collection, or less than a
        // blank line before it): rare, left to the slow path.
        if indent <= col || widest_blank > indent {
            return None;
        }
        let mut out = Vec::new();
        let mut leading_break = false;
        let mut leading_blank = false;
        loop {
            // `ls` starts a line with at least `indent` spaces and content after them.
            let cs = ls + indent;
            let trailing_blank = self.at(cs) == b' ';
            if !literal && leading_break && !leading_blank && !trailing_blank {
                if trailing == 0 {
                    out.push(b' ');
                }
            } else if leading_break {
                out.push(b'\n');
            }
            out.extend(std::iter::repeat_n(b'\n', trailing));
            trailing = 0;
            leading_blank = trailing_blank;
            let eol = self.line_end(cs);
            out.extend_from_slice(&self.text[cs..eol]);
            leading_break = true;
            ls = eol + 1;
            // Empty lines: at most `indent` spaces, then the break.
            let more = loop {
                if ls >= self.text.len() {
                    break false;
                }
                let mut c = ls;
                while c - ls < indent && self.at(c) == b' ' {
                    c += 1;
                }
                if self.at(c) == b'\n' {
                    trailing += 1;
                    ls = c + 1;
                    continue;
                }
                break c - ls == indent;
            };
            if !more {
                break;
            }
        }
        if chomp != -1 && leading_break {
            out.push(b'\n');
        }
        if chomp == 1 {
            out.extend(std::iter::repeat_n(b'\n', trailing));
        }
        Some((text_of(out)?, ls.min(self.text.len())))
    }
}

/// What ended one line of a plain scalar.
enum Stop {
    /// The line break, at this index.
    Eol(usize),
    /// A comment, whose line ends at this index.
    Comment(usize),
    /// A `:` before a blank, at this index.
    Colon(usize),
}
