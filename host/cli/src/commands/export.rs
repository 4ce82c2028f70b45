//! `export -o ndjson`: one JSON object a line for each object of each history entry of
//! every release, for the engines that answer questions beyond one machine (DuckDB,
//! Athena, BigQuery, Trino). What each object is and which images it runs is the
//! component's (`store.render-objects`, from the release index where it has them); this
//! reads and writes.

use super::{Context, Finish};
use crate::names;
use crate::terminal::escape_for_terminal as esc;
use crate::time_window::Window;
use anyhow::Result;
use render_store::fleet::all_releases;
use render_store::{EntryRead, IndexedObject, Release, RenderStore};
use serde_json::json;
use std::collections::HashMap;
use std::io::Write;

/// Writes the rows of every release (of `-n`), release after release, each render read
/// once; [`Finish::Differs`] when a folder or a release could not be read.
pub async fn run(ctx: &Context<'_>, since: Option<&str>, until: Option<&str>) -> Result<Finish> {
    let store = ctx.open().await?;
    let rt = store.runtime().clone();
    let window = Window::parse(&rt, since, until).await?;
    let names = all_releases(&store, ctx.namespace).await?;
    let mut complete = names.unlisted.is_empty();
    for u in &names.unlisted {
        eprintln!(
            "render-store: could not list {} ({}): its releases are not exported",
            esc(&u.folder),
            esc(&u.error)
        );
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for release in &names.releases {
        if let Err(e) = export_release(&store, release, window, &mut out).await {
            if e.downcast_ref::<render_store::Error>()
                .is_some_and(|e| e.is_cut())
            {
                return Err(e);
            }
            complete = false;
            eprintln!(
                "render-store: could not export {release} ({}); `render-store verify {release}` \
                 says what is wrong",
                esc(&e.to_string())
            );
        }
    }
    out.flush()?;
    Ok(if complete {
        Finish::Done
    } else {
        Finish::Differs
    })
}

/// The rows of one release's entries in the window, oldest first. The rows are made
/// before any is written, so a release that cannot be read writes none.
async fn export_release(
    store: &RenderStore,
    release: &Release,
    window: Window,
    out: &mut impl Write,
) -> Result<()> {
    let rt = store.runtime();
    let history = names::history_keys(store, release).await?;
    let newest = history.len().saturating_sub(1);
    let chosen: Vec<(usize, &names::ListedEntry)> = history
        .iter()
        .enumerate()
        .filter(|(_, e)| window.holds(e.synced_at))
        .collect();
    let keys: Vec<String> = chosen.iter().map(|(_, e)| e.key.clone()).collect();
    let read = store.read_history_entries(release, &keys).await?;
    let times = rt
        .format_synced_at_all(&chosen.iter().map(|(_, e)| e.synced_at).collect::<Vec<_>>())
        .await?;
    // An entry deleted since the listing (a GC meanwhile) is not history any more, and
    // its render may be gone with it.
    let mut refs: Vec<String> = chosen
        .iter()
        .zip(&read)
        .filter(|(_, body)| !matches!(body, EntryRead::Gone))
        .map(|((_, e), _)| e.render_ref.clone())
        .collect();
    refs.sort_unstable();
    refs.dedup();
    // One sandboxed call: the release index where it names a render, the render where
    // not.
    let objects: HashMap<String, Vec<IndexedObject>> = if refs.is_empty() {
        HashMap::new()
    } else {
        store
            .render_objects(release, &refs)
            .await?
            .into_iter()
            .collect()
    };
    let mut lines = Vec::new();
    for (((i, entry), body), time) in chosen.iter().zip(read).zip(times) {
        let summary = match body {
            EntryRead::Entry(e) => e.summary,
            EntryRead::Gone => continue,
            EntryRead::Corrupt(m) => anyhow::bail!("entry {} does not read: {m}", entry.key),
        };
        let render_ref = entry.render_ref.as_str();
        for o in &objects[render_ref] {
            let row = json!({
                "namespace": release.namespace,
                "name": release.name,
                "entry": newest - i,
                "key": entry.key,
                "syncedAt": time,
                "summary": summary,
                "renderRef": render_ref,
                "apiVersion": o.id.api_version,
                "kind": o.id.kind,
                "objectNamespace": o.id.namespace,
                "objectName": o.id.name,
                "objectHash": o.hash,
                "images": o.images,
            });
            lines.push(row.to_string());
        }
    }
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
