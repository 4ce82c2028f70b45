//! Sync times: the 26-character key layout and RFC 3339, both in UTC.
//!
//! The guest has no clock; a time always comes in as an argument. chrono does the
//! calendar and writes both layouts. Reading them stays here, field by field: chrono's
//! parsers accept more than Go does (lower-case `t` and `z`, a space for `T`, a leap
//! second `:60`, more than nine fraction digits, short or space-padded fields), and a
//! key or time only one side can read would split the store.

use crate::error::{Result, invalid};
use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, SecondsFormat};

pub use crate::wit::types::SyncTime;
/// A clock's reading as a sync time. Pure: the component has no clock, and a host
/// passes the time in.
impl From<std::time::SystemTime> for SyncTime {
    fn from(t: std::time::SystemTime) -> Self {
        match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => SyncTime {
                seconds: d.as_secs() as i64,
                nanoseconds: d.subsec_nanos(),
            },
            Err(e) => {
                let d = e.duration();
                let (seconds, nanoseconds) = match d.subsec_nanos() {
                    0 => (-(d.as_secs() as i64), 0),
                    n => (-(d.as_secs() as i64) - 1, 1_000_000_000 - n),
                };
                SyncTime {
                    seconds,
                    nanoseconds,
                }
            }
        }
    }
}

/// The host's clock. Not in the component, which has none: every time it uses comes in
/// as an argument.
#[cfg(not(target_arch = "wasm32"))]
impl SyncTime {
    /// The current time of this machine's clock.
    pub fn now() -> Self {
        std::time::SystemTime::now().into()
    }
}

/// Length of a key time, `YYYYMMDDTHHMMSS.nnnnnnnnnZ`.
pub const KEY_TIME_LEN: usize = 26;

/// Checks that `t` falls within the years both layouts can write with four digits.
fn storable_year(t: NaiveDateTime) -> Result<NaiveDateTime> {
    if !(0..=9999).contains(&t.year()) {
        return Err(invalid(format!(
            "sync time is in year {}; only years 0000 to 9999 can be stored",
            t.year()
        )));
    }
    Ok(t)
}

impl SyncTime {
    /// Checks the nanoseconds and that the year is within 0000-9999.
    pub fn validate(self) -> Result<()> {
        self.utc().map(|_| ())
    }

    fn utc(self) -> Result<NaiveDateTime> {
        // chrono would take 10^9 and more on a minute's last second as a leap second,
        // which neither Go nor the key layout has.
        if self.nanoseconds >= 1_000_000_000 {
            return Err(invalid(format!(
                "sync time nanoseconds {} must be below 1000000000",
                self.nanoseconds
            )));
        }
        let utc = DateTime::from_timestamp(self.seconds, self.nanoseconds).ok_or_else(|| {
            invalid(format!(
                "sync time {} s from 1970 is hundreds of millennia away; only years \
                 0000 to 9999 can be stored",
                self.seconds
            ))
        })?;
        storable_year(utc.naive_utc())
    }

    fn from_utc(t: NaiveDateTime) -> SyncTime {
        let t = t.and_utc();
        SyncTime {
            seconds: t.timestamp(),
            nanoseconds: t.timestamp_subsec_nanos(),
        }
    }
}

/// The key time `YYYYMMDDTHHMMSS.nnnnnnnnnZ` (Go layout `20060102T150405.000000000Z`):
/// always 26 characters, so lexical order of keys is chronological order.
pub fn format_key_time(t: SyncTime) -> Result<String> {
    // The layout is RFC 3339 with nine fraction digits and without its '-' and ':' (a
    // four-digit year has no sign). chrono's strftime-style formatter could write it
    // directly, but it links month and weekday names and more: 18 KB more component
    // than reusing the RFC 3339 writer.
    let mut out = t
        .utc()?
        .and_utc()
        .to_rfc3339_opts(SecondsFormat::Nanos, true);
    out.retain(|c| c != '-' && c != ':');
    Ok(out)
}

/// RFC 3339 in UTC with the nanoseconds' trailing zeros trimmed (no fraction when
/// zero), as Go's `time.RFC3339Nano` writes it.
pub fn format_synced_at(t: SyncTime) -> Result<String> {
    let mut out = t
        .utc()?
        .and_utc()
        .to_rfc3339_opts(SecondsFormat::Nanos, true);
    // chrono writes a fraction of 0, 3, 6 or 9 digits; Go's RFC3339Nano stops at the
    // last non-zero one: write nine and trim.
    out.pop();
    let kept = out.trim_end_matches('0').trim_end_matches('.').len();
    out.truncate(kept);
    out.push('Z');
    Ok(out)
}

