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

/// Sixteen bytes at a time where the target has 128-bit vectors (SSE2 is part of every
/// x86-64; wasm32 when built with simd128, as build.rs builds the guest).
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod block {
    #[cfg(target_arch = "wasm32")]
    use std::arch::wasm32::*;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;

    /// Masks of the bytes of one 16-byte block, each a 16-bit set (bit n = byte n).
    pub struct Block {
        #[cfg(target_arch = "x86_64")]
        v: __m128i,
        #[cfg(target_arch = "wasm32")]
        v: v128,
    }

    impl Block {
        #[inline(always)]
        pub fn load(bytes: &[u8], i: usize) -> Block {
            let chunk: &[u8; 16] = bytes[i..i + 16].try_into().expect("sixteen bytes");
            // SAFETY: `chunk` is 16 readable bytes; unaligned loads are allowed.
            #[cfg(target_arch = "x86_64")]
            let v = unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) };
            #[cfg(target_arch = "wasm32")]
            let v = unsafe { v128_load(chunk.as_ptr().cast()) };
            Block { v }
        }

        #[inline(always)]
        pub fn eq(&self, b: u8) -> u32 {
            // SAFETY: SSE2 is always present on x86-64; simd128 is enabled for this cfg.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                _mm_movemask_epi8(_mm_cmpeq_epi8(self.v, _mm_set1_epi8(b as i8))) as u32
            }
            #[cfg(target_arch = "wasm32")]
            {
                u8x16_bitmask(u8x16_eq(self.v, u8x16_splat(b))) as u32
            }
        }

        /// Bytes below 0x20.
        #[inline(always)]
        pub fn control(&self) -> u32 {
            // SAFETY: as in `eq`.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                // b < 0x20  ⇔  max(b, 0x1f) == 0x1f
                let limit = _mm_set1_epi8(0x1f);
                _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(self.v, limit), limit)) as u32
            }
            #[cfg(target_arch = "wasm32")]
            {
                let limit = u8x16_splat(0x1f);
                u8x16_bitmask(u8x16_eq(u8x16_max(self.v, limit), limit)) as u32
            }
        }

        /// Bytes that end a run of string bytes: `"`, `\\` and those below 0x20. One
        /// mask of the three comparisons, not three masks.
        #[inline(always)]
        pub fn string_stops(&self) -> u32 {
            // SAFETY: as in `eq`.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                let limit = _mm_set1_epi8(0x1f);
                let control = _mm_cmpeq_epi8(_mm_max_epu8(self.v, limit), limit);
                let quote = _mm_cmpeq_epi8(self.v, _mm_set1_epi8(b'"' as i8));
                let backslash = _mm_cmpeq_epi8(self.v, _mm_set1_epi8(b'\\' as i8));
                _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
            }
            #[cfg(target_arch = "wasm32")]
            {
                let limit = u8x16_splat(0x1f);
                let control = u8x16_eq(u8x16_max(self.v, limit), limit);
                let quote = u8x16_eq(self.v, u8x16_splat(b'"'));
                let backslash = u8x16_eq(self.v, u8x16_splat(b'\\'));
                u8x16_bitmask(v128_or(v128_or(quote, backslash), control)) as u32
            }
        }

        /// Bytes that make a run other than plain ASCII: `<`, `>`, `&` and those ≥ 0x80
        /// (0xE2 among them), in one mask.
        #[inline(always)]
        pub fn flagged(&self) -> u32 {
            // SAFETY: as in `eq`.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                let lt = _mm_cmpeq_epi8(self.v, _mm_set1_epi8(b'<' as i8));
                let gt = _mm_cmpeq_epi8(self.v, _mm_set1_epi8(b'>' as i8));
                let amp = _mm_cmpeq_epi8(self.v, _mm_set1_epi8(b'&' as i8));
                // The high bit of a byte ≥ 0x80 is the bit the mask reads.
                _mm_movemask_epi8(_mm_or_si128(
                    _mm_or_si128(lt, gt),
                    _mm_or_si128(amp, self.v),
                )) as u32
            }
            #[cfg(target_arch = "wasm32")]
            {
                let lt = u8x16_eq(self.v, u8x16_splat(b'<'));
                let gt = u8x16_eq(self.v, u8x16_splat(b'>'));
                let amp = u8x16_eq(self.v, u8x16_splat(b'&'));
                u8x16_bitmask(v128_or(v128_or(lt, gt), v128_or(amp, self.v))) as u32
            }
        }

        /// Bytes ≥ 0x80.
        #[inline(always)]
        pub fn high(&self) -> u32 {
            // SAFETY: as in `eq`.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                _mm_movemask_epi8(self.v) as u32
            }
            #[cfg(target_arch = "wasm32")]
            {
                u8x16_bitmask(self.v) as u32
            }
        }
    }
}

