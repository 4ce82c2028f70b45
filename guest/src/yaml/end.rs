//! Documents whose text does not end with a line break.
//!
//! The splitter ends every document with a LF byte, so a UTF-8 document always ends with
//! a line break; a UTF-16 one need not: that byte can be half of another character
//! (U+0Axx in UTF-16LE, U+xx0A in UTF-16BE; YAML-RULES.md S1), so the text then ends in
//! a line holding that character. When such a last line is inside a literal or folded
//! block scalar, libyaml-safer 0.3.0 panics ("unexpected end of input": its block scalar
//! reads a line break where there is none), where libyaml and go-yaml end the scalar
//! with that line and no break.
//!
//! So such a text is read with a LF added at its end, which libyaml-safer reads without
//! trouble, and the block scalar that reaches the end loses the one `\n` the added break
//! gave it (none if its chomping strips breaks): go-yaml's value ([`without_added_break`]).

use super::reader::Decoded;

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Whether the text ends in a line without a break. A text the reader stopped in is
/// read as it is: the reader's error stops the scanner before it can panic.
pub(crate) fn lacks_final_break(decoded: &Decoded) -> bool {
    decoded.error.is_none() && !decoded.text.is_empty() && !decoded.text.ends_with(is_break)
}

/// The text with a LF at its end, read in the last of go-yaml's steps.
pub(crate) fn with_break(mut decoded: Decoded) -> Decoded {
    decoded.text.push('\n');
    match decoded.steps.last_mut() {
        Some(end) => *end = decoded.text.len(),
        None => decoded.steps.push(decoded.text.len()),
    }
    decoded
}

/// go-yaml's value of the block scalar that reaches the end of a text without a final
/// break, from its value read with [`with_break`]. The last line is one of the scalar's
/// content lines (its last character is not a space), so the added break is the scalar's
/// last, kept by clipping and keeping chomping and dropped by stripping.
pub(crate) fn without_added_break(value: &mut String) {
    if value.ends_with('\n') {
        value.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(text: &str) -> Decoded {
        Decoded {
            text: text.to_owned(),
            steps: vec![text.len()],
            error: None,
        }
    }

    #[test]
    fn texts_without_a_final_break() {
        assert!(!lacks_final_break(&decoded("a: 1\n")));
        assert!(!lacks_final_break(&decoded("")));
        assert!(!lacks_final_break(&decoded("a: 1\u{2028}")));
        assert!(lacks_final_break(&decoded("a: |\n  x\u{A00}")));
        let added = with_break(decoded("a: |\n  x"));
        assert_eq!(
            (added.text.as_str(), added.steps.as_slice()),
            ("a: |\n  x\n", &[9][..])
        );
    }

    #[test]
    fn the_added_break_goes() {
        let mut value = "x\n".to_owned();
        without_added_break(&mut value);
        assert_eq!(value, "x");
        without_added_break(&mut value);
        assert_eq!(value, "x");
    }
}
