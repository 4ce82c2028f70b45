//! `history`: a release's entries, oldest first, or one page of them.

use super::{Context, Finish};
use crate::json_view::history_page_json;
use crate::names;
use crate::output::{count, print_history, print_json};
use crate::terminal::escape_for_terminal as esc;
use anyhow::{Result, bail};
use render_store::{Release, RenderStore};

/// `history --limit`: one page of the history, newest first, reading only that page's
/// entries.
pub async fn page(
    ctx: &Context<'_>,
    release: &str,
    limit: u32,
    before: Option<&str>,
    trace: Option<&std::path::Path>,
) -> Result<()> {
    if trace.is_some() {
        bail!(
            "--trace records whole store operations; a history page (--limit) is \
             not one: trace `history` without --limit"
        );
    }
    let store = ctx.open().await?;
    let release = ctx.release(release)?;
    let page = store.list_history_page(&release, limit, before).await?;
    // The page's own listing says the release exists when it found an entry;
    // only an empty one needs the check (one bounded call).
    if page.entries.is_empty() && page.next_before.is_none() {
        names::require_release(&store, &release).await?;
    }
    let rt = store.runtime();
    if ctx.as_json() {
        print_json(&history_page_json(rt, &page).await?)?;
    } else {
        print_history(rt, &page.entries, false).await?;
        if let Some(next) = &page.next_before {
            // On standard error, so standard output stays one line per entry.
            eprintln!("older entries: --before {}", esc(next));
        }
    }
    Ok(())
}

/// `history` when an entry does not read: every entry read alone, the bad ones shown as
/// such, exit status 1 at the end.
pub async fn despite_bad_entries(store: &RenderStore, release: &Release) -> Result<Finish> {
    let rt = store.runtime();
    let mut bad = 0;
    for (key, entry) in super::verify::history_entry_by_entry(store, release).await? {
        match entry {
            Ok(e) => {
                let time = rt.format_synced_at(e.synced_at).await?;
                println!("{time}  {}  {}", esc(&e.render_ref), esc(&e.summary));
            }
            Err(m) => {
                bad += 1;
                println!("(corrupt entry {}: {})", esc(&key), esc(&m));
            }
        }
    }
    eprintln!(
        "render-store: {} of {release} do not read; `render-store verify {release}` says what to do",
        count(bad, "history entry", "history entries")
    );
    Err(crate::failure::Refusal {
        kind: "corrupt",
        message: format!("{release} has corrupt history entries"),
    }
    .into())
}
