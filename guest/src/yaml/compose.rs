//! One document's events, from libyaml-safer, made into a tree of nodes as go-yaml's
//! `parser` builds it: anchors registered when their node opens, aliases pointing at the
//! node their anchor names at that point, nothing after the first document read.
//!
//! libyaml-safer is a port of libyaml, whose scanner go-yaml v2 is a port of too, so
//! folding, block scalars, simple keys and error cases agree. The few places where
//! go-yaml's scanner differs from libyaml 0.2.5 are made up for here: go-yaml rejects the
//! escape `\/` and accepts `\'` in double-quoted scalars, limits nesting to 10,000
//! flow levels and 10,000 block indentation levels, and ends plain scalars inside flow
//! collections at other characters ([`super::flow`]).

use super::end;
use super::error::{Located, Pos};
use super::{flow, reader};
use libyaml_safer::{
    Event, EventData, MappingStyle, Parser, ScalarStyle, SequenceStyle, TokenData,
};
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
    let decoded = reader::decode(text);
    if !end::lacks_final_break(&decoded) {
        return compose_decoded(decoded).map(|(tree, _)| tree);
    }
    // Read with a break added ([`end`]); the block scalar that reaches the end gets
    // go-yaml's value back.
    let (mut tree, last) = compose_decoded(end::with_break(decoded))?;
    if let Some(id) = last
        && let Kind::Scalar { value, .. } = &mut tree.nodes[id as usize].kind
    {
        end::without_added_break(value);
    }
    Ok(tree)
}

/// Parses the first document of a decoded text: its tree and the block scalar that
/// reaches the text's end, if one does.
fn compose_decoded(decoded: reader::Decoded) -> Result<(Tree, Option<u32>), Located> {
    let mut source = Source::new(decoded);
    source.guard_tags();
    loop {
        match compose_once(&source) {
            Ok((mut tree, last)) => {
                source.restore_byte_order_marks(&mut tree);
                return Ok((tree, last));
            }
            Err(Failure::QuoteEscape(at)) => {
                // go-yaml reads `\'` as `'`; libyaml does not. `\x27` says the same to
                // both; the columns after it are given back by `Source::pos`.
                source.edit_text(at, 2, "\\x27");
            }
            // Only documents where libyaml-safer meets such a `:` pay for the scan that
            // finds them all; a second refusal would be one the scan did not foresee.
            Err(Failure::FlowColon(e)) if source.colons_settled => return Err(e),
            Err(Failure::FlowColon(_)) => source.settle_flow_colons(),
            Err(Failure::Located(e)) => return Err(e),
        }
    }
}

/// A change to the decoded text that makes libyaml-safer read it as go-yaml does.
#[derive(Debug, Clone, Copy)]
struct Edit {
    /// Where it starts in the decoded text, in bytes.
    at: usize,
    /// How many bytes (all ASCII) it replaces.
    len: usize,
    with: &'static str,
    /// It stands in for a `:` that go-yaml keeps in a flow plain scalar (see
    /// [`flow`]): the scalar's value gets the `:` back.
    colon: bool,
}

/// One document's decoded text, the edits made to it, and the text they give, which is
/// what libyaml-safer parses.
struct Source {
    decoded: reader::Decoded,
    /// Sorted by `at`, never overlapping.
    edits: Vec<Edit>,
    /// The character U+FEFF was replaced by (see [`Source::new`]).
    placeholder: Option<char>,
    text: String,
    /// `decoded.steps` in `text`.
    steps: Vec<usize>,
    /// For each edit: where it starts in `text`, its line there, and how many more
    /// characters it has than what it replaced.
    shifts: Vec<(usize, usize, usize)>,
    /// Where in `text` the edits that stand in for a `:` are, in order.
    stand_ins: Vec<usize>,
    /// Whether [`Source::settle_flow_colons`] has run.
    colons_settled: bool,
}

