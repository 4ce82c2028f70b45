//! The JSON shapes of the views for programs that the hosts print or answer: a diff
//! (`render-store --json diff`, the observer's `/diff`, the C ABI's diffs, which the Go
//! and Python packages read), a render's objects for people, the fleet's images
//! (`render-store images -o json`, the C ABI's `rs_store_images`) and an object's blame
//! (`render-store blame -o json`, `rs_store_blame`). Written here once, so
//! that every host gives the same fields. The results of store operations are shaped by
//! the component ([`crate::Runtime::output_json`]).

use crate::fleet_changes::{EntryChanges, FleetChanges};
use crate::fleet_images::FleetImages;
use crate::fleet_index::FleetIndex;
use crate::store::RenderStore;
use crate::{
    EntryRead, HistoryKey, IndexReport, ObjectBlame, ObjectId, Release, RenderDiff, Result,
    Runtime, ShownObject,
};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

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

/// The answer of an images query: `{"images": [{"image", "namespace", "name", "from",
/// "until" (null while open), "renderRefs"}], "complete": bool, "unlisted": [{"folder",
/// "error"}], "unread": [{"namespace", "name", "error"}]}`, the rows by image, then
/// release, then start, the times RFC 3339 as the component writes them. `complete` is
/// false when a folder or a release could not be read: the answer then says nothing of
/// them.
pub async fn images(rt: &Runtime, found: &FleetImages) -> Result<Value> {
    let mut rows: Vec<_> = found
        .releases
        .iter()
        .flat_map(|r| r.intervals.iter().map(move |i| (&r.release, i)))
        .collect();
    rows.sort_by(|a, b| {
        (a.1.image.as_str(), a.0, a.1.from).cmp(&(b.1.image.as_str(), b.0, b.1.from))
    });
    let mut times = Vec::with_capacity(rows.len() * 2);
    for (_, i) in &rows {
        times.push(i.from);
        times.extend(i.until);
    }
    let mut formatted = rt.format_synced_at_all(&times).await?.into_iter();
    let images: Vec<Value> = rows
        .iter()
        .map(|(release, i)| {
            let from = formatted.next();
            let until = i.until.and_then(|_| formatted.next());
            json!({
                "image": i.image,
                "namespace": release.namespace,
                "name": release.name,
                "from": from,
                "until": until,
                "renderRefs": i.render_refs,
            })
        })
        .collect();
    Ok(json!({
        "images": images,
        "complete": found.complete(),
        "unlisted": found.unlisted.iter().map(|u| json!({"folder": u.folder, "error": u.error})).collect::<Vec<_>>(),
        "unread": found.unread.iter().map(|(r, e)| json!({"namespace": r.namespace, "name": r.name, "error": e})).collect::<Vec<_>>(),
    }))
}

/// What a reindex did, as programs read it: `{"releases": [{"namespace", "name",
/// "renders", "indexed", "read", "pruned", "unreadable", "replaced", "written"}],
/// "complete", "unlisted": [{"folder", "error"}], "failed": [{"namespace", "name",
/// "error"}]}`.
pub fn reindex(done: &FleetIndex) -> Value {
    json!({
        "releases": done.releases.iter().map(|(r, report)| index_report(r, report)).collect::<Vec<_>>(),
        "complete": done.complete(),
        "unlisted": done.unlisted.iter().map(|u| json!({"folder": u.folder, "error": u.error})).collect::<Vec<_>>(),
        "failed": done.failed.iter().map(|(r, e)| json!({"namespace": r.namespace, "name": r.name, "error": e})).collect::<Vec<_>>(),
    })
}

/// One release's [`IndexReport`], as [`reindex`] lists it.
pub fn index_report(release: &Release, r: &IndexReport) -> Value {
    json!({
        "namespace": release.namespace,
        "name": release.name,
        "renders": r.renders,
        "indexed": r.indexed,
        "read": r.read,
        "pruned": r.pruned,
        "unreadable": r.unreadable,
        "replaced": r.replaced,
        "written": r.written,
    })
}

