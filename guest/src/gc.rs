//! Garbage collection: keep the newest `keep` history entries and every render they or
//! the protected set name; delete the rest. Keys that do not parse are never deleted.
//!
//! The decision is a pure function of the two listings, the protected set and `now`
//! ([`plan_gc`]), so it can be shown (`--dry-run`) or replayed without a store.
//!
//! Only real history counts toward `keep` (CONTRACT.md §5). An entry dated more than
//! [`GC_FUTURE_TOLERANCE_SECONDS`] after `now` (a replica whose clock runs ahead, or a
//! planted key such as `99991231T235950…`) would otherwise stay "the newest" for good and
//! push every later real entry out; an entry whose render blob is not in the listing
//! records nothing a rollback could apply, and a planted batch of them would do the same.
//! Both are skipped: not counted, never deleted, reported. Refusing to run instead would
//! let one planted key stop GC for good, and deleting them would lose a skewed replica's
//! real entries.
//!
//! A writer puts a blob before it records the entry that names it; a GC that lists the
//! history in between sees the blob unreferenced. So no blob younger than the [`Grace`]
//! period is deleted (CONTRACT.md §13), judged by the listing's modification times
//! against a `now` the host passes in: the component has no clock.

use crate::bucket::{Bucket, ObjectMeta};
use crate::encryption::Keyring;
use crate::error::Result;
use crate::history::{ListedEntry, authenticates, list_entries, split_history_keys};
use crate::keys::{Release, ReleasePrefix, validate_render_ref};
use crate::policy::GC_FUTURE_TOLERANCE_SECONDS;
use crate::store::{call_failed, delete_in_batches};
use crate::time::SyncTime;
use std::collections::BTreeSet;

pub use crate::wit::types::GcPlan;
impl GcPlan {
    /// Whether the plan deleted (or, dry, would delete) an entry or a render.
    pub fn deletes_anything(&self) -> bool {
        !self.delete_history.is_empty() || !self.delete_renders.is_empty()
    }
}

/// GC's grace period: a render blob modified less than `seconds` before `now` (or
/// after it, by a skewed clock) is not deleted. `seconds == 0` is no grace at all.
/// `now` also says which history entries are future-dated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Grace {
    /// The host's current time.
    pub now: SyncTime,
    /// The period, in seconds.
    pub seconds: u64,
}

impl Grace {
    /// No grace period at `now`: every unreferenced blob is deleted, whatever its age.
    /// (There is no "no grace" without a time: GC also judges entries by `now`.)
    pub const fn none_at(now: SyncTime) -> Grace {
        Grace { now, seconds: 0 }
    }

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
        nanos(self.now) - nanos(modified) < i128::from(self.seconds) * 1_000_000_000
    }
}

/// A time as nanoseconds from the epoch: wide enough for any `SyncTime` and any offset
/// of `u64` seconds.
fn nanos(t: SyncTime) -> i128 {
    i128::from(t.seconds) * 1_000_000_000 + i128::from(t.nanoseconds)
}

/// The rules GC decides by. This build's, or those of the builds that wrote trace
/// versions 2 to 4, so that their traces replay as recorded (TRACES.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    /// Future-dated and dangling entries are skipped; a real run lists `renders/`
    /// before it deletes entries; the metadata of a deleted entry or blob (gocloud's
    /// `<key>.attrs`) is deleted with it (trace version 5).
    Current,
    /// As [`Rules::Current`], metadata files left alone as keys that do not parse
    /// (trace version 4).
    SkipsEntries,
    /// Every entry counts toward `keep`; a real run lists `renders/` after the second
    /// history listing; metadata files are left alone (versions 2 and 3).
    EveryEntryCounts,
}

impl Rules {
    /// Whether future-dated and dangling entries are skipped.
    fn skips(self) -> bool {
        self != Rules::EveryEntryCounts
    }

    /// Whether a key's metadata file goes with the key.
    fn deletes_metadata(self) -> bool {
        self == Rules::Current
    }
}

