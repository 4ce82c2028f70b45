//! The JSON shapes of history entries, GC plans and diffs, shared by the CLI's `--json`
//! and the observer's HTTP endpoints. Field names are camelCase, as in the entry body.

use crate::error::Result;
use crate::runtime::Runtime;
use crate::types::{GcPlan, HistoryEntry, ObjectId, RenderDiff};
use serde_json::{Value, json};

/// The history as a JSON array, oldest first; `syncedAt` in RFC 3339.
pub async fn history_json(rt: &Runtime, entries: &[HistoryEntry]) -> Result<Value> {
    let times: Vec<_> = entries.iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    let items = entries
        .iter()
        .zip(times)
        .map(|(e, synced_at)| {
            json!({
                "key": e.key,
                "renderRef": e.render_ref,
                "syncedAt": synced_at,
                "summary": e.summary,
            })
        })
        .collect();
    Ok(Value::Array(items))
}

/// A GC plan: its six key lists (the `ok` result of a `gc` trace, TRACES.md).
pub fn plan_json(plan: &GcPlan) -> Value {
    json!({
        "deleteHistory": plan.delete_history,
        "keepHistory": plan.keep_history,
        "deleteRenders": plan.delete_renders,
        "keepRenders": plan.keep_renders,
        "ignored": plan.ignored,
        "recentRenders": plan.recent_renders,
    })
}

/// A GC plan or report: [`plan_json`] and whether it was a dry run.
pub fn gc_json(plan: &GcPlan, dry_run: bool) -> Value {
    let mut value = plan_json(plan);
    value["dryRun"] = json!(dry_run);
    value
}

fn id_json(id: &ObjectId) -> Value {
    json!({
        "apiVersion": id.api_version,
        "kind": id.kind,
        "namespace": id.namespace,
        "name": id.name,
    })
}

/// A render diff.
pub fn diff_json(diff: &RenderDiff) -> Value {
    json!({
        "added": diff.added.iter().map(id_json).collect::<Vec<_>>(),
        "removed": diff.removed.iter().map(id_json).collect::<Vec<_>>(),
        "changed": diff.changed.iter().map(|c| {
            let mut v = id_json(&c.id);
            v["diff"] = json!(c.lines);
            v
        }).collect::<Vec<_>>(),
        "unchanged": diff.unchanged,
    })
}
