//! `releases`: the releases of the store, each with its number of history entries and
//! its newest entry (time, renderRef, summary), found with delimiter listings a page at
//! a time (the observer's fleet listing, as `GET /releases` gives it).

use super::{Context, Finish};
use crate::output::print_json;
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::fleet::Unlisted;
use render_store::{Observer, Release, ReleaseSummary, RenderStore};
use serde_json::json;
use std::io::Write;

/// Releases read a page at a time when no `--limit` is given: each page's history
/// listings and newest entries are read at once (under the observer's bound) and
/// printed before the next page is read, so memory stays that of one page.
const PAGE: usize = 500;

/// `releases`: prints a page of the fleet (`limit` releases after `after`, a
/// `NAMESPACE/NAME`); [`Finish::Differs`] when a folder could not be listed.
pub async fn run(
    ctx: &Context<'_>,
    limit: Option<usize>,
    after: Option<&str>,
) -> anyhow::Result<Finish> {
    let store = ctx.open().await?;
    let after = match after {
        Some(text) => Some(Release::parse(text).ok_or_else(|| {
            crate::failure::input(format!(
                "--after {text:?}: expected NAMESPACE/NAME, a release the list printed"
            ))
        })?),
        None => None,
    };
    let listing = list(store, ctx.namespace, after, limit, ctx.as_json()).await?;
    Ok(if listing.unlisted.is_empty() {
        Finish::Done
    } else {
        Finish::Differs
    })
}

/// What `releases` found: whether the listing was complete.
pub struct Listing {
    /// Folders that could not be listed: the list printed is partial.
    pub unlisted: Vec<Unlisted>,
}

/// Prints the releases of `namespace` (or of the store) after `after`, at most `limit`
/// (all when `None`), as text or JSON; the cursor of the next page goes to standard
/// error (text) or `nextAfter` (JSON) when `limit` cut the list.
pub async fn list(
    store: RenderStore,
    namespace: Option<&str>,
    after: Option<Release>,
    limit: Option<usize>,
    as_json: bool,
) -> Result<Listing> {
    let observer = Observer::new(Some(store))?;
    let rt = observer.runtime().clone();
    let mut after = after;
    let mut unlisted = Vec::new();
    let mut json_rows = Vec::new();
    let mut printed = 0usize;
    let next_after = loop {
        let want = match limit {
            Some(n) => n.saturating_sub(printed).max(1),
            None => PAGE,
        };
        let page = observer
            .releases_page(namespace, after.as_ref(), want)
            .await?;
        unlisted.extend(page.unlisted);
        let times: Vec<_> = page
            .releases
            .iter()
            .filter_map(|r| r.history.newest.as_ref().map(|n| n.synced_at))
            .collect();
        let mut times = rt.format_synced_at_all(&times).await?.into_iter();
        let mut out = std::io::stdout().lock();
        if !as_json && printed == 0 && !page.releases.is_empty() {
            writeln!(
                out,
                "{:<40} {:>7}  {:<30}  SUMMARY",
                "RELEASE", "ENTRIES", "NEWEST SYNC"
            )?;
        }
        for r in &page.releases {
            let time = r
                .history
                .newest
                .as_ref()
                .map(|_| times.next().unwrap_or_default());
            if as_json {
                json_rows.push(row_json(r, time));
            } else {
                writeln!(out, "{}", row_text(r, time))?;
            }
        }
        printed += page.releases.len();
        after = page.next_after;
        let done = after.is_none() || limit.is_some_and(|n| printed >= n);
        if done {
            break after.filter(|_| limit.is_some());
        }
    };
    if as_json {
        print_json(&json!({
            "releases": json_rows,
            "nextAfter": next_after.as_ref().map(Release::to_string),
            "partial": !unlisted.is_empty(),
            "unlisted": unlisted
                .iter()
                .map(|u| json!({"folder": u.folder, "error": u.error}))
                .collect::<Vec<_>>(),
        }))?;
    } else {
        if printed == 0 && unlisted.is_empty() {
            println!("(no release)");
        }
        if let Some(next) = &next_after {
            // On standard error, so standard output stays one line per release.
            eprintln!("more releases: --after {}", esc(&next.to_string()));
        }
    }
    for u in &unlisted {
        eprintln!(
            "render-store: the list is partial: {} could not be listed: {}",
            esc(&u.folder),
            esc(&u.error)
        );
    }
    Ok(Listing { unlisted })
}

fn row_json(r: &ReleaseSummary, time: Option<String>) -> serde_json::Value {
    json!({
        "namespace": r.release.namespace,
        "name": r.release.name,
        "entries": r.history.entries,
        "newest": r.history.newest.as_ref().map(|n| json!({
            "syncedAt": time,
            "renderRef": n.render_ref,
            "summary": r.newest_summary.as_ref().and_then(|s| s.as_ref().ok()),
        })),
    })
}

fn row_text(r: &ReleaseSummary, time: Option<String>) -> String {
    let summary = match &r.newest_summary {
        None => String::new(),
        Some(Ok(s)) => esc(s).into_owned(),
        Some(Err(why)) => format!("(the newest entry does not read: {})", esc(why)),
    };
    format!(
        "{:<40} {:>7}  {:<30}  {summary}",
        esc(&r.release.to_string()),
        r.history.entries,
        time.as_deref().unwrap_or("(no history)"),
    )
}
