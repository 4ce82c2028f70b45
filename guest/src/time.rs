//! Sync times: the 26-character key layout and RFC 3339, both in UTC.
//!
//! The guest has no clock; a time always comes in as an argument.

use crate::error::{Result, invalid};

/// A UTC instant: seconds since the Unix epoch and nanoseconds (< 10^9).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SyncTime {
    /// Seconds since 1970-01-01T00:00:00Z (negative before).
    pub seconds: i64,
    /// Nanoseconds within the second, below 1,000,000,000.
    pub nanoseconds: u32,
}

/// Length of a key time, `YYYYMMDDTHHMMSS.nnnnnnnnnZ`.
pub const KEY_TIME_LEN: usize = 26;

const SECONDS_PER_DAY: i64 = 86_400;

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanosecond: u32,
}

// Days from 1970-01-01 of a proleptic Gregorian date, and back: the era-based method
// (400-year eras of 146,097 days), exact for every i64 day count we can meet.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl SyncTime {
    /// Checks the nanoseconds and that the year is within 0000-9999.
    pub fn validate(self) -> Result<()> {
        self.civil().map(|_| ())
    }

    fn civil(self) -> Result<Civil> {
        if self.nanoseconds >= 1_000_000_000 {
            return Err(invalid(format!(
                "sync time nanoseconds {} must be below 1000000000",
                self.nanoseconds
            )));
        }
        let days = self.seconds.div_euclid(SECONDS_PER_DAY);
        let secs = self.seconds.rem_euclid(SECONDS_PER_DAY) as u32;
        let (year, month, day) = civil_from_days(days);
        if !(0..=9999).contains(&year) {
            return Err(invalid(format!(
                "sync time is in year {year}; only years 0000 to 9999 can be stored"
            )));
        }
        Ok(Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            nanosecond: self.nanoseconds,
        })
    }

    fn from_civil(c: Civil) -> SyncTime {
        let days = days_from_civil(c.year, c.month, c.day);
        SyncTime {
            seconds: days * SECONDS_PER_DAY + (c.hour * 3600 + c.minute * 60 + c.second) as i64,
            nanoseconds: c.nanosecond,
        }
    }
}

/// The key time `YYYYMMDDTHHMMSS.nnnnnnnnnZ` (Go layout `20060102T150405.000000000Z`):
/// always 26 characters, so lexical order of keys is chronological order.
pub fn format_key_time(t: SyncTime) -> Result<String> {
    let c = t.civil()?;
    Ok(format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}.{:09}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.nanosecond
    ))
}

/// RFC 3339 in UTC with the nanoseconds' trailing zeros trimmed (no fraction when
/// zero), as Go's `time.RFC3339Nano` writes it.
pub fn format_synced_at(t: SyncTime) -> Result<String> {
    let c = t.civil()?;
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    );
    if c.nanosecond != 0 {
        let fraction = format!("{:09}", c.nanosecond);
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
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

    fn number(&mut self, width: usize, name: &str) -> Result<i64> {
        let digits = self
            .text
            .get(self.pos..self.pos + width)
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .ok_or_else(|| self.fail(&format!("{width} digits of the {name}")))?;
        self.pos += width;
        Ok(digits.iter().fold(0, |n, d| n * 10 + (d - b'0') as i64))
    }

    fn literal(&mut self, c: u8) -> Result<()> {
        if self.text.get(self.pos) != Some(&c) {
            return Err(self.fail(&format!("'{}'", c as char)));
        }
        self.pos += 1;
        Ok(())
    }

    /// The instant of the fields read, `[year, month, day, hour, minute, second,
    /// nanosecond]`, after checking each is in range.
    fn time(
        &self,
        [year, month, day, hour, minute, second, nanosecond]: [i64; 7],
    ) -> Result<SyncTime> {
        let c = Civil {
            year,
            month: month as u32,
            day: day as u32,
            hour: hour as u32,
            minute: minute as u32,
            second: second as u32,
            nanosecond: nanosecond as u32,
        };
        self.check_ranges(&c)?;
        Ok(SyncTime::from_civil(c))
    }

    fn check_ranges(&self, c: &Civil) -> Result<()> {
        let bad = if !(1..=12).contains(&c.month) {
            Some("month")
        } else if c.day == 0 || c.day > days_in_month(c.year, c.month) {
            Some("day")
        } else if c.hour > 23 {
            Some("hour")
        } else if c.minute > 59 {
            Some("minute")
        } else if c.second > 59 {
            Some("second")
        } else {
            None
        };
        match bad {
            Some(field) => Err(invalid(format!(
                "{} {:?}: {field} out of range",
                self.what, self.original
            ))),
            None => Ok(()),
        }
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
    f.time([year, month, day, hour, minute, second, nanosecond])
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
        nanosecond = f.number(digits, "fraction")? * 10i64.pow(9 - digits as u32);
    }
    let offset = match f.text.get(f.pos) {
        Some(b'Z') => {
            f.pos += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            f.pos += 1;
            let hours = f.number(2, "offset hours")?;
            f.literal(b':')?;
            let minutes = f.number(2, "offset minutes")?;
            if hours > 23 || minutes > 59 {
                return Err(invalid(format!(
                    "RFC 3339 time {text:?}: offset out of range"
                )));
            }
            let seconds = hours * 3600 + minutes * 60;
            if sign == b'-' { -seconds } else { seconds }
        }
        _ => return Err(f.fail("'Z' or a ±hh:mm offset")),
    };
    if f.pos != text.len() {
        return Err(f.fail("the end of the time"));
    }
    let local = f.time([year, month, day, hour, minute, second, nanosecond])?;
    let utc = SyncTime {
        seconds: local.seconds - offset,
        nanoseconds: local.nanoseconds,
    };
    utc.validate()?;
    Ok(utc)
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
