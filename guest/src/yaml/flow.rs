//! Plain scalars inside flow collections (`[...]`, `{...}`), where go-yaml v2's scanner
//! and libyaml's (so libyaml-safer's) part ways; go-yaml's reading is the contract
//! (YAML-RULES.md, Y16).
//!
//! Inside a flow plain scalar, both end the scalar at `,`, `[`, `]`, `{`, `}` and at a
//! `:` before white space, and both keep any other `:`. They differ twice:
//!
//! - a `:` right before `,`, `?`, `[`, `]`, `{` or `}`: libyaml stops with "found
//!   unexpected ':'"; go-yaml keeps the `:` in the scalar and ends it at the indicator
//!   (`[a:, b]` is `["a:", "b"]`, `{a:}` is `{"a:": null}`);
//! - a `?`: libyaml keeps it in the scalar; go-yaml ends the scalar there and reads the
//!   `?` as a key indicator, and a key indicator right after a node is always a parse
//!   error, so go-yaml refuses the document (`[http://x?y=1]`, `{a: b?c}`).
//!
//! libyaml-safer is a pinned dependency, so the scanner itself is not changed. The
//! first difference is made up for by editing the text libyaml-safer reads: each such
//! `:` inside a flow plain scalar is given as another character, which libyaml keeps in
//! the scalar, and the scalar's value gets the `:` back ([`restore`]). Which `:` those
//! are is what libyaml-safer's own scanner says of the text with every `:` before one
//! of those indicators written as `?` ([`masked`]): the same width, never an error
//! where go-yaml has none, and the same token boundaries as go-yaml's (inside a flow
//! plain scalar libyaml keeps a `?` as go-yaml keeps the `:`; where the `:` starts a
//! token it is a value indicator to go-yaml and the `?` a key indicator to libyaml,
//! and both are one character followed by the same indicator). The second difference
//! needs no edit: a flow plain scalar libyaml reads with a `?` in it is a document
//! go-yaml refuses ([`question_mark`]).

/// The character a `:` that go-yaml keeps in a flow plain scalar is given as: one byte,
/// as the `:` is, so no position moves, and one libyaml keeps inside a plain scalar
/// (not white space, not an indicator, not `?`).
pub(crate) const COLON_STAND_IN: &str = "x";

/// The indicators after which libyaml refuses a `:` in a flow plain scalar.
fn refused_after_colon(b: u8) -> bool {
    matches!(b, b',' | b'?' | b'[' | b']' | b'{' | b'}')
}

/// Every `:` of `text` right before one of those indicators, wherever it is (scalar,
/// comment, key or value indicator): the byte offsets, in order.
pub(crate) fn colon_candidates(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len())
        .filter(|&i| bytes[i] == b':' && bytes.get(i + 1).copied().is_some_and(refused_after_colon))
        .collect()
}

/// `text` with the `:` at each of `candidates`, and any `:` right before it, written
/// as `?`: what libyaml-safer scans with go-yaml's token boundaries (see the module's
/// documentation). The `:` before it are masked too, since libyaml refuses a `:` before
/// a `?` as much as before the indicator (`[a::, b]`).
pub(crate) fn masked(text: &str, candidates: &[usize]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for &at in candidates {
        let mut i = at;
        bytes[i] = b'?';
        while i > 0 && bytes[i - 1] == b':' {
            i -= 1;
            bytes[i] = b'?';
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes.
    String::from_utf8(bytes).expect("still UTF-8")
}

/// Which white space a plain scalar's raw text and its value may hold between the
/// characters they share: the raw text's blanks and line breaks, the value's spaces,
/// tabs and folded breaks (libyaml writes LF for LF, CR, CR LF and NEL, and keeps LS
/// and PS as they are).
fn blank(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// The byte offset in `raw` of each character of a plain scalar's `value` that is not
/// white space, from the last one back. A plain scalar's value is its raw text with
/// the white space between words folded, so those characters are the raw text's last
/// characters that are not white space, in the same order; `raw` may start earlier (an
/// event's marks include its anchor and tag) but must end where the scalar ends.
fn shared_from_end<'v>(
    raw: &'v str,
    value: &'v str,
) -> impl Iterator<Item = (usize, (usize, char))> + 'v {
    let raw_chars = raw.char_indices().rev().filter(|(_, c)| !blank(*c));
    let value_chars = value.char_indices().rev().filter(|(_, c)| !blank(*c));
    value_chars
        .zip(raw_chars)
        .map(|((v, c), (r, _))| (r, (v, c)))
}

/// Puts back the `:` of every stand-in of a plain scalar: `raw` is the text the event
/// spans (ending where the scalar ends), `stand_ins` the offsets in `raw` of the
/// stand-ins, sorted.
pub(crate) fn restore(value: &mut String, raw: &str, stand_ins: &[usize]) {
    let at: Vec<usize> = shared_from_end(raw, value)
        .filter(|(r, _)| stand_ins.binary_search(r).is_ok())
        .map(|(_, (v, _))| v)
        .collect();
    let mut bytes = std::mem::take(value).into_bytes();
    for v in at {
        debug_assert_eq!(bytes[v], COLON_STAND_IN.as_bytes()[0]);
        bytes[v] = b':';
    }
    *value = String::from_utf8(bytes).expect("an ASCII byte replaced by another");
}

/// Where go-yaml ends a flow plain scalar at a `?` and so refuses the document: the
/// offset in `raw` (as for [`restore`]) of the scalar's first `?`, if it has one.
pub(crate) fn question_mark(raw: &str, value: &str) -> Option<usize> {
    if !value.contains('?') {
        return None;
    }
    shared_from_end(raw, value)
        .filter(|(_, (_, c))| *c == '?')
        .map(|(r, _)| r)
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_colons_before_the_refused_indicators() {
        assert_eq!(colon_candidates("a: [b:, c:] {d:}"), vec![5, 9, 14]);
        assert_eq!(colon_candidates("a:b ::?:[:{"), vec![5, 7, 9]);
        assert!(colon_candidates("a: b:c").is_empty());
    }

    #[test]
    fn masking_covers_runs_of_colons() {
        let text = "[a::, ::?b:c:]";
        assert_eq!(masked(text, &colon_candidates(text)), "[a??, ???b:c?]");
    }

    #[test]
    fn restore_maps_folded_values_back_to_their_text() {
        // `[b x,` with the stand-in at 2; `&a c\n  x,` with an anchor and a fold.
        let mut value = "b x".to_owned();
        restore(&mut value, "b x", &[2]);
        assert_eq!(value, "b :");
        let mut value = "c x".to_owned();
        restore(&mut value, "&a c\n  x", &[7]);
        assert_eq!(value, "c :");
        let mut value = "xx x".to_owned();
        restore(&mut value, "xx x", &[1, 3]);
        assert_eq!(value, "x: :");
    }

    #[test]
    fn the_first_question_mark_is_found_in_the_text() {
        assert_eq!(question_mark("!t?x a?b?c", "a?b?c"), Some(6));
        assert_eq!(question_mark("a\n ?b", "a ?b"), Some(3));
        assert_eq!(question_mark("ab", "ab"), None);
    }
}