impl Source {
    fn new(mut decoded: reader::Decoded) -> Self {
        // libyaml skips a U+FEFF wherever a line starts with one; go-yaml means to, but
        // looks at the first three bytes of its buffer instead of the current ones, so
        // a U+FEFF inside a document stays an ordinary character (YAML-RULES.md, Y2).
        // A private-use character the text does not hold stands in for it while
        // libyaml-safer reads. A document whose text starts with U+FEFF (after its byte
        // order mark) is where go-yaml's check fires: not emulated (CONTRACT.md §11).
        let placeholder =
            if decoded.text.contains('\u{FEFF}') && !decoded.text.starts_with('\u{FEFF}') {
                let stand_in = ('\u{E000}'..='\u{F8FF}').find(|&c| !decoded.text.contains(c));
                if let Some(c) = stand_in {
                    // The same width in UTF-8, so the steps and marks do not move.
                    decoded.text = decoded.text.replace('\u{FEFF}', c.encode_utf8(&mut [0; 4]));
                }
                stand_in
            } else {
                None
            };
        let mut source = Source {
            text: String::new(),
            steps: Vec::new(),
            shifts: Vec::new(),
            stand_ins: Vec::new(),
            colons_settled: false,
            decoded,
            edits: Vec::new(),
            placeholder,
        };
        source.apply();
        source
    }

    /// Rebuilds `text`, `steps` and `shifts` from the decoded text and the edits.
    fn apply(&mut self) {
        let original = &self.decoded.text;
        self.stand_ins.clear();
        if self.edits.is_empty() {
            self.text.clone_from(original);
            self.steps.clone_from(&self.decoded.steps);
            self.shifts.clear();
            return;
        }
        let mut text = String::with_capacity(original.len() + 2 * self.edits.len());
        let mut shifts = Vec::with_capacity(self.edits.len());
        let mut from = 0;
        let mut line = 0;
        for edit in &self.edits {
            line += line_breaks(&original[from..edit.at]);
            text.push_str(&original[from..edit.at]);
            shifts.push((text.len(), line, edit.with.len() - edit.len));
            if edit.colon {
                self.stand_ins.push(text.len());
            }
            text.push_str(edit.with);
            from = edit.at + edit.len;
        }
        text.push_str(&original[from..]);
        let mut grown = 0;
        let mut next = self.edits.iter().peekable();
        let steps = self
            .decoded
            .steps
            .iter()
            .map(|&end| {
                // An edit cut by a step's end moves the end past it.
                let mut end = end;
                while let Some(edit) = next.next_if(|e| e.at < end) {
                    end = end.max(edit.at + edit.len);
                    grown += edit.with.len() - edit.len;
                }
                end + grown
            })
            .collect();
        self.text = text;
        self.steps = steps;
        self.shifts = shifts;
    }

    /// Replaces `len` bytes at `at` in `text` (not the decoded text) by `with`.
    fn edit_text(&mut self, at: usize, len: usize, with: &'static str) {
        let mut grown = 0;
        for edit in &self.edits {
            if edit.at + grown >= at {
                break;
            }
            grown += edit.with.len() - edit.len;
        }
        let at = at - grown;
        let index = self.edits.partition_point(|e| e.at < at);
        self.edits.insert(
            index,
            Edit {
                at,
                len,
                with,
                colon: false,
            },
        );
        self.apply();
    }

