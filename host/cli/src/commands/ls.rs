//! `ls`: the keys of the store under a prefix, as the bucket lists them.

use super::Context;
use crate::output::print_json;
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use serde_json::json;
use std::io::Write;

/// Prints every key under `prefix`, one per line (escaped for the terminal) or as a
/// JSON array.
pub async fn run(ctx: &Context<'_>, prefix: &str) -> Result<()> {
    let listed = ctx.open().await?.bucket().list(prefix).await?;
    let keys: Vec<String> = listed.into_iter().map(|o| o.key).collect();
    if ctx.as_json() {
        print_json(&json!(keys))?;
    } else {
        let mut out = std::io::stdout().lock();
        for key in keys {
            writeln!(out, "{}", esc(&key))?;
        }
    }
    Ok(())
}
