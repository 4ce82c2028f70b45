//! The JSON shapes of history entries and diffs, shared by the CLI's `--json` and the
//! observer's HTTP endpoints. Field names are camelCase, as in the entry body. The
//! results of store operations are shaped by the component (`Runtime::output_json`).

use render_store::{EntryTrust, HistoryEntry, HistoryPage, RenderDiff, Result, Runtime};
use serde_json::{Value, json};

/// The history as a JSON array, oldest first; `syncedAt` in RFC 3339, `trust` (what the
/// keyring says of the entry) only when a keyring judged it.
pub async fn history_json(rt: &Runtime, entries: &[HistoryEntry]) -> Result<Value> {
    let times: Vec<_> = entries.iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    let items = entries
        .iter()
        .zip(times)
        .map(|(e, synced_at)| {
            let mut entry = json!({
                "key": e.key,
                "renderRef": e.render_ref,
                "syncedAt": synced_at,
                "summary": e.summary,
            });
            // As a trace's result line writes it: only when a keyring judged the entry.
            match &e.trust {
                EntryTrust::Unchecked => {}
                EntryTrust::Authenticated(id) => {
                    entry["trust"] = json!({ "authenticated": id });
                }
                EntryTrust::Unauthenticated(why) => {
                    entry["trust"] = json!({ "unauthenticated": why });
                }
            }
            entry
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

/// A render diff, in the library's shape ([`render_store::json_view::diff`]), which the
/// C ABI gives too.
pub fn diff_json(diff: &RenderDiff) -> Value {
    render_store::json_view::diff(diff)
}