    /// Gives libyaml-safer every `:` that go-yaml keeps in a flow plain scalar right
    /// before `,`, `?`, `[`, `]`, `{` or `}` as [`flow::COLON_STAND_IN`], which it keeps
    /// too; which `:` those are, libyaml-safer's scanner says of [`flow::masked`] text.
    /// One scan, whatever their number.
    fn settle_flow_colons(&mut self) {
        self.colons_settled = true;
        let candidates = flow::colon_candidates(&self.text);
        let (scalars, _) = self.scan_scalars();
        let inside: Vec<usize> = candidates
            .into_iter()
            .filter(|&at| {
                let after = scalars.partition_point(|&(start, _, _)| start < at);
                after
                    .checked_sub(1)
                    .is_some_and(|i| scalars[i].2 && at < scalars[i].1)
            })
            .collect();
        if inside.is_empty() {
            return;
        }
        // `text` offsets to offsets in the decoded text: both lists are in order.
        let (mut edit, mut grown) = (0, 0);
        let mut added = Vec::with_capacity(inside.len());
        for at in inside {
            while let Some(e) = self.edits.get(edit).filter(|e| e.at + grown < at) {
                grown += e.with.len() - e.len;
                edit += 1;
            }
            added.push(Edit {
                at: at - grown,
                len: 1,
                with: flow::COLON_STAND_IN,
                colon: true,
            });
        }
        self.edits.extend(added);
        self.edits.sort_by_key(|e| e.at);
        self.apply();
    }

    /// A plain scalar's value with the `:` of the stand-ins it holds given back; `start`
    /// and `end` are where its event spans `text`.
    fn restore_colons(&self, start: usize, end: usize, value: &mut String) {
        let first = self.stand_ins.partition_point(|&at| at < start);
        let last = self.stand_ins.partition_point(|&at| at < end);
        if first == last {
            return;
        }
        let inside: Vec<usize> = self.stand_ins[first..last]
            .iter()
            .map(|at| at - start)
            .collect();
        flow::restore(value, &self.text[start..end], &inside);
    }

    /// The mark of the character at `at` in `text`, from the mark `from` of an earlier
    /// character.
    fn mark_at(&self, from: libyaml_safer::Mark, at: usize) -> libyaml_safer::Mark {
        let between = &self.text[from.index as usize..at];
        let breaks = line_breaks(between);
        let column = match between.rfind(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) {
            None => from.column as usize + between.chars().count(),
            Some(i) => between[i..].chars().count() - 1,
        };
        let mut mark = from;
        mark.index = at as u64;
        mark.line += breaks as u64;
        mark.column = column as u64;
        mark
    }

