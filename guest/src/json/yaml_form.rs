//! A decoded object written as YAML the way `kubectl get -o yaml` shows objects (go-yaml
//! v2's block style): keys in the document's (sorted) order, two spaces an indent level,
//! sequences under a key at the key's own indent, multi-line strings as literal blocks,
//! and a string quoted only where plain text would read as something else. It is for
//! people reading diffs and objects, and it is also a restore's form: read back as a
//! YAML stream (go-yaml v2's rules), a render's YAML form gives its canonical bytes
//! again. Long lines are not folded.

use super::decode::{Document, Node};
use super::encode::{push_float, push_int, push_uint};
use std::borrow::Cow;

/// Appends the YAML form of the document's root to `out`: one line per scalar, each
/// ending in `\n`.
///
/// Iterative, like the encoder: nesting depth costs heap, not stack.
pub fn encode_document_yaml(doc: &Document<'_>, out: &mut Vec<u8>) {
    encode(doc, out, None);
}

/// [`encode_document_yaml`], and the path of the node each line written belongs to
/// ([`super::line_paths`]): a member's line and its literal block's lines have the
/// member's path, a `- ` line the deepest node that starts on it.
pub fn encode_document_yaml_with_paths(doc: &Document<'_>, out: &mut Vec<u8>) -> Vec<String> {
    let start = out.len();
    let mut starts = Vec::new();
    encode(doc, out, Some(&mut starts));
    lines_to_paths(&out[start..], starts, start)
}

/// Where each node's text starts in the output, and the node's path.
type Starts = Vec<(usize, String)>;

fn encode(doc: &Document<'_>, out: &mut Vec<u8>, mut starts: Option<&mut Starts>) {
    enum Frame<'d, 'a> {
        Object(&'d [(Cow<'a, str>, u32)], usize, usize, String),
        Array(&'d [u32], usize, usize, String),
    }
    let mut stack = match doc.root() {
        Node::Object(members) if !members.is_empty() => {
            vec![Frame::Object(members, 0, 0, String::new())]
        }
        Node::Array(items) if !items.is_empty() => vec![Frame::Array(items, 0, 0, String::new())],
        scalar => {
            if let Some(starts) = starts.as_deref_mut() {
                starts.push((out.len(), String::new()));
            }
            write_scalar(scalar, 0, out);
            out.push(b'\n');
            return;
        }
    };
    // After `- `, the first line of a collection item continues the dash's line.
    let mut continue_line = false;
    while let Some(frame) = stack.last_mut() {
        let (value, indent, is_member, path) = match frame {
            Frame::Object(members, next, indent, path) => {
                let Some((key, value)) = members.get(*next) else {
                    stack.pop();
                    continue;
                };
                *next += 1;
                start_line(out, *indent, &mut continue_line);
                let path = starts
                    .as_ref()
                    .map(|_| super::line_paths::member(path, key))
                    .unwrap_or_default();
                if let Some(starts) = starts.as_deref_mut() {
                    starts.push((out.len(), path.clone()));
                }
                write_string(key, *indent + 2, true, out);
                out.push(b':');
                (doc.node(*value), *indent, true, path)
            }
            Frame::Array(items, next, indent, path) => {
                let Some(&value) = items.get(*next) else {
                    stack.pop();
                    continue;
                };
                let position = *next;
                *next += 1;
                start_line(out, *indent, &mut continue_line);
                let path = starts
                    .as_ref()
                    .map(|_| super::line_paths::item(doc, path, position, value))
                    .unwrap_or_default();
                if let Some(starts) = starts.as_deref_mut() {
                    starts.push((out.len(), path.clone()));
                }
                out.push(b'-');
                (doc.node(value), *indent, false, path)
            }
        };
        match value {
            Node::Object(members) if !members.is_empty() => {
                if is_member {
                    out.push(b'\n');
                } else {
                    out.push(b' ');
                    continue_line = true;
                }
                stack.push(Frame::Object(members, 0, indent + 2, path));
            }
            // go-yaml writes a sequence under a key at the key's indent, and one
            // inside a sequence after the outer dash.
            Node::Array(items) if !items.is_empty() => {
                if is_member {
                    out.push(b'\n');
                    stack.push(Frame::Array(items, 0, indent, path));
                } else {
                    out.push(b' ');
                    continue_line = true;
                    stack.push(Frame::Array(items, 0, indent + 2, path));
                }
            }
            scalar => {
                out.push(b' ');
                write_scalar(scalar, indent + 2, out);
                out.push(b'\n');
            }
        }
    }
}

