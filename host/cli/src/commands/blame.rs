//! `blame`: which history entry last changed each field of an object, as `git blame`
//! says which commit last changed each line; decided in the component
//! (`store.blame-object`), the entries' summaries read here for the lines.

use super::Context;
use crate::output::print_json;
use crate::terminal::escape_for_terminal as esc;
use crate::time_view::to_the_second;
use anyhow::Result;
use render_store::{EntryRead, ObjectBlame};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

/// The longest summary a blame line shows; the rest is cut with `…`.
const SHOWN_SUMMARY: usize = 32;

/// Prints the blame of `object` (`KIND/NAME`) in the release `release` names, of the
/// fields under `field` alone when given.
pub async fn run(
    ctx: &Context<'_>,
    release: &str,
    object: &str,
    field: Option<&str>,
) -> Result<()> {
    let store = ctx.open().await?;
    let release = ctx.release(release)?;
    crate::names::require_release(&store, &release).await?;
    let blame = store
        .blame_object(&release, object, field, ctx.secrets)
        .await?;
    let rt = store.runtime();
    // The entries the lines name: their times, and their summaries (one read each).
    let named: BTreeSet<u32> = blame.fields.iter().map(|f| f.entry).collect();
    let mut keys = Vec::with_capacity(named.len());
    for &i in &named {
        let (t, r) = &blame.entries[i as usize];
        keys.push(rt.history_key(&release, *t, r).await?);
    }
    let read = store.read_history_entries(&release, &keys).await?;
    let times = rt
        .format_synced_at_all(
            &named
                .iter()
                .map(|&i| blame.entries[i as usize].0)
                .collect::<Vec<_>>(),
        )
        .await?;
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
    if ctx.as_json() {
        print_json(&blame_json(&blame, &about, place))?;
    } else {
        print_lines(&blame, &about, place)?;
    }
    if place(blame.newest) != 0 {
        eprintln!(
            "render-store: {} is in no render of @{} or newer: its fields are those of @{}",
            esc(object),
            place(blame.newest) - 1,
            place(blame.newest)
        );
    }
    Ok(())
}

fn blame_json(
    blame: &ObjectBlame,
    about: &BTreeMap<u32, (String, String)>,
    place: impl Fn(u32) -> usize,
) -> Value {
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
                "renderRef": blame.entries[f.entry as usize].1,
                "summary": summary,
            })
        })
        .collect();
    json!({
        "object": render_store::json_view::object_id(&blame.object),
        "fields": fields,
    })
}

fn print_lines(
    blame: &ObjectBlame,
    about: &BTreeMap<u32, (String, String)>,
    place: impl Fn(u32) -> usize,
) -> Result<()> {
    let rows: Vec<[String; 5]> = blame
        .fields
        .iter()
        .map(|f| {
            let (time, summary) = &about[&f.entry];
            let summary: String = match summary.char_indices().nth(SHOWN_SUMMARY) {
                Some((cut, _)) => format!("{}…", &summary[..cut]),
                None => summary.clone(),
            };
            [
                format!("@{}", place(f.entry)),
                to_the_second(time),
                esc(&summary).into_owned(),
                esc(&f.path).into_owned(),
                esc(&f.value).into_owned(),
            ]
        })
        .collect();
    let mut widths = [0usize; 4];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = std::io::stdout().lock();
    for row in &rows {
        let mut line = String::new();
        for (cell, w) in row.iter().zip(widths) {
            line.push_str(&format!("{cell:<w$}  "));
        }
        line.push_str(&row[4]);
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}
