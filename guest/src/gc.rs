//! Garbage collection: keep the newest `keep` history entries and every render they or
//! the protected set name; delete the rest. Keys that do not parse are never deleted.
//!
//! The decision is a pure function of the two listings and the protected set
//! ([`plan_gc`]), so it can be shown (`--dry-run`) or replayed without a store.
//!
//! A writer puts a blob before it records the entry that names it; a GC that lists the
//! history in between sees the blob unreferenced. So no blob younger than the [`Grace`]
//! period is deleted (CONTRACT.md §13), judged by the listing's modification times
//! against a `now` the host passes in: the component has no clock.

use crate::bucket::{Bucket, ObjectMeta};
use crate::error::Result;
use crate::history::{list_entries, split_history_keys};
use crate::keys::{Release, ReleasePrefix, validate_render_ref};
use crate::store::{call_failed, delete_in_batches};
use crate::time::SyncTime;
use std::collections::BTreeSet;

/// What a GC deletes and keeps (full keys).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcPlan {
    /// History entries deleted, oldest first.
    pub delete_history: Vec<String>,
    /// History entries kept.
    pub keep_history: Vec<String>,
    /// Render blobs deleted.
    pub delete_renders: Vec<String>,
    /// Render blobs kept.
    pub keep_renders: Vec<String>,
    /// Keys under `history/` or `renders/` that do not parse; GC leaves them alone.
    pub ignored: Vec<String>,
    /// Render blobs referenced by nothing kept, kept only because they are younger
    /// than the grace period.
    pub recent_renders: Vec<String>,
}

/// GC's grace period: a render blob modified less than `seconds` before `now` (or
/// after it, by a skewed clock) is not deleted. `seconds == 0` is no grace at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Grace {
    /// The host's current time.
    pub now: SyncTime,
    /// The period, in seconds.
    pub seconds: u64,
}

impl Grace {
    /// No grace period: every unreferenced blob is deleted, whatever its age.
    pub const NONE: Grace = Grace {
        now: SyncTime {
            seconds: 0,
            nanoseconds: 0,
        },
        seconds: 0,
    };

    /// The period unless the caller gives one
    /// ([`DEFAULT_GC_GRACE_SECONDS`](crate::policy::DEFAULT_GC_GRACE_SECONDS)).
    pub const DEFAULT: std::time::Duration =
        std::time::Duration::from_secs(crate::policy::DEFAULT_GC_GRACE_SECONDS);

    /// A period of `period` (whole seconds, rounded up) ending now, by this machine's
    /// clock (hosts only: the component has no clock).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn ending_now(period: std::time::Duration) -> Grace {
        Grace {
            now: SyncTime::now(),
            seconds: period.as_secs() + u64::from(period.subsec_nanos() > 0),
        }
    }

    /// Whether a blob modified at `modified` is still within the period.
    pub fn protects(&self, modified: SyncTime) -> bool {
        if self.seconds == 0 {
            return false;
        }
        let nanos = |t: SyncTime| i128::from(t.seconds) * 1_000_000_000 + i128::from(t.nanoseconds);
        nanos(self.now) - nanos(modified) < i128::from(self.seconds) * 1_000_000_000
    }
}

/// Checks the protected renderRefs, dropping empty ones.
fn protected_set(protected: &[String]) -> Result<BTreeSet<String>> {
    let mut set = BTreeSet::new();
    for r in protected.iter().filter(|r| !r.is_empty()) {
        validate_render_ref(r)?;
        set.insert(r.clone());
    }
    Ok(set)
}

/// Step 1: which entries go (the oldest, until `keep` remain).
fn select_history(
    prefix: &ReleasePrefix,
    keys: Vec<String>,
    keep: i64,
    plan: &mut GcPlan,
) -> Vec<String> {
    let (entries, ignored) = split_history_keys(prefix, keys);
    plan.ignored.extend(ignored);
    let excess = entries.len().saturating_sub(keep.max(0) as usize);
    let mut live = Vec::with_capacity(entries.len() - excess);
    for (i, entry) in entries.into_iter().enumerate() {
        if i < excess {
            plan.delete_history.push(entry.key);
        } else {
            plan.keep_history.push(entry.key);
            live.push(entry.render_ref);
        }
    }
    live
}

/// Step 4: which blobs go (those whose renderRef is not live and that are older than
/// the grace period).
fn select_renders(
    prefix: &ReleasePrefix,
    mut listed: Vec<ObjectMeta>,
    live: &BTreeSet<String>,
    grace: Grace,
    plan: &mut GcPlan,
) {
    listed.sort_unstable_by(|a, b| a.key.cmp(&b.key));
    for object in listed {
        let key = object.key;
        match prefix.parse_render_key(&key) {
            Some(r) if live.contains(&r) => plan.keep_renders.push(key),
            Some(_) if grace.protects(object.modified) => plan.recent_renders.push(key),
            Some(_) => plan.delete_renders.push(key),
            None => plan.ignored.push(key),
        }
    }
}

