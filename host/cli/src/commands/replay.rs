//! `replay`: a traced operation run again in the sandbox against the trace's answers
//! alone, with no store.

use super::Context;
use crate::output::print_json;
use anyhow::{Context as _, Result, bail};
use render_store::trace::ReplayError;
use render_store::{Keyring, Runtime};
use std::path::Path;

/// Replays the trace in `file` (read up to `max_bytes`) and prints the component's
/// report; fails when the replay does not match.
pub async fn run(ctx: &Context<'_>, file: &Path, max_bytes: u64) -> Result<()> {
    let text = crate::local_file::read_regular(file, max_bytes).context("reading the trace")?;
    let rt = Runtime::shared()?;
    // Whether encryption is required is the trace's: it replays as it ran.
    let keyring = match ctx.keys.file {
        Some(path) => Keyring::from_file(&rt, path).await?,
        None => Keyring::default(),
    };
    let report = match rt.replay(&text, &keyring).await {
        Ok(report) => report,
        Err(e @ ReplayError::Trace { .. }) => {
            return Err(e).with_context(|| format!("reading {}", file.display()));
        }
        // The component could not report: nothing was compared, so it fails.
        Err(e @ ReplayError::Stopped(_)) => return Err(e.into()),
    };
    // Both forms come from the component: every host prints the same report.
    if ctx.as_json() {
        print_json(&serde_json::from_str(&report.json)?)?;
    } else {
        print!("{}", report.text);
    }
    if !report.matches {
        bail!("the replay does not match the trace {}", file.display());
    }
    Ok(())
}