    fn feed(&self) -> reader::Feed<'_> {
        reader::Feed::new(
            self.text.as_bytes(),
            &self.steps,
            self.decoded.error.is_some(),
        )
    }

    /// A mark of `text` as a position in the decoded text: columns lose what edits
    /// earlier on the same line added.
    fn pos(&self, mark: libyaml_safer::Mark) -> Pos {
        let (index, line) = (mark.index as usize, mark.line as usize);
        let mut column = mark.column as usize;
        let before = self.shifts.partition_point(|&(at, _, _)| at < index);
        for &(_, edit_line, extra) in self.shifts[..before].iter().rev() {
            if edit_line != line {
                break;
            }
            column = column.saturating_sub(extra);
        }
        Pos { line, column }
    }

    fn restore_byte_order_marks(&self, tree: &mut Tree) {
        let Some(stand_in) = self.placeholder else {
            return;
        };
        for node in &mut tree.nodes {
            if let Kind::Scalar { value, .. } = &mut node.kind
                && value.contains(stand_in)
            {
                *value = value.replace(stand_in, "\u{FEFF}");
            }
        }
    }

    /// go-yaml's tags take `,`, `[` and `]` as URI characters anywhere; libyaml's end
    /// there, and libyaml-safer panics where a flow collection's `,` follows a tag
    /// (`[!x, 1]`). So inside every tag the scanner will meet, those characters are
    /// written as URI escapes (`%2C`), which give libyaml-safer go-yaml's tag, and a
    /// `,` right after a verbatim tag (`!<x>,`, an error in go-yaml) as another
    /// character that is not white space, which gives the same error without the panic.
    ///
    /// Which `!` are inside a scalar is what libyaml-safer's own scanner says of the
    /// edited text: those lose their edits. Every other keeps them: a tag's are needed,
    /// a comment's change nothing, and one the scanner did not reach (past an error)
    /// is safer kept, since an edit never makes the scanner panic. Where a dropped
    /// edit was inside a flow collection's plain scalar it changed how the text after
    /// it scans, so the text is scanned again; what the scanner makes of a `!` depends
    /// only on the text before it, so each scan settles at least one more.
    fn guard_tags(&mut self) {
        let candidates = tag_candidates(&self.decoded.text);
        if candidates.is_empty() {
            return;
        }
        let mut active = vec![true; candidates.len()];
        let mut settled = 0;
        loop {
            // The edits of the active candidates, and the candidate of each.
            let mut owners = Vec::new();
            self.edits.clear();
            for (i, c) in candidates.iter().enumerate().filter(|(i, _)| active[*i]) {
                owners.extend(std::iter::repeat_n(i, c.edits.len()));
                self.edits.extend(c.edits.iter().copied());
            }
            self.apply();
            let (scalars, stopped) = self.scan_scalars();
            // A scan stopped right at an edit's first byte was in no tag there: its `!`
            // was inside a single-quoted scalar whose closing quote the tag characters
            // ran on past (`['e !g']`: go-yaml's tag would take `'` and `]`), and the
            // edit broke what follows the scalar, which the scanner reads before it
            // hands over the scalar. That candidate loses its edits, and the ones after
            // it are looked at again.
            // (The `,` after a verbatim tag is edited to give an error: not that.)
            if let Some(at) = stopped
                && let Some(k) = self.shifts.iter().position(|&(start, _, _)| start == at)
                && self.edits[k].with.starts_with('%')
                && active[owners[k]]
            {
                let owner = owners[k];
                active[owner] = false;
                if settled > owner + 1 {
                    active[owner + 1..settled].fill(true);
                }
                settled = settled.min(owner + 1);
                continue;
            }
            let mut rescan = false;
            // `text` offsets of the candidates, from the edits before each.
            let (mut edit, mut grown) = (0, 0);
            while settled < candidates.len() {
                let i = settled;
                settled += 1;
                let bang = candidates[i].bang;
                while let Some(e) = self.edits.get(edit).filter(|e| e.at < bang) {
                    grown += e.with.len() - e.len;
                    edit += 1;
                }
                let at = bang + grown;
                let inside = scalars.partition_point(|&(start, _, _)| start < at);
                let Some(&(_, end, flow_plain)) = inside.checked_sub(1).map(|j| &scalars[j]) else {
                    continue;
                };
                if at < end && active[i] {
                    active[i] = false;
                    if flow_plain {
                        rescan = true;
                        break;
                    }
                }
            }
            if !rescan {
                break;
            }
        }
        self.edits = candidates
            .iter()
            .zip(&active)
            .filter(|(_, on)| **on)
            .flat_map(|(c, _)| c.edits.iter().copied())
            .collect();
        self.apply();
    }

    /// Whether go-yaml records a possible simple key directly inside the flow collection
    /// that starts at `at` in `text`, as it does for any node or property met where a
    /// key may start.
    ///
    /// Where it records none, go-yaml v2 forgets that the collection itself may be a
    /// key: closing a flow level drops the key recorded under the token number that
    /// level started with, which is then the collection's own. Its scanner so hands the
    /// collection to the parser before reading the `:` after it, and a block mapping
    /// whose first key is such a collection (`{}: 1`, `[]: 1`, `{? a}: 1`) is, at a
    /// document's root, that collection alone, the rest of the document unread; anywhere
    /// else it is an error, as a collection key is to libyaml's reading too.
    fn key_saved_inside(&self, at: usize) -> bool {
        let masked = flow::masked(&self.text, &flow::colon_candidates(&self.text));
        let mut scanner = libyaml_safer::Scanner::new();
        scanner.set_input(reader::Feed::new(
            masked.as_bytes(),
            &self.steps,
            self.decoded.error.is_some(),
        ));
        // How deep inside the collection the scanner is (0: not yet in it), and whether a
        // key may start at its own level.
        let (mut depth, mut allowed) = (0usize, true);
        for token in scanner {
            // An error before the collection ends: the general reading decides.
            let Ok(token) = token else {
                return true;
            };
            let start = token.start_mark.index as usize;
            if depth == 0 {
                if start > at {
                    return true;
                }
                if start == at
                    && matches!(
                        token.data,
                        TokenData::FlowSequenceStart | TokenData::FlowMappingStart
                    )
                {
                    depth = 1;
                }
                continue;
            }
            match token.data {
                TokenData::FlowSequenceEnd | TokenData::FlowMappingEnd => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                    allowed = false;
                }
                TokenData::FlowSequenceStart | TokenData::FlowMappingStart => {
                    if depth == 1 && allowed {
                        return true;
                    }
                    depth += 1;
                }
                _ if depth > 1 => {}
                TokenData::Scalar { style, .. } => {
                    if allowed {
                        return true;
                    }
                    // A plain scalar that took in a line break lets a key start after it.
                    let end = token.end_mark.index as usize;
                    let rest = &masked[end..];
                    let blanks = rest
                        .find(|c: char| {
                            !matches!(
                                c,
                                ' ' | '\t' | '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'
                            )
                        })
                        .unwrap_or(rest.len());
                    allowed = style == ScalarStyle::Plain
                        && (line_breaks(&masked[start..end]) > 0
                            || line_breaks(&rest[..blanks]) > 0);
                }
                TokenData::Anchor { .. } | TokenData::Alias { .. } | TokenData::Tag { .. }
                    if allowed =>
                {
                    return true;
                }
                TokenData::FlowEntry | TokenData::BlockEntry => allowed = true,
                // A key token of no width is one the scanner put before a simple key it
                // had recorded.
                TokenData::Key if token.end_mark.index == token.start_mark.index => {
                    return true;
                }
                TokenData::Key | TokenData::Value => allowed = false,
                _ => {}
            }
        }
        true
    }

    /// The scalars libyaml-safer's scanner finds in `text`, in order, up to its first
    /// error: where each starts and ends, and whether it is a plain scalar inside a
    /// flow collection; and where the error is, if the scan stopped at one. The scan
    /// reads [`flow::masked`] text, so a `:` that go-yaml keeps in a flow plain scalar
    /// does not stop it.
    fn scan_scalars(&self) -> (Vec<(usize, usize, bool)>, Option<usize>) {
        let masked = flow::masked(&self.text, &flow::colon_candidates(&self.text));
        let mut scanner = libyaml_safer::Scanner::new();
        scanner.set_input(reader::Feed::new(
            masked.as_bytes(),
            &self.steps,
            self.decoded.error.is_some(),
        ));
        let mut scalars = Vec::new();
        let mut flow = 0usize;
        for token in scanner {
            let token = match token {
                Ok(token) => token,
                Err(e) => return (scalars, e.problem_mark().map(|m| m.index as usize)),
            };
            match token.data {
                TokenData::FlowSequenceStart | TokenData::FlowMappingStart => flow += 1,
                TokenData::FlowSequenceEnd | TokenData::FlowMappingEnd => {
                    flow = flow.saturating_sub(1);
                }
                TokenData::Scalar { style, .. } => scalars.push((
                    token.start_mark.index as usize,
                    token.end_mark.index as usize,
                    flow > 0 && style == ScalarStyle::Plain,
                )),
                _ => {}
            }
        }
        (scalars, None)
    }
}

