//! Text for people's terminals. Summaries, keys, renders and traces come from the store
//! or a file anyone may have written: printed as they are, a newline forges an output
//! line and an escape sequence drives the terminal (retitles it, rewrites the screen,
//! on some terminals answers input). Every human-readable line made from such data
//! goes through [`escape_for_terminal`]; JSON output needs no more than its own
//! escaping and stays exact. The observer's web pages show the same text through
//! [`escape_for_page`]: a browser runs no escape sequence, but bidirectional controls
//! reorder what a line of a summary or a diff appears to say there too.

use std::borrow::Cow;

/// `text` with every control character written out: `\n`, `\r` and `\t` as those two
/// characters, every other C0 control, DEL, C1 control and Unicode bidirectional
/// control (which reorders what a line appears to say) as `\u{…}` with its hex code.
/// Everything else, backslashes included, is unchanged, so ordinary text reads as
/// before; text without such characters is returned as it is, without copying.
pub fn escape_for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` as [`escape_for_terminal`] writes it, but with newlines, carriage returns and
/// tabs left as they are: a page's own layout is made of them, and a browser shows them
/// as white space, never as a command.
pub fn escape_for_page(text: &str) -> Cow<'_, str> {
    let shown = |c: char| needs_escape(c) && !matches!(c, '\n' | '\r' | '\t');
    if !text.chars().any(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_written_out() {
        assert!(matches!(
            escape_for_terminal("plain text, a\\b, ünïcode"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_for_terminal("a\nb\r\tc\u{1b}]0;title\u{7}d\u{7f}\u{9b}e\u{0}"),
            "a\\nb\\r\\tc\\u{1b}]0;title\\u{7}d\\u{7f}\\u{9b}e\\u{0}"
        );
        assert_eq!(escape_for_terminal("x\u{202e}y"), "x\\u{202e}y");
    }

    #[test]
    fn pages_keep_their_layout_and_show_every_other_control() {
        assert!(matches!(escape_for_page("a\n\tb\r\n"), Cow::Borrowed(_)));
        assert_eq!(
            escape_for_page("<td>admin\u{202e}\u{2066}txt.exe\u{2069}\u{1b}[2J</td>\n"),
            "<td>admin\\u{202e}\\u{2066}txt.exe\\u{2069}\\u{1b}[2J</td>\n"
        );
    }
}