/// Keys without their metadata, as [`plan_gc`] takes them: no grace period applies.
fn unlisted(keys: Vec<String>) -> Vec<ObjectMeta> {
    keys.into_iter()
        .map(|key| ObjectMeta {
            key,
            size: 0,
            modified: SyncTime::default(),
        })
        .collect()
}

/// The GC decision from listings: `history_keys` as listed under `<prefix>history/`,
/// `render_keys` under `<prefix>renders/`, and the protected renderRefs (empty strings
/// ignored). `keep <= 0` deletes nothing and keeps everything. The keys carry no
/// modification times, so no grace period applies.
pub fn plan_gc(
    release: &Release,
    keep: i64,
    history_keys: Vec<String>,
    render_keys: Vec<String>,
    protected: &[String],
) -> Result<GcPlan> {
    plan_listed(
        release,
        keep,
        history_keys,
        unlisted(render_keys),
        protected,
        Grace::NONE,
    )
}

/// [`plan_gc`] over a listing of the renders with their modification times.
fn plan_listed(
    release: &Release,
    keep: i64,
    history_keys: Vec<String>,
    renders: Vec<ObjectMeta>,
    protected: &[String],
    grace: Grace,
) -> Result<GcPlan> {
    let prefix = ReleasePrefix::new(release)?;
    let mut live = protected_set(protected)?;
    let mut plan = GcPlan::default();
    if keep <= 0 {
        let (entries, ignored) = split_history_keys(&prefix, history_keys);
        plan.keep_history = entries.into_iter().map(|e| e.key).collect();
        plan.ignored = ignored;
        for object in renders {
            match prefix.parse_render_key(&object.key) {
                Some(_) => plan.keep_renders.push(object.key),
                None => plan.ignored.push(object.key),
            }
        }
        return Ok(plan);
    }
    live.extend(select_history(&prefix, history_keys, keep, &mut plan));
    select_renders(&prefix, renders, &live, grace, &mut plan);
    Ok(plan)
}