/// What a run of string bytes holds besides plain ASCII.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunKind {
    /// A byte ≥ 0x80 (so the run needs UTF-8 validation).
    pub non_ascii: bool,
    /// A byte Go's encoder escapes or may escape: `<`, `>`, `&`, or 0xE2.
    pub special: bool,
}

/// The 16 bytes from `i`, and whether they run past the end of `bytes` (then the bytes
/// past it read as `"`, so a stop there is the end); `None` at the end.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[inline(always)]
fn block_at(bytes: &[u8], i: usize) -> Option<(block::Block, bool)> {
    if i + 16 <= bytes.len() {
        Some((block::Block::load(bytes, i), false))
    } else if i < bytes.len() {
        let mut last = [b'"'; 16];
        last[..bytes.len() - i].copy_from_slice(&bytes[i..]);
        Some((block::Block::load(&last, 0), true))
    } else {
        None
    }
}

/// What the bytes of `b` in `before` (a mask) hold besides plain ASCII, added to `kind`.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[inline(always)]
fn classify(b: &block::Block, before: u32, kind: &mut RunKind) {
    // Mostly none: one test, then the two kinds told apart.
    if b.flagged() & before != 0 {
        kind.non_ascii |= b.high() & before != 0;
        kind.special |= (b.eq(b'<') | b.eq(b'>') | b.eq(b'&') | b.eq(0xE2)) & before != 0;
    }
}

/// From `i`, the index of the first `"`, `\` or control byte (or the end), and what
/// the bytes before it hold.
#[inline(always)]
pub fn classified_string_run(bytes: &[u8], mut i: usize) -> (usize, RunKind) {
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    {
        // Most strings of a manifest (keys, names, labels) end inside their first block:
        // the block that holds the stop is classified up to it, not left to a bytewise
        // loop.
        let mut kind = RunKind::default();
        loop {
            let Some((b, end)) = block_at(bytes, i) else {
                return (i, kind);
            };
            let stop = b.string_stops();
            // The bytes before the first stop (all of them when there is none).
            classify(&b, stop.wrapping_sub(1) & !stop, &mut kind);
            if stop != 0 {
                let at = i + stop.trailing_zeros() as usize;
                return (if end { at.min(bytes.len()) } else { at }, kind);
            }
            i += 16;
        }
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        let mut high = 0u64;
        let mut special = 0u64;
        while i + 8 <= bytes.len() {
            let w = word(bytes, i);
            if eq(w, b'"') | eq(w, b'\\') | control(w) != 0 {
                break;
            }
            high |= w;
            special |= eq(w, b'<') | eq(w, b'>') | eq(w, b'&') | eq(w, 0xE2);
            i += 8;
        }
        let mut kind = RunKind {
            non_ascii: high & HIGHS != 0,
            special: special != 0,
        };
        while let Some(&b) = bytes.get(i) {
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            kind.non_ascii |= b >= 0x80;
            kind.special |= matches!(b, b'<' | b'>' | b'&' | 0xE2);
            i += 1;
        }
        (i, kind)
    }
}