/// A cursor over ASCII text that reads fixed-width fields.
struct Fields<'a> {
    text: &'a [u8],
    pos: usize,
    what: &'static str,
    original: &'a str,
}

impl Fields<'_> {
    fn fail(&self, expected: &str) -> crate::Error {
        invalid(format!(
            "{} {:?}: expected {expected} at character {}",
            self.what, self.original, self.pos
        ))
    }

    fn number(&mut self, width: usize, name: &str) -> Result<u32> {
        let digits = self
            .text
            .get(self.pos..self.pos + width)
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .ok_or_else(|| self.fail(&format!("{width} digits of the {name}")))?;
        self.pos += width;
        Ok(digits.iter().fold(0, |n, d| n * 10 + (d - b'0') as u32))
    }

    fn literal(&mut self, c: u8) -> Result<()> {
        if self.text.get(self.pos) != Some(&c) {
            return Err(self.fail(&format!("'{}'", c as char)));
        }
        self.pos += 1;
        Ok(())
    }

    fn out_of_range(&self, field: &str) -> crate::Error {
        invalid(format!(
            "{} {:?}: {field} out of range",
            self.what, self.original
        ))
    }

    /// The date and time of the fields read, `[year, month, day, hour, minute, second,
    /// nanosecond]`, after chrono has checked each is in range.
    fn date_time(
        &self,
        [year, month, day, hour, minute, second, nanosecond]: [u32; 7],
    ) -> Result<NaiveDateTime> {
        // chrono only says whether a date exists; which field to blame is ours to say.
        let date = NaiveDate::from_ymd_opt(year as i32, month, day).ok_or_else(|| {
            self.out_of_range(if (1..=12).contains(&month) {
                "day"
            } else {
                "month"
            })
        })?;
        // Nine digits stay below 10^9, so chrono never reads second 59 as a leap second.
        let time =
            NaiveTime::from_hms_nano_opt(hour, minute, second, nanosecond).ok_or_else(|| {
                self.out_of_range(if hour > 23 {
                    "hour"
                } else if minute > 59 {
                    "minute"
                } else {
                    "second"
                })
            })?;
        Ok(date.and_time(time))
    }
}

/// Parses a 26-character key time.
pub fn parse_key_time(text: &str) -> Result<SyncTime> {
    let mut f = Fields {
        text: text.as_bytes(),
        pos: 0,
        what: "key time",
        original: text,
    };
    if text.len() != KEY_TIME_LEN {
        return Err(invalid(format!(
            "key time {text:?} must be {KEY_TIME_LEN} characters (YYYYMMDDTHHMMSS.nnnnnnnnnZ)"
        )));
    }
    let year = f.number(4, "year")?;
    let month = f.number(2, "month")?;
    let day = f.number(2, "day")?;
    f.literal(b'T')?;
    let hour = f.number(2, "hour")?;
    let minute = f.number(2, "minute")?;
    let second = f.number(2, "second")?;
    f.literal(b'.')?;
    let nanosecond = f.number(9, "nanoseconds")?;
    f.literal(b'Z')?;
    let utc = f.date_time([year, month, day, hour, minute, second, nanosecond])?;
    Ok(SyncTime::from_utc(utc))
}