/// Moves from `ignored` into `deleted` every metadata file (`<key>.attrs`,
/// [`ReleasePrefix::metadata_of`]) of a key in `deleted`, keeping both in key order: a
/// key GC deletes takes its metadata with it, as gocloud's fileblob deletes both. The
/// metadata of a kept key, and one whose key is gone (fileblob writes it just before
/// its key), stay ignored.
fn with_metadata(prefix: &ReleasePrefix, deleted: &mut Vec<String>, ignored: &mut Vec<String>) {
    if ignored.is_empty() || deleted.is_empty() {
        return;
    }
    let going: BTreeSet<&str> = deleted.iter().map(String::as_str).collect();
    let (metadata, kept): (Vec<String>, Vec<String>) = std::mem::take(ignored)
        .into_iter()
        .partition(|k| prefix.metadata_of(k).is_some_and(|of| going.contains(of)));
    *ignored = kept;
    if !metadata.is_empty() {
        deleted.extend(metadata);
        deleted.sort_unstable();
    }
}

/// The entries that do not count toward `keep`, and why.
struct Skip {
    /// Entries dated after this (nanoseconds from the epoch) are future-dated.
    latest: i128,
    /// The renderRefs the `renders/` listing holds a blob of.
    present: BTreeSet<String>,
}

impl Skip {
    fn new(prefix: &ReleasePrefix, now: SyncTime, renders: &[ObjectMeta]) -> Skip {
        Skip {
            latest: nanos(now) + i128::from(GC_FUTURE_TOLERANCE_SECONDS) * 1_000_000_000,
            present: renders
                .iter()
                .filter_map(|o| prefix.parse_render_key(&o.key))
                .collect(),
        }
    }

    /// Puts `entry` in the plan's list of skipped entries if it is one; says whether.
    /// A future-dated entry is reported as such whether or not its blob is there.
    fn skips(&self, entry: &ListedEntry, plan: &mut GcPlan) -> bool {
        if nanos(entry.synced_at) > self.latest {
            plan.future_history.push(entry.key.clone());
        } else if !self.present.contains(&entry.render_ref) {
            plan.dangling_history.push(entry.key.clone());
        } else {
            return false;
        }
        true
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

/// Tells whether a listed entry authenticates (reading its body), where encryption
/// is required; `Ok(false)` for an entry gone since the listing.
type Authenticator<'a> = &'a mut dyn FnMut(&ListedEntry) -> Result<bool>;

/// Step 1: which entries go (the oldest of those that count, until `keep` remain).
/// With `authentic`, an entry counts only if it authenticates: bodies are read newest
/// first, and only until `keep` entries authenticated, so GC reads the bodies it counts
/// (and the unauthenticated ones between them). Returns the renderRefs of every entry
/// kept, skipped ones included.
fn select_history(
    prefix: &ReleasePrefix,
    keys: Vec<String>,
    keep: i64,
    skip: Option<&Skip>,
    mut authentic: Option<Authenticator<'_>>,
    plan: &mut GcPlan,
) -> Result<Vec<String>> {
    let (entries, ignored) = split_history_keys(prefix, keys);
    plan.ignored.extend(ignored);
    let mut counts: Vec<bool> = entries
        .iter()
        .map(|e| !skip.is_some_and(|s| s.skips(e, plan)))
        .collect();
    let keep = keep.max(0) as usize;
    let mut delete = vec![false; entries.len()];
    match authentic.as_mut() {
        None => {
            let counted = counts.iter().filter(|c| **c).count();
            // Entries come in key order, which is time order: the oldest that count go
            // first.
            let mut excess = counted.saturating_sub(keep);
            for (i, counts) in counts.iter().enumerate() {
                if *counts && excess > 0 {
                    excess -= 1;
                    delete[i] = true;
                }
            }
        }
        Some(authentic) => {
            let mut counted = 0;
            for i in (0..entries.len()).rev() {
                if !counts[i] {
                    continue;
                }
                if counted == keep {
                    delete[i] = true;
                } else if authentic(&entries[i])? {
                    counted += 1;
                } else {
                    counts[i] = false;
                    plan.unauthenticated_history.push(entries[i].key.clone());
                }
            }
            plan.unauthenticated_history.sort_unstable();
        }
    }
    let mut live = Vec::with_capacity(entries.len());
    for (entry, delete) in entries.into_iter().zip(delete) {
        if delete {
            plan.delete_history.push(entry.key);
        } else {
            plan.keep_history.push(entry.key);
            live.push(entry.render_ref);
        }
    }
    Ok(live)
}

/// The [`Authenticator`] of a GC under `keyring`: `None` unless encryption is
/// required (and entries are authenticated), when every entry that reads counts.
fn authenticator<'k, B: Bucket>(
    bucket: &'k mut B,
    prefix: &'k ReleasePrefix,
    keyring: &'k Keyring,
) -> Option<impl FnMut(&ListedEntry) -> Result<bool> + 'k> {
    keyring
        .counts_only_authenticated()
        .then_some(move |listed: &ListedEntry| authenticates(bucket, prefix, listed, keyring))
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
            Some(_) if grace.protects(object.modified.into()) => plan.recent_renders.push(key),
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
            modified: SyncTime::default().into(),
        })
        .collect()
}