/// Runs GC on the store. `keep <= 0` makes no bucket call. Otherwise:
/// `list(P/history/)` and `delete_many` of the oldest entries until `keep` remain;
/// `list(P/history/)` again for the live renderRefs, plus `protected`;
/// `list(P/renders/)` and `delete_many` of every blob neither live nor within `grace`.
/// Deletes go in key order, [`crate::bucket::MAX_BATCH`] keys a call, and a call with
/// any failure stops GC (entries are deleted before blobs, so a stop never leaves an
/// entry whose blob is gone).
///
/// With `dry_run` only the two listings are made and the plan of a real run returned.
pub fn gc<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keep: i64,
    protected: &[String],
    dry_run: bool,
    grace: Grace,
) -> Result<GcPlan> {
    let prefix = ReleasePrefix::new(release)?;
    let protected = protected_set(protected)?;
    if keep <= 0 {
        return Ok(GcPlan::default());
    }
    let history = prefix.history();
    let renders = prefix.renders();
    let list = |bucket: &mut B, p: &str| bucket.list(p).map_err(|e| call_failed("list", p, e));

    if dry_run {
        let history_keys = crate::bucket::keys(list(bucket, &history)?);
        let render_listing = list(bucket, &renders)?;
        let protected: Vec<String> = protected.into_iter().collect();
        return plan_listed(
            release,
            keep,
            history_keys,
            render_listing,
            &protected,
            grace,
        );
    }

    let mut plan = GcPlan::default();
    let history_keys = crate::bucket::keys(list(bucket, &history)?);
    select_history(&prefix, history_keys, keep, &mut plan);
    delete_in_batches(bucket, &plan.delete_history)?;

    // What remains is read back rather than assumed, so an entry added or left behind
    // meanwhile still protects its render.
    let (entries, ignored_history) = list_entries(bucket, &prefix)?;
    let mut live = protected;
    live.extend(entries.iter().map(|e| e.render_ref.clone()));
    plan.keep_history = entries.into_iter().map(|e| e.key).collect();
    plan.ignored = ignored_history;

    let render_listing = list(bucket, &renders)?;
    select_renders(&prefix, render_listing, &live, grace, &mut plan);
    delete_in_batches(bucket, &plan.delete_renders)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryption::Keyring;
    use crate::{MemoryBucket, put_render};

    fn at(seconds: i64) -> SyncTime {
        SyncTime {
            seconds,
            nanoseconds: 0,
        }
    }

    /// A blob put at `put_at` and referenced by no entry, collected at `now`.
    fn collect(put_at: i64, now: i64, grace_seconds: u64) -> GcPlan {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        bucket.clock = at(put_at);
        put_render(&mut bucket, &release, &[b"{}"], &Keyring::empty()).unwrap();
        let grace = Grace {
            now: at(now),
            seconds: grace_seconds,
        };
        let plan = gc(&mut bucket, &release, 3, &[], false, grace).unwrap();
        let left = bucket.objects.len();
        assert_eq!(left, plan.recent_renders.len(), "{plan:?}");
        plan
    }

    #[test]
    fn a_blob_younger_than_the_grace_period_is_kept_and_reported() {
        let plan = collect(1_000, 1_000 + 599, 600);
        assert_eq!(plan.recent_renders.len(), 1);
        assert!(plan.delete_renders.is_empty());
    }

    #[test]
    fn a_blob_as_old_as_the_grace_period_is_deleted() {
        let plan = collect(1_000, 1_000 + 600, 600);
        assert_eq!(plan.delete_renders.len(), 1);
        assert!(plan.recent_renders.is_empty());
    }

    #[test]
    fn a_blob_from_the_future_is_young_and_no_grace_deletes_everything() {
        assert_eq!(collect(5_000, 1_000, 600).recent_renders.len(), 1);
        assert_eq!(collect(5_000, 1_000, 0).delete_renders.len(), 1);
    }

    #[test]
    fn the_dry_run_plans_with_the_grace_period() {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        bucket.clock = at(100);
        put_render(&mut bucket, &release, &[b"{}"], &Keyring::empty()).unwrap();
        let grace = Grace {
            now: at(110),
            seconds: 60,
        };
        let plan = gc(&mut bucket, &release, 3, &[], true, grace).unwrap();
        assert_eq!(plan.recent_renders.len(), 1);
        assert_eq!(bucket.objects.len(), 1);
    }

    #[test]
    fn gc_deletes_entries_then_blobs_in_batches_of_1000() {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        // 1,200 entries of one render, so GC drops 1,199 entries (two batches), and
        // 2,500 unreferenced blobs (three batches).
        let kept = put_render(&mut bucket, &release, &[b"{}"], &Keyring::empty()).unwrap();
        for i in 0..1_200 {
            let key = format!(
                "ns/app/history/{}-{kept}",
                crate::format_key_time(at(i)).unwrap()
            );
            bucket.objects.insert(key, b"{}".to_vec());
        }
        for i in 0..2_500 {
            let r = crate::render_ref_of_canonical(format!("{i}").as_bytes());
            bucket
                .objects
                .insert(format!("ns/app/renders/{r}"), Vec::new());
        }
        bucket.take_calls();
        let plan = gc(&mut bucket, &release, 1, &[], false, Grace::NONE).unwrap();
        assert_eq!(plan.delete_history.len(), 1_199);
        assert_eq!(plan.delete_renders.len(), 2_500);
        let calls = bucket.take_calls();
        let shape: Vec<String> = calls
            .iter()
            .map(|c| match c.strip_prefix("delete-many ") {
                Some(keys) => {
                    let keys: Vec<&str> = keys.split(' ').collect();
                    let (what, folder) = if keys[0].contains("/history/") {
                        ("entries", "/history/")
                    } else {
                        ("blobs", "/renders/")
                    };
                    assert!(keys.iter().all(|k| k.contains(folder)), "one kind a batch");
                    format!("delete-many {} {what}", keys.len())
                }
                None => c.split(' ').next().unwrap().to_string(),
            })
            .collect();
        assert_eq!(
            shape,
            [
                "list",
                "delete-many 1000 entries",
                "delete-many 199 entries",
                "list",
                "list",
                "delete-many 1000 blobs",
                "delete-many 1000 blobs",
                "delete-many 500 blobs",
            ]
        );
        assert_eq!(bucket.objects.len(), 2, "the kept entry and its blob");
    }

    #[test]
    fn a_failed_entry_batch_stops_gc_before_any_blob_is_deleted() {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        let kept = put_render(&mut bucket, &release, &[b"{}"], &Keyring::empty()).unwrap();
        let old = put_render(&mut bucket, &release, &[b"{\"a\":1}"], &Keyring::empty()).unwrap();
        let entry = |i: i64, r: &str| {
            format!(
                "ns/app/history/{}-{r}",
                crate::format_key_time(at(i)).unwrap()
            )
        };
        bucket.objects.insert(entry(1, &old), b"{}".to_vec());
        bucket.objects.insert(entry(2, &kept), b"{}".to_vec());
        bucket
            .undeletable
            .insert(entry(1, &old), "permission denied".into());
        bucket.take_calls();
        let err = gc(&mut bucket, &release, 1, &[], false, Grace::NONE).unwrap_err();
        assert_eq!(
            err,
            crate::Error::Bucket(format!(
                "delete-many: 1 of 1 keys could not be deleted: {}: permission denied",
                entry(1, &old)
            ))
        );
        let calls = bucket.take_calls();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert!(
            bucket
                .objects
                .contains_key(&format!("ns/app/renders/{old}"))
        );
    }
}
