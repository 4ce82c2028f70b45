//! What the commands print: human lines (every text from the store escaped for the
//! terminal) or, with `--json`, the JSON shapes the observer's endpoints answer too.

use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::controller::GC_FUTURE_TOLERANCE_SECONDS;
use render_store::operation::Output;
use render_store::{GcPlan, ObjectId, Release, RenderDiff, Runtime};
use std::io::Write;

/// Prints `value` as pretty JSON and a newline.
pub fn print_json(value: &serde_json::Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// An operation's output as `--json` prints it: the `ok` value the component writes
/// for it, as a trace's result line holds it.
pub async fn output_json(rt: &Runtime, output: &Output) -> Result<serde_json::Value> {
    let mut outcome: serde_json::Value = serde_json::from_str(&rt.output_json(output).await?)?;
    Ok(outcome["ok"].take())
}

/// Prints what GC deleted (or, with `dry_run`, would delete) and kept. Entries GC did
/// not count (future-dated, or naming a render that is not stored) are listed too, and
/// what to do about them goes to stderr, in both forms, so it reaches a person even when
/// a script reads the JSON.
pub async fn print_gc(
    rt: &Runtime,
    release: &Release,
    plan: &GcPlan,
    dry_run: bool,
    as_json: bool,
) -> Result<()> {
    if as_json {
        let mut value = output_json(rt, &Output::Plan(plan.clone())).await?;
        value["dryRun"] = serde_json::json!(dry_run);
        print_json(&value)?;
    } else {
        let verb = if dry_run { "would delete" } else { "deleted" };
        for key in plan.delete_history.iter().chain(&plan.delete_renders) {
            println!("{verb} {}", esc(key));
        }
        let listed: std::collections::BTreeSet<&str> = plan
            .keep_history
            .iter()
            .chain(&plan.keep_renders)
            .chain(&plan.recent_renders)
            .map(String::as_str)
            .collect();
        for key in &plan.ignored {
            // gocloud's metadata of a key GC keeps stays with it (CONTRACT.md §3).
            match metadata_of(key) {
                Some(of) if listed.contains(of) => {
                    println!("kept with its key (gocloud metadata) {}", esc(key))
                }
                _ => println!("left alone (not a render or entry) {}", esc(key)),
            }
        }
        for key in &plan.recent_renders {
            println!("kept (younger than the grace period) {}", esc(key));
        }
        let future = format!(
            "kept, not counted (dated more than {} after now)",
            seconds_in_words(GC_FUTURE_TOLERANCE_SECONDS)
        );
        for key in &plan.future_history {
            println!("{future} {}", esc(key));
        }
        for key in &plan.dangling_history {
            println!("kept, not counted (its render is not stored) {}", esc(key));
        }
        let mut kept = count(plan.keep_history.len(), "entry", "entries");
        let uncounted = plan.future_history.len() + plan.dangling_history.len();
        if uncounted > 0 {
            kept.push_str(&format!(" ({uncounted} not counted)"));
        }
        let mut renders_kept = count(plan.keep_renders.len(), "render", "renders");
        if !plan.recent_renders.is_empty() {
            renders_kept.push_str(&format!(
                " ({} more for now: written within the grace period)",
                plan.recent_renders.len()
            ));
        }
        // A key's gocloud metadata goes with it: counted apart, not as keys of its own.
        let metadata = |keys: &[String]| keys.iter().filter(|k| metadata_of(k).is_some()).count();
        let deleted_metadata = metadata(&plan.delete_history) + metadata(&plan.delete_renders);
        println!(
            "{verb} {} and {}{}; kept {kept} and {renders_kept}",
            count(
                plan.delete_history.len() - metadata(&plan.delete_history),
                "history entry",
                "history entries"
            ),
            count(
                plan.delete_renders.len() - metadata(&plan.delete_renders),
                "render",
                "renders"
            ),
            if deleted_metadata > 0 {
                format!(
                    " (with {})",
                    count(
                        deleted_metadata,
                        "gocloud metadata file",
                        "gocloud metadata files"
                    )
                )
            } else {
                String::new()
            },
        );
    }
    for note in skipped_entry_notes(release, plan) {
        eprintln!("render-store: {note}");
    }
    Ok(())
}

/// The key `key` is gocloud's metadata file of (`<key>.attrs`), by its name alone; the
/// plan's lists say whether that key is one of the release's.
fn metadata_of(key: &str) -> Option<&str> {
    key.strip_suffix(render_store::METADATA_SUFFIX)
}

/// What to do about the entries GC did not count: one sentence for the future-dated,
/// one for the dangling, none when there are none.
fn skipped_entry_notes(release: &Release, plan: &GcPlan) -> Vec<String> {
    let mut notes = Vec::new();
    let future = plan.future_history.len();
    let them = |n: usize| if n == 1 { "it" } else { "them" };
    if future > 0 {
        notes.push(format!(
            "{} of {release} {} dated more than {} after now, so GC neither counts nor \
             deletes {them}: check the clock of the controller replica that wrote {them} \
             (GC counts {them} once that time has passed). A key no replica wrote was \
             planted: remove it by hand.",
            count(future, "history entry", "history entries"),
            if future == 1 { "is" } else { "are" },
            seconds_in_words(GC_FUTURE_TOLERANCE_SECONDS),
            them = them(future),
        ));
    }
    let dangling = plan.dangling_history.len();
    if dangling > 0 {
        notes.push(format!(
            "{} of {release} {} a render that is not stored, so GC neither counts nor \
             deletes {}: `render-store verify {release}` says what to do. A key no \
             replica wrote was planted: remove it by hand.",
            count(dangling, "history entry", "history entries"),
            if dangling == 1 { "names" } else { "name" },
            them(dangling),
        ));
    }
    notes
}

/// A whole number of seconds in words: "5 minutes", "1 minute", "90 seconds".
pub fn seconds_in_words(seconds: u64) -> String {
    match seconds {
        60 => "1 minute".to_string(),
        s if s % 60 == 0 => format!("{} minutes", s / 60),
        s => count(s as usize, "second", "seconds"),
    }
}

/// The lines of a table for people: each column padded to its widest cell (the
/// header's counted), `gap` spaces between columns, the last column unpadded, trailing
/// blanks trimmed; the cells of column `right` (below the header) aligned right, as
/// numbers are.
pub fn table_lines(
    header: Option<&[String]>,
    rows: &[Vec<String>],
    gap: usize,
    right: Option<usize>,
) -> Vec<String> {
    let all = || header.into_iter().chain(rows.iter().map(Vec::as_slice));
    let mut widths: Vec<usize> = Vec::new();
    for row in all() {
        for (k, cell) in row.iter().enumerate() {
            let n = cell.chars().count();
            match widths.get_mut(k) {
                Some(w) => *w = (*w).max(n),
                None => widths.push(n),
            }
        }
    }
    let gap = " ".repeat(gap);
    all()
        .enumerate()
        .map(|(i, row)| {
            let in_body = header.is_none() || i > 0;
            let mut line = String::new();
            for (k, cell) in row.iter().enumerate() {
                if k + 1 == row.len() {
                    line.push_str(cell);
                    break;
                }
                let pad = " ".repeat(widths[k] - cell.chars().count());
                if in_body && Some(k) == right {
                    line.push_str(&format!("{pad}{cell}{gap}"));
                } else {
                    line.push_str(&format!("{cell}{pad}{gap}"));
                }
            }
            line.trim_end().to_string()
        })
        .collect()
}

/// `n` and the noun in the number English wants: "1 render", "0 renders".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Prints a diff: the objects added and removed, each whole, the objects changed, each
/// with its hunks, and a count. With `color`, removed lines are red, added green, hunk headers cyan.
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
    // An object that comes or goes is shown whole, every line marked, as kubectl diff
    // and helm-diff show it.
    for (label, mark, objects) in [("added", '+', &diff.added), ("removed", '-', &diff.removed)] {
        let paint = match (color, mark) {
            (false, _) => "",
            (true, '+') => GREEN,
            (true, _) => RED,
        };
        let reset = if paint.is_empty() { "" } else { RESET };
        for o in objects {
            writeln!(out, "{label:<9}{}", id(&o.id))?;
            for line in o.text.lines() {
                writeln!(out, "    {paint}{mark}{}{reset}", esc(line))?;
            }
        }
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

#[cfg(test)]
mod table_tests {
    use super::table_lines;

    fn cells(row: &[&str]) -> Vec<String> {
        row.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn columns_pad_to_their_widest_cell_and_numbers_align_right() {
        let header = cells(&["NAME", "SIZE", "NOTE"]);
        let rows = [cells(&["a", "5", "first"]), cells(&["longer", "1234", ""])];
        assert_eq!(
            table_lines(Some(&header), &rows, 2, Some(1)),
            ["NAME    SIZE  NOTE", "a          5  first", "longer  1234"]
        );
        assert_eq!(table_lines(None, &rows[..1], 3, None), ["a   5   first"]);
    }
}
