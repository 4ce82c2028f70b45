//! A document's bytes turned into characters exactly as go-yaml v2's reader turns them
//! (`readerc.go`), so that what reaches the scanner, and when a bad byte stops it, are
//! go-yaml's (tests/vectors/YAML-RULES.md, Y2).
//!
//! libyaml-safer's own reader differs in three ways a Go controller would notice: it
//! takes a first byte `EF` as the start of a byte order mark and refuses anything else
//! (go-yaml looks for the whole mark and otherwise reads UTF-8, so `EF BA BF` is U+FEBF);
//! its UTF-16 reader loses its alignment on the byte-cut chunks the splitter makes; and
//! it checks a whole in-memory document at once, where go-yaml decodes 512 raw bytes at a
//! time and never sees a bad byte past the end of the one document it reads. So the
//! decoding is done here, step by step as go-yaml does it, and the scanner is fed UTF-8
//! one step at a time ([`Feed`]).

use std::io::{BufRead, Read};

/// go-yaml's `input_raw_buffer_size`: how many raw bytes one decoding step holds.
const RAW_BUFFER: usize = 512;

/// The characters of a document, without its byte order mark, as UTF-8.
#[derive(Debug, Default, Clone)]
pub(crate) struct Decoded {
    pub text: String,
    /// `text`'s length at the end of each of go-yaml's decoding steps, in order.
    pub steps: Vec<usize>,
    /// Why the step after the last of `steps` failed, if one did.
    pub error: Option<&'static str>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Utf8,
    Utf16 { big_endian: bool },
}

/// go-yaml's raw buffer over an in-memory input (`yaml_string_read_handler`).
struct Raw<'a> {
    input: &'a [u8],
    read: usize,
    buffer: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl Raw<'_> {
    /// `yaml_parser_update_raw_buffer`: keep the unread bytes, then fill up to 512; the
    /// end of input is only noticed by a read that finds nothing left.
    fn refill(&mut self) {
        if (self.pos == 0 && self.buffer.len() == RAW_BUFFER) || self.eof {
            return;
        }
        self.buffer.drain(..self.pos);
        self.pos = 0;
        if self.read == self.input.len() {
            self.eof = true;
            return;
        }
        let n = (RAW_BUFFER - self.buffer.len()).min(self.input.len() - self.read);
        self.buffer
            .extend_from_slice(&self.input[self.read..self.read + n]);
        self.read += n;
    }

    fn unread(&self) -> &[u8] {
        &self.buffer[self.pos..]
    }
}

/// Decodes `input` as go-yaml does: the encoding from its first bytes, then one step
/// per raw buffer, stopping at the first bad character.
pub(crate) fn decode(input: &[u8]) -> Decoded {
    let mut raw = Raw {
        input,
        read: 0,
        buffer: Vec::with_capacity(RAW_BUFFER),
        pos: 0,
        eof: false,
    };
    // `yaml_parser_determine_encoding`: three bytes if there are three.
    while !raw.eof && raw.unread().len() < 3 {
        raw.refill();
    }
    let encoding = match raw.unread() {
        [0xFF, 0xFE, ..] => {
            raw.pos += 2;
            Encoding::Utf16 { big_endian: false }
        }
        [0xFE, 0xFF, ..] => {
            raw.pos += 2;
            Encoding::Utf16 { big_endian: true }
        }
        [0xEF, 0xBB, 0xBF, ..] => {
            raw.pos += 3;
            Encoding::Utf8
        }
        _ => Encoding::Utf8,
    };
    let mut out = Decoded {
        text: String::with_capacity(input.len()),
        ..Decoded::default()
    };
    let mut first = true;
    loop {
        if !first || raw.pos == raw.buffer.len() {
            raw.refill();
        }
        first = false;
        while !raw.unread().is_empty() {
            match next_char(raw.unread(), encoding, raw.eof) {
                Next::Char(c, width) => {
                    if !allowed(c) {
                        out.error = Some("a control character, which YAML does not allow");
                        return out;
                    }
                    out.text.push(c);
                    raw.pos += width;
                }
                Next::More => break,
                Next::Bad(why) => {
                    out.error = Some(why);
                    return out;
                }
            }
        }
        out.steps.push(out.text.len());
        if raw.eof {
            return out;
        }
    }
}

