//! `images`: where each container image ran across the fleet, and when, as the
//! histories record it ([`render_store::fleet_images`]).

use super::{Context, Finish};
use crate::output::{print_json, table_lines};
use crate::terminal::escape_for_terminal as esc;
use crate::time_view::to_the_second;
use crate::time_window::Window;
use anyhow::Result;
use render_store::fleet_images::images;
use serde_json::Value;
use std::io::Write;

/// Prints the intervals of the images matching `pattern` in the window; [`Finish::Differs`]
/// when the answer is partial (a folder not listed, a release not read).
pub async fn run(
    ctx: &Context<'_>,
    pattern: Option<&str>,
    since: Option<&str>,
    until: Option<&str>,
) -> Result<Finish> {
    let store = ctx.open().await?;
    let rt = store.runtime().clone();
    let window = Window::parse(&rt, since, until).await?;
    let found = images(&store, ctx.namespace, pattern, window.since, window.until).await?;
    if ctx.as_json() {
        // The library's shape, which the C ABI gives too.
        print_json(&render_store::json_view::images(&rt, &found).await?)?;
    } else {
        let value = render_store::json_view::images(&rt, &found).await?;
        print_table(value["images"].as_array().map_or(&[][..], Vec::as_slice))?;
    }
    for u in &found.unlisted {
        eprintln!(
            "render-store: could not list {} ({}): its releases are not in the answer",
            esc(&u.folder),
            esc(&u.error)
        );
    }
    for (release, why) in &found.unread {
        eprintln!(
            "render-store: could not read {release} ({}): it is not in the answer; \
             `render-store verify {release}` says what is wrong",
            esc(why)
        );
    }
    Ok(if found.complete() {
        Finish::Done
    } else {
        Finish::Differs
    })
}

/// The rows of [`render_store::json_view::images`] as a table for people.
fn print_table(rows: &[Value]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if rows.is_empty() {
        writeln!(out, "(no image matched)")?;
        return Ok(());
    }
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let header = ["IMAGE", "RELEASE", "FROM", "UNTIL", "RENDERS"].map(String::from);
    let lines: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                esc(&text(&r["image"])).into_owned(),
                format!("{}/{}", text(&r["namespace"]), text(&r["name"])),
                to_the_second(&text(&r["from"])),
                match r["until"].as_str() {
                    Some(until) => to_the_second(until),
                    None => "(newest)".to_string(),
                },
                r["renderRefs"].as_array().map_or(0, Vec::len).to_string(),
            ]
        })
        .collect();
    for line in table_lines(Some(&header), &lines, 3, None) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