/// The path of each line of `text` (which starts at `offset` in the output the starts
/// were taken in): that of the last node whose text starts before the line ends.
fn lines_to_paths(text: &[u8], starts: Starts, offset: usize) -> Vec<String> {
    let mut paths = Vec::new();
    let mut next = starts.into_iter().peekable();
    let mut current = String::new();
    let mut line_start = 0;
    for (i, &b) in text.iter().enumerate() {
        if b != b'\n' {
            continue;
        }
        while let Some((at, _)) = next.peek() {
            if *at >= offset + i {
                break;
            }
            current = next.next().expect("peeked").1;
        }
        paths.push(current.clone());
        line_start = i + 1;
    }
    if line_start < text.len() {
        paths.push(current);
    }
    paths
}

fn start_line(out: &mut Vec<u8>, indent: usize, continue_line: &mut bool) {
    if std::mem::take(continue_line) {
        return;
    }
    out.extend(std::iter::repeat_n(b' ', indent));
}

/// A scalar (or an empty collection); a literal block's lines are indented by
/// `block_indent`.
fn write_scalar(node: &Node<'_>, block_indent: usize, out: &mut Vec<u8>) {
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool(true) => out.extend_from_slice(b"true"),
        Node::Bool(false) => out.extend_from_slice(b"false"),
        Node::Int(i) => push_int(out, *i),
        Node::Uint(u) => push_uint(out, *u),
        Node::Float(f) => push_float(out, *f),
        Node::Str(s) => write_string(s, block_indent, false, out),
        Node::PlainStr(s) => write_string(s, block_indent, false, out),
        Node::Array(_) => out.extend_from_slice(b"[]"),
        Node::Object(_) => out.extend_from_slice(b"{}"),
    }
}

fn write_string(s: &str, block_indent: usize, is_key: bool, out: &mut Vec<u8>) {
    if !is_key && s.contains('\n') && literal_block_fits(s) {
        write_literal_block(s, block_indent, out);
    } else if !s.chars().all(printable) || s.contains('\n') {
        write_double_quoted(s, out);
    } else if plain_is_safe(s) {
        out.extend_from_slice(s.as_bytes());
    } else {
        out.push(b'\'');
        out.extend_from_slice(s.replace('\'', "''").as_bytes());
        out.push(b'\'');
    }
}

/// Characters YAML lets a document hold as they are (its c-printable set, without the
/// line breaks that would change the text's lines: YAML 1.1 breaks lines at NEL, LS and
/// PS too, so those are escaped).
fn printable(c: char) -> bool {
    match c {
        '\t' => true,
        '\u{20}'..='\u{7e}' => true,
        '\u{2028}' | '\u{2029}' => false,
        '\u{a0}'..='\u{d7ff}' => true,
        '\u{e000}'..='\u{fffd}' => c != '\u{feff}',
        '\u{10000}'.. => true,
        _ => false,
    }
}

/// A literal block keeps every character but needs printable lines (tabs allowed), some
/// text before its trailing line breaks (a block of breaks alone reads back empty), and
/// a first line with text that does not start with a space (the block's indentation is
/// taken from that line, so a space there would need an indentation indicator, which
/// only makes the form harder to read).
fn literal_block_fits(s: &str) -> bool {
    let first_text = s.split('\n').find(|line| !line.is_empty());
    first_text.is_some_and(|line| !line.starts_with(' '))
        && s.split('\n').all(|line| line.chars().all(printable))
}

fn write_literal_block(s: &str, indent: usize, out: &mut Vec<u8>) {
    let body = s.trim_end_matches('\n');
    let chomp = match s.len() - body.len() {
        0 => "|-",
        1 => "|",
        _ => "|+",
    };
    out.extend_from_slice(chomp.as_bytes());
    let trailing = s.len() - body.len();
    let lines = body
        .split('\n')
        .chain(std::iter::repeat_n("", trailing.saturating_sub(1)));
    for line in lines {
        out.push(b'\n');
        if !line.is_empty() {
            out.extend(std::iter::repeat_n(b' ', indent));
            out.extend_from_slice(line.as_bytes());
        }
    }
}

fn write_double_quoted(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\r' => out.extend_from_slice(b"\\r"),
            c if printable(c) => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            c if (c as u32) <= 0xff => {
                out.extend_from_slice(format!("\\x{:02x}", c as u32).as_bytes())
            }
            c => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
        }
    }
    out.push(b'"');
}

