//! The times people give the fleet queries (`--since`, `--until`): an RFC 3339 time, a
//! date (midnight UTC), or an age (`7d`, `24h`: that long before now), and the window
//! they make.

use crate::failure;
use crate::time_view::now_seconds;
use anyhow::Result;
use render_store::{Runtime, SyncTime};

/// A window of sync times: from `since` (included) until `until` (excluded), each open
/// when absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// The earliest time in the window.
    pub since: Option<SyncTime>,
    /// The first time after the window.
    pub until: Option<SyncTime>,
}

impl Window {
    /// The window `--since` and `--until` give; an empty one (until not after since) is
    /// refused.
    pub async fn parse(rt: &Runtime, since: Option<&str>, until: Option<&str>) -> Result<Window> {
        let since = match since {
            Some(text) => Some(parse_time(rt, "--since", text).await?),
            None => None,
        };
        let until = match until {
            Some(text) => Some(parse_time(rt, "--until", text).await?),
            None => None,
        };
        if let (Some(s), Some(u)) = (since, until)
            && u <= s
        {
            return Err(failure::input(
                "--until is not after --since: the window holds no time; give an --until \
                 later than --since",
            ));
        }
        Ok(Window { since, until })
    }

    /// Whether `t` is in the window.
    pub fn holds(&self, t: SyncTime) -> bool {
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }
}

/// A time as `--since` and `--until` take it.
pub async fn parse_time(rt: &Runtime, flag: &str, text: &str) -> Result<SyncTime> {
    let text = text.trim();
    // An age: digits then a unit, as kubectl's AGE column writes it.
    if text.starts_with(|c: char| c.is_ascii_digit())
        && text.ends_with(|c: char| c.is_ascii_alphabetic())
        && !text.contains(['-', ':'])
    {
        let days = |t: &str| {
            t.strip_suffix('d')
                .and_then(|n| n.parse::<u64>().ok())
                .map(|d| std::time::Duration::from_secs(d * 86_400))
        };
        let span = days(text).or_else(|| humantime::parse_duration(text).ok());
        return match span {
            Some(span) => Ok(SyncTime {
                seconds: now_seconds()
                    .saturating_sub(i64::try_from(span.as_secs()).unwrap_or(i64::MAX)),
                nanoseconds: 0,
            }),
            None => Err(bad(flag, text)),
        };
    }
    // A date alone: its midnight in UTC.
    let whole = if text.len() == 10 && text.as_bytes().get(4) == Some(&b'-') {
        format!("{text}T00:00:00Z")
    } else {
        text.to_string()
    };
    rt.parse_synced_at(&whole)
        .await
        .map_err(|_| bad(flag, text))
}

fn bad(flag: &str, text: &str) -> anyhow::Error {
    failure::input(format!(
        "{flag} {text:?} is not a time: give an RFC 3339 time (2026-12-01T08:00:00Z), a \
         date (2026-12-01, midnight UTC) or an age (7d, 24h, 30m: that long ago)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_its_start_and_not_its_end() {
        let at = |seconds| SyncTime {
            seconds,
            nanoseconds: 0,
        };
        let w = Window {
            since: Some(at(10)),
            until: Some(at(20)),
        };
        assert!(!w.holds(at(9)) && w.holds(at(10)) && w.holds(at(19)) && !w.holds(at(20)));
        assert!(Window::default().holds(at(i64::MIN)));
    }
}