/// The GC decision from listings: `history_keys` as listed under `<prefix>history/`,
/// `render_keys` under `<prefix>renders/`, the protected renderRefs (empty strings
/// ignored) and the time GC runs at, which decides the future-dated entries.
/// `keep <= 0` deletes nothing and keeps everything. The keys carry no modification
/// times, so no grace period applies.
pub fn plan_gc(
    release: &Release,
    keep: i64,
    history_keys: Vec<String>,
    render_keys: Vec<String>,
    protected: &[String],
    now: SyncTime,
) -> Result<GcPlan> {
    plan_listed(
        release,
        keep,
        history_keys,
        unlisted(render_keys),
        protected,
        Grace::none_at(now),
        Rules::Current,
        None,
    )
}

/// [`plan_gc`] over a listing of the renders with their modification times, entries
/// counted only if `authentic` says so when it is given.
#[allow(clippy::too_many_arguments)] // plan_gc's inputs, and how GC counts
fn plan_listed(
    release: &Release,
    keep: i64,
    history_keys: Vec<String>,
    renders: Vec<ObjectMeta>,
    protected: &[String],
    grace: Grace,
    rules: Rules,
    authentic: Option<Authenticator<'_>>,
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
    let skip = rules
        .skips()
        .then(|| Skip::new(&prefix, grace.now, &renders));
    live.extend(select_history(
        &prefix,
        history_keys,
        keep,
        skip.as_ref(),
        authentic,
        &mut plan,
    )?);
    select_renders(&prefix, renders, &live, grace, &mut plan);
    if rules.deletes_metadata() {
        with_metadata(&prefix, &mut plan.delete_history, &mut plan.ignored);
        with_metadata(&prefix, &mut plan.delete_renders, &mut plan.ignored);
    }
    Ok(plan)
}

/// Runs GC on the store. `keep <= 0` makes no bucket call. Otherwise:
/// `list(P/history/)` and `list(P/renders/)`; `delete_many` of the oldest entries that
/// count until `keep` of them remain (future-dated entries and entries whose blob the
/// listing lacks do not count and are never deleted); `list(P/history/)` again for the
/// live renderRefs, plus `protected`; `delete_many` of every listed blob neither live
/// nor within `grace`. Deletes go in key order, [`crate::bucket::MAX_BATCH`] keys a
/// call, and a call with any failure stops GC (entries are deleted before blobs, so a
/// stop never leaves an entry whose blob is gone).
///
/// Where encryption is required, an entry counts only if its body authenticates under
/// `keyring`: after the two listings, `get` of each entry's body newest first, until
/// `keep` of them authenticated (entries older than the last one counted go unread,
/// past retention whatever they are); one that does not authenticate is kept, not
/// counted ([`GcPlan::unauthenticated_history`]). Without the rule GC reads no entry.
///
/// With `dry_run` only the listings (and, where encryption is required, the reads of
/// the bodies it counts) are made and the plan of a real run returned.
pub fn gc<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keep: i64,
    protected: &[String],
    dry_run: bool,
    grace: Grace,
    keyring: &Keyring,
) -> Result<GcPlan> {
    gc_by(
        bucket,
        release,
        keep,
        protected,
        dry_run,
        grace,
        Rules::Current,
        keyring,
    )
}

