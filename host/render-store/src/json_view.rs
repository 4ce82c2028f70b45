//! The JSON shapes of the views for programs that the hosts print or answer: a diff
//! (`render-store --json diff`, the observer's `/diff`, the C ABI's diffs, which the Go
//! and Python packages read) and a render's objects for people. Written here once, so
//! that every host gives the same fields. The results of store operations are shaped by
//! the component ([`crate::Runtime::output_json`]).

use crate::{ObjectId, RenderDiff, ShownObject};
use serde_json::{Value, json};

/// An object's identity: `{"apiVersion","kind","namespace","name"}`, absent fields
/// as empty strings.
pub fn object_id(id: &ObjectId) -> Value {
    json!({
        "apiVersion": id.api_version,
        "kind": id.kind,
        "namespace": id.namespace,
        "name": id.name,
    })
}

/// A diff: `{"added":[ID + "text"…],"removed":[ID + "text"…],"changed":[ID +
/// "diff":[LINE…]…],"unchanged":N}`: an added or removed object whole, as
/// [`shown_objects`] writes it; a changed one as unified-diff lines.
pub fn diff(diff: &RenderDiff) -> Value {
    let changed: Vec<Value> = diff
        .changed
        .iter()
        .map(|c| {
            let mut v = object_id(&c.id);
            v["diff"] = json!(c.lines);
            v
        })
        .collect();
    json!({
        "added": shown_objects(&diff.added),
        "removed": shown_objects(&diff.removed),
        "changed": changed,
        "unchanged": diff.unchanged,
    })
}

/// A render's objects for people: an array of each object's id fields and its `text`.
pub fn shown_objects(objects: &[ShownObject]) -> Value {
    let items: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut v = object_id(&o.id);
            v["text"] = json!(o.text);
            v
        })
        .collect();
    Value::Array(items)
}
