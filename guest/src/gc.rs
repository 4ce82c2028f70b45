//! Garbage collection: keep the newest `keep` history entries and every render they or
//! the protected set name; delete the rest. Keys that do not parse are never deleted.
//!
//! The decision is a pure function of the two listings and the protected set
//! ([`plan_gc`]), so it can be shown (`--dry-run`) or replayed without a store.

use crate::bucket::Bucket;
use crate::error::Result;
use crate::history::{list_entries, split_history_keys};
use crate::keys::{Release, ReleasePrefix, validate_render_ref};
use crate::store::call_failed;
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

/// Step 4: which blobs go (those whose renderRef is not live).
fn select_renders(
    prefix: &ReleasePrefix,
    mut keys: Vec<String>,
    live: &BTreeSet<String>,
    plan: &mut GcPlan,
) {
    keys.sort_unstable();
    for key in keys {
        match prefix.parse_render_key(&key) {
            Some(r) if live.contains(&r) => plan.keep_renders.push(key),
            Some(_) => plan.delete_renders.push(key),
            None => plan.ignored.push(key),
        }
    }
}

/// The GC decision from listings: `history_keys` as listed under `<prefix>history/`,
/// `render_keys` under `<prefix>renders/`, and the protected renderRefs (empty strings
/// ignored). `keep <= 0` deletes nothing and keeps everything.
pub fn plan_gc(
    release: &Release,
    keep: i64,
    history_keys: Vec<String>,
    render_keys: Vec<String>,
    protected: &[String],
) -> Result<GcPlan> {
    let prefix = ReleasePrefix::new(release)?;
    let mut live = protected_set(protected)?;
    let mut plan = GcPlan::default();
    if keep <= 0 {
        let (entries, ignored) = split_history_keys(&prefix, history_keys);
        plan.keep_history = entries.into_iter().map(|e| e.key).collect();
        plan.ignored = ignored;
        for key in render_keys {
            match prefix.parse_render_key(&key) {
                Some(_) => plan.keep_renders.push(key),
                None => plan.ignored.push(key),
            }
        }
        return Ok(plan);
    }
    live.extend(select_history(&prefix, history_keys, keep, &mut plan));
    select_renders(&prefix, render_keys, &live, &mut plan);
    Ok(plan)
}

/// Runs GC on the store. `keep <= 0` makes no bucket call. Otherwise:
/// `list(P/history/)` and `delete` of the oldest entries until `keep` remain;
/// `list(P/history/)` again for the live renderRefs, plus `protected`;
/// `list(P/renders/)` and `delete` of every blob not live.
///
/// With `dry_run` only the two listings are made and the plan of a real run returned.
pub fn gc<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    keep: i64,
    protected: &[String],
    dry_run: bool,
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
        let history_keys = list(bucket, &history)?;
        let render_keys = list(bucket, &renders)?;
        let protected: Vec<String> = protected.into_iter().collect();
        return plan_gc(release, keep, history_keys, render_keys, &protected);
    }

    let mut plan = GcPlan::default();
    let history_keys = list(bucket, &history)?;
    select_history(&prefix, history_keys, keep, &mut plan);
    for key in &plan.delete_history {
        bucket
            .delete(key)
            .map_err(|e| call_failed("delete", key, e))?;
    }

    // What remains is read back rather than assumed, so an entry added or left behind
    // meanwhile still protects its render.
    let (entries, ignored_history) = list_entries(bucket, &prefix)?;
    let mut live = protected;
    live.extend(entries.iter().map(|e| e.render_ref.clone()));
    plan.keep_history = entries.into_iter().map(|e| e.key).collect();
    plan.ignored = ignored_history;

    let render_keys = list(bucket, &renders)?;
    select_renders(&prefix, render_keys, &live, &mut plan);
    for key in &plan.delete_renders {
        bucket
            .delete(key)
            .map_err(|e| call_failed("delete", key, e))?;
    }
    Ok(plan)
}
