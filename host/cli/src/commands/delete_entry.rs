//! `delete-entry`: one history entry of a release deleted, named by its place (`@N`) or
//! its key: what `verify` advises for an entry whose body does not read or whose render
//! is gone. Nothing else is touched; the render it named stays until GC finds nothing
//! needs it.

use super::Context;
use crate::failure;
use crate::names::{self, ListedEntry};
use crate::output::print_json;
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::{ParsedKey, Release, RenderStore};
use serde_json::json;

/// Deletes (or with `dry_run` names) the entry `entry` names in the release `release`
/// names.
pub async fn run(ctx: &Context<'_>, release: &str, entry: &str, dry_run: bool) -> Result<()> {
    let store = ctx.open().await?;
    let release = ctx.release(release)?;
    let Found {
        entry: found,
        position,
    } = find(&store, &release, entry).await?;
    let synced = store.runtime().format_synced_at(found.synced_at).await?;
    if !dry_run {
        store.within(store.bucket().delete(&found.key)).await??;
    }
    if ctx.as_json() {
        print_json(&json!({
            "dryRun": dry_run,
            "key": found.key,
            "renderRef": found.render_ref,
            "syncedAt": synced,
        }))?;
    } else {
        let verb = if dry_run { "would delete" } else { "deleted" };
        println!(
            "{verb} @{position} of {release}: {} (synced {synced}, render {}); the render \
             stays until GC finds nothing needs it",
            esc(&found.key),
            found.render_ref
        );
    }
    Ok(())
}

/// A history entry found for deletion, with its place in the history.
#[derive(Debug, Clone)]
pub struct Found {
    /// The entry as the listing names it.
    pub entry: ListedEntry,
    /// Its place from the newest: `@0` is 0.
    pub position: usize,
}

/// The entry `name` stands for: `@N` (the N-th newest) or the entry's whole key, which
/// must be a history key of `release` that is stored; one listing of the history either
/// way. An entry whose body does not read is found too: neither form reads it.
pub async fn find(store: &RenderStore, release: &Release, name: &str) -> Result<Found> {
    names::require_release(store, release).await?;
    let history = names::history_keys(store, release).await?;
    let (position, entry) = match name.strip_prefix('@') {
        Some(position) => names::entry_at(&history, release, name, position)?,
        None => {
            if !matches!(
                store.runtime().parse_key(release, name).await?,
                Some(ParsedKey::History(_))
            ) {
                return Err(failure::input(format!(
                    "{name:?} is not a history entry of {release}: give @N, or the entry's key \
                     as `render-store verify {release}` prints it"
                )));
            }
            history
                .iter()
                .rev()
                .enumerate()
                .find(|(_, e)| e.key == name)
                .ok_or_else(|| failure::not_found(format!("no history entry {name} is stored")))?
        }
    };
    Ok(Found {
        entry: entry.clone(),
        position,
    })
}
