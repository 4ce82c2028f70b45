//! A structure-aware generator of YAML streams for the differential tests against the
//! Go peer (`differential.rs`): it turns bytes, read through `arbitrary::Unstructured`,
//! into streams of the shapes where YAML readers part ways, so that a random run spends
//! its time near the rules of tests/vectors/YAML-RULES.md rather than on noise:
//!
//! - block and flow collections, nested in each other, flow ones across lines;
//! - plain scalars holding indicators (`:`, `?`, `-`, `#`, `,`, `!`, `&`, `*`, `[`, `{`),
//!   YAML 1.1 spellings (`y`, `0777`, `.inf`, timestamps), and folded across lines;
//! - single- and double-quoted scalars with their escapes (the ones go-yaml refuses too);
//! - anchors, aliases (unknown ones too), merge keys, explicit and odd keys;
//! - tags (core, custom, verbatim, named handles);
//! - literal and folded block scalars with chomping and indentation indicators;
//! - document markers and directives (`---` with and without comments or content,
//!   `...`, `%YAML`, `%TAG`), comments;
//! - line breaks other than LF (CR LF, CR, NEL, LS, PS), byte order marks, UTF-16;
//! - and, at a low rate, a few random edits (a character inserted, dropped or doubled,
//!   a tab), since most of the interesting refusals sit one character away from a
//!   valid stream.
//!
//! The same bytes always give the same stream, so a seed reproduces a case. The
//! generator knows nothing of what Go makes of a stream: the peer decides.

use arbitrary::{Result, Unstructured};

/// Nesting limit of generated collections.
const MAX_DEPTH: usize = 5;

/// The YAML streams `u` describes: the stream's bytes.
pub fn stream(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    let mut g = Gen {
        u,
        out: String::new(),
        anchors: Vec::new(),
        handle: false,
        wild: false,
        one_line: false,
    };
    // Two streams in five are wild: they take the choices that are mostly refused. The
    // others keep to what Go mostly reads, so that both halves of the rules get runs.
    g.wild = g.chance(2, 5)?;
    g.stream()?;
    let text = std::mem::take(&mut g.out);
    let breaks = g.line_breaks(&text)?;
    let mut bytes = g.encode(&breaks)?;
    g.mutate(&mut bytes)?;
    Ok(bytes)
}

struct Gen<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    /// The stream so far, with `\n` for every line break (chosen at the end).
    out: String,
    /// Anchors defined so far in the current document.
    anchors: Vec<String>,
    /// Whether the current document may use the `!e!` handle (a `%TAG` defined it).
    handle: bool,
    /// Whether this stream takes choices that are mostly refused (bad separators,
    /// directives, unknown aliases, refused escapes, odd tags, indicators anywhere in
    /// plain scalars, random edits).
    wild: bool,
    /// Whether what is being generated must stay on one line (a key, outside wild
    /// streams: a simple key cannot span lines).
    one_line: bool,
}

/// Plain scalars: words, YAML 1.1 spellings, numbers in Go's syntax, timestamps, and
/// text with indicators inside.
const PLAIN: &[&str] = &[
    "a",
    "b",
    "foo",
    "bar-baz",
    "x_y",
    "v1",
    "v1.10",
    "nginx:1.25",
    "web",
    "1",
    "0",
    "-1",
    "+1",
    "0777",
    "08",
    "0x1F",
    "0o17",
    "0b101",
    "1_000",
    "1__0",
    "1.5",
    "1.10",
    "1e3",
    "1e400",
    ".5",
    "1.",
    "-0.0",
    ".inf",
    "-.Inf",
    ".nan",
    ".NaN",
    "18446744073709551615",
    "9223372036854775808",
    "y",
    "Y",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "True",
    "tRUE",
    "n",
    "~",
    "null",
    "Null",
    "nUll",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10",
    "12:30",
    "190:20:30",
    "http://x.y/z",
    "http://x.y/?a=b",
    "a:b",
    "a::b",
    "a:",
    "a?b",
    "a?",
    "-a",
    "-",
    "--",
    "a-",
    "a#b",
    "a!b",
    "a&b",
    "a*b",
    "a%b",
    "a@b",
    "a`b",
    "a|b",
    "a>b",
    "a'b",
    "a\"b",
    "<<",
    "=",
    "2001:db8::",
    "1.2.3.4",
    "c:\\dir",
    "é",
    "日本",
    "\u{FEFF}x",
];

