//! What the commands print: human lines (every text from the store escaped for the
//! terminal) or, with `--json`, the JSON shapes the observer's endpoints answer too.

use crate::json_view::history_json;
use crate::render_sizes::render_sizes;
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::operation::Output;
use render_store::{GcPlan, HistoryEntry, ObjectId, Release, RenderDiff, RenderStore, Runtime};
use std::collections::HashMap;
use std::io::Write;

/// Prints `value` as pretty JSON and a newline.
pub fn print_json(value: &serde_json::Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Prints the history, oldest first: one line per entry, or a JSON array.
pub async fn print_history(rt: &Runtime, entries: &[HistoryEntry], as_json: bool) -> Result<()> {
    if as_json {
        return print_json(&history_json(rt, entries).await?);
    }
    if entries.is_empty() {
        println!("(no history)");
    }
    let times: Vec<_> = entries.iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    for (e, time) in entries.iter().zip(times) {
        // One line per entry, whatever the summary holds.
        println!("{time}  {}  {}", esc(&e.render_ref), esc(&e.summary));
    }
    Ok(())
}

/// Prints the history as `-o wide` shows it, oldest first under a header: each entry's
/// position (`@0` the newest, as commands take it), time, renderRef, the size of its
/// render blob (one listing of the release's renders; `missing` when none is stored) and
/// summary.
pub async fn print_history_wide(
    store: &RenderStore,
    release: &Release,
    entries: &[HistoryEntry],
) -> Result<()> {
    let rt = store.runtime();
    let times: Vec<_> = entries.iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    let sizes: HashMap<String, u64> = match entries.first() {
        None => HashMap::new(),
        Some(first) => render_sizes(store, release, &first.render_ref).await?.1,
    };
    let rows: Vec<[String; 5]> = entries
        .iter()
        .zip(times)
        .enumerate()
        .map(|(i, (e, time))| {
            [
                format!("@{}", entries.len() - 1 - i),
                time,
                esc(&e.render_ref).into_owned(),
                sizes
                    .get(&e.render_ref)
                    .map_or_else(|| "missing".to_string(), u64::to_string),
                esc(&e.summary).into_owned(),
            ]
        })
        .collect();
    let header = ["POSITION", "SYNCED", "RENDER", "SIZE", "SUMMARY"].map(String::from);
    let mut widths = [0usize; 5];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = std::io::stdout().lock();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (k, (cell, w)) in row.iter().zip(widths).enumerate() {
            if k == 4 {
                line.push_str(cell);
            } else {
                // Sizes line up on the right, as numbers do.
                let pad = w - cell.chars().count();
                match k {
                    3 => line.push_str(&format!("{}{cell}   ", " ".repeat(pad))),
                    _ => line.push_str(&format!("{cell}{}   ", " ".repeat(pad))),
                }
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// An operation's output as `--json` prints it: the `ok` value the component writes
/// for it, as a trace's result line holds it.
pub async fn output_json(rt: &Runtime, output: &Output) -> Result<serde_json::Value> {
    let mut outcome: serde_json::Value = serde_json::from_str(&rt.output_json(output).await?)?;
    Ok(outcome["ok"].take())
}

/// Prints what GC deleted (or, with `dry_run`, would delete) and kept.
pub async fn print_gc(rt: &Runtime, plan: &GcPlan, dry_run: bool, as_json: bool) -> Result<()> {
    if as_json {
        let mut value = output_json(rt, &Output::Plan(plan.clone())).await?;
        value["dryRun"] = serde_json::json!(dry_run);
        return print_json(&value);
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    for key in plan.delete_history.iter().chain(&plan.delete_renders) {
        println!("{verb} {}", esc(key));
    }
    for key in &plan.ignored {
        println!("left alone (not a render or entry) {}", esc(key));
    }
    for key in &plan.recent_renders {
        println!("kept (younger than the grace period) {}", esc(key));
    }
    println!(
        "{verb} {} and {}; kept {} and {}",
        count(
            plan.delete_history.len(),
            "history entry",
            "history entries"
        ),
        count(plan.delete_renders.len(), "render", "renders"),
        count(plan.keep_history.len(), "entry", "entries"),
        count(plan.keep_renders.len(), "render", "renders"),
    );
    Ok(())
}

/// `n` and the noun in the number English wants: "1 render", "0 renders".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Prints a diff: the objects added, removed and changed, each changed object's hunks,
/// and a count. With `color`, removed lines are red, added green, hunk headers cyan.
pub fn print_diff(diff: &RenderDiff, color: bool) -> Result<()> {
    let id = |i: &ObjectId| {
        let ns = if i.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", i.namespace)
        };
        let text = format!("{} {} {ns}{}", i.api_version, i.kind, i.name);
        esc(&text).into_owned()
    };
    let mut out = std::io::stdout().lock();
    for a in &diff.added {
        writeln!(out, "added    {}", id(a))?;
    }
    for r in &diff.removed {
        writeln!(out, "removed  {}", id(r))?;
    }
    for c in &diff.changed {
        writeln!(out, "changed  {}", id(&c.id))?;
        for line in &c.lines {
            let paint = match line.as_bytes().first() {
                _ if !color => "",
                Some(b'-') => RED,
                Some(b'+') => GREEN,
                Some(b'@') => CYAN,
                _ => "",
            };
            let reset = if paint.is_empty() { "" } else { RESET };
            writeln!(out, "    {paint}{}{reset}", esc(line))?;
        }
    }
    writeln!(
        out,
        "{} added, {} removed, {} changed, {} unchanged",
        diff.added.len(),
        diff.removed.len(),
        diff.changed.len(),
        diff.unchanged
    )?;
    Ok(())
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";
