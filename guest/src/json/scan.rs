//! Word-at-a-time scanning of string bytes: the decoder and encoder spend most of their
//! time walking long runs of plain characters, so they test eight bytes at once for the
//! few that need attention.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `w` that equals `b` (may also flag a byte after a true
/// match; only the lowest flag is used).
#[inline(always)]
fn eq(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * b as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// High bit set in each byte of `w` below 0x20 (same caveat).
#[inline(always)]
fn control(w: u64) -> u64 {
    w.wrapping_sub(ONES * 0x20) & !w & HIGHS
}

#[inline(always)]
fn word(bytes: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(bytes[i..i + 8].try_into().expect("eight bytes"))
}

/// From `i`, the index of the first `"`, `\` or control byte (or the end).
pub fn string_run(bytes: &[u8], mut i: usize) -> usize {
    while i + 8 <= bytes.len() {
        let w = word(bytes, i);
        if eq(w, b'"') | eq(w, b'\\') | control(w) != 0 {
            break;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

/// From `i`, the index of the first byte Go's encoder may have to escape: a control
/// byte, `"`, `\`, `<`, `>`, `&`, or 0xE2 (which starts U+2028 and U+2029).
pub fn plain_run(bytes: &[u8], mut i: usize) -> usize {
    while i + 8 <= bytes.len() {
        let w = word(bytes, i);
        let stop = control(w)
            | eq(w, b'"')
            | eq(w, b'\\')
            | eq(w, b'<')
            | eq(w, b'>')
            | eq(w, b'&')
            | eq(w, 0xE2);
        if stop != 0 {
            break;
        }
        i += 8;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_runs_stop_where_bytewise_scanning_would() {
        let text = b"abcdefghijklmnopq\"rs";
        assert_eq!(string_run(text, 0), 17);
        assert_eq!(string_run(b"abcdefgh\xc3\xa9ijklmn\\", 0), 16);
        assert_eq!(string_run(b"abcdefghijkl\x1fmn", 0), 12);
        assert_eq!(string_run(b"short", 0), 5);
        // Every position of every stop byte, inside and after whole words.
        for stop in [b'"', b'\\', 0x00, 0x1f] {
            for pos in 0..24 {
                let mut v = vec![b'a'; 24];
                v[pos] = stop;
                assert_eq!(string_run(&v, 0), pos, "{stop} at {pos}");
            }
        }
    }

    #[test]
    fn plain_runs_never_pass_a_byte_that_needs_escaping() {
        for stop in [b'"', b'\\', b'<', b'>', b'&', 0xE2, 0x00, 0x1f] {
            for pos in 0..24 {
                let mut v = vec![b'a'; 24];
                v[pos] = stop;
                assert!(plain_run(&v, 0) <= pos, "{stop} at {pos}");
            }
        }
        assert_eq!(plain_run(&[b'a'; 24], 0), 24);
        // 0x7F and other high bytes are plain.
        assert_eq!(
            plain_run(&[0x7f, 0xc3, 0xa9, b'a', b'b', b'c', b'd', b'e'], 0),
            8
        );
    }
}