/// An object's blame as people and programs read it: `{"object": ID, "fields": [{"path",
/// "value", "entry" (its place, 0 the newest), "syncedAt", "renderRef", "summary"}],
/// "newest": the place of the newest entry that holds the object}`. The summaries of the
/// entries the fields name are read (one read each).
pub async fn blame(store: &RenderStore, release: &Release, blame: &ObjectBlame) -> Result<Value> {
    let rt = store.runtime();
    let named: BTreeSet<u32> = blame.fields.iter().map(|f| f.entry).collect();
    let mut keys = Vec::with_capacity(named.len());
    for &i in &named {
        let HistoryKey {
            synced_at: t,
            render_ref: r,
        } = &blame.entries[i as usize];
        keys.push(rt.history_key(release, *t, r).await?);
    }
    let read = store.read_history_entries(release, &keys).await?;
    let times: Vec<_> = named
        .iter()
        .map(|&i| blame.entries[i as usize].synced_at)
        .collect();
    let times = rt.format_synced_at_all(&times).await?;
    let about: BTreeMap<u32, (String, String)> = named
        .iter()
        .zip(read)
        .zip(times)
        .map(|((&i, entry), time)| {
            let summary = match entry {
                EntryRead::Entry(e) => e.summary,
                EntryRead::Gone => "(entry deleted meanwhile)".to_string(),
                EntryRead::Corrupt(_) => "(entry does not read)".to_string(),
            };
            (i, (time, summary))
        })
        .collect();
    let place = |i: u32| blame.entries.len() - 1 - i as usize;
    let fields: Vec<Value> = blame
        .fields
        .iter()
        .map(|f| {
            let (time, summary) = &about[&f.entry];
            json!({
                "path": f.path,
                "value": f.value,
                "entry": place(f.entry),
                "syncedAt": time,
                "renderRef": blame.entries[f.entry as usize].render_ref,
                "summary": summary,
            })
        })
        .collect();
    Ok(json!({
        "object": object_id(&blame.object),
        "fields": fields,
        "newest": place(blame.newest),
    }))
}

/// An entry of `changes` for programs: `{"namespace", "name", "entry" (its place, 0 the
/// newest), "syncedAt", "summary", "renderRef", "previousRenderRef" (null for the
/// first), "added", "removed", "changed" (IDs), "images": [{"object", "container",
/// "old", "new"}], "secretKeys": [{"secret", "key"}]}`, `synced_at` the entry's time as
/// the component formats it. No Secret value is in it: keys alone.
pub fn change_entry(e: &EntryChanges, synced_at: &str) -> Value {
    let ids = |ids: &[ObjectId]| ids.iter().map(object_id).collect::<Vec<_>>();
    let c = &e.changes;
    json!({
        "namespace": e.release.namespace,
        "name": e.release.name,
        "entry": e.position,
        "syncedAt": synced_at,
        "summary": e.summary,
        "renderRef": e.render_ref,
        "previousRenderRef": e.previous_render_ref,
        "added": ids(&c.added),
        "removed": ids(&c.removed),
        "changed": ids(&c.changed),
        "images": c.images.iter().map(|i| json!({
            "object": object_id(&i.object),
            "container": i.container,
            "old": i.old,
            "new": i.new,
        })).collect::<Vec<_>>(),
        "secretKeys": c.secret_keys.iter().map(|k| json!({
            "secret": object_id(&k.secret),
            "key": k.key,
        })).collect::<Vec<_>>(),
    })
}

/// The answer of a changes query: `{"entries": [ENTRY…] (as [`change_entry`] writes
/// each, newest first), "complete": bool, "unlisted": [{"folder", "error"}], "unread":
/// [{"namespace", "name", "error"}]}` (as [`images`] names what it could not see).
/// `complete` is false when a folder could not be listed or a release could not be
/// read: their entries are not in it.
pub async fn changes(rt: &Runtime, found: &FleetChanges) -> Result<Value> {
    let times: Vec<_> = found.entries.iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    let entries: Vec<Value> = found
        .entries
        .iter()
        .zip(&times)
        .map(|(e, time)| change_entry(e, time))
        .collect();
    Ok(json!({
        "entries": entries,
        "complete": found.complete(),
        "unlisted": found.unlisted.iter().map(|u| json!({"folder": u.folder, "error": u.error})).collect::<Vec<_>>(),
        "unread": found.unread.iter().map(|(r, e)| json!({"namespace": r.namespace, "name": r.name, "error": e})).collect::<Vec<_>>(),
    }))
}
