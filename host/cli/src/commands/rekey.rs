//! `rekey`: every render blob of a release (or of the store) sealed under the first key
//! of the keyring.

use super::Context;
use crate::output::print_json;
use anyhow::{Context as _, Result};
use render_store::bucket::messages::quote;
use serde_json::json;

/// Rekeys the release `release` names, or every release when `None` (`--all`).
pub async fn run(ctx: &Context<'_>, release: Option<&str>) -> Result<()> {
    let (store, releases) = ctx.keyed_releases(release, "rekey seals blobs").await?;
    let (mut rewritten, mut kept) = (0u64, 0u64);
    for release in &releases {
        let (r, k) = store.rekey_release(release).await.with_context(|| {
            format!("rekey of {release} (run it again once fixed: nothing was lost)")
        })?;
        // The history's MACs move to the first key too; entries that never
        // authenticated are left for `authenticate`, which vouches for them.
        let entries = store
            .authenticate_history(release, false)
            .await
            .with_context(|| {
                format!("rekey of {release}: its history entries were not re-authenticated")
            })?;
        if !entries.left.is_empty() && !ctx.quiet {
            eprintln!(
                "render-store: {release}: {} left unauthenticated; `render-store verify \
                 {release}` names them",
                crate::output::count(entries.left.len(), "history entry", "history entries")
            );
        }
        // The release index is rebuilt under the first key from the renders just
        // verified (CONTRACT.md §14), never resealed as found: an unchanged index is not
        // written again.
        if let Err(e) = store.index_release(release, true).await {
            eprintln!(
                "render-store: {release}: the release index was not resealed ({}); \
                 `render-store reindex {release}` does it",
                crate::terminal::escape_for_terminal(&e.to_string())
            );
        }
        rewritten += u64::from(r);
        kept += u64::from(k);
        if !ctx.as_json() && !ctx.quiet {
            eprintln!("render-store: {release}: {r} rewritten, {k} already under the first key");
        }
    }
    if ctx.as_json() {
        print_json(&json!({"releases": releases.len(), "rewritten": rewritten, "kept": kept}))?;
    } else {
        println!(
            "{rewritten} render blobs sealed under key {}, {kept} already were, in {} releases",
            quote(&store.keyring().ids()[0]),
            releases.len()
        );
    }
    Ok(())
}
