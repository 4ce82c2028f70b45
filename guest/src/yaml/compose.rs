//! One document's events, from libyaml-safer, made into a tree of nodes as go-yaml's
//! `parser` builds it: anchors registered when their node opens, aliases pointing at the
//! node their anchor names at that point, nothing after the first document read.
//!
//! libyaml-safer is a port of libyaml, whose scanner go-yaml v2 is a port of too, so
//! folding, block scalars, simple keys and error cases agree. The few places where
//! go-yaml's scanner and parser differ from libyaml 0.2.5 are made up for here, by edits
//! to the text libyaml-safer reads ([`Source`]) and in building the tree: go-yaml rejects
//! the escape `\/` (also in the tokens it reads past a document's last node) and accepts
//! `\'` in double-quoted scalars, takes `,`, `[`, `]` and `'` into tags, limits nesting to
//! 10,000 flow levels and 10,000 block indentation levels, ends plain scalars inside flow
//! collections at other characters ([`super::flow`]), takes only `%YAML 1.1`, and
//! forgets that a flow collection with no key inside may be a key
//! (`Source::key_saved_inside`). A text without a final line break is read with one
//! ([`super::end`]).

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
    source.guard_slashes();
    loop {
        match compose_once(&source) {
            Ok((mut tree, last)) => {
                source.restore_byte_order_marks(&mut tree);
                return Ok((tree, last));
            }
            Err(Failure::QuoteEscape(at)) => {
                // go-yaml reads `\'` as `'`; libyaml does not. `\x27` says the same to
                // both; the columns after it are given back by `Source::pos`.
                source.edit_text(at, 2, "\\x27", EditKind::Quote);
            }
            // Only documents where libyaml-safer meets such a `:` pay for the scan that
            // finds them all; a second refusal would be one the scan did not foresee.
            Err(Failure::FlowColon(e)) if source.colons_settled => return Err(e),
            Err(Failure::FlowColon(_)) => source.settle_flow_colons(),
            Err(Failure::LookAhead) => source.settle_questions(),
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
    kind: EditKind,
}

/// Why an edit is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EditKind {
    /// Tag characters as go-yaml reads them ([`Source::guard_tags`]).
    Tag,
    /// A `\'` escape, which go-yaml reads as `'`.
    Quote,
    /// A `:` that go-yaml keeps in a flow plain scalar (see [`flow`]): the scalar's
    /// value gets the `:` back.
    Colon,
    /// The `/` of a `\/` escape, made one libyaml refuses too ([`Source::guard_slashes`]).
    Slash,
    /// A `?` inside a flow plain scalar, where go-yaml ends the scalar: given as `,`,
    /// which ends it for libyaml too ([`Source::settle_questions`]).
    Question,
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
    /// Where in `text` the edits that stand in for a `?` are, in order.
    questions: Vec<usize>,
    /// Whether [`Source::settle_questions`] has run.
    questions_settled: bool,
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
            questions: Vec::new(),
            questions_settled: false,
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
        self.questions.clear();
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
            match edit.kind {
                EditKind::Colon => self.stand_ins.push(text.len()),
                EditKind::Question => self.questions.push(text.len()),
                _ => {}
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
    fn edit_text(&mut self, at: usize, len: usize, with: &'static str, kind: EditKind) {
        let edit = self.text_edit(at, len, with, kind);
        let index = self.edits.partition_point(|e| e.at < edit.at);
        self.edits.insert(index, edit);
        self.apply();
    }

    /// The edit replacing `len` bytes at `at` in `text` by `with`, in the decoded
    /// text's offsets.
    fn text_edit(&self, at: usize, len: usize, with: &'static str, kind: EditKind) -> Edit {
        let mut grown = 0;
        for edit in &self.edits {
            if edit.at + grown >= at {
                break;
            }
            grown += edit.with.len() - edit.len;
        }
        Edit {
            at: at - grown,
            len,
            with,
            kind,
        }
    }

    /// Replaces one byte at each of `at` (offsets in `text`, in order) by `with`.
    fn edit_bytes(&mut self, at: &[usize], with: &'static str, kind: EditKind) {
        if at.is_empty() {
            return;
        }
        // `text` offsets to offsets in the decoded text: both lists are in order.
        let (mut edit, mut grown) = (0, 0);
        let mut added = Vec::with_capacity(at.len());
        for &at in at {
            while let Some(e) = self.edits.get(edit).filter(|e| e.at + grown < at) {
                grown += e.with.len() - e.len;
                edit += 1;
            }
            added.push(Edit {
                at: at - grown,
                len: 1,
                with,
                kind,
            });
        }
        self.edits.extend(added);
        self.edits.sort_by_key(|e| e.at);
        self.apply();
    }

    /// Whether a scan that stopped at `at` stopped at a `\'` escape, which libyaml
    /// refuses and go-yaml reads (see [`compose`]): the scans that look ahead give it
    /// its edit and go on, where they would otherwise stop short of the text they are
    /// asked about.
    fn quote_escape_at(&self, at: Option<usize>) -> Option<usize> {
        at.filter(|&at| self.text.as_bytes().get(at..at + 2) == Some(b"\\'"))
    }

    /// Gives libyaml-safer every `:` that go-yaml keeps in a flow plain scalar right
    /// before `,`, `?`, `[`, `]`, `{` or `}` as [`flow::COLON_STAND_IN`], which it keeps
    /// too; which `:` those are, libyaml-safer's scanner says of [`flow::masked`] text.
    /// One scan, whatever their number.
    fn settle_flow_colons(&mut self) {
        self.colons_settled = true;
        let scalars = loop {
            let (scalars, stopped) = self.scan_scalars();
            match self.quote_escape_at(stopped) {
                Some(at) => self.edit_text(at, 2, "\\x27", EditKind::Quote),
                None => break scalars,
            }
        };
        let candidates = flow::colon_candidates(&self.text);
        let inside: Vec<usize> = candidates
            .into_iter()
            .filter(|&at| {
                let after = scalars.partition_point(|&(start, ..)| start < at);
                after.checked_sub(1).is_some_and(|i| {
                    let (_, end, style, in_flow) = scalars[i];
                    in_flow && style == ScalarStyle::Plain && at < end
                })
            })
            .collect();
        self.edit_bytes(&inside, flow::COLON_STAND_IN, EditKind::Colon);
    }

    /// Gives libyaml-safer each `?` inside a flow plain scalar as a `,`, which ends the
    /// scalar where go-yaml's scanner ends it and lets both scanners read on alike.
    ///
    /// A `?` in a scalar the parser takes fails the document anyway (see
    /// [`flow::question_mark`]); this is for the tokens go-yaml's scanner reads past the
    /// document's last node, to learn that the document has ended: there the scalar
    /// ends at the `?` and the text after it is read as more tokens, one of which can be
    /// an error (`{a: 1}\n[b?>]` is refused, `>` being no token in a flow collection).
    /// The parser never reaches such a `?` without failing ([`compose_once`]).
    fn settle_questions(&mut self) {
        self.questions_settled = true;
        let scalars = loop {
            let (scalars, stopped) = self.scan_scalars();
            match self.quote_escape_at(stopped) {
                Some(at) => self.edit_text(at, 2, "\\x27", EditKind::Quote),
                None => break scalars,
            }
        };
        let mut questions = Vec::new();
        for (start, end, style, in_flow) in scalars {
            if in_flow && style == ScalarStyle::Plain {
                let raw = &self.text.as_bytes()[start..end.min(self.text.len())];
                questions.extend(
                    (1..raw.len())
                        .filter(|&i| raw[i] == b'?')
                        .map(|i| start + i),
                );
            }
        }
        self.edit_bytes(&questions, ",", EditKind::Question);
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
        // `\'` escapes met on the way, kept across the rebuilds of the edits.
        let mut quotes: Vec<Edit> = Vec::new();
        loop {
            // The edits of the active candidates and the escapes, and the candidate of
            // each (none for an escape).
            let mut owned: Vec<(Edit, Option<usize>)> = quotes.iter().map(|&e| (e, None)).collect();
            for (i, c) in candidates.iter().enumerate().filter(|(i, _)| active[*i]) {
                owned.extend(c.edits.iter().map(|&e| (e, Some(i))));
            }
            owned.sort_by_key(|(e, _)| e.at);
            let owners: Vec<Option<usize>> = owned.iter().map(|(_, o)| *o).collect();
            self.edits = owned.into_iter().map(|(e, _)| e).collect();
            self.apply();
            let (scalars, stopped) = self.scan_scalars();
            if let Some(at) = self.quote_escape_at(stopped) {
                quotes.push(self.text_edit(at, 2, "\\x27", EditKind::Quote));
                continue;
            }
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
                && let Some(owner) = owners[k]
                && active[owner]
            {
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
                let inside = scalars.partition_point(|&(start, ..)| start < at);
                let Some(&(_, end, style, in_flow)) = inside.checked_sub(1).map(|j| &scalars[j])
                else {
                    continue;
                };
                let flow_plain = in_flow && style == ScalarStyle::Plain;
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
        self.edits = quotes;
        for (c, _) in candidates.iter().zip(&active).filter(|(_, on)| **on) {
            self.edits.extend(c.edits.iter().copied());
        }
        self.edits.sort_by_key(|e| e.at);
        self.apply();
    }

    /// go-yaml refuses the escape `\/` (YAML 1.2's; libyaml reads it) wherever its
    /// scanner reads a double-quoted scalar, and its scanner reads a token or more past
    /// the end of what the parser has taken (`c\n#\n"\/"` is refused, its root being
    /// `c`). So the `/` of each such escape is given to libyaml-safer as a character it
    /// refuses after `\` too: its scanner, which reads ahead as go-yaml's does, stops
    /// where go-yaml's stops.
    fn guard_slashes(&mut self) {
        if !self.text.contains("\\/") {
            return;
        }
        let scalars = loop {
            let (scalars, stopped) = self.scan_scalars();
            match self.quote_escape_at(stopped) {
                Some(at) => self.edit_text(at, 2, "\\x27", EditKind::Quote),
                None => break scalars,
            }
        };
        let mut slashes = Vec::new();
        for (start, end, style, _) in scalars {
            if style != ScalarStyle::DoubleQuoted {
                continue;
            }
            let raw = &self.text.as_bytes()[start..end.min(self.text.len())];
            let mut i = 0;
            while i + 1 < raw.len() {
                if raw[i] == b'\\' {
                    if raw[i + 1] == b'/' {
                        slashes.push(start + i + 1);
                    }
                    i += 2;
                } else {
                    i += 1;
                }
            }
        }
        self.edit_bytes(&slashes, "%", EditKind::Slash);
    }

    /// Whether only spaces come before `at` on its line of `text`.
    fn starts_its_line(&self, at: usize) -> bool {
        let before = &self.text[..at];
        let line = before
            .rfind(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
            .map_or(0, |i| {
                i + before[i..].chars().next().map_or(1, char::len_utf8)
            });
        before[line..].bytes().all(|b| b == b' ')
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
    /// error: where each starts and ends, its style and whether it is inside a flow
    /// collection; and where the error is, if the scan stopped at one. The scan reads
    /// [`flow::masked`] text, so a `:` that go-yaml keeps in a flow plain scalar does
    /// not stop it.
    fn scan_scalars(&self) -> (Vec<Scanned>, Option<usize>) {
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
                    style,
                    flow > 0,
                )),
                _ => {}
            }
        }
        (scalars, None)
    }
}

/// A scalar token [`Source::scan_scalars`] found: where it starts and ends in `text`, its
/// style, and whether it is inside a flow collection.
type Scanned = (usize, usize, ScalarStyle, bool);

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
                    kind: EditKind::Tag,
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
                        kind: EditKind::Tag,
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
    /// The document ended with a `?` in the text after its last node: go-yaml's scanner
    /// may read that text differently (see [`Source::settle_questions`]).
    LookAhead,
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
    // The last scalar made of nothing (a missing value), and a collection after which
    // a missing key follows (see below).
    let mut last_empty = None;
    let mut null_key_after = None;
    // Where the last node event ends, and where it starts.
    let (mut last_end, mut last_mark) = (0, None);
    loop {
        let event: Event = match parser.parse() {
            Ok(event) => event,
            Err(e) => return Err(parse_failure(&e, source)),
        };
        let at = source.pos(event.start_mark);
        // go-yaml's parser meets the key indicator its scanner made of a `?` in a flow
        // plain scalar as soon as it reads past that scalar, and fails.
        if let Some(&q) = source.questions.first()
            && q < event.start_mark.index as usize
        {
            let from = last_mark.unwrap_or(event.start_mark);
            return Err(Located::yaml(source.pos(source.mark_at(from, q)), QUESTION).into());
        }
        if !matches!(
            event.data,
            EventData::StreamStart { .. }
                | EventData::StreamEnd
                | EventData::DocumentStart { .. }
                | EventData::DocumentEnd { .. }
        ) {
            last_end = event.end_mark.index as usize;
            last_mark = Some(event.start_mark);
        }
        // At the end: whether go-yaml's look past the last node could read otherwise (a
        // `?` and a flow collection for it to be in).
        let look_ahead = |last_end: usize| {
            let rest = &source.text[last_end.min(text.len())..];
            !source.questions_settled && rest.contains('?') && rest.contains(['[', '{'])
        };
        let bare_flow_start = matches!(
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
        );
        let first_root_key = root_key_at.take() == Some(event.start_mark.index);
        if bare_flow_start
            && first_root_key
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
        } else if bare_flow_start
            && let Some(&(parent, false)) = open.last()
            && let Kind::Mapping(children) = &tree.nodes[parent as usize].kind
            && children.len() % 2 == 0
            && children.last().is_some_and(|&v| Some(v) == last_empty)
            && source.starts_its_line(event.start_mark.index as usize)
            && !source.key_saved_inside(event.start_mark.index as usize)
        {
            // The same below the root, where the mapping's last key has no value: go-yaml
            // parses the collection as that value, and then a key indicator with no key
            // before the `:`, a null key (`b:\n{}: 1` is `{b: {}, null: 1}`, refused
            // unless a duplicate key replaces the mapping).
            let id = tree.nodes.len() as u32;
            let Kind::Mapping(children) = &mut tree.nodes[parent as usize].kind else {
                unreachable!("matched above");
            };
            let missing = children.pop().expect("a value");
            for target in anchors.values_mut().filter(|t| **t == missing) {
                *target = id;
            }
            null_key_after = Some(id);
        }
        let (kind, anchor, opens) = match event.data {
            // go-yaml takes `%YAML 1.1` alone, libyaml 1.2 too. (With LF line breaks the
            // splitter cuts a directive from its `---`; with other breaks it does not.)
            EventData::DocumentStart {
                version_directive: Some(v),
                ..
            } if (v.major, v.minor) != (1, 1) => {
                return Err(Located::yaml(at, "found incompatible YAML document").into());
            }
            EventData::StreamStart { .. } | EventData::DocumentStart { .. } => continue,
            EventData::StreamEnd | EventData::DocumentEnd { .. } => {
                if look_ahead(last_end) {
                    return Err(Failure::LookAhead);
                }
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
                        return Err(Located::yaml(source.pos(mark), QUESTION).into());
                    }
                    source.restore_colons(start, end, &mut value);
                }
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && event.end_mark.index as usize >= text.len()
                {
                    last_block_scalar = Some(tree.nodes.len() as u32);
                }
                // No plain scalar is empty: this one is a missing node (its properties
                // aside).
                if style == ScalarStyle::Plain && value.is_empty() {
                    last_empty = Some(tree.nodes.len() as u32);
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
                    if look_ahead(last_end) {
                        return Err(Failure::LookAhead);
                    }
                    return Ok((tree, last_block_scalar));
                }
                if null_key_after == Some(id) {
                    null_key_after = None;
                    let key = tree.nodes.len() as u32;
                    tree.nodes.push(Node {
                        kind: Kind::Scalar {
                            value: String::new(),
                            tag: None,
                            plain: true,
                        },
                        pos: tree.nodes[id as usize].pos,
                    });
                    is_open.push(false);
                    let &(parent, _) = open.last().expect("the mapping holding it");
                    if let Kind::Mapping(children) = &mut tree.nodes[parent as usize].kind {
                        children.push(key);
                    }
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

/// The refusal of a `?` in a flow plain scalar.
const QUESTION: &str = "found '?' in a plain scalar inside a flow collection: go-yaml ends \
                        the scalar there and reads a key indicator, where it expects ',' or \
                        the collection's end";

/// Counts one more open collection, failing past go-yaml's limits.
fn nest(flow: &mut usize, block: &mut usize, flow_style: bool, at: Pos) -> Result<(), Failure> {
    let level = if flow_style { flow } else { block };
    *level += 1;
    if *level > MAX_NESTING {
        return Err(Located::yaml(at, format!("exceeded max depth of {MAX_NESTING}")).into());
    }
    Ok(())
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
        let slash = |k: usize| source.edits[k].kind == EditKind::Slash;
        let message = match source
            .shifts
            .iter()
            .position(|&(start, _, _)| start == at + 1)
        {
            Some(k) if problem == "found unknown escape character" && slash(k) => {
                "found unknown escape character `\\/` while parsing a quoted scalar".to_owned()
            }
            _ => message,
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
