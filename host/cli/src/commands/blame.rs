//! `blame`: which history entry last changed each field of an object, as `git blame`
//! says which commit last changed each line; decided in the component
//! (`store.blame-object`), shaped by the library (`json_view::blame`), which the C ABI
//! gives too.

use super::Context;
use crate::output::{print_json, table_lines};
use crate::terminal::escape_for_terminal as esc;
use crate::time_view::to_the_second;
use anyhow::Result;
use serde_json::Value;
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
    let value = render_store::json_view::blame(&store, &release, &blame).await?;
    if ctx.as_json() {
        print_json(&value)?;
    } else {
        print_lines(value["fields"].as_array().map_or(&[][..], Vec::as_slice))?;
    }
    let newest = value["newest"].as_u64().unwrap_or(0);
    if newest != 0 {
        eprintln!(
            "render-store: {} is in no render of @{} or newer: its fields are those of @{newest}",
            esc(object),
            newest - 1,
        );
    }
    Ok(())
}

fn print_lines(fields: &[Value]) -> Result<()> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let rows: Vec<Vec<String>> = fields
        .iter()
        .map(|f| {
            let summary = text(&f["summary"]);
            let summary = match summary.char_indices().nth(SHOWN_SUMMARY) {
                Some((cut, _)) => format!("{}…", &summary[..cut]),
                None => summary,
            };
            vec![
                format!("@{}", f["entry"]),
                to_the_second(&text(&f["syncedAt"])),
                esc(&summary).into_owned(),
                esc(&text(&f["path"])).into_owned(),
                esc(&text(&f["value"])).into_owned(),
            ]
        })
        .collect();
    let mut out = std::io::stdout().lock();
    for line in table_lines(None, &rows, 2, None) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
