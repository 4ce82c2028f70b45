//! `authenticate`: an operator vouches for the history entries of a release (or of the
//! store) under the keyring, after checking them with `verify` (CONTRACT.md §14).

use super::{Context, Finish};
use crate::output::{count, print_json};
use crate::terminal::escape_for_terminal as esc;
use anyhow::{Context as _, Result};
use serde_json::json;

/// Authenticates the history of the release `release` names, or of every release when
/// `None` (`--all`); [`Finish::Differs`] when some entry was left unauthenticated.
pub async fn run(ctx: &Context<'_>, release: Option<&str>) -> Result<Finish> {
    let (store, releases) = ctx
        .keyed_releases(release, "authenticate gives history entries a MAC")
        .await?;
    let (mut rewritten, mut kept, mut left) = (0u64, 0u64, Vec::new());
    for release in &releases {
        let report = store
            .authenticate_history(release, true)
            .await
            .with_context(|| {
                format!("authenticate {release} (run it again once fixed: nothing was lost)")
            })?;
        rewritten += u64::from(report.rewritten);
        kept += u64::from(report.kept);
        left.extend(report.left);
    }
    if ctx.as_json() {
        print_json(&json!({
            "releases": releases.len(),
            "rewritten": rewritten,
            "kept": kept,
            "left": left,
        }))?;
    } else {
        for why in &left {
            eprintln!("render-store: left unauthenticated: {}", esc(why));
        }
        println!(
            "{} authenticated under key {:?}, {kept} already were, {} left, in {}",
            count(rewritten as usize, "history entry", "history entries"),
            store.keyring().ids()[0],
            left.len(),
            count(releases.len(), "release", "releases"),
        );
    }
    Ok(if left.is_empty() {
        Finish::Done
    } else {
        Finish::Differs
    })
}
