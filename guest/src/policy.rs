//! The rules a controller follows around the store (CONTRACT.md §5, §7, §8 and §13): the
//! defaults of keepHistory and of GC's grace period, GC's clock-skew tolerance, the
//! effective keepHistory,
//! `resolvedRetentionPolicy.historyCount`, the renders GC must keep whatever the history
//! says, and what a pin applies. Decided here, once: the Rust host calls these natively,
//! and the component exports them (`logic`) for the hosts that run it themselves.

use std::collections::BTreeSet;

/// keepHistory when a Release does not set it.
pub const DEFAULT_KEEP_HISTORY: i64 = 10;

/// GC's grace period unless the caller gives one, in seconds: far longer than a sync
/// takes from put-render to record-history, so a blob a concurrent writer has put but
/// not yet recorded survives a GC (CONTRACT.md §13).
pub const DEFAULT_GC_GRACE_SECONDS: u64 = 600;

/// How far after GC's `now` a history entry's time may lie and still count as history,
/// in seconds (CONTRACT.md §5): the usual allowance for clocks that disagree (Kerberos
/// allows 5 minutes). An entry dated later was written by a clock running ahead, or
/// planted; GC neither counts it toward `keep` nor deletes it. Not a setting: every
/// host must decide alike.
pub const GC_FUTURE_TOLERANCE_SECONDS: u64 = 300;

/// The effective keepHistory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// Keep this many history entries (always > 0).
    Keep(i64),
    /// keepHistory ≤ 0: GC is off, everything is kept.
    Off,
}

impl Retention {
    /// The number GC is given: the entries it keeps, or 0 when it is off.
    pub fn keep(self) -> i64 {
        match self {
            Retention::Keep(n) => n,
            Retention::Off => 0,
        }
    }
}

/// unset → [`DEFAULT_KEEP_HISTORY`]; `≤ 0` → GC off; `N` → N.
pub fn effective_keep_history(keep_history: Option<i64>) -> Retention {
    match keep_history.unwrap_or(DEFAULT_KEEP_HISTORY) {
        n if n > 0 => Retention::Keep(n),
        _ => Retention::Off,
    }
}

/// `resolvedRetentionPolicy.historyCount`: 0 without a store (nothing is kept);
/// otherwise the effective keepHistory, with 0 for "GC off, no limit".
pub fn history_count(has_store: bool, keep_history: Option<i64>) -> i64 {
    if has_store {
        effective_keep_history(keep_history).keep()
    } else {
        0
    }
}

pub use crate::wit::logic::ReleaseRefs;

/// The renders GC must keep whatever the history says: the one this sync applied and
/// the Release's references, empty ones ignored; sorted, each once.
pub fn protected_refs(applied: Option<&str>, refs: &ReleaseRefs) -> Vec<String> {
    let set: BTreeSet<&str> = applied
        .into_iter()
        .chain(refs.last_successful.as_deref())
        .chain(refs.last_attempted.as_deref())
        .chain(refs.pin.as_deref())
        .chain(refs.last_healthy.as_deref())
        .filter(|r| !r.is_empty())
        .collect();
    set.into_iter().map(String::from).collect()
}

/// How a writer keeps the release index (CONTRACT.md §3) after a sync's record and GC:
/// `Some(true)` to index the renders the index lacks (an entry was added), `Some(false)`
/// to only drop what the history no longer names (a GC deleted an entry or a render),
/// `None` when the index needs nothing. One call after both, whichever asked.
pub fn index_update(added: bool, gc_deleted: bool) -> Option<bool> {
    match (added, gc_deleted) {
        (true, _) => Some(true),
        (false, true) => Some(false),
        (false, false) => None,
    }
}

/// What to apply given a pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinDecision {
    /// Apply the current render.
    ApplyCurrent,
    /// Apply the pinned render, read from the store.
    ApplyPinned(String),
}

/// Whether a pin can be honoured: no pin (or an empty one), or a pin to the current
/// render, applies the current render; a pin to another render needs a store to read
/// it from. The error is the sentence of the Release's `Pinned` condition.
pub fn pin_decision(
    pin: Option<&str>,
    current_ref: &str,
    has_store: bool,
) -> Result<PinDecision, String> {
    match pin.filter(|p| !p.is_empty()) {
        None => Ok(PinDecision::ApplyCurrent),
        Some(p) if p == current_ref => Ok(PinDecision::ApplyCurrent),
        Some(p) if has_store => Ok(PinDecision::ApplyPinned(p.to_string())),
        Some(p) => Err(format!(
            "pinned to {p}, which is not the current render {current_ref}, and there is \
             no render store to read it from"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_updated_after_an_added_entry_or_a_gc_that_deleted() {
        assert_eq!(index_update(true, false), Some(true));
        assert_eq!(index_update(true, true), Some(true));
        assert_eq!(index_update(false, true), Some(false));
        assert_eq!(index_update(false, false), None);
    }

    #[test]
    fn keep_history_defaults_and_turns_gc_off() {
        assert_eq!(effective_keep_history(None), Retention::Keep(10));
        assert_eq!(effective_keep_history(Some(3)), Retention::Keep(3));
        assert_eq!(effective_keep_history(Some(0)), Retention::Off);
        assert_eq!(effective_keep_history(Some(-1)), Retention::Off);
        assert_eq!(effective_keep_history(Some(-5)), Retention::Off);
        assert_eq!(history_count(false, Some(5)), 0);
        assert_eq!(history_count(true, None), 10);
        assert_eq!(history_count(true, Some(0)), 0);
    }

    #[test]
    fn protected_refs_are_distinct_sorted_and_never_empty() {
        let refs = ReleaseRefs {
            last_successful: Some("sha256:b".into()),
            last_attempted: Some(String::new()),
            pin: Some("sha256:a".into()),
            last_healthy: Some("sha256:b".into()),
        };
        assert_eq!(
            protected_refs(Some("sha256:c"), &refs),
            ["sha256:a", "sha256:b", "sha256:c"]
        );
        assert!(protected_refs(Some(""), &ReleaseRefs::default()).is_empty());
    }

    #[test]
    fn a_pin_elsewhere_needs_a_store() {
        assert_eq!(
            pin_decision(None, "r1", false),
            Ok(PinDecision::ApplyCurrent)
        );
        assert_eq!(
            pin_decision(Some(""), "r1", false),
            Ok(PinDecision::ApplyCurrent)
        );
        assert_eq!(
            pin_decision(Some("r1"), "r1", false),
            Ok(PinDecision::ApplyCurrent)
        );
        assert_eq!(
            pin_decision(Some("r0"), "r1", true),
            Ok(PinDecision::ApplyPinned("r0".into()))
        );
        let refused = pin_decision(Some("r0"), "r1", false).unwrap_err();
        assert!(refused.contains("r0") && refused.contains("no render store"));
    }
}
