//! Pins exactly which times the guest accepts and how it writes them.
//!
//! Key times and `syncedAt` are written by Go hosts and by this guest alike; a parser
//! that quietly grew more lenient (or stricter) would make keys that one side cannot
//! read. The expected values were taken from the hand-written parser before it moved
//! onto chrono, so any change of behaviour shows here. The digests at the end cover
//! sweeps far larger than the tables: every field value of a date, every single-byte
//! edit of a few valid times, and formatting across the whole 0000-9999 range.

use render_store_guest::time::KEY_TIME_LEN;
use render_store_guest::{
    Error, SyncTime, format_key_time, format_synced_at, parse_key_time, parse_synced_at,
};

fn t(seconds: i64, nanoseconds: u32) -> SyncTime {
    SyncTime {
        seconds,
        nanoseconds,
    }
}

/// 0000-01-01T00:00:00Z, the first instant that can be stored.
const FIRST: i64 = -62_167_219_200;
/// 9999-12-31T23:59:59Z, the last whole second that can be stored.
const LAST: i64 = 253_402_300_799;

/// `Some((seconds, nanoseconds))` when `text` parses, `None` when it is rejected; a
/// rejection must be an invalid-input error.
fn parsed(parse: fn(&str) -> Result<SyncTime, Error>, text: &str) -> Option<(i64, u32)> {
    match parse(text) {
        Ok(time) => Some((time.seconds, time.nanoseconds)),
        Err(Error::InvalidInput(_)) => None,
        Err(other) => panic!("{text:?}: not an invalid-input error: {other:?}"),
    }
}