enum Next {
    Char(char, usize),
    /// The character continues past the raw buffer: the next step reads it.
    More,
    Bad(&'static str),
}

fn next_char(bytes: &[u8], encoding: Encoding, eof: bool) -> Next {
    match encoding {
        Encoding::Utf8 => {
            let lead = bytes[0];
            let width = match lead {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => return Next::Bad("invalid UTF-8: a byte that cannot start a character"),
            };
            if width > bytes.len() {
                return if eof {
                    Next::Bad("invalid UTF-8: the text ends inside a character")
                } else {
                    Next::More
                };
            }
            let mut value = u32::from(lead) & [0x7F, 0x1F, 0x0F, 0x07][width - 1];
            for &b in &bytes[1..width] {
                if b & 0xC0 != 0x80 {
                    return Next::Bad("invalid UTF-8: a character is cut short");
                }
                value = (value << 6) | u32::from(b & 0x3F);
            }
            let shortest = match width {
                1 => true,
                2 => value >= 0x80,
                3 => value >= 0x800,
                _ => value >= 0x10000,
            };
            if !shortest {
                return Next::Bad("invalid UTF-8: a character in more bytes than it needs");
            }
            match char::from_u32(value) {
                Some(c) => Next::Char(c, width),
                None => Next::Bad("invalid UTF-8: a surrogate or a code point past U+10FFFF"),
            }
        }
        Encoding::Utf16 { big_endian } => {
            let unit = |pair: &[u8]| {
                if big_endian {
                    u16::from_be_bytes([pair[0], pair[1]])
                } else {
                    u16::from_le_bytes([pair[0], pair[1]])
                }
            };
            if bytes.len() < 2 {
                return if eof {
                    Next::Bad("invalid UTF-16: an odd byte at the end")
                } else {
                    Next::More
                };
            }
            let high = unit(bytes);
            if high & 0xFC00 == 0xDC00 {
                return Next::Bad("invalid UTF-16: a low surrogate without a high one");
            }
            if high & 0xFC00 != 0xD800 {
                let c = char::from_u32(u32::from(high)).expect("not a surrogate");
                return Next::Char(c, 2);
            }
            if bytes.len() < 4 {
                return if eof {
                    Next::Bad("invalid UTF-16: the text ends inside a surrogate pair")
                } else {
                    Next::More
                };
            }
            let low = unit(&bytes[2..]);
            if low & 0xFC00 != 0xDC00 {
                return Next::Bad("invalid UTF-16: a high surrogate without a low one");
            }
            let value = 0x10000 + ((u32::from(high) & 0x3FF) << 10) + (u32::from(low) & 0x3FF);
            Next::Char(char::from_u32(value).expect("a pair is a scalar value"), 4)
        }
    }
}

/// The characters go-yaml's reader lets through.
pub(crate) fn allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// What libyaml-safer reads: a UTF-8 byte order mark (so that its own encoding check
/// always picks UTF-8 and takes nothing of the text for a mark), then the text one of
/// go-yaml's steps at a time, then the step's error, if any, as an I/O error.
pub(crate) struct Feed<'a> {
    pub mark: &'static [u8],
    pub text: &'a [u8],
    /// Where each step ends in `text`.
    pub steps: &'a [usize],
    pub failed: bool,
    pub step: usize,
    pub pos: usize,
}

impl<'a> Feed<'a> {
    pub(crate) fn new(text: &'a [u8], steps: &'a [usize], failed: bool) -> Self {
        Feed {
            mark: b"\xEF\xBB\xBF",
            text,
            steps,
            failed,
            step: 0,
            pos: 0,
        }
    }
}

impl Read for Feed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Feed<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if !self.mark.is_empty() {
            return Ok(self.mark);
        }
        // A step may decode nothing new (a character split across raw buffers).
        while self.step < self.steps.len() && self.pos >= self.steps[self.step] {
            self.step += 1;
        }
        if self.step < self.steps.len() {
            return Ok(&self.text[self.pos..self.steps[self.step]]);
        }
        if self.failed {
            return Err(std::io::Error::other(STOPPED));
        }
        Ok(&[])
    }

    fn consume(&mut self, amount: usize) {
        if !self.mark.is_empty() {
            self.mark = &self.mark[amount.min(self.mark.len())..];
        } else {
            self.pos += amount;
        }
    }
}

/// The I/O error [`Feed`] stops the scanner with where go-yaml's reader fails.
pub(crate) const STOPPED: &str = "the reader stopped at a bad character";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_order_marks_are_whole_or_not_marks() {
        let d = decode(b"\xEF\xBA\xBFa: 1\n");
        assert_eq!((d.text.as_str(), d.error), ("\u{FEBF}a: 1\n", None));
        let d = decode(b"\xEF\xBB\xBF\xEF\xBB\xBFa\n");
        assert_eq!(d.text, "\u{FEFF}a\n");
        assert!(decode(b"\xEF\xBB\n").error.is_some());
        let d = decode(b"\xFE\xFF\x00a\x00\n");
        assert_eq!((d.text.as_str(), d.error), ("a\n", None));
        assert!(decode(b"\xFF\xFEa\x00\n").error.is_some());
    }

    #[test]
    fn steps_hold_512_raw_bytes() {
        let mut input = vec![b'#'; 1000];
        input.push(0xFF);
        let d = decode(&input);
        assert_eq!(d.steps, [512]);
        assert!(d.error.is_some());
        // A character cut by the raw buffer's end is read whole by the next step.
        let mut input = vec![b'a'; 511];
        input.extend("é\n".as_bytes());
        let d = decode(&input);
        assert_eq!(d.steps, [511, 514, 514]);
        assert_eq!(d.error, None);
    }
}