/// Characters put inside and around plain scalars.
const INDICATORS: &[&str] = &[
    ":", "?", "-", "#", ",", "!", "&", "*", "[", "]", "{", "}", "|", ">", "'", "\"", "%", "@", "`",
    " ", "::", ":,", ":]", ":}", "?:", "\t",
];

/// Double-quoted escapes, go-yaml's refused ones (`\/`, surrogates) among them.
const ESCAPES: &[&str] = &[
    "\\n",
    "\\t",
    "\\\\",
    "\\\"",
    "\\'",
    "\\/",
    "\\0",
    "\\a",
    "\\e",
    "\\x41",
    "\\xff",
    "\\u00e9",
    "\\uD800",
    "\\U0001F600",
    "\\N",
    "\\_",
    "\\L",
    "\\P",
    "\\ ",
    "\\\t",
    "\\q",
];

const TAGS: &[&str] = &[
    "!!str",
    "!!int",
    "!!float",
    "!!bool",
    "!!null",
    "!!binary",
    "!!timestamp",
    "!!map",
    "!!seq",
    "!!merge",
    "!foo",
    "!",
    "!<tag:yaml.org,2002:str>",
    "!<x>",
    "!e!x",
    "!x,y",
    "!x[1]",
];

impl Gen<'_, '_> {
    fn pick<'c>(&mut self, choices: &[&'c str]) -> Result<&'c str> {
        Ok(*self.u.choose(choices)?)
    }

    fn chance(&mut self, numerator: u8, denominator: u8) -> Result<bool> {
        self.u.ratio(numerator, denominator)
    }

    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn newline(&mut self) {
        self.out.push('\n');
    }

    /// A line break inside a scalar or flow collection, where the node may span lines:
    /// a space where it must not.
    fn inner_newline(&mut self) {
        self.out.push(if self.one_line { ' ' } else { '\n' });
    }

    /// Runs `f` with what it writes kept on one line unless the stream is wild.
    fn on_one_line(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let before = self.one_line;
        self.one_line = !self.wild;
        let result = f(self);
        self.one_line = before;
        result
    }

    fn indent(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    fn stream(&mut self) -> Result<()> {
        let documents = self.u.int_in_range(1..=3)?;
        for d in 0..documents {
            self.anchors.clear();
            self.handle = false;
            if self.wild && self.chance(1, 10)? {
                self.directives()?;
            }
            if d > 0 || self.chance(1, 3)? {
                self.separator()?;
            }
            if self.chance(1, 8)? {
                self.comment_line(0)?;
            }
            self.document()?;
            if self.chance(1, 12)? {
                self.push("...");
                self.newline();
                if self.chance(1, 2)? {
                    self.push("b: after the end marker");
                    self.newline();
                }
            }
        }
        Ok(())
    }

    fn directives(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=3)? {
            0 => self.push("%YAML 1.1"),
            1 => self.push("%YAML 1.2"),
            2 => {
                self.push("%TAG !e! tag:example.com,2000:");
                self.handle = true;
            }
            _ => self.push("%FOO bar"),
        }
        self.newline();
        Ok(())
    }

    fn separator(&mut self) -> Result<()> {
        let sep = if self.wild && self.chance(1, 8)? {
            self.pick(&["--- a: 1", "----", "--- |", "--- \u{A0}", "---\t", "---x"])?
        } else {
            self.pick(&["---", "---", "---", "--- # c", "---#c", "---   "])?
        };
        self.push(sep);
        self.newline();
        Ok(())
    }

    fn comment_line(&mut self, indent: usize) -> Result<()> {
        self.indent(indent);
        let text = self.pick(&["# c", "#", "# a: [b:, c?]", "#!x", "# ---"])?;
        self.push(text);
        self.newline();
        Ok(())
    }

    fn document(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=39)? {
            0 => {}
            1 => {
                let s = self.pick(&["~", "null", "''", "[]", "a", "1", "{}"])?;
                self.push(s);
                self.newline();
            }
            2 => {
                self.block_sequence(0, 1)?;
            }
            3 => {
                self.flow(0, 1)?;
                self.newline();
            }
            _ => {
                if self.chance(1, 3)? {
                    self.push("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
                }
                self.block_mapping(0, 1)?;
            }
        }
        Ok(())
    }

    /// Entries of a block mapping whose keys sit at column `indent`; the cursor is at
    /// the start of a line.
    fn block_mapping(&mut self, indent: usize, depth: usize) -> Result<()> {
        let entries = self.u.int_in_range(1..=4)?;
        for _ in 0..entries {
            if self.chance(1, 12)? {
                self.comment_line(indent)?;
            }
            self.indent(indent);
            self.entry(indent, depth)?;
        }
        Ok(())
    }

    /// One `key: value` at the cursor, the key's column being `indent`.
    fn entry(&mut self, indent: usize, depth: usize) -> Result<()> {
        match self.u.int_in_range(0..=19)? {
            0 => {
                // An explicit key.
                self.push("? ");
                self.inline_value(indent + 2, depth + 1)?;
                self.indent(indent);
                self.push(":");
            }
            1 if !self.anchors.is_empty() => {
                // A merge key.
                self.push("<<: ");
                if self.chance(1, 2)? {
                    self.alias()?;
                } else {
                    self.push("[");
                    self.alias()?;
                    self.push(", ");
                    self.alias()?;
                    self.push("]");
                }
                self.newline();
                return Ok(());
            }
            2 if !self.anchors.is_empty() => {
                self.alias()?;
                self.push(" :");
            }
            3 => {
                self.on_one_line(|g| g.flow(indent, depth + 1))?;
                self.push(":");
            }
            _ => {
                self.on_one_line(Self::key)?;
                self.push(":");
            }
        }
        self.value(indent, depth)
    }

    fn key(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=9)? {
            0 => self.single_quoted(0)?,
            1 => self.double_quoted(0)?,
            2 => {
                let k = self.pick(&[
                    "y",
                    "on",
                    "1",
                    "0x10",
                    "1.0",
                    "3.14159265358979",
                    "true",
                    "\"true\"",
                    "\"1\"",
                    ".nan",
                    "1e39",
                    "-0.0",
                    "0.0",
                    "<<",
                    "\"<<\"",
                    "2001-12-14",
                ])?;
                self.push(k);
            }
            3 if self.wild => {
                // Keys Go refuses: null and uint64.
                let k = self.pick(&["~", "null", "", "18446744073709551615"])?;
                self.push(k);
            }
            _ => {
                let k = self.pick(&[
                    "a", "b", "c", "name", "labels", "args", "data", "spec", "x-y", "a.b", "a/b",
                    "a b", "a:b", "a?b", "-k", "k#", "日本",
                ])?;
                self.push(k);
            }
        }
        Ok(())
    }

    /// After a key's `:`: a value on the same line, a block collection or a block
    /// scalar; always ends at the start of a line.
    fn value(&mut self, indent: usize, depth: usize) -> Result<()> {
        let nested = depth < MAX_DEPTH;
        match self.u.int_in_range(0..=15)? {
            0 if nested => {
                let anchor = self.properties()?;
                self.trailing_comment()?;
                self.newline();
                let more = self.u.int_in_range(1..=4)?;
                self.block_mapping(indent + more, depth + 1)?;
                self.define(anchor);
                Ok(())
            }
            1 if nested => {
                let anchor = self.properties()?;
                self.newline();
                // An indentless sequence at the key's column, or an indented one.
                let more = if self.chance(1, 2)? { 0 } else { 2 };
                self.block_sequence(indent + more, depth + 1)?;
                self.define(anchor);
                Ok(())
            }
            2 => self.block_scalar(indent),
            3 => {
                // Nothing: null.
                self.trailing_comment()?;
                self.newline();
                Ok(())
            }
            _ => {
                let gap = if self.chance(1, 20)? { "\t" } else { " " };
                self.push(gap);
                self.inline_value(indent + 2, depth + 1)
            }
        }
    }

    /// An anchor and a tag after a key's `:`, each maybe, each after a space: the
    /// anchor's name, to [`Gen::define`] once its node is written.
    fn properties(&mut self) -> Result<Option<String>> {
        let mut anchor = None;
        if self.chance(1, 8)? {
            self.push(" ");
            anchor = self.anchor()?;
        }
        if self.chance(1, 10)? {
            self.push(" ");
            self.tag()?;
        }
        Ok(anchor)
    }

    /// `&name`: the name, to define once the node is written (an alias inside the node
    /// it names is refused), or now, at times, in a wild stream.
    fn anchor(&mut self) -> Result<Option<String>> {
        let name = format!("a{}", self.u.int_in_range(0..=3u8)?);
        self.push("&");
        self.push(&name);
        if self.wild && self.chance(1, 4)? {
            self.anchors.push(name);
            return Ok(None);
        }
        Ok(Some(name))
    }

    /// Lets later aliases name `anchor`.
    fn define(&mut self, anchor: Option<String>) {
        self.anchors.extend(anchor);
    }

    fn alias(&mut self) -> Result<()> {
        let name = if self.anchors.is_empty() || self.chance(1, 12)? {
            if self.wild { "unknown" } else { "a0" }.to_owned()
        } else {
            let i = self.u.choose_index(self.anchors.len())?;
            self.anchors[i].clone()
        };
        self.push("*");
        self.push(&name);
        Ok(())
    }

    fn tag(&mut self) -> Result<()> {
        let mut tag = if self.wild {
            self.pick(TAGS)?
        } else {
            self.pick(&["!!str", "!foo", "!", "!!map", "!<tag:yaml.org,2002:str>"])?
        };
        if tag == "!e!x" && !self.handle && self.chance(3, 4)? {
            tag = "!foo";
        }
        self.push(tag);
        Ok(())
    }

    fn trailing_comment(&mut self) -> Result<()> {
        if self.chance(1, 10)? {
            let c = self.pick(&[" # c", " #", "#c", " # a: [b:]"])?;
            self.push(c);
        }
        Ok(())
    }

    /// A value that starts on the current line (a scalar or a flow collection, with its
    /// properties) and ends the line; continuation lines are indented by `indent`.
    fn inline_value(&mut self, indent: usize, depth: usize) -> Result<()> {
        let kind = self.u.int_in_range(0..=11)?;
        if kind == 2 && !self.anchors.is_empty() {
            // An alias takes no properties.
            self.alias()?;
        } else {
            let mut anchor = None;
            if self.chance(1, 8)? {
                anchor = self.anchor()?;
                self.push(" ");
            }
            if self.chance(1, 10)? {
                self.tag()?;
                self.push(" ");
            }
            match kind {
                0 | 1 if depth < MAX_DEPTH => self.flow(indent, depth)?,
                3 => self.single_quoted(indent)?,
                4 => self.double_quoted(indent)?,
                _ => self.plain(indent, false)?,
            }
            self.define(anchor);
        }
        self.trailing_comment()?;
        self.newline();
        Ok(())
    }

    /// A plain scalar, maybe of several words and lines; `flow` says whether it is
    /// inside a flow collection, where more of it is interesting.
    fn plain(&mut self, indent: usize, flow: bool) -> Result<()> {
        let words = self.u.int_in_range(1..=3)?;
        for w in 0..words {
            if w > 0 {
                if self.chance(1, 4)? {
                    self.inner_newline();
                    self.indent(indent);
                    if self.chance(1, 6)? {
                        self.inner_newline();
                        self.indent(indent);
                    }
                } else {
                    self.push(" ");
                }
            }
            let start = self.out.len();
            let mut word = self.pick(PLAIN)?;
            if flow && !self.wild && word.contains('?') && self.chance(7, 8)? {
                // go-yaml refuses a `?` in a flow plain scalar: now and then is enough.
                word = "b";
            }
            self.push(word);
            let odds = match (self.wild, flow) {
                (true, true) => 3,
                (true, false) => 6,
                (false, true) => 6,
                (false, false) => 20,
            };
            if self.chance(1, odds)? {
                // Outside wild streams, only what go-yaml reads in any context.
                let extra = if self.wild {
                    self.pick(INDICATORS)?
                } else {
                    self.pick(&[":", "::", ":]", "-", "!", "&", "*", "%", "@", "`", "'"])?
                };
                self.push(extra);
                if self.chance(1, 2)? {
                    let word = self.pick(PLAIN)?;
                    self.push(word);
                }
            }
            // In block context a word ending with `:` before a space or a line break
            // makes a key of the words before it: outside wild streams, it goes on.
            if !self.wild && !flow && self.out[start..].ends_with(':') {
                self.push("x");
            }
        }
        Ok(())
    }

    fn single_quoted(&mut self, indent: usize) -> Result<()> {
        self.push("'");
        let parts = self.u.int_in_range(0..=3)?;
        for _ in 0..parts {
            match self.u.int_in_range(0..=5)? {
                0 => self.push("''"),
                1 => {
                    self.inner_newline();
                    self.indent(indent);
                }
                2 => self.push(" "),
                _ => {
                    let w = self.pick(PLAIN)?;
                    self.push(&w.replace('\'', "''"));
                }
            }
        }
        self.push("'");
        Ok(())
    }

    fn double_quoted(&mut self, indent: usize) -> Result<()> {
        self.push("\"");
        let parts = self.u.int_in_range(0..=3)?;
        for _ in 0..parts {
            match self.u.int_in_range(0..=6)? {
                0 | 1 => {
                    let e = if self.wild {
                        self.pick(ESCAPES)?
                    } else {
                        self.pick(&[
                            "\\n", "\\t", "\\\\", "\\\"", "\\x41", "\\u00e9", "\\N", "\\L", "\\'",
                        ])?
                    };
                    self.push(e);
                }
                2 => {
                    // A line break, or an escaped one.
                    if self.chance(1, 2)? {
                        self.push("\\");
                    }
                    self.inner_newline();
                    self.indent(indent);
                }
                3 => self.push(" "),
                _ => {
                    let w = self.pick(PLAIN)?;
                    self.push(&w.replace('\\', "\\\\").replace('"', "\\\""));
                }
            }
        }
        self.push("\"");
        Ok(())
    }

    /// A literal or folded block scalar after a key's `:`; its content lines are
    /// indented from `indent`.
    fn block_scalar(&mut self, indent: usize) -> Result<()> {
        self.push(" ");
        let style = self.pick(&["|", ">"])?;
        self.push(style);
        let explicit = if self.chance(1, 4)? {
            Some(self.u.int_in_range(1..=3usize)?)
        } else {
            None
        };
        let chomp = self.pick(&["", "", "-", "+"])?;
        if self.chance(1, 2)? {
            if let Some(n) = explicit {
                self.push(&n.to_string());
            }
            self.push(chomp);
        } else {
            self.push(chomp);
            if let Some(n) = explicit {
                self.push(&n.to_string());
            }
        }
        self.trailing_comment()?;
        self.newline();
        let base = indent + explicit.unwrap_or(2);
        let lines = self.u.int_in_range(0..=4)?;
        for _ in 0..lines {
            match self.u.int_in_range(0..=9)? {
                0 => {}                     // an empty line
                1 => self.indent(base + 1), // only spaces
                2 => {
                    self.indent(base + 2);
                    self.push("more indented");
                }
                3 => {
                    self.indent(base);
                    self.push("\ttab");
                }
                4 if self.wild => {
                    // Less indented: the scalar ends here, the line is the next key's.
                    self.indent(base.saturating_sub(1));
                    self.push("z: 1");
                }
                _ => {
                    self.indent(base);
                    self.plain(base, false)?;
                    if self.chance(1, 6)? {
                        self.push("  ");
                    }
                }
            }
            self.newline();
        }
        Ok(())
    }

    /// A block sequence whose dashes sit at column `indent`.
    fn block_sequence(&mut self, indent: usize, depth: usize) -> Result<()> {
        let items = self.u.int_in_range(1..=3)?;
        for _ in 0..items {
            self.indent(indent);
            self.push("-");
            match self.u.int_in_range(0..=7)? {
                0 if depth < MAX_DEPTH => {
                    // A compact mapping: `- a: 1` then the others under `a`.
                    self.push(" ");
                    self.entry(indent + 2, depth + 1)?;
                    if self.chance(1, 2)? {
                        self.block_mapping(indent + 2, depth + 1)?;
                    }
                }
                1 if depth < MAX_DEPTH => {
                    self.newline();
                    self.block_mapping(indent + 2, depth + 1)?;
                }
                2 if depth < MAX_DEPTH => {
                    self.push(" ");
                    self.block_sequence_inline(indent + 2, depth + 1)?;
                }
                3 => {
                    self.newline();
                }
                _ => {
                    self.push(" ");
                    self.inline_value(indent + 2, depth + 1)?;
                }
            }
        }
        Ok(())
    }

    /// `- - a`: a sequence starting on its parent's dash line.
    fn block_sequence_inline(&mut self, indent: usize, depth: usize) -> Result<()> {
        self.push("- ");
        self.inline_value(indent + 2, depth)?;
        if self.chance(1, 2)? {
            self.indent(indent);
            self.push("- ");
            self.inline_value(indent + 2, depth)?;
        }
        Ok(())
    }

    /// A flow sequence or mapping at the cursor; lines it spans are indented by
    /// `indent` (plus a little, or less, now and then).
    fn flow(&mut self, indent: usize, depth: usize) -> Result<()> {
        let mapping = self.chance(1, 3)?;
        self.push(if mapping { "{" } else { "[" });
        let items = self.u.int_in_range(0..=4)?;
        for i in 0..items {
            if i > 0 {
                self.push(",");
            }
            match self.u.int_in_range(0..=5)? {
                0 => {
                    self.inner_newline();
                    let col = indent + self.u.int_in_range(0..=2usize)?;
                    self.indent(col);
                }
                1 | 2 => self.push(" "),
                _ => {}
            }
            if mapping {
                self.flow_node(indent, depth, true)?;
                if self.chance(4, 5)? {
                    let colon = if self.chance(1, 6)? { ":" } else { ": " };
                    self.push(colon);
                    self.flow_node(indent, depth, false)?;
                }
            } else {
                self.flow_node(indent, depth, false)?;
                if self.chance(1, 8)? {
                    // A single-pair mapping in a sequence.
                    self.push(": ");
                    self.flow_node(indent, depth, false)?;
                }
            }
        }
        if items > 0 && self.chance(1, 8)? {
            self.push(",");
        }
        if self.chance(1, 8)? {
            self.inner_newline();
            self.indent(indent);
        }
        self.push(if mapping { "}" } else { "]" });
        Ok(())
    }

    fn flow_node(&mut self, indent: usize, depth: usize, key: bool) -> Result<()> {
        let kind = self.u.int_in_range(0..=9)?;
        if kind == 1 && !self.anchors.is_empty() {
            return self.alias();
        }
        let mut anchor = None;
        if self.chance(1, 12)? {
            anchor = self.anchor()?;
            self.push(" ");
        }
        if self.chance(1, 12)? {
            self.tag()?;
            self.push(" ");
        }
        match kind {
            0 if depth < MAX_DEPTH => self.flow(indent, depth + 1)?,
            2 => self.single_quoted(indent)?,
            3 => self.double_quoted(indent)?,
            4 if key => {
                self.push("? ");
                self.plain(indent, true)?;
            }
            _ => self.plain(indent, true)?,
        }
        self.define(anchor);
        Ok(())
    }

    /// The line break written for each `\n` of `text`: one style for the whole stream
    /// mostly, any mix now and then.
    fn line_breaks(&mut self, text: &str) -> Result<String> {
        const BREAKS: &[&str] = &["\n", "\r\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"];
        let mode = self.u.int_in_range(0..=9)?;
        let fixed = match mode {
            0..=5 => Some("\n"),
            6 => Some("\r\n"),
            7 => Some(*self.u.choose(BREAKS)?),
            _ => None,
        };
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if c != '\n' {
                out.push(c);
                continue;
            }
            let b = match fixed {
                Some(b) => b,
                // Mostly LF, so that the splitter still sees lines.
                None if self.chance(2, 3)? => "\n",
                None => self.u.choose(BREAKS)?,
            };
            out.push_str(b);
        }
        if self.chance(1, 10)? {
            // No line break at the end.
            while out.ends_with(['\n', '\r']) {
                out.pop();
            }
        }
        Ok(out)
    }

    /// The stream's bytes: UTF-8 mostly, with a byte order mark now and then, and
    /// UTF-16 rarely.
    fn encode(&mut self, text: &str) -> Result<Vec<u8>> {
        Ok(match self.u.int_in_range(0..=59)? {
            0..=1 => [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
            2 => {
                let mut out = vec![0xFF, 0xFE];
                out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
                out
            }
            3 => {
                let mut out = vec![0xFE, 0xFF];
                out.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
                out
            }
            _ => text.as_bytes().to_vec(),
        })
    }

    /// A few random edits, at a low rate: where most refusals are.
    fn mutate(&mut self, bytes: &mut Vec<u8>) -> Result<()> {
        if bytes.is_empty() || !self.wild || !self.chance(1, 4)? {
            return Ok(());
        }
        let edits = self.u.int_in_range(1..=3)?;
        for _ in 0..edits {
            if bytes.is_empty() {
                break;
            }
            let at = self.u.choose_index(bytes.len())?;
            match self.u.int_in_range(0..=5)? {
                0 => {
                    bytes.remove(at);
                }
                1 => {
                    let b = bytes[at];
                    bytes.insert(at, b);
                }
                2 => bytes.insert(at, b'\t'),
                3 => {
                    let s = *self.u.choose(&[
                        ":", "?", "-", "#", ",", "[", "]", "{", "}", " ", "'", "\"", "\\", "!",
                        "&", "*", "|", ">", "%", "\u{FEFF}", "\u{85}", "\r",
                    ])?;
                    bytes.splice(at..at, s.bytes());
                }
                4 => bytes.insert(at, b'\n'),
                _ => bytes.insert(at, b' '),
            }
        }
        Ok(())
    }
}

#[test]
fn the_same_bytes_give_the_same_stream() {
    let data: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let a = stream(&mut Unstructured::new(&data)).unwrap();
    let b = stream(&mut Unstructured::new(&data)).unwrap();
    assert_eq!(a, b);
    assert!(!a.is_empty());
    // Exhausted input still gives a stream.
    assert!(stream(&mut Unstructured::new(&[])).is_ok());
}
