//! The JSON shapes of history entries and diffs, shared by the CLI's `--json` and the
//! observer's HTTP endpoints. Field names are camelCase, as in the entry body. The
//! results of store operations are shaped by the component (`Runtime::output_json`).

use render_store::{HistoryEntry, HistoryPage, ObjectId, RenderDiff, Result, Runtime};
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

/// A history page as `history --limit --json` and `/history?limit=` answer it: the
/// entries, newest first, and the cursor of the next, older page (null at the end).
pub async fn history_page_json(rt: &Runtime, page: &HistoryPage) -> Result<Value> {
    Ok(json!({
        "entries": history_json(rt, &page.entries).await?,
        "nextBefore": page.next_before,
    }))
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
