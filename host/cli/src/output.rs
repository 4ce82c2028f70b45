//! What the commands print: human lines (every text from the store escaped for the
//! terminal) or, with `--json`, the JSON shapes the observer's endpoints answer too.

use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::json_view::history_json;
use render_store::operation::Output;
use render_store::{GcPlan, HistoryEntry, Runtime};
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
    for e in entries {
        let time = rt.format_synced_at(e.synced_at).await?;
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
        println!("kept (younger than the grace period) {key}");
    }
    println!(
        "{verb} {} history entries and {} renders; kept {} entries and {} renders",
        plan.delete_history.len(),
        plan.delete_renders.len(),
        plan.keep_history.len(),
        plan.keep_renders.len()
    );
    Ok(())
}