fn check_parse(
    what: &str,
    parse: fn(&str) -> Result<SyncTime, Error>,
    cases: &[(&str, Option<(i64, u32)>)],
) {
    let mut wrong = Vec::new();
    for &(text, expected) in cases {
        let got = parsed(parse, text);
        if got != expected {
            wrong.push(format!(
                "{what} {text:?}: expected {expected:?}, got {got:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn key_times() {
    let ok = |s, n| Some((s, n));
    check_parse(
        "key time",
        parse_key_time,
        &[
            ("00000101T000000.000000000Z", ok(FIRST, 0)),
            ("99991231T235959.999999999Z", ok(LAST, 999_999_999)),
            ("19700101T000000.000000000Z", ok(0, 0)),
            ("19691231T235959.999999999Z", ok(-1, 999_999_999)),
            ("20231114T221320.000000005Z", ok(1_700_000_000, 5)),
            ("20231114T221320.500000000Z", ok(1_700_000_000, 500_000_000)),
            // Leap days.
            ("20240229T000000.000000000Z", ok(1_709_164_800, 0)),
            ("20000229T000000.000000000Z", ok(951_782_400, 0)),
            ("00000229T000000.000000000Z", ok(-62_162_121_600, 0)),
            ("20230229T000000.000000000Z", None),
            ("19000229T000000.000000000Z", None),
            ("21000229T000000.000000000Z", None),
            ("20240230T000000.000000000Z", None),
            // Month and day ranges.
            ("20230001T000000.000000000Z", None),
            ("20231301T000000.000000000Z", None),
            ("20230100T000000.000000000Z", None),
            ("20230131T000000.000000000Z", ok(1_675_123_200, 0)),
            ("20230132T000000.000000000Z", None),
            ("20230430T000000.000000000Z", ok(1_682_812_800, 0)),
            ("20230431T000000.000000000Z", None),
            ("20231231T000000.000000000Z", ok(1_703_980_800, 0)),
            ("99991232T000000.000000000Z", None),
            // Time of day: no 24:00:00, no leap second.
            ("20231114T235959.000000000Z", ok(1_700_006_399, 0)),
            ("20231114T240000.000000000Z", None),
            ("20231114T236000.000000000Z", None),
            ("20231114T235960.000000000Z", None),
            ("20161231T235960.000000000Z", None),
            ("20231114T999999.999999999Z", None),
            // Letters and separators are exact: upper case, no alternatives.
            ("20231114t221320.000000000Z", None),
            ("20231114T221320.000000000z", None),
            ("20231114 221320.000000000Z", None),
            ("20231114T221320,000000000Z", None),
            ("20231114T221320.000000000+", None),
            ("20231114T22:13:20.0000000Z", None),
            // Length is exact.
            ("", None),
            ("20231114T221320.00000000Z", None),
            ("20231114T221320.0000000000Z", None),
            ("20231114T221320Z", None),
            ("20231114T221320.000000000", None),
            ("20231114T221320.000000000Z ", None),
            (" 20231114T221320.000000000Z", None),
            ("20231114T221320.000000000Z\n", None),
            ("2023-11-14T22:13:20Z", None),
            ("2023-11-14T22:13:20.000000Z", None),
            // Every digit is an ASCII digit: no signs, spaces or other scripts.
            ("+0231114T221320.000000000Z", None),
            ("-0011114T221320.000000000Z", None),
            ("2023+114T221320.000000000Z", None),
            (" 0231114T221320.000000000Z", None),
            ("2023 114T221320.000000000Z", None),
            ("20231114T 21320.000000000Z", None),
            ("20231114T221320. 00000000Z", None),
            ("20231114T221320.+00000000Z", None),
            ("20231114T221320.00000000aZ", None),
            ("2023111AT221320.000000000Z", None),
            ("\u{662}231114T221320.000000000Z", None),
            (
                "\u{ff12}\u{ff10}\u{ff12}\u{ff13}1114T221320.000000000Z",
                None,
            ),
            ("20231114T221320.0000000\u{b2}Z", None),
            ("2023111\u{0}T221320.000000000Z", None),
        ],
    );
}

#[test]
fn synced_at() {
    let ok = |s, n| Some((s, n));
    check_parse(
        "RFC 3339",
        parse_synced_at,
        &[
            ("0000-01-01T00:00:00Z", ok(FIRST, 0)),
            ("9999-12-31T23:59:59Z", ok(LAST, 0)),
            ("9999-12-31T23:59:59.999999999Z", ok(LAST, 999_999_999)),
            ("1970-01-01T00:00:00Z", ok(0, 0)),
            ("1969-12-31T23:59:59.999999999Z", ok(-1, 999_999_999)),
            ("2023-11-14T22:13:20Z", ok(1_700_000_000, 0)),
            // Years outside 0000-9999 cannot even be written.
            ("10000-01-01T00:00:00Z", None),
            ("-0001-12-31T23:59:59Z", None),
            ("+2023-11-14T22:13:20Z", None),
            ("-2023-11-14T22:13:20Z", None),
            ("999-12-31T23:59:59Z", None),
            // ... nor reached through an offset.
            ("0000-01-01T00:00:00+00:01", None),
            ("0000-01-01T00:59:59+01:00", None),
            ("0000-01-01T01:00:00+01:00", ok(FIRST, 0)),
            ("0000-01-01T00:00:00-00:01", ok(FIRST + 60, 0)),
            ("9999-12-31T23:59:59-00:01", None),
            ("9999-12-31T22:59:59.999999999-01:00", ok(LAST, 999_999_999)),
            ("9999-12-31T23:00:00-01:00", None),
            ("9999-12-31T23:59:59+01:00", ok(LAST - 3600, 0)),
            // Leap days.
            ("2024-02-29T00:00:00Z", ok(1_709_164_800, 0)),
            ("2000-02-29T00:00:00Z", ok(951_782_400, 0)),
            ("2023-02-29T00:00:00Z", None),
            ("1900-02-29T00:00:00Z", None),
            ("2024-02-30T00:00:00Z", None),
            // Checked as written, before the offset moves the date.
            ("2023-02-29T00:30:00+01:00", None),
            ("2024-02-29T23:30:00-01:00", ok(1_709_253_000, 0)),
            ("2023-01-01T00:30:00+01:00", ok(1_672_529_400, 0)),
            // Month, day and time-of-day ranges.
            ("2023-00-01T00:00:00Z", None),
            ("2023-13-01T00:00:00Z", None),
            ("2023-01-00T00:00:00Z", None),
            ("2023-04-31T00:00:00Z", None),
            ("2023-12-31T23:59:59Z", ok(1_704_067_199, 0)),
            ("2023-11-14T24:00:00Z", None),
            ("2023-11-14T23:60:00Z", None),
            ("2023-11-14T23:59:60Z", None),
            ("2016-12-31T23:59:60Z", None),
            ("2023-11-14T23:59:60.5Z", None),
            // Fractions of 1 to 9 digits; no more, no fewer.
            ("2023-11-14T22:13:20.1Z", ok(1_700_000_000, 100_000_000)),
            ("2023-11-14T22:13:20.12Z", ok(1_700_000_000, 120_000_000)),
            ("2023-11-14T22:13:20.123Z", ok(1_700_000_000, 123_000_000)),
            ("2023-11-14T22:13:20.1234Z", ok(1_700_000_000, 123_400_000)),
            ("2023-11-14T22:13:20.12345Z", ok(1_700_000_000, 123_450_000)),
            (
                "2023-11-14T22:13:20.123456Z",
                ok(1_700_000_000, 123_456_000),
            ),
            (
                "2023-11-14T22:13:20.1234567Z",
                ok(1_700_000_000, 123_456_700),
            ),
            (
                "2023-11-14T22:13:20.12345678Z",
                ok(1_700_000_000, 123_456_780),
            ),
            (
                "2023-11-14T22:13:20.123456789Z",
                ok(1_700_000_000, 123_456_789),
            ),
            ("2023-11-14T22:13:20.000000001Z", ok(1_700_000_000, 1)),
            ("2023-11-14T22:13:20.0Z", ok(1_700_000_000, 0)),
            ("2023-11-14T22:13:20.000000000Z", ok(1_700_000_000, 0)),
            ("2023-11-14T22:13:20.500Z", ok(1_700_000_000, 500_000_000)),
            ("2023-11-14T22:13:20.1234567890Z", None),
            ("2023-11-14T22:13:20.0000000000Z", None),
            ("2023-11-14T22:13:20.Z", None),
            ("2023-11-14T22:13:20.", None),
            ("2023-11-14T22:13:20,5Z", None),
            ("2023-11-14T22:13:20.5.5Z", None),
            ("2023-11-14T22:13:20.-5Z", None),
            ("2023-11-14T22:13:20. 5Z", None),
            ("2023-11-14T22:13:20.5 Z", None),
            // Offsets: Z or ±hh:mm with hh ≤ 23 and mm ≤ 59.
            ("2023-11-14T23:13:20+01:00", ok(1_700_000_000, 0)),
            ("2023-11-14T21:13:20-01:00", ok(1_700_000_000, 0)),
            (
                "2023-11-14T23:13:20.5+01:00",
                ok(1_700_000_000, 500_000_000),
            ),
            ("2023-11-14T22:13:20+00:00", ok(1_700_000_000, 0)),
            ("2023-11-14T22:13:20-00:00", ok(1_700_000_000, 0)),
            ("2023-11-14T22:43:20+00:30", ok(1_700_000_000, 0)),
            ("2023-11-15T22:12:20+23:59", ok(1_700_000_000, 0)),
            ("2023-11-13T22:14:20-23:59", ok(1_700_000_000, 0)),
            ("2023-11-14T22:13:20+24:00", None),
            ("2023-11-14T22:13:20+00:60", None),
            ("2023-11-14T22:13:20+99:99", None),
            ("2023-11-14T22:13:20+0100", None),
            ("2023-11-14T22:13:20+01", None),
            ("2023-11-14T22:13:20+1:00", None),
            ("2023-11-14T22:13:20+01:0", None),
            ("2023-11-14T22:13:20+01:00:00", None),
            ("2023-11-14T22:13:20+01:00Z", None),
            ("2023-11-14T22:13:20Z+01:00", None),
            ("2023-11-14T22:13:20 +01:00", None),
            ("2023-11-14T22:13:20+ 1:00", None),
            ("2023-11-14T22:13:20\u{2212}01:00", None),
            ("2023-11-14T22:13:20UTC", None),
            ("2023-11-14T22:13:20GMT", None),
            // Letters are upper case; the separator is 'T' only.
            ("2023-11-14t22:13:20Z", None),
            ("2023-11-14T22:13:20z", None),
            ("2023-11-14 22:13:20Z", None),
            ("2023-11-14_22:13:20Z", None),
            ("2023-11-14T22:13:20.5z", None),
            // Missing parts.
            ("", None),
            ("2023", None),
            ("2023-11-14", None),
            ("2023-11-14T", None),
            ("2023-11-14T22:13", None),
            ("2023-11-14T22:13Z", None),
            ("2023-11-14T22:13:20", None),
            ("2023-11-14T22:13:20.5", None),
            ("2023-11-14T22:13:20+", None),
            ("T22:13:20Z", None),
            ("2023-11T22:13:20Z", None),
            // Extra bytes.
            ("2023-11-14T22:13:20Zx", None),
            ("2023-11-14T22:13:20ZZ", None),
            ("2023-11-14T22:13:20Z ", None),
            (" 2023-11-14T22:13:20Z", None),
            ("2023-11-14T22:13:20Z\n", None),
            ("2023-11-14T22:13:20Z\0", None),
            ("2023-11-14T22:13:20+01:00 ", None),
            ("2023-11-14T22:13:20.5Zx", None),
            // Every field has exactly its width, all ASCII digits.
            ("2023-1-14T22:13:20Z", None),
            ("2023-11-4T22:13:20Z", None),
            ("2023-11-14T2:13:20Z", None),
            ("2023-11-14T22:3:20Z", None),
            ("2023-11-14T22:13:2Z", None),
            ("2023-011-14T22:13:20Z", None),
            ("02023-11-14T22:13:20Z", None),
            ("2023-+1-14T22:13:20Z", None),
            ("2023--1-14T22:13:20Z", None),
            ("2023-11-+4T22:13:20Z", None),
            ("2023-11-14T+2:13:20Z", None),
            ("2023-11-14T22:-3:20Z", None),
            ("2023- 1-14T22:13:20Z", None),
            ("2023-11-14T 2:13:20Z", None),
            ("2023-11-14T22:13: 0Z", None),
            ("\u{662}\u{660}\u{662}\u{663}-11-14T22:13:20Z", None),
            ("\u{ff12}\u{ff10}\u{ff12}\u{ff13}-11-14T22:13:20Z", None),
            ("2023-11-14T22:13:20.\u{665}Z", None),
            ("2023-11-14T22:13:20+\u{660}1:00", None),
            ("2023/11/14T22:13:20Z", None),
            ("2023-11-14T22.13.20Z", None),
            ("20231114T221320Z", None),
            ("20231114T221320.000000000Z", None),
        ],
    );
}

#[test]
fn formatting() {
    let cases: &[(SyncTime, Option<(&str, &str)>)] = &[
        (
            t(0, 0),
            Some(("19700101T000000.000000000Z", "1970-01-01T00:00:00Z")),
        ),
        (
            t(FIRST, 0),
            Some(("00000101T000000.000000000Z", "0000-01-01T00:00:00Z")),
        ),
        (
            t(LAST, 999_999_999),
            Some((
                "99991231T235959.999999999Z",
                "9999-12-31T23:59:59.999999999Z",
            )),
        ),
        (
            t(-1, 999_999_999),
            Some((
                "19691231T235959.999999999Z",
                "1969-12-31T23:59:59.999999999Z",
            )),
        ),
        (
            t(1_709_164_800, 0),
            Some(("20240229T000000.000000000Z", "2024-02-29T00:00:00Z")),
        ),
        (
            t(951_782_400, 0),
            Some(("20000229T000000.000000000Z", "2000-02-29T00:00:00Z")),
        ),
        (
            t(4_107_542_400, 0),
            Some(("21000301T000000.000000000Z", "2100-03-01T00:00:00Z")),
        ),
        (
            t(-2_203_891_200, 0),
            Some(("19000301T000000.000000000Z", "1900-03-01T00:00:00Z")),
        ),
        // The fraction of syncedAt loses its trailing zeros, and vanishes when zero.
        (
            t(1_700_000_000, 500_000_000),
            Some(("20231114T221320.500000000Z", "2023-11-14T22:13:20.5Z")),
        ),
        (
            t(1_700_000_000, 1),
            Some((
                "20231114T221320.000000001Z",
                "2023-11-14T22:13:20.000000001Z",
            )),
        ),
        (
            t(1_700_000_000, 10),
            Some((
                "20231114T221320.000000010Z",
                "2023-11-14T22:13:20.00000001Z",
            )),
        ),
        (
            t(1_700_000_000, 120),
            Some((
                "20231114T221320.000000120Z",
                "2023-11-14T22:13:20.00000012Z",
            )),
        ),
        (
            t(1_700_000_000, 123_000_000),
            Some(("20231114T221320.123000000Z", "2023-11-14T22:13:20.123Z")),
        ),
        (
            t(1_700_000_000, 123_456_000),
            Some(("20231114T221320.123456000Z", "2023-11-14T22:13:20.123456Z")),
        ),
        (
            t(1_700_000_000, 100_000_000),
            Some(("20231114T221320.100000000Z", "2023-11-14T22:13:20.1Z")),
        ),
        (
            t(1_700_000_000, 101_000_000),
            Some(("20231114T221320.101000000Z", "2023-11-14T22:13:20.101Z")),
        ),
        (
            t(1_700_000_000, 123_456_780),
            Some((
                "20231114T221320.123456780Z",
                "2023-11-14T22:13:20.12345678Z",
            )),
        ),
        // Out of range.
        (t(FIRST - 1, 999_999_999), None),
        (t(LAST + 1, 0), None),
        (t(i64::MIN, 0), None),
        (t(i64::MAX, 999_999_999), None),
        (t(i64::MAX / 2, 0), None),
        (t(i64::MIN / 2, 0), None),
        // Nanoseconds below 10^9 only, even on a second that could be a leap second.
        (t(0, 1_000_000_000), None),
        (t(59, 1_000_000_000), None),
        (t(86_399, 1_000_000_000), None),
        (t(1_483_228_799, 1_500_000_000), None),
        (t(0, u32::MAX), None),
    ];
    let mut wrong = Vec::new();
    for &(time, expected) in cases {
        let got = match (format_key_time(time), format_synced_at(time)) {
            (Ok(key), Ok(rfc)) => Some((key, rfc)),
            (Err(Error::InvalidInput(_)), Err(Error::InvalidInput(_))) => None,
            other => panic!("{time:?}: {other:?}"),
        };
        let expected = expected.map(|(k, r)| (k.to_string(), r.to_string()));
        if got != expected {
            wrong.push(format!("{time:?}: expected {expected:?}, got {got:?}"));
        }
        assert_eq!(time.validate().is_ok(), expected.is_some(), "{time:?}");
        if let Some((key, rfc)) = &expected {
            assert_eq!(key.len(), KEY_TIME_LEN);
            assert_eq!(parse_key_time(key).unwrap(), time, "{key}");
            assert_eq!(parse_synced_at(rfc).unwrap(), time, "{rfc}");
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// FNV-1a, 64 bits: a digest of a sweep's outcomes to compare with the pinned one.
struct Digest {
    hash: u64,
    accepted: usize,
    total: usize,
}

impl Digest {
    fn new() -> Digest {
        Digest {
            hash: 0xcbf2_9ce4_8422_2325,
            accepted: 0,
            total: 0,
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.hash = (self.hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Records one outcome; the input is part of the digest, so a different input that
    /// happens to give the same answer does not hide a change.
    fn outcome(&mut self, input: &[u8], result: Option<&[u8]>) {
        self.total += 1;
        self.bytes(input);
        self.bytes(&[0xff]);
        match result {
            Some(out) => {
                self.accepted += 1;
                self.bytes(&[1]);
                self.bytes(out);
            }
            None => self.bytes(&[0]),
        }
        self.bytes(&[0xfe]);
    }

    fn parse(&mut self, parse: fn(&str) -> Result<SyncTime, Error>, text: &str) {
        let value = parsed(parse, text).map(|(s, n)| {
            let mut v = s.to_le_bytes().to_vec();
            v.extend_from_slice(&n.to_le_bytes());
            v
        });
        self.outcome(text.as_bytes(), value.as_deref());
    }
}

/// Every month 00-99 and day 00-99 of a few years, and every hour, minute and second
/// 00-99: the range checks and the calendar, field by field.
#[test]
fn every_field_value() {
    let mut key = Digest::new();
    let mut rfc = Digest::new();
    let years = [
        "0000", "0001", "0004", "0100", "0400", "1900", "1970", "2000", "2023", "2024", "2100",
        "9999",
    ];
    for year in years {
        for month in 0..100 {
            for day in 0..100 {
                key.parse(
                    parse_key_time,
                    &format!("{year}{month:02}{day:02}T120000.000000000Z"),
                );
                rfc.parse(
                    parse_synced_at,
                    &format!("{year}-{month:02}-{day:02}T12:00:00Z"),
                );
            }
        }
    }
    for a in 0..100 {
        for b in 0..100 {
            for c in [0, 1, 30, 59, 60, 61, 99] {
                key.parse(
                    parse_key_time,
                    &format!("20231114T{a:02}{b:02}{c:02}.000000000Z"),
                );
                key.parse(
                    parse_key_time,
                    &format!("99991231T{a:02}{c:02}{b:02}.999999999Z"),
                );
                rfc.parse(
                    parse_synced_at,
                    &format!("2023-11-14T{a:02}:{b:02}:{c:02}Z"),
                );
                rfc.parse(
                    parse_synced_at,
                    &format!("0000-01-01T{c:02}:{a:02}:{b:02}+{a:02}:{b:02}"),
                );
                rfc.parse(
                    parse_synced_at,
                    &format!("9999-12-31T{c:02}:{b:02}:{a:02}-{b:02}:{a:02}"),
                );
            }
        }
    }
    assert_eq!(
        (key.hash, key.accepted, key.total),
        (0x7584_7433_fce0_55ac, 15_905, 260_000),
        "key time field sweep"
    );
    assert_eq!(
        (rfc.hash, rfc.accepted, rfc.total),
        (0x8948_638f_aa99_1249, 12_983, 330_000),
        "RFC 3339 field sweep"
    );
}

/// Bytes to substitute or insert: digits, every separator either format uses, their
/// look-alikes, case variants, whitespace, and non-ASCII digits.
const EDITS: &[&str] = &[
    "0", "1", "2", "3", "5", "6", "9", "T", "t", "Z", "z", ".", ",", ":", "-", "+", " ", "\t",
    "\n", "\0", "/", "_", "A", "e", "\u{2212}", "\u{662}", "\u{ff11}", "\u{b2}", "\u{7f}",
];

/// Every deletion, substitution and insertion of one character in a few valid times.
fn edit_sweep(parse: fn(&str) -> Result<SyncTime, Error>, bases: &[&str]) -> Digest {
    let mut digest = Digest::new();
    for base in bases {
        digest.parse(parse, base);
        let chars: Vec<(usize, char)> = base.char_indices().collect();
        for &(at, c) in &chars {
            let rest = &base[at + c.len_utf8()..];
            digest.parse(parse, &format!("{}{rest}", &base[..at]));
            for edit in EDITS {
                digest.parse(parse, &format!("{}{edit}{rest}", &base[..at]));
                digest.parse(parse, &format!("{}{edit}{}", &base[..at], &base[at..]));
            }
        }
        for edit in EDITS {
            digest.parse(parse, &format!("{base}{edit}"));
        }
    }
    digest
}

#[test]
fn every_single_edit() {
    let key = edit_sweep(
        parse_key_time,
        &[
            "20231114T221320.123456789Z",
            "00000101T000000.000000000Z",
            "99991231T235959.999999999Z",
            "20240229T235959.500000000Z",
            "19700101T000000.000000000Z",
        ],
    );
    let rfc = edit_sweep(
        parse_synced_at,
        &[
            "2023-11-14T22:13:20Z",
            "2023-11-14T22:13:20.123456789Z",
            "2023-11-14T22:13:20.5+01:00",
            "2023-11-14T22:13:20-23:59",
            "0000-01-01T00:00:00Z",
            "0000-01-01T00:00:00.1-00:01",
            "9999-12-31T23:59:59.99999999Z",
            "9999-12-31T23:59:59+01:00",
            "2024-02-29T23:59:59-01:00",
            "2000-02-29T00:00:00Z",
        ],
    );
    assert_eq!(
        (key.hash, key.accepted, key.total),
        (0x005f_c7b6_a649_178a, 704, 7_820),
        "key time edit sweep"
    );
    assert_eq!(
        (rfc.hash, rfc.accepted, rfc.total),
        (0x7bf7_1ffd_b382_c372, 1_149, 14_932),
        "RFC 3339 edit sweep"
    );
}

/// Formats instants spread over the whole storable range and a little beyond it, with
/// fractions of every length, and checks that each parses back.
#[test]
fn formatting_sweep() {
    let mut digest = Digest::new();
    let step = 3_155_759; // about 36.5 days, not a whole number of minutes
    let mut seconds = FIRST - 50 * step;
    let mut i: u64 = 0;
    while seconds <= LAST + 50 * step {
        let mixed = (i.wrapping_mul(2_654_435_761) % 1_000_000_000) as u32;
        let nanoseconds = match i % 5 {
            0 => 0,
            1 => mixed,
            2 => mixed / 1000 * 1000,
            3 => mixed / 10_000_000 * 10_000_000,
            _ => 999_999_999,
        };
        for time in [
            t(seconds, nanoseconds),
            t(seconds + 86_399 - (i % 86_400) as i64, 0),
        ] {
            let key = format_key_time(time).ok();
            let rfc = format_synced_at(time).ok();
            assert_eq!(key.is_some(), rfc.is_some(), "{time:?}");
            assert_eq!(time.validate().is_ok(), key.is_some(), "{time:?}");
            if let (Some(key), Some(rfc)) = (&key, &rfc) {
                assert_eq!(parse_key_time(key).unwrap(), time, "{key}");
                assert_eq!(parse_synced_at(rfc).unwrap(), time, "{rfc}");
            }
            let input = [
                time.seconds.to_le_bytes(),
                i64::from(time.nanoseconds).to_le_bytes(),
            ];
            digest.outcome(&input.concat(), key.as_ref().map(|k| k.as_bytes()));
            digest.outcome(&input.concat(), rfc.as_ref().map(|r| r.as_bytes()));
        }
        seconds += step;
        i += 1;
    }
    assert_eq!(
        (digest.hash, digest.accepted, digest.total),
        (0x950a_a773_3ccc_fc39, 399_992, 400_392),
        "formatting sweep"
    );
}

/// ns per call of each time function; run with
/// `cargo test --release -p render-store-guest --test time_strictness -- --ignored --nocapture`.
#[test]
#[ignore = "a benchmark: prints timings, asserts nothing"]
fn bench_time_functions() {
    use std::hint::black_box;
    use std::time::Instant;

    const CALLS: usize = 1_000_000;
    let times: Vec<SyncTime> = (0..64)
        .map(|i: i64| {
            t(
                1_700_000_000 + i * 7_919_999_937 % (LAST - 1_700_000_000),
                [0, 500_000_000, 123_456_789, 120][i as usize % 4],
            )
        })
        .collect();
    let keys: Vec<String> = times.iter().map(|&t| format_key_time(t).unwrap()).collect();
    let rfcs: Vec<String> = times
        .iter()
        .enumerate()
        .map(|(i, &time)| {
            let utc = format_synced_at(time).unwrap();
            // Every fourth with an offset, as a host in another zone might send it.
            if i % 4 == 3 {
                let shifted = t(time.seconds + 3600, time.nanoseconds);
                format_synced_at(shifted).unwrap().replace('Z', "+01:00")
            } else {
                utc
            }
        })
        .collect();

    fn run(name: &str, mut f: impl FnMut(usize)) {
        for i in 0..CALLS / 10 {
            f(i);
        }
        let start = Instant::now();
        for i in 0..CALLS {
            f(i);
        }
        let ns = start.elapsed().as_nanos() as f64 / CALLS as f64;
        println!("{name:<18} {ns:>8.1} ns/op");
    }

    run("format_key_time", |i| {
        black_box(format_key_time(black_box(times[i % 64])).unwrap());
    });
    run("format_synced_at", |i| {
        black_box(format_synced_at(black_box(times[i % 64])).unwrap());
    });
    run("parse_key_time", |i| {
        black_box(parse_key_time(black_box(&keys[i % 64])).unwrap());
    });
    run("parse_synced_at", |i| {
        black_box(parse_synced_at(black_box(&rfcs[i % 64])).unwrap());
    });
    run("validate", |i| {
        black_box(black_box(times[i % 64]).validate().is_ok());
    });
}
