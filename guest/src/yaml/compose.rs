//! One document's events, from libyaml-safer, made into a tree of nodes as go-yaml's
//! `parser` builds it: anchors registered when their node opens, aliases pointing at the
//! node their anchor names at that point, nothing after the first document read.
//!
//! libyaml-safer is a port of libyaml, whose scanner go-yaml v2 is a port of too, so
//! folding, block scalars, simple keys and error cases agree. The few places where
//! go-yaml's scanner differs from libyaml 0.2.5 are made up for here: go-yaml rejects the
//! escape `\/` and accepts `\'` in double-quoted scalars, and limits nesting to 10,000
//! flow levels and 10,000 block indentation levels.

use super::error::{Located, Pos};
use libyaml_safer::{Event, EventData, MappingStyle, Parser, ScalarStyle, SequenceStyle};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// go-yaml's `max_flow_level` and `max_indents`.
pub(crate) const MAX_NESTING: usize = 10_000;

/// A node of the document.
#[derive(Debug)]
pub(crate) enum Kind {
    Scalar {
        value: String,
        /// The tag with its handle resolved (`tag:yaml.org,2002:int`), if any.
        tag: Option<String>,
        /// Plain and untagged: the only scalars go-yaml resolves implicitly.
        plain: bool,
    },
    Sequence(Vec<u32>),
    /// Keys and values alternating.
    Mapping(Vec<u32>),
    /// The node the alias's anchor named when the alias was read.
    Alias {
        target: u32,
    },
}

/// A node and where it starts.
#[derive(Debug)]
pub(crate) struct Node {
    pub kind: Kind,
    pub pos: Pos,
}

/// The first YAML document of a chunk; `root` is `None` when it has none (empty, only
/// comments).
#[derive(Debug, Default)]
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    pub root: Option<u32>,
}

/// Parses the first document of `text` (one chunk of the splitter).
pub(crate) fn compose(text: &[u8]) -> Result<Tree, Located> {
    // libyaml-safer's UTF-16 reader loses its alignment (it consumes code units as
    // bytes) and then trips a debug assertion; go-yaml decodes UTF-16 properly. So the
    // text is decoded here, as go-yaml would, and parsed as UTF-8: an odd last byte or
    // an unpaired surrogate is an error, as in go-yaml.
    let mut text = match utf16_bom(text) {
        Some(big_endian) => match decode_utf16(&text[2..], big_endian) {
            Some(utf8) => Cow::Owned(utf8.into_bytes()),
            None => {
                return Err(Located::yaml(
                    Pos { line: 0, column: 0 },
                    "invalid UTF-16: an incomplete character or an unpaired surrogate",
                ));
            }
        },
        None => Cow::Borrowed(text),
    };
    loop {
        match compose_once(&text) {
            Ok(tree) => return Ok(tree),
            Err(Failure::QuoteEscape(at)) => {
                // go-yaml reads `\'` as `'`; libyaml does not. `\x27` says the same to
                // both, at the cost of shifting the columns after it on that line.
                text.to_mut().splice(at..at + 2, *b"\\x27");
            }
            Err(Failure::Located(e)) => return Err(e),
        }
    }
}

/// `Some(big_endian)` when `text` starts with a UTF-16 byte order mark.
fn utf16_bom(text: &[u8]) -> Option<bool> {
    match text {
        [0xFF, 0xFE, ..] => Some(false),
        [0xFE, 0xFF, ..] => Some(true),
        _ => None,
    }
}

/// The text of UTF-16 `bytes` (after the byte order mark), `None` when they are not
/// UTF-16.
fn decode_utf16(bytes: &[u8], big_endian: bool) -> Option<String> {
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    let units = bytes.chunks_exact(2).map(|pair| {
        let pair = [pair[0], pair[1]];
        if big_endian {
            u16::from_be_bytes(pair)
        } else {
            u16::from_le_bytes(pair)
        }
    });
    char::decode_utf16(units)
        .collect::<Result<String, _>>()
        .ok()
}

enum Failure {
    /// A `\'` escape at this byte offset.
    QuoteEscape(usize),
    Located(Located),
}

impl From<Located> for Failure {
    fn from(e: Located) -> Self {
        Failure::Located(e)
    }
}

fn pos(mark: libyaml_safer::Mark) -> Pos {
    Pos {
        line: mark.line as usize,
        column: mark.column as usize,
    }
}