/// Whether `s` reads back as the same string when written plain: not empty, no
/// indicator at the start, no `: ` or ` #` inside, no space at either end, and not a
/// word or number YAML 1.1 resolves to another type (go-yaml quotes those).
fn plain_is_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if ",[]{}#&*!|>'\"%@`".contains(first) || first == ' ' || s.ends_with([' ', ':']) {
        return false;
    }
    // `-`, `?` and `:` start a plain scalar unless a space (or nothing) follows.
    if "-?:".contains(first) && !s[1..].starts_with(|c: char| c != ' ') {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.contains('\t') {
        return false;
    }
    !resolves_to_another_type(s)
}

fn resolves_to_another_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
        ".NaN", ".NAN", "<<", "=",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    // Numbers of every YAML 1.1 and Go syntax, and timestamps: a sign or digit or dot
    // first, then only the characters those forms use. Quoting a few strings that
    // would have stayed strings (`1.2.3`) costs nothing.
    let rest = s.strip_prefix(['+', '-']).unwrap_or(s);
    rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && rest.chars().any(|c| c.is_ascii_digit())
        && rest
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "xXoObB_.:+-tTzZ ".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode_object;

    fn yaml(json: &str) -> String {
        let doc = decode_object(json.as_bytes()).unwrap();
        let mut out = Vec::new();
        encode_document_yaml(&doc, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn block_style_as_kubectl_shows_it() {
        let text = yaml(
            r##"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{},"name":"web"},
                "spec":{"replicas":3,"template":{"spec":{"containers":[
                  {"args":["--port","8080"],"image":"nginx:1.27","name":"web","ports":[]},
                  {"env":[{"name":"A","value":"1"}],"name":"side"}]}}}}"##,
        );
        assert_eq!(
            text,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels: {}\n  name: web\n\
             spec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - args:\n\
             \x20       - --port\n        - '8080'\n        image: nginx:1.27\n        name: web\n\
             \x20       ports: []\n      - env:\n        - name: A\n          value: '1'\n\
             \x20       name: side\n"
        );
    }

    #[test]
    fn strings_are_quoted_only_where_plain_would_read_otherwise() {
        let text = yaml(
            r##"{"a":"yes","b":"on","c":"null","d":"","e":"0777","f":"1e3","g":"plain text",
                "h":"x: y","i":"- item","j":"it's","k":" lead","l":"#c","m":"a #b","n":"0x1F",
                "o":"2024-01-01","p":"v1.2","q":"-","r":"-v","s":"? x"}"##,
        );
        let want = [
            "a: 'yes'",
            "b: 'on'",
            "c: 'null'",
            "d: ''",
            "e: '0777'",
            "f: '1e3'",
            "g: plain text",
            "h: 'x: y'",
            "i: '- item'",
            "j: it's",
            "k: ' lead'",
            "l: '#c'",
            "m: 'a #b'",
            "'n': '0x1F'",
            "o: '2024-01-01'",
            "p: v1.2",
            "q: '-'",
            "r: -v",
            "s: '? x'",
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), want);
    }

    #[test]
    fn multi_line_strings_are_literal_blocks() {
        let text = yaml(r##"{"data":{"a":"one\ntwo\n","b":"x\n\ny","c":"end\n\n"},"z":["p\nq"]}"##);
        assert_eq!(
            text,
            "data:\n  a: |\n    one\n    two\n  b: |-\n    x\n\n    y\n  c: |+\n    end\n\n\
             z:\n- |-\n  p\n  q\n"
        );
    }

    #[test]
    fn controls_are_double_quoted_and_numbers_keep_go_form() {
        let text =
            yaml(r##"{"a":"bell\u0007","b":" x\ny","c":1.5e+300,"d":-0,"e":null,"f":true}"##);
        assert_eq!(
            text,
            "a: \"bell\\x07\"\nb: \" x\\ny\"\nc: 1.5e+300\nd: 0\ne: null\nf: true\n"
        );
    }

    #[test]
    fn nested_sequences_continue_the_dash_line() {
        assert_eq!(
            yaml(r##"{"m":[[1,[2]],[]]}"##),
            "m:\n- - 1\n  - - 2\n- []\n"
        );
    }

    #[test]
    fn deep_nesting_needs_no_stack() {
        let depth = 9_000;
        let inner = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
        let json = format!(r##"{{"r":{inner}}}"##);
        assert!(yaml(&json).lines().count() > depth);
    }
}
