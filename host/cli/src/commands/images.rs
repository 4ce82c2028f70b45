//! `images`: where each container image ran across the fleet, and when, as the
//! histories record it ([`render_store::fleet_images`]).

use super::{Context, Finish};
use crate::output::print_json;
use crate::terminal::escape_for_terminal as esc;
use crate::time_view::to_the_second;
use crate::time_window::Window;
use anyhow::Result;
use render_store::fleet_images::images;
use render_store::{ImageInterval, Release, Runtime};
use serde_json::{Value, json};
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
    // One row per interval, by image, then release, then start.
    let mut rows: Vec<(&Release, &ImageInterval)> = found
        .releases
        .iter()
        .flat_map(|r| r.intervals.iter().map(move |i| (&r.release, i)))
        .collect();
    rows.sort_by(|a, b| {
        (a.1.image.as_str(), a.0, a.1.from).cmp(&(b.1.image.as_str(), b.0, b.1.from))
    });
    let times = times(&rt, &rows).await?;
    if ctx.as_json() {
        let items: Vec<Value> = rows
            .iter()
            .zip(&times)
            .map(|((release, i), (from, until))| {
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
        print_json(&Value::Array(items))?;
    } else {
        print_table(&rows, &times)?;
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

/// Each row's start and end as RFC 3339 (the end `None` while open), formatted by the
/// component in one call.
async fn times(
    rt: &Runtime,
    rows: &[(&Release, &ImageInterval)],
) -> Result<Vec<(String, Option<String>)>> {
    let mut all = Vec::with_capacity(rows.len() * 2);
    for (_, i) in rows {
        all.push(i.from);
        all.extend(i.until);
    }
    let mut formatted = rt.format_synced_at_all(&all).await?.into_iter();
    Ok(rows
        .iter()
        .map(|(_, i)| {
            let from = formatted.next().unwrap_or_default();
            let until = i.until.map(|_| formatted.next().unwrap_or_default());
            (from, until)
        })
        .collect())
}

fn print_table(
    rows: &[(&Release, &ImageInterval)],
    times: &[(String, Option<String>)],
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if rows.is_empty() {
        writeln!(out, "(no image matched)")?;
        return Ok(());
    }
    let header = ["IMAGE", "RELEASE", "FROM", "UNTIL", "RENDERS"].map(String::from);
    let lines: Vec<[String; 5]> = rows
        .iter()
        .zip(times)
        .map(|((release, i), (from, until))| {
            [
                esc(&i.image).into_owned(),
                release.to_string(),
                to_the_second(from),
                until
                    .as_deref()
                    .map_or_else(|| "(newest)".to_string(), to_the_second),
                i.render_refs.len().to_string(),
            ]
        })
        .collect();
    let mut widths = [0usize; 5];
    for line in std::iter::once(&header).chain(&lines) {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for line in std::iter::once(&header).chain(&lines) {
        let mut text = String::new();
        for (k, (cell, w)) in line.iter().zip(widths).enumerate() {
            if k + 1 == line.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<w$}   "));
            }
        }
        writeln!(out, "{}", text.trim_end())?;
    }
    Ok(())
}