fn compose_once(text: &[u8]) -> Result<Tree, Failure> {
    // Marks count UTF-8 bytes from after a UTF-8 BOM (UTF-16 was decoded by `compose`).
    let base = if text.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    };
    let mut parser = Parser::<&[u8]>::new();
    parser.set_input(text);
    let mut tree = Tree::default();
    let mut open: Vec<(u32, bool)> = Vec::new();
    let mut is_open: Vec<bool> = Vec::new();
    let (mut flow, mut block) = (0usize, 0usize);
    let mut anchors: BTreeMap<String, u32> = BTreeMap::new();
    loop {
        let event: Event = match parser.parse() {
            Ok(event) => event,
            Err(e) => return Err(parse_failure(&e, text, base)),
        };
        let at = pos(event.start_mark);
        let (kind, anchor, opens) = match event.data {
            EventData::StreamStart { .. } | EventData::DocumentStart { .. } => continue,
            EventData::StreamEnd | EventData::DocumentEnd { .. } => return Ok(tree),
            EventData::Alias { anchor } => {
                let Some(&target) = anchors.get(&anchor) else {
                    return Err(
                        Located::yaml(at, format!("unknown anchor '{anchor}' referenced")).into(),
                    );
                };
                if is_open[target as usize] {
                    return Err(Located::yaml(
                        at,
                        format!("anchor '{anchor}' value contains itself"),
                    )
                    .into());
                }
                (Kind::Alias { target }, None, None)
            }
            EventData::Scalar {
                anchor,
                tag,
                value,
                plain_implicit,
                style,
                ..
            } => {
                if style == ScalarStyle::DoubleQuoted {
                    let start = base + event.start_mark.index as usize;
                    let end = (base + event.end_mark.index as usize).min(text.len());
                    if has_slash_escape(text.get(start..end).unwrap_or_default()) {
                        return Err(Located::yaml(
                            at,
                            "found unknown escape character `\\/` while parsing a quoted scalar",
                        )
                        .into());
                    }
                }
                let plain = plain_implicit && tag.is_none() && style == ScalarStyle::Plain;
                (Kind::Scalar { value, tag, plain }, anchor, None)
            }
            EventData::SequenceStart { anchor, style, .. } => {
                let flow_style = style == SequenceStyle::Flow;
                nest(&mut flow, &mut block, flow_style, at)?;
                (Kind::Sequence(Vec::new()), anchor, Some(flow_style))
            }
            EventData::MappingStart { anchor, style, .. } => {
                let flow_style = style == MappingStyle::Flow;
                nest(&mut flow, &mut block, flow_style, at)?;
                (Kind::Mapping(Vec::new()), anchor, Some(flow_style))
            }
            EventData::SequenceEnd | EventData::MappingEnd => {
                let (id, flow_style) = open.pop().expect("the parser balances collections");
                is_open[id as usize] = false;
                if flow_style {
                    flow -= 1;
                } else {
                    block -= 1;
                }
                continue;
            }
        };
        let id = u32::try_from(tree.nodes.len()).expect("fewer nodes than bytes");
        if let Some(anchor) = anchor {
            anchors.insert(anchor, id);
        }
        tree.nodes.push(Node { kind, pos: at });
        is_open.push(opens.is_some());
        match open.last() {
            Some(&(parent, _)) => match &mut tree.nodes[parent as usize].kind {
                Kind::Sequence(children) | Kind::Mapping(children) => children.push(id),
                _ => unreachable!("only collections are open"),
            },
            None => tree.root = Some(id),
        }
        if let Some(flow_style) = opens {
            open.push((id, flow_style));
        }
    }
}

/// Counts one more open collection, failing past go-yaml's limits.
fn nest(flow: &mut usize, block: &mut usize, flow_style: bool, at: Pos) -> Result<(), Failure> {
    let level = if flow_style { flow } else { block };
    *level += 1;
    if *level > MAX_NESTING {
        return Err(Located::yaml(at, format!("exceeded max depth of {MAX_NESTING}")).into());
    }
    Ok(())
}

/// Whether the raw text of a double-quoted scalar holds the escape `\/`.
fn has_slash_escape(raw: &[u8]) -> bool {
    let mut i = 0;
    while i + 1 < raw.len() {
        if raw[i] == b'\\' {
            if raw[i + 1] == b'/' {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

/// The parser's error as ours; a `\'` escape is reported for a retry instead.
fn parse_failure(e: &libyaml_safer::Error, text: &[u8], base: usize) -> Failure {
    let problem = e.problem();
    if let Some(mark) = e.problem_mark() {
        let at = base + mark.index as usize;
        if problem == "found unknown escape character" && text.get(at..at + 2) == Some(b"\\'") {
            return Failure::QuoteEscape(at);
        }
        let message = match e.context() {
            Some(context) => format!("{problem} {context}"),
            None => problem.to_owned(),
        };
        return Failure::Located(Located::yaml(pos(mark), message));
    }
    // Reader errors carry no mark: the first byte the reader refuses is found again.
    Failure::Located(Located::yaml(reader_error_pos(text), problem))
}

/// Where the first invalid UTF-8 or disallowed character of `text` is (the end when
/// there is none, as for an incomplete UTF-16 character).
fn reader_error_pos(text: &[u8]) -> Pos {
    let text = text.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(text);
    let valid = match std::str::from_utf8(text) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&text[..e.valid_up_to()]).expect("valid prefix"),
    };
    let allowed = |c: char| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
    let end = valid.find(|c| !allowed(c)).unwrap_or(valid.len());
    let before = &valid[..end];
    let line = before.matches('\n').count();
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count();
    Pos { line, column }
}