/// Parses RFC 3339 (`2006-01-02T15:04:05[.nnnnnnnnn](Z|±hh:mm)`) to UTC. The result's
/// year must be within 0000-9999.
pub fn parse_synced_at(text: &str) -> Result<SyncTime> {
    let mut f = Fields {
        text: text.as_bytes(),
        pos: 0,
        what: "RFC 3339 time",
        original: text,
    };
    let year = f.number(4, "year")?;
    f.literal(b'-')?;
    let month = f.number(2, "month")?;
    f.literal(b'-')?;
    let day = f.number(2, "day")?;
    f.literal(b'T')?;
    let hour = f.number(2, "hour")?;
    f.literal(b':')?;
    let minute = f.number(2, "minute")?;
    f.literal(b':')?;
    let second = f.number(2, "second")?;
    let mut nanosecond = 0;
    if f.text.get(f.pos) == Some(&b'.') {
        f.pos += 1;
        let start = f.pos;
        while f.text.get(f.pos).is_some_and(u8::is_ascii_digit) {
            f.pos += 1;
        }
        let digits = f.pos - start;
        if digits == 0 || digits > 9 {
            return Err(f.fail("1 to 9 fraction digits"));
        }
        f.pos = start;
        nanosecond = f.number(digits, "fraction")? * 10u32.pow(9 - digits as u32);
    }
    let east = match f.text.get(f.pos) {
        Some(b'Z') => {
            f.pos += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            f.pos += 1;
            let hours = f.number(2, "offset hours")?;
            f.literal(b':')?;
            let minutes = f.number(2, "offset minutes")?;
            // RFC 3339's grammar, narrower than chrono's FixedOffset (any |offset| < 24h,
            // so +00:60 would pass).
            if hours > 23 || minutes > 59 {
                return Err(invalid(format!(
                    "RFC 3339 time {text:?}: offset out of range"
                )));
            }
            let seconds = (hours * 3600 + minutes * 60) as i32;
            if sign == b'-' { -seconds } else { seconds }
        }
        _ => return Err(f.fail("'Z' or a ±hh:mm offset")),
    };
    if f.pos != text.len() {
        return Err(f.fail("the end of the time"));
    }
    let local = f.date_time([year, month, day, hour, minute, second, nanosecond])?;
    let offset = FixedOffset::east_opt(east).expect("offsets within ±23:59 are valid");
    let utc = local
        .checked_sub_offset(offset)
        .expect("a year 0000-9999 date moved by under a day is within chrono's range");
    Ok(SyncTime::from_utc(storable_year(utc)?))
}

/// A listing's time by the bucket's clock, as a sync time: the same instant, told the
/// same way (seconds and nanoseconds since the epoch).
impl From<crate::wit::bucket::Instant> for SyncTime {
    fn from(t: crate::wit::bucket::Instant) -> SyncTime {
        SyncTime {
            seconds: t.seconds,
            nanoseconds: t.nanoseconds,
        }
    }
}

/// A sync time as the bucket's clock tells it (a listing the guest makes itself).
impl From<SyncTime> for crate::wit::bucket::Instant {
    fn from(t: SyncTime) -> crate::wit::bucket::Instant {
        crate::wit::bucket::Instant {
            seconds: t.seconds,
            nanoseconds: t.nanoseconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(seconds: i64, nanoseconds: u32) -> SyncTime {
        SyncTime {
            seconds,
            nanoseconds,
        }
    }

    #[test]
    fn key_time_round_trips() {
        let cases = [
            (t(0, 0), "19700101T000000.000000000Z"),
            (t(1_700_000_000, 5), "20231114T221320.000000005Z"),
            (t(951_782_400, 0), "20000229T000000.000000000Z"),
            (t(-62_167_219_200, 0), "00000101T000000.000000000Z"),
            (
                t(253_402_300_799, 999_999_999),
                "99991231T235959.999999999Z",
            ),
        ];
        for (time, text) in cases {
            assert_eq!(format_key_time(time).unwrap(), text);
            assert_eq!(parse_key_time(text).unwrap(), time);
        }
    }

    #[test]
    fn years_outside_0000_9999_are_rejected() {
        assert!(format_key_time(t(253_402_300_800, 0)).is_err());
        assert!(format_key_time(t(-62_167_219_201, 0)).is_err());
        assert!(parse_synced_at("9999-12-31T23:59:59-01:00").is_err());
        assert!(format_key_time(t(0, 1_000_000_000)).is_err());
    }

    #[test]
    fn bad_key_times() {
        for bad in [
            "20231114T221320.00000000Z",
            "20231314T221320.000000000Z",
            "20230230T221320.000000000Z",
            "20231114T241320.000000000Z",
            "20231114T221360.000000000Z",
            "20231114X221320.000000000Z",
            "2023111AT221320.000000000Z",
        ] {
            assert!(parse_key_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rfc3339() {
        let time = parse_synced_at("2023-11-14T23:13:20.5+01:00").unwrap();
        assert_eq!(time, t(1_700_000_000, 500_000_000));
        assert_eq!(format_synced_at(time).unwrap(), "2023-11-14T22:13:20.5Z");
        assert_eq!(format_synced_at(t(0, 0)).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_synced_at(t(0, 120)).unwrap(),
            "1970-01-01T00:00:00.00000012Z"
        );
        for bad in [
            "2023-11-14 22:13:20Z",
            "2023-11-14T22:13:20",
            "2023-11-14T22:13:20.Z",
            "2023-11-14T22:13:20.1234567890Z",
            "2023-11-14T22:13:20Zx",
            "2023-02-29T22:13:20Z",
        ] {
            assert!(parse_synced_at(bad).is_err(), "{bad}");
        }
    }
}
