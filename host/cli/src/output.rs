//! What the commands print: human lines (every text from the store escaped for the
//! terminal) or, with `--json`, the JSON shapes the observer's endpoints answer too.

use crate::json_view::history_json;
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::operation::Output;
use render_store::{GcPlan, HistoryEntry, ObjectId, RenderDiff, Runtime};
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
