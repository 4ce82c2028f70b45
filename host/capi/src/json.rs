//! The JSON shapes of structured results. Where the component writes a shape
//! (`Runtime::output_json`: history entries, GC plans), it is taken as the component
//! wrote it; the diff's and the shown objects' are the library's
//! (`render_store::json_view`), which the CLI and the observer print too.

use crate::error::{Result, rs_error};
use render_store::operation::Output;
use render_store::{HistorySummary, RenderDiff, Runtime, ShownObject};
use serde_json::json;

/// The `ok` value the component writes for an operation's output (`{"ok":VALUE}`,
/// compact), byte for byte.
pub(crate) async fn output(rt: &Runtime, output: &Output) -> Result<String> {
    let text = rt.output_json(output).await?;
    text.strip_prefix("{\"ok\":")
        .and_then(|rest| rest.strip_suffix('}'))
        .map(str::to_string)
        .ok_or_else(|| {
            rs_error::runtime(format!(
                "the component's output JSON is not {{\"ok\":…}}: {text}"
            ))
        })
}

/// A page of history: `{"entries":[…],"nextBefore":KEY or null}`, the entries as
/// `list-history` writes them, the field names those of `/history?limit=`.
pub(crate) fn page(entries_ok: &str, next_before: Option<&str>) -> Result<String> {
    let inner = entries_ok
        .strip_suffix('}')
        .ok_or_else(|| rs_error::runtime("the component's entries JSON is not an object"))?;
    Ok(format!(
        "{inner},\"nextBefore\":{}}}",
        serde_json::to_string(&next_before).expect("an optional string serializes")
    ))
}

/// A diff as `render-store --json diff` prints it (compact here).
pub(crate) fn diff(diff: &RenderDiff) -> String {
    render_store::json_view::diff(diff).to_string()
}

/// A render's objects for people: an array of each object's id fields and its `text`.
pub(crate) fn shown(objects: &[ShownObject]) -> String {
    render_store::json_view::shown_objects(objects).to_string()
}

/// A list of strings as a JSON array.
pub(crate) fn strings(items: &[String]) -> String {
    serde_json::to_string(items).expect("strings serialize")
}

/// A history summary: `{"entries":N,"newest":{"renderRef","syncedAt"} or null}`, the
/// time in the shape the component writes for history entries.
pub(crate) fn summary(s: &HistorySummary) -> String {
    let newest = s.newest.as_ref().map(|k| {
        json!({
            "renderRef": k.render_ref,
            "syncedAt": { "seconds": k.synced_at.seconds, "nanoseconds": k.synced_at.nanoseconds },
        })
    });
    json!({ "entries": s.entries, "newest": newest }).to_string()
}