/// A `!` that, if it starts a tag, needs edits for libyaml-safer to read it as go-yaml.
struct Candidate {
    bang: usize,
    edits: Vec<Edit>,
}

/// go-yaml's URI characters, `,`, `[` and `]` included.
fn uri_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_;/?:@&=+$,.!~*'()[]%".contains(&b)
}

fn tag_candidates(text: &str) -> Vec<Candidate> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for bang in (0..bytes.len()).filter(|&i| bytes[i] == b'!') {
        // A tag starts where a token can: after white space, a line break, an
        // indicator, a closing quote or a skipped U+FEFF. Anywhere else a `!` is inside
        // a scalar or a comment, and skipping it here spares a scan.
        let after = text[..bang].chars().next_back();
        if !after.is_none_or(|c| {
            matches!(
                c,
                ' ' | '\t'
                    | '\n'
                    | '\r'
                    | '\u{85}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{FEFF}'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | ','
                    | ':'
                    | '?'
                    | '-'
                    | '"'
                    | '\''
            )
        }) {
            continue;
        }
        let mut edits = Vec::new();
        if bytes.get(bang + 1) == Some(&b'<') {
            let mut end = bang + 2;
            while end < bytes.len() && uri_char(bytes[end]) {
                end += 1;
            }
            if bytes.get(end) == Some(&b'>') && bytes.get(end + 1) == Some(&b',') {
                edits.push(Edit {
                    at: end + 1,
                    len: 1,
                    with: "x",
                    colon: false,
                });
            }
        } else {
            let mut end = bang + 1;
            while end < bytes.len() && uri_char(bytes[end]) {
                let with = match bytes[end] {
                    b',' => Some("%2C"),
                    b'[' => Some("%5B"),
                    b']' => Some("%5D"),
                    _ => None,
                };
                if let Some(with) = with {
                    edits.push(Edit {
                        at: end,
                        len: 1,
                        with,
                        colon: false,
                    });
                }
                end += 1;
            }
        }
        // A `!` inside the run of an earlier one shares its edits: the earlier one
        // decides them.
        if let Some(last) = out.last() {
            let last: &Candidate = last;
            if edits
                .first()
                .is_some_and(|e| last.edits.iter().any(|l| l.at == e.at))
            {
                continue;
            }
        }
        if !edits.is_empty() {
            out.push(Candidate { bang, edits });
        }
    }
    out
}

