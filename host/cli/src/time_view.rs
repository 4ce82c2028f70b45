//! Times as people read them in tables: to the second (a sync's nanoseconds matter to
//! the key order, not to a reader) and as an age from now, as kubectl's AGE column.

use render_store::SyncTime;
use std::time::{SystemTime, UNIX_EPOCH};

/// `formatted` (RFC 3339 as the component writes it) without its fraction of a second.
pub fn to_the_second(formatted: &str) -> String {
    match formatted.find('.') {
        Some(dot) => {
            let digits = formatted[dot + 1..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            format!("{}{}", &formatted[..dot], &formatted[dot + 1 + digits..])
        }
        None => formatted.to_string(),
    }
}

/// Seconds since the epoch now, by this machine's clock.
pub fn now_seconds() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// How long before `now` (seconds since the epoch) `t` was, in kubectl's short form:
/// `45s`, `12m`, `5h`, `3d`, `2y`, with the next unit down while the first is small
/// (`3h20m`, `2d5h`). A time after `now` (a skewed clock) reads `in 5m`.
pub fn age(t: SyncTime, now: i64) -> String {
    let diff = now.saturating_sub(t.seconds);
    if diff < 0 {
        return format!("in {}", span(diff.unsigned_abs()));
    }
    span(diff.unsigned_abs())
}

/// [`age`] as a sentence's end: `3d5h ago`, or `in 5m` for a time after `now`.
pub fn age_ago(t: SyncTime, now: i64) -> String {
    if t.seconds > now {
        age(t, now)
    } else {
        format!("{} ago", age(t, now))
    }
}

fn span(s: u64) -> String {
    const M: u64 = 60;
    const H: u64 = 60 * M;
    const D: u64 = 24 * H;
    const Y: u64 = 365 * D;
    match s {
        s if s < 2 * M => format!("{s}s"),
        s if s < 10 * M && s % M != 0 => format!("{}m{}s", s / M, s % M),
        s if s < 3 * H => format!("{}m", s / M),
        s if s < 8 * H && (s % H) / M != 0 => format!("{}h{}m", s / H, (s % H) / M),
        s if s < 2 * D => format!("{}h", s / H),
        s if s < 8 * D && (s % D) / H != 0 => format!("{}d{}h", s / D, (s % D) / H),
        s if s < 2 * Y => format!("{}d", s / D),
        s => format!("{}y", s / Y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> SyncTime {
        SyncTime {
            seconds,
            nanoseconds: 0,
        }
    }

    #[test]
    fn ages_read_as_kubectl_writes_them() {
        let now = 1_000_000_000;
        for (ago, shown) in [
            (0, "0s"),
            (45, "45s"),
            (119, "119s"),
            (150, "2m30s"),
            (600, "10m"),
            (45 * 60, "45m"),
            (4 * 3600 + 20 * 60, "4h20m"),
            (30 * 3600, "30h"),
            (3 * 86400 + 5 * 3600, "3d5h"),
            (200 * 86400, "200d"),
            (3 * 365 * 86400, "3y"),
        ] {
            assert_eq!(age(at(now - ago), now), shown, "{ago}s ago");
        }
        assert_eq!(age(at(now + 300), now), "in 5m");
        assert_eq!(age_ago(at(now - 3 * 3600), now), "3h ago");
        assert_eq!(age_ago(at(now + 300), now), "in 5m");
    }

    #[test]
    fn times_lose_their_fraction_only() {
        assert_eq!(
            to_the_second("2026-01-01T00:00:00.123456789Z"),
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(
            to_the_second("2026-01-01T00:00:00Z"),
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(
            to_the_second("2026-01-01T00:00:00.5+02:00"),
            "2026-01-01T00:00:00+02:00"
        );
    }
}