/// [`gc`] by the given rules.
#[allow(clippy::too_many_arguments)] // gc's arguments and the rules
pub(crate) fn gc_by<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keep: i64,
    protected: &[String],
    dry_run: bool,
    grace: Grace,
    rules: Rules,
    keyring: &Keyring,
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
        let mut authentic = authenticator(bucket, &prefix, keyring);
        return plan_listed(
            release,
            keep,
            history_keys,
            render_listing,
            &protected,
            grace,
            rules,
            authentic.as_mut().map(|a| a as Authenticator<'_>),
        );
    }

    let mut plan = GcPlan::default();
    let history_keys = crate::bucket::keys(list(bucket, &history)?);
    // Which entries are dangling depends on the blobs, so they are listed before any
    // entry is deleted, and after the history: a writer puts a blob before it records
    // the entry, so the blob of every entry listed, if it exists, is in this listing.
    let early_renders = match rules.skips() {
        true => Some(list(bucket, &renders)?),
        false => None,
    };
    let skip = early_renders
        .as_deref()
        .map(|listed| Skip::new(&prefix, grace.now, listed));
    {
        let mut authentic = authenticator(bucket, &prefix, keyring);
        select_history(
            &prefix,
            history_keys,
            keep,
            skip.as_ref(),
            authentic.as_mut().map(|a| a as Authenticator<'_>),
            &mut plan,
        )?;
    }
    if rules.deletes_metadata() {
        with_metadata(&prefix, &mut plan.delete_history, &mut plan.ignored);
    }
    delete_in_batches(bucket, &plan.delete_history)?;

    // What remains is read back rather than assumed, so an entry added or left behind
    // meanwhile still protects its render.
    let (entries, ignored_history) = list_entries(bucket, &prefix)?;
    let mut live = protected;
    live.extend(entries.iter().map(|e| e.render_ref.clone()));
    plan.keep_history = entries.into_iter().map(|e| e.key).collect();
    plan.ignored = ignored_history;

    let render_listing = match early_renders {
        Some(listed) => listed,
        None => list(bucket, &renders)?,
    };
    select_renders(&prefix, render_listing, &live, grace, &mut plan);
    if rules.deletes_metadata() {
        with_metadata(&prefix, &mut plan.delete_renders, &mut plan.ignored);
    }
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
        let plan = gc(
            &mut bucket,
            &release,
            3,
            &[],
            false,
            grace,
            &Keyring::empty(),
        )
        .unwrap();
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
        let plan = gc(
            &mut bucket,
            &release,
            3,
            &[],
            true,
            grace,
            &Keyring::empty(),
        )
        .unwrap();
        assert_eq!(plan.recent_renders.len(), 1);
        assert_eq!(bucket.objects.len(), 1);
    }

    #[test]
    fn where_encryption_is_required_gc_counts_only_authenticated_entries_and_reads_only_those_it_counts()
     {
        use crate::encryption::SealingKey;
        use crate::history::{NewEntry, entry_body, record_history};
        let release = Release::new("ns", "app");
        let keys = Keyring::new(vec![SealingKey::new("k1", &[1; 32]).unwrap()])
            .unwrap()
            .require(true)
            .unwrap();
        let mut bucket = MemoryBucket::new();
        let prefix = ReleasePrefix::new(&release).unwrap();
        let mut entries = Vec::new();
        for i in 0..5 {
            let r = put_render(&mut bucket, &release, &[format!("{{\"n\":{i}}}")], &keys).unwrap();
            let synced_at = at(i * 10);
            if i == 4 {
                // The newest entry is planted: no MAC.
                let key = prefix.history_key(synced_at, &r).unwrap();
                bucket
                    .put(&key, &entry_body(&r, synced_at, "planted").unwrap())
                    .unwrap();
            } else {
                let e = NewEntry {
                    render_ref: r.clone(),
                    synced_at,
                    summary: String::new(),
                };
                record_history(&mut bucket, &release, &e, &keys).unwrap();
            }
            entries.push(prefix.history_key(synced_at, &r).unwrap());
        }
        bucket.take_calls();
        let plan = gc(
            &mut bucket,
            &release,
            2,
            &[],
            false,
            Grace::none_at(at(100)),
            &keys,
        )
        .unwrap();
        // The planted entry does not count: the two newest genuine ones are kept, and it.
        assert_eq!(plan.unauthenticated_history, [entries[4].clone()]);
        assert_eq!(plan.delete_history, entries[..2].to_vec());
        let gets: Vec<String> = bucket
            .take_calls()
            .into_iter()
            .filter(|c| c.starts_with("get "))
            .collect();
        assert_eq!(
            gets.len(),
            3,
            "the bodies it counts and the planted one: {gets:?}"
        );
        // Without the rule the planted entry counts and pushes a real one out.
        let lax = Keyring::new(vec![SealingKey::new("k1", &[1; 32]).unwrap()]).unwrap();
        let plan = gc(
            &mut bucket,
            &release,
            1,
            &[],
            true,
            Grace::none_at(at(100)),
            &lax,
        )
        .unwrap();
        assert_eq!(plan.keep_history, [entries[4].clone()]);
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
        let plan = gc(
            &mut bucket,
            &release,
            1,
            &[],
            false,
            Grace::none_at(at(1_200)),
            &Keyring::empty(),
        )
        .unwrap();
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
                "list",
                "delete-many 1000 entries",
                "delete-many 199 entries",
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
        let err = gc(
            &mut bucket,
            &release,
            1,
            &[],
            false,
            Grace::none_at(at(2)),
            &Keyring::empty(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            crate::Error::Bucket(format!(
                "delete-many: 1 of 1 keys could not be deleted: {}: permission denied",
                entry(1, &old)
            ))
        );
        let calls = bucket.take_calls();
        // Both listings, then the failed batch of entries, and nothing after it.
        assert_eq!(calls.len(), 3, "{calls:?}");
        assert!(calls[2].starts_with("delete-many "), "{calls:?}");
        assert!(
            bucket
                .objects
                .contains_key(&format!("ns/app/renders/{old}"))
        );
    }

    /// The history key of an entry of `ns/app` at `t`.
    fn entry_at(t: SyncTime, r: &str) -> String {
        format!("ns/app/history/{}-{r}", crate::format_key_time(t).unwrap())
    }

    fn blob(r: &str) -> String {
        format!("ns/app/renders/{r}")
    }

    /// A renderRef no blob has.
    fn absent(n: u32) -> String {
        crate::render_ref_of_canonical(format!("absent {n}").as_bytes())
    }

    /// A store of `ns/app` with `n` renders, each recorded an hour apart from `start`.
    fn real_history(n: i64, start: i64) -> (MemoryBucket, Vec<String>) {
        let release = Release::new("ns", "app");
        let mut bucket = MemoryBucket::new();
        let mut refs = Vec::new();
        for i in 0..n {
            let object = format!("{{\"n\":{i}}}");
            let r = put_render(
                &mut bucket,
                &release,
                &[object.as_bytes()],
                &Keyring::empty(),
            )
            .unwrap();
            bucket
                .objects
                .insert(entry_at(at(start + 3_600 * i), &r), b"{}".to_vec());
            refs.push(r);
        }
        (bucket, refs)
    }

    fn listed(bucket: &MemoryBucket, folder: &str) -> Vec<String> {
        bucket
            .objects
            .keys()
            .filter(|k| k.starts_with(&format!("ns/app/{folder}/")))
            .cloned()
            .collect()
    }

    /// The plan of the two listings of `bucket`, as a dry run makes it.
    fn planned(bucket: &MemoryBucket, keep: i64, protected: &[String], now: SyncTime) -> GcPlan {
        plan_gc(
            &Release::new("ns", "app"),
            keep,
            listed(bucket, "history"),
            listed(bucket, "renders"),
            protected,
            now,
        )
        .unwrap()
    }

    #[test]
    fn an_entry_up_to_the_tolerance_after_now_counts_and_one_a_nanosecond_later_does_not() {
        let now = at(1_000_000);
        let tolerance = GC_FUTURE_TOLERANCE_SECONDS as i64;
        assert_eq!(tolerance, 300);
        let (mut bucket, refs) = real_history(2, 0);
        bucket.objects.clear();
        let at_edge = SyncTime {
            seconds: now.seconds + tolerance,
            nanoseconds: 0,
        };
        let past_edge = SyncTime {
            seconds: now.seconds + tolerance,
            nanoseconds: 1,
        };
        let keys = vec![entry_at(at_edge, &refs[0]), entry_at(past_edge, &refs[1])];
        let renders = vec![blob(&refs[0]), blob(&refs[1])];
        let plan = plan_gc(
            &Release::new("ns", "app"),
            1,
            keys.clone(),
            renders.clone(),
            &[],
            now,
        )
        .unwrap();
        // Both are kept; only the first counts (it is the one `keep 1` keeps).
        assert_eq!(plan.keep_history, keys);
        assert_eq!(plan.future_history, [keys[1].clone()]);
        assert!(plan.delete_history.is_empty() && plan.dangling_history.is_empty());
        assert_eq!(
            plan.keep_renders, renders,
            "a future entry's render is kept"
        );
        // A nanosecond later, the edge entry counts too, and the older one goes.
        let later = SyncTime {
            seconds: now.seconds,
            nanoseconds: 1,
        };
        let plan = plan_gc(
            &Release::new("ns", "app"),
            1,
            keys.clone(),
            renders,
            &[],
            later,
        )
        .unwrap();
        assert_eq!(
            (plan.delete_history, plan.keep_history),
            (vec![keys[0].clone()], vec![keys[1].clone()])
        );
        assert!(plan.future_history.is_empty());
    }

    #[test]
    fn entries_whose_render_is_missing_do_not_count_and_are_kept() {
        let (mut bucket, refs) = real_history(3, 0);
        let dangling = [
            entry_at(at(3_600 * 3), &absent(0)),
            entry_at(at(3_600 * 4), &absent(1)),
        ];
        for k in &dangling {
            bucket.objects.insert(k.clone(), b"{}".to_vec());
        }
        let plan = planned(&bucket, 2, &[], at(3_600 * 5));
        assert_eq!(plan.dangling_history, dangling);
        assert_eq!(plan.delete_history, [entry_at(at(0), &refs[0])]);
        assert_eq!(
            plan.keep_history,
            [
                entry_at(at(3_600), &refs[1]),
                entry_at(at(7_200), &refs[2]),
                dangling[0].clone(),
                dangling[1].clone()
            ]
        );
        assert_eq!(plan.delete_renders, [blob(&refs[0])]);
        assert!(plan.future_history.is_empty());
    }

    #[test]
    fn an_entry_both_future_dated_and_dangling_is_reported_as_future() {
        let (bucket, refs) = real_history(1, 0);
        let keys = vec![
            entry_at(at(0), &refs[0]),
            entry_at(at(10_000), &absent(0)),
            entry_at(at(10), &absent(1)),
        ];
        let plan = plan_gc(
            &Release::new("ns", "app"),
            1,
            keys.clone(),
            listed(&bucket, "renders"),
            &[],
            at(20),
        )
        .unwrap();
        assert_eq!(plan.future_history, [keys[1].clone()]);
        assert_eq!(plan.dangling_history, [keys[2].clone()]);
        assert_eq!(
            plan.keep_history,
            [keys[0].clone(), keys[2].clone(), keys[1].clone()]
        );
        assert!(plan.delete_history.is_empty());
    }

    /// The case: four real entries (the newest just recorded) and ten planted
    /// `99991231T235950…` entries whose renders do not exist; `keep 4`, the current
    /// render protected. Every real entry and render stays; the planted ones are
    /// reported, and left for a person to remove.
    #[test]
    fn planted_far_future_entries_push_no_real_entry_out() {
        let now = at(1_767_225_600);
        let (mut bucket, refs) = real_history(4, now.seconds - 3 * 3_600);
        let real = listed(&bucket, "history");
        let planted: Vec<String> = (0..10)
            .map(|n| {
                let t = crate::parse_key_time("99991231T235950.000000000Z").unwrap();
                entry_at(t, &absent(n))
            })
            .collect();
        for k in &planted {
            bucket.objects.insert(k.clone(), b"{}".to_vec());
        }
        let mut planted_sorted = planted.clone();
        planted_sorted.sort();
        let protected = [refs[3].clone()];
        let dry = gc(
            &mut bucket,
            &Release::new("ns", "app"),
            4,
            &protected,
            true,
            Grace::none_at(now),
            &Keyring::empty(),
        )
        .unwrap();
        let before = bucket.objects.clone();
        bucket.take_calls();
        let plan = gc(
            &mut bucket,
            &Release::new("ns", "app"),
            4,
            &protected,
            false,
            Grace::none_at(now),
            &Keyring::empty(),
        )
        .unwrap();
        assert_eq!(plan, dry, "the dry run plans what the run does");
        assert_eq!(bucket.objects, before, "nothing is deleted");
        let mut kept = real.clone();
        kept.extend(planted_sorted.iter().cloned());
        assert_eq!(plan.keep_history, kept, "every entry is kept");
        assert_eq!(plan.future_history, planted_sorted);
        assert!(plan.dangling_history.is_empty() && plan.delete_history.is_empty());
        let blobs: Vec<String> = refs
            .iter()
            .map(|r| blob(r))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(plan.keep_renders, blobs);
        assert!(plan.delete_renders.is_empty());
        // Two listings, then the second history listing; no delete at all.
        let calls = bucket.take_calls();
        assert_eq!(
            calls,
            [
                "list ns/app/history/",
                "list ns/app/renders/",
                "list ns/app/history/"
            ]
        );
    }

    /// A replica whose clock ran an hour ahead recorded one entry; the later real syncs
    /// are not "older" than it, and its render is kept, though nothing protects it.
    #[test]
    fn a_skewed_replica_s_entry_is_kept_and_later_syncs_still_count() {
        let now = at(100_000);
        let (mut bucket, refs) = real_history(4, now.seconds - 4 * 3_600);
        let release = Release::new("ns", "app");
        let skewed = put_render(
            &mut bucket,
            &release,
            &[b"{\"skewed\":1}"],
            &Keyring::empty(),
        )
        .unwrap();
        let skewed_key = entry_at(at(now.seconds + 3_600), &skewed);
        bucket.objects.insert(skewed_key.clone(), b"{}".to_vec());
        let plan = gc(
            &mut bucket,
            &release,
            2,
            &[],
            false,
            Grace::none_at(now),
            &Keyring::empty(),
        )
        .unwrap();
        assert_eq!(plan.future_history, std::slice::from_ref(&skewed_key));
        assert_eq!(
            plan.delete_history,
            [
                entry_at(at(now.seconds - 4 * 3_600), &refs[0]),
                entry_at(at(now.seconds - 3 * 3_600), &refs[1])
            ]
        );
        assert_eq!(
            plan.keep_history,
            [
                entry_at(at(now.seconds - 2 * 3_600), &refs[2]),
                entry_at(at(now.seconds - 3_600), &refs[3]),
                skewed_key.clone()
            ]
        );
        assert!(bucket.objects.contains_key(&skewed_key));
        assert!(bucket.objects.contains_key(&blob(&skewed)));
        let mut deleted = vec![blob(&refs[0]), blob(&refs[1])];
        deleted.sort();
        assert_eq!(plan.delete_renders, deleted);
        // Once the clocks agree again it is history like any other entry.
        let later = gc(
            &mut bucket,
            &release,
            2,
            &[],
            true,
            Grace::none_at(at(now.seconds + 7_200)),
            &Keyring::empty(),
        )
        .unwrap();
        assert!(later.future_history.is_empty());
        assert_eq!(later.keep_history.last(), Some(&skewed_key));
    }

    #[test]
    fn protection_keeps_blobs_and_does_not_make_a_dangling_entry_count() {
        let (mut bucket, refs) = real_history(3, 0);
        let missing = absent(0);
        let dangling = entry_at(at(3 * 3_600), &missing);
        bucket.objects.insert(dangling.clone(), b"{}".to_vec());
        let protected = [refs[0].clone(), missing.clone()];
        let plan = planned(&bucket, 1, &protected, at(4 * 3_600));
        assert_eq!(plan.dangling_history, std::slice::from_ref(&dangling));
        assert_eq!(plan.keep_history, [entry_at(at(7_200), &refs[2]), dangling]);
        assert_eq!(
            plan.delete_history,
            [entry_at(at(0), &refs[0]), entry_at(at(3_600), &refs[1])]
        );
        // The protected render of a deleted entry stays; the unprotected one goes.
        assert!(plan.keep_renders.contains(&blob(&refs[0])));
        assert_eq!(plan.delete_renders, [blob(&refs[1])]);
    }

    #[test]
    fn keep_zero_or_less_still_keeps_everything_and_skips_nothing() {
        let (mut bucket, _) = real_history(2, 0);
        let future = entry_at(at(1_000_000), &absent(0));
        bucket.objects.insert(future.clone(), b"{}".to_vec());
        for keep in [0, -1] {
            let plan = planned(&bucket, keep, &[], at(0));
            assert_eq!(plan.keep_history, listed(&bucket, "history"));
            assert!(plan.future_history.is_empty() && plan.dangling_history.is_empty());
            bucket.take_calls();
            let run = gc(
                &mut bucket,
                &Release::new("ns", "app"),
                keep,
                &[],
                false,
                Grace::none_at(at(0)),
                &Keyring::empty(),
            )
            .unwrap();
            assert_eq!(run, GcPlan::default());
            assert!(bucket.take_calls().is_empty());
        }
    }

    /// The rules of trace versions 2 and 3, kept so their traces replay: every entry
    /// counts, and `renders/` is listed after the second history listing.
    #[test]
    fn the_old_rules_count_every_entry_in_the_old_order() {
        let (mut bucket, refs) = real_history(2, 0);
        let planted = entry_at(at(1_000_000), &absent(0));
        bucket.objects.insert(planted.clone(), b"{}".to_vec());
        bucket.take_calls();
        let plan = gc_by(
            &mut bucket,
            &Release::new("ns", "app"),
            1,
            &[],
            false,
            Grace::none_at(at(10_000)),
            Rules::EveryEntryCounts,
            &Keyring::empty(),
        )
        .unwrap();
        assert_eq!(plan.keep_history, [planted]);
        assert_eq!(plan.delete_history.len(), 2);
        assert!(plan.future_history.is_empty() && plan.dangling_history.is_empty());
        let mut gone: Vec<String> = refs.iter().map(|r| blob(r)).collect();
        gone.sort();
        assert_eq!(plan.delete_renders, gone);
        let calls: Vec<String> = bucket
            .take_calls()
            .iter()
            .map(|c| c.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            calls,
            [
                "list ns/app/history/",
                &format!("delete-many {}", entry_at(at(0), &refs[0])),
                "list ns/app/history/",
                "list ns/app/renders/",
                &format!("delete-many {}", gone[0]),
            ]
        );
    }
}