/// libyaml's line breaks in `text` (CR LF counts once).
fn line_breaks(text: &str) -> usize {
    let mut n = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                chars.next_if_eq(&'\n');
                n += 1;
            }
            '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => n += 1,
            _ => {}
        }
    }
    n
}

enum Failure {
    /// A `\'` escape at this byte offset of the text.
    QuoteEscape(usize),
    /// libyaml's "found unexpected ':'" in a flow plain scalar, where go-yaml keeps the
    /// `:` (see [`flow`]).
    FlowColon(Located),
    Located(Located),
}

impl From<Located> for Failure {
    fn from(e: Located) -> Self {
        Failure::Located(e)
    }
}

/// The document's tree, and the literal or folded scalar that reaches the end of the
/// text if one does (see [`end`]).
fn compose_once(source: &Source) -> Result<(Tree, Option<u32>), Failure> {
    // The feed starts with a UTF-8 byte order mark, so marks count bytes of `text`.
    let text = source.text.as_bytes();
    let mut parser = Parser::new();
    parser.set_input(source.feed());
    let mut tree = Tree::default();
    let mut last_block_scalar = None;
    let mut open: Vec<(u32, bool)> = Vec::new();
    let mut is_open: Vec<bool> = Vec::new();
    let (mut flow, mut block) = (0usize, 0usize);
    let mut anchors: BTreeMap<String, u32> = BTreeMap::new();
    // Where the key of a root block mapping that has no entry yet would start.
    let mut root_key_at = None;
    // The root is a flow collection go-yaml takes for the whole document (see
    // `Source::key_lost_inside`): the document ends with it.
    let mut early_root = false;
    loop {
        let event: Event = match parser.parse() {
            Ok(event) => event,
            Err(e) => return Err(parse_failure(&e, source)),
        };
        let at = source.pos(event.start_mark);
        if root_key_at.take() == Some(event.start_mark.index)
            && matches!(
                &event.data,
                EventData::SequenceStart {
                    anchor: None,
                    tag: None,
                    style: SequenceStyle::Flow,
                    ..
                } | EventData::MappingStart {
                    anchor: None,
                    tag: None,
                    style: MappingStyle::Flow,
                    ..
                }
            )
            && !source.key_saved_inside(event.start_mark.index as usize)
        {
            // go-yaml hands this flow collection to its parser before it knows the
            // collection is a key: it is the document's root, with the properties libyaml
            // gave the mapping (the only node so far, so its anchor's node id is the
            // collection's too), and nothing after it is read.
            tree.nodes.clear();
            is_open.clear();
            open.clear();
            tree.root = None;
            block -= 1;
            early_root = true;
        }
        let (kind, anchor, opens) = match event.data {
            EventData::StreamStart { .. } | EventData::DocumentStart { .. } => continue,
            EventData::StreamEnd | EventData::DocumentEnd { .. } => {
                return Ok((tree, last_block_scalar));
            }
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
                mut value,
                plain_implicit,
                style,
                ..
            } => {
                if style == ScalarStyle::Plain {
                    let start = event.start_mark.index as usize;
                    let end = (event.end_mark.index as usize).min(text.len());
                    if flow > 0
                        && let Some(q) = flow::question_mark(&source.text[start..end], &value)
                    {
                        let mark = source.mark_at(event.start_mark, start + q);
                        return Err(Located::yaml(
                            source.pos(mark),
                            "found '?' in a plain scalar inside a flow collection: go-yaml \
                             ends the scalar there and reads a key indicator, where it \
                             expects ',' or the collection's end",
                        )
                        .into());
                    }
                    source.restore_colons(start, end, &mut value);
                }
                if style == ScalarStyle::DoubleQuoted {
                    let start = event.start_mark.index as usize;
                    let end = (event.end_mark.index as usize).min(text.len());
                    if has_slash_escape(text.get(start..end).unwrap_or_default()) {
                        return Err(Located::yaml(
                            at,
                            "found unknown escape character `\\/` while parsing a quoted scalar",
                        )
                        .into());
                    }
                }
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && event.end_mark.index as usize >= text.len()
                {
                    last_block_scalar = Some(tree.nodes.len() as u32);
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
                if !flow_style && tree.root.is_none() {
                    // A block mapping's first key starts where its event ends.
                    root_key_at = Some(event.end_mark.index);
                }
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
                if early_root && open.is_empty() {
                    return Ok((tree, last_block_scalar));
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
fn parse_failure(e: &libyaml_safer::Error, source: &Source) -> Failure {
    let problem = e.problem();
    if let Some(mark) = e.problem_mark() {
        let at = mark.index as usize;
        if problem == "found unknown escape character"
            && source.text.as_bytes().get(at..at + 2) == Some(b"\\'")
        {
            return Failure::QuoteEscape(at);
        }
        let message = match e.context() {
            Some(context) => format!("{problem} {context}"),
            None => problem.to_owned(),
        };
        let located = Located::yaml(source.pos(mark), message);
        if problem == "found unexpected ':'" {
            return Failure::FlowColon(located);
        }
        return Failure::Located(located);
    }
    // The feed stops where go-yaml's reader fails: at the end of what it decoded.
    let message = match (e.kind(), source.decoded.error) {
        (libyaml_safer::ErrorKind::Io, Some(why)) => why,
        _ => problem,
    };
    Failure::Located(Located::yaml(end_pos(&source.decoded.text), message))
}

/// Where the text ends: the line and column of the character after it.
fn end_pos(text: &str) -> Pos {
    let line = line_breaks(text);
    let last = text
        .rfind(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
        .map_or(0, |i| {
            i + text[i..].chars().next().map_or(1, char::len_utf8)
        });
    Pos {
        line,
        column: text[last..].chars().count(),
    }
}