/// Whether `\` and `c` make one of the two-byte escapes Go's encoder writes (all of
/// JSON's but `\/`).
#[inline(always)]
pub fn is_short_escape(c: u8) -> bool {
    matches!(c, b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f')
}

/// [`classified_string_run`] that passes the escapes [`is_short_escape`] accepts: from
/// `i`, the index of the first `"`, control byte or other `\` (or the end), and what the
/// bytes before it hold (an escape holds none of the bytes [`RunKind`] tells of).
///
/// A string dense with escapes (JSON documents held as string values) has one every few
/// bytes: each stop of a block is looked at from the block's mask, and the scan goes on
/// in the same block after an escape rather than loading another from there.
#[inline(always)]
pub fn escaped_string_run(bytes: &[u8], mut i: usize) -> (usize, RunKind) {
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    {
        let mut kind = RunKind::default();
        loop {
            let Some((b, end)) = block_at(bytes, i) else {
                return (i, kind);
            };
            let mut stops = b.string_stops();
            // Where the next block starts: after this one, or after an escape that ends
            // past it.
            let mut next = i + 16;
            while stops != 0 {
                let at = i + stops.trailing_zeros() as usize;
                // Past the end of `bytes` (in the padding), both reads are `None`.
                if bytes.get(at) != Some(&b'\\')
                    || !bytes.get(at + 1).is_some_and(|&c| is_short_escape(c))
                {
                    let stop = 1 << (at - i);
                    classify(&b, stop - 1, &mut kind);
                    return (if end { at.min(bytes.len()) } else { at }, kind);
                }
                // The escaped byte may be a stop (`"`, `\`) itself: both are passed.
                let after = at + 2 - i;
                if after > 16 {
                    next = at + 2;
                    break;
                }
                stops &= !0 << after;
            }
            classify(&b, 0xFFFF, &mut kind);
            i = next;
        }
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        let mut kind = RunKind::default();
        loop {
            let (at, run) = classified_string_run(bytes, i);
            kind.non_ascii |= run.non_ascii;
            kind.special |= run.special;
            if bytes.get(at) != Some(&b'\\')
                || !bytes.get(at + 1).is_some_and(|&c| is_short_escape(c))
            {
                return (at, kind);
            }
            i = at + 2;
        }
    }
}

/// From `i`, the index of the first `"`, `\` or control byte (or the end).
pub fn string_run(bytes: &[u8], i: usize) -> usize {
    classified_string_run(bytes, i).0
}

/// From `i`, the index of the first byte Go's encoder may have to escape: a control
/// byte, `"`, `\`, `<`, `>`, `&`, or 0xE2 (which starts U+2028 and U+2029).
pub fn plain_run(bytes: &[u8], mut i: usize) -> usize {
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    while i + 16 <= bytes.len() {
        let b = block::Block::load(bytes, i);
        let stop = b.control()
            | b.eq(b'"')
            | b.eq(b'\\')
            | b.eq(b'<')
            | b.eq(b'>')
            | b.eq(b'&')
            | b.eq(0xE2);
        if stop != 0 {
            break;
        }
        i += 16;
    }
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

/// From `i`, the index of the first `b` (or the end): the YAML path's line splitting.
pub(crate) fn find_byte(bytes: &[u8], mut i: usize, b: u8) -> usize {
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    while i + 16 <= bytes.len() {
        let found = block::Block::load(bytes, i).eq(b);
        if found != 0 {
            return i + found.trailing_zeros() as usize;
        }
        i += 16;
    }
    while i + 8 <= bytes.len() {
        if eq(word(bytes, i), b) != 0 {
            break;
        }
        i += 8;
    }
    while bytes.get(i).is_some_and(|&c| c != b) {
        i += 1;
    }
    i
}

/// From `i`, the index of the first control byte (below 0x20, or DEL) or the end, and
/// whether a byte before it is ≥ 0x80: the YAML fast path's check of its characters,
/// where every line ends at a control byte.
pub(crate) fn text_run(bytes: &[u8], mut i: usize) -> (usize, bool) {
    let mut high = false;
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    while i + 16 <= bytes.len() {
        let b = block::Block::load(bytes, i);
        let stop = b.control() | b.eq(0x7F);
        if stop != 0 {
            let end = stop.trailing_zeros();
            high |= b.high() & ((1 << end) - 1) != 0;
            return (i + end as usize, high);
        }
        high |= b.high() != 0;
        i += 16;
    }
    while let Some(&c) = bytes.get(i) {
        if c < 0x20 || c == 0x7F {
            break;
        }
        high |= c >= 0x80;
        i += 1;
    }
    (i, high)
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
            for pos in 0..40 {
                let mut v = vec![b'a'; 40];
                v[pos] = stop;
                assert_eq!(string_run(&v, 0), pos, "{stop} at {pos}");
            }
        }
    }

    #[test]
    fn classified_runs_report_what_they_passed() {
        let (end, kind) = classified_string_run(b"abcdefghijklmnop\"", 0);
        assert_eq!((end, kind), (16, RunKind::default()));
        for (text, non_ascii, special) in [
            (&b"abcdefghij<lmnop\""[..], false, true),
            (b"abcdefghijklmn&\"", false, true),
            (b"ab>\"", false, true),
            (b"abcdefgh\xc3\xa9ijklmnop\"", true, false),
            (b"abcdefgh\xe2\x80\xa8ijklmnop\"", true, true),
            (
                b"abcdefghijklmnopqrstuvwxyz0123456789<abcdef\"",
                false,
                true,
            ),
            (
                b"abcdefghijklmnopqrstuvwxyz\xc3\xa90123456789abcdef\"",
                true,
                false,
            ),
        ] {
            let (end, kind) = classified_string_run(text, 0);
            assert_eq!(end, text.len() - 1);
            assert_eq!(kind, RunKind { non_ascii, special }, "{text:?}");
        }
    }

    /// What [`classified_string_run`] must return, a byte at a time.
    fn classified_bytewise(bytes: &[u8], mut i: usize) -> (usize, RunKind) {
        let mut kind = RunKind::default();
        while let Some(&b) = bytes.get(i) {
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            kind.non_ascii |= b >= 0x80;
            kind.special |= matches!(b, b'<' | b'>' | b'&' | 0xE2);
            i += 1;
        }
        (i, kind)
    }

    #[test]
    fn classified_runs_count_only_the_bytes_before_the_stop() {
        // A stop (or none) and a flagged byte at every pair of positions, before and
        // after each other, in texts ending inside and on a block, read from several
        // starts.
        for len in [0, 1, 7, 15, 16, 17, 31, 32, 40] {
            for stop in [None, Some(b'"'), Some(b'\\'), Some(0x00), Some(0x1f)] {
                for flag in [b'<', b'>', b'&', 0xE2, 0xC3, 0x7F] {
                    for stop_at in 0..len {
                        for flag_at in 0..len {
                            let mut v = vec![b'a'; len];
                            v[flag_at] = flag;
                            if let Some(stop) = stop {
                                v[stop_at] = stop;
                            }
                            for start in [0, 1, 5] {
                                assert_eq!(
                                    classified_string_run(&v, start.min(len)),
                                    classified_bytewise(&v, start.min(len)),
                                    "{v:?} from {start}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// What [`escaped_string_run`] must return, a byte at a time.
    fn escaped_bytewise(bytes: &[u8], mut i: usize) -> (usize, RunKind) {
        let mut kind = RunKind::default();
        while let Some(&b) = bytes.get(i) {
            if b == b'\\' && bytes.get(i + 1).is_some_and(|&c| is_short_escape(c)) {
                i += 2;
                continue;
            }
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            kind.non_ascii |= b >= 0x80;
            kind.special |= matches!(b, b'<' | b'>' | b'&' | 0xE2);
            i += 1;
        }
        (i, kind)
    }

    fn assert_run_matches_bytewise(v: &[u8], start: usize) {
        assert_eq!(
            escaped_string_run(v, start),
            escaped_bytewise(v, start),
            "{:?} from {start}",
            String::from_utf8_lossy(v)
        );
    }

    #[test]
    fn escaped_runs_pass_short_escapes_wherever_they_fall() {
        // One or two escapes (or other stops) at every position of texts ending inside
        // and on a block, so that an escape starts on a block's last byte, ends on it,
        // or follows another across a block's end; read from several starts.
        let pieces: [&[u8]; 14] = [
            b"\\\"",
            b"\\\\",
            b"\\n",
            b"\\r",
            b"\\t",
            b"\\b",
            b"\\f",
            b"\\/",
            b"\\u0041",
            b"\\x",
            b"\"",
            b"\x01",
            b"\\",
            b"\xc3\xa9",
        ];
        for len in [0, 1, 14, 15, 16, 17, 18, 31, 32, 33, 47] {
            for first in pieces {
                for second in pieces {
                    for at in 0..=len {
                        let mut v = vec![b'a'; len];
                        v.splice(at..at, first.iter().chain(second).copied());
                        for start in [0, 1, 3] {
                            assert_run_matches_bytewise(&v, start.min(v.len()));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn escaped_runs_match_bytewise_scanning_on_dense_text() {
        // Texts of nothing but escapes and the bytes around them, with the flagged
        // bytes before and after the stop.
        let pieces: [&[u8]; 12] = [
            b"\\\"",
            b"\\\\",
            b"\\n",
            b"\\t",
            b" ",
            b"    ",
            b"<",
            b"&",
            b"\xe2\x80\xa8",
            b"\xc3\xa9",
            b"\\u003c",
            b"\"",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let mut v = Vec::new();
            for _ in 0..next(24) {
                v.extend_from_slice(pieces[next(pieces.len())]);
            }
            if next(4) == 0 {
                v.push(b'\\');
            }
            assert_run_matches_bytewise(&v, next(v.len() + 1));
        }
    }

    #[test]
    fn plain_runs_never_pass_a_byte_that_needs_escaping() {
        for stop in [b'"', b'\\', b'<', b'>', b'&', 0xE2, 0x00, 0x1f] {
            for pos in 0..40 {
                let mut v = vec![b'a'; 40];
                v[pos] = stop;
                assert!(plain_run(&v, 0) <= pos, "{stop} at {pos}");
            }
        }
        assert_eq!(plain_run(&[b'a'; 40], 0), 40);
        // 0x7F and other high bytes are plain.
        assert_eq!(
            plain_run(&[0x7f, 0xc3, 0xa9, b'a', b'b', b'c', b'd', b'e'], 0),
            8
        );
    }

    #[test]
    fn byte_and_text_runs_stop_at_the_first_stop() {
        for pos in 0..40 {
            let mut v = vec![b'a'; 40];
            v[pos] = b'\n';
            assert_eq!(find_byte(&v, 0, b'\n'), pos);
            assert_eq!(text_run(&v, 0), (pos, false));
            for stop in [0x00, 0x1f, 0x7f, b'\t'] {
                v[pos] = stop;
                assert_eq!(text_run(&v, 0).0, pos, "{stop} at {pos}");
            }
            v[pos] = 0xc3;
            assert_eq!(text_run(&v, 0), (40, true));
            v[39] = b'\n';
            assert_eq!(text_run(&v, 0), (39, pos < 39));
        }
        assert_eq!(find_byte(&[b'a'; 40], 3, b'\n'), 40);
        assert_eq!(find_byte(b"ab\ncd\n", 3, b'\n'), 5);
        // A high byte after the stop does not count.
        let mut v = vec![b'a'; 40];
        v[5] = b'\n';
        v[6] = 0xc3;
        assert_eq!(text_run(&v, 0), (5, false));
    }
}
