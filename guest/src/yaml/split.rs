//! Splitting a stream into documents exactly as apimachinery's `YAMLReader` does
//! (tests/vectors/YAML-RULES.md, rules S1-S6).
//!
//! The reader is line based and knows nothing of YAML: a line starting with the bytes
//! `---` separates documents, whatever YAML would make of it. Its quirks are kept on
//! purpose, since a Go controller reading the same stream has them too: the separator
//! line opening a document is kept in it, a final LF is added to the last line, and a CR
//! is dropped only right before a LF.

use crate::json::find_byte;
use std::borrow::Cow;

/// One document's text as the YAML parser gets it.
#[derive(Debug)]
pub(crate) struct Chunk<'a> {
    /// The document's lines, each ending with LF: borrowed from the stream unless a line
    /// lost a CR or gained its final LF.
    pub bytes: Cow<'a, [u8]>,
    /// The stream line (from 0) of its first line: the parser's lines count from here.
    pub first_line: usize,
}

impl Chunk<'_> {
    fn empty() -> Self {
        Chunk {
            bytes: Cow::Borrowed(&[]),
            first_line: 0,
        }
    }
}

/// A separator line with something other than white space or a comment after `---`.
#[derive(Debug)]
pub(crate) struct BadSeparator {
    /// Index of the document being read when the line was met.
    pub document: usize,
    /// The stream line of the separator, from 0.
    pub line: usize,
    /// The trimmed rest of the line, as Go reports it.
    pub rest: String,
}

/// The documents of `stream`, in order, up to the first bad separator line, and that
/// line if there is one.
///
/// Like Go's reader, everything before a bad separator counts: its documents get
/// indices and are read, each in turn, before the reader meets the bad line (so an
/// error in one of them is the stream's first), and the document the line interrupts
/// is never read.
pub(crate) fn split(stream: &[u8]) -> (Vec<Chunk<'_>>, Option<BadSeparator>) {
    let mut chunks = Vec::new();
    let mut current = Chunk::empty();
    // Where `current`'s bytes start in the stream while they are borrowed.
    let mut start = 0;
    let mut line_no = 0;
    let mut at = 0;
    while at < stream.len() {
        let eol = find_byte(stream, at, b'\n');
        let has_lf = eol < stream.len();
        // A CR is part of the line break only when a LF follows it.
        let end = if has_lf && eol > at && stream[eol - 1] == b'\r' {
            eol - 1
        } else {
            eol
        };
        let line = &stream[at..end];
        let line_start = at;
        at = (eol + 1).min(stream.len());
        if let Some(tail) = line.strip_prefix(b"---") {
            if let Some(bad) = separator_rest(tail) {
                let bad = BadSeparator {
                    document: chunks.len(),
                    line: line_no,
                    rest: bad,
                };
                return (chunks, Some(bad));
            }
            if !current.bytes.is_empty() {
                chunks.push(std::mem::replace(&mut current, Chunk::empty()));
                line_no += 1;
                continue;
            }
        }
        if current.bytes.is_empty() {
            current.first_line = line_no;
            start = line_start;
        }
        match &mut current.bytes {
            // The line and its LF stand in the stream right after the document so far.
            Cow::Borrowed(so_far) if has_lf && end == eol && start + so_far.len() == line_start => {
                current.bytes = Cow::Borrowed(&stream[start..=eol]);
            }
            bytes => {
                let bytes = bytes.to_mut();
                bytes.extend_from_slice(line);
                bytes.push(b'\n');
            }
        }
        line_no += 1;
    }
    if !current.bytes.is_empty() {
        chunks.push(current);
    }
    (chunks, None)
}

/// `None` when what follows `---` makes a separator (nothing but white space, or a `#`
/// first), else the rest trimmed as Go's `strings.TrimSpace` trims it.
fn separator_rest(tail: &[u8]) -> Option<String> {
    // Go trims Unicode white space and stops at the first byte that is not valid UTF-8
    // (it decodes as U+FFFD, which is not space), as this lossy decoding does.
    let text = String::from_utf8_lossy(tail);
    let trimmed = text.trim_matches(char::is_whitespace);
    if trimmed.is_empty() || trimmed.starts_with('#') {
        None
    } else {
        Some(trimmed.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(stream: &str) -> Vec<String> {
        let (chunks, bad) = split(stream.as_bytes());
        assert!(bad.is_none());
        chunks
            .into_iter()
            .map(|c| String::from_utf8(c.bytes.into_owned()).unwrap())
            .collect()
    }

    #[test]
    fn separators_follow_the_reader() {
        assert_eq!(docs("a: 1\n---\n---\nb: 2"), ["a: 1\n", "---\nb: 2\n"]);
        assert_eq!(docs("---\n---\n---\n"), ["---\n", "---\n"]);
        assert_eq!(
            docs("a: 1\r\n--- # c\r\nb: 2\r\r\n"),
            ["a: 1\n", "b: 2\r\n"]
        );
        assert!(docs("").is_empty());
        assert_eq!(docs(" ---\n"), [" ---\n"]);
    }

    #[test]
    fn bad_separator_names_the_document() {
        let (chunks, bad) = split(b"a: 1\n---\nb: 2\n--- |\n");
        let err = bad.unwrap();
        assert_eq!((err.document, err.line, err.rest.as_str()), (1, 3, "|"));
        // The documents before it are there to be read first; the one it cuts is not.
        assert_eq!(chunks.len(), 1);
    }

    #[test]
    fn chunks_are_borrowed_unless_their_bytes_change() {
        let (chunks, _) = split(b"a: 1\n---\nb: 2\r\n---\nc: 3\nd: 4");
        assert!(matches!(chunks[0].bytes, Cow::Borrowed(b"a: 1\n")));
        assert!(matches!(chunks[1].bytes, Cow::Owned(_)));
        assert_eq!(&*chunks[2].bytes, b"c: 3\nd: 4\n");
        assert!(matches!(chunks[2].bytes, Cow::Owned(_)));
        let (chunks, _) = split(b"---\n---\nx\r\ny\n");
        assert!(matches!(chunks[0].bytes, Cow::Borrowed(b"---\n")));
        assert_eq!(&*chunks[1].bytes, b"x\ny\n");
    }

    #[test]
    fn first_lines() {
        let (chunks, _) = split(b"a: 1\n---\n\nb: 2\n");
        assert_eq!(chunks[1].first_line, 2);
    }
}
