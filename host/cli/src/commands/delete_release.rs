//! `delete-release --dry-run`: the keys a delete-release would delete, listed and not
//! deleted (the deleting form is a store operation, [`super::operation`]).

use super::Context;
use crate::output::{count, print_json};
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use serde_json::json;

/// Lists the keys of the release `release` names.
pub async fn dry_run(ctx: &Context<'_>, release: &str) -> Result<()> {
    let store = ctx.open().await?;
    let release = ctx.release(release)?;
    let prefix = store.runtime().release_prefix(&release).await?;
    let keys: Vec<String> = store
        .bucket()
        .list(&prefix)
        .await?
        .into_iter()
        .map(|o| o.key)
        .collect();
    if ctx.as_json() {
        print_json(&json!({ "dryRun": true, "keys": keys }))?;
    } else if keys.is_empty() {
        println!("nothing to delete: no key is stored for {release}");
    } else {
        for key in &keys {
            println!("would delete {}", esc(key));
        }
        println!(
            "would delete {} of {release}",
            count(keys.len(), "key", "keys")
        );
    }
    Ok(())
}
