//! `component`: the embedded WebAssembly component written to a file, for hosts in
//! other languages.

use super::Context;
use crate::output::print_json;
use anyhow::{Context as _, Result};
use serde_json::json;
use std::path::Path;

/// Writes the component to `out`, readable by everyone (it holds no secret).
pub fn run(ctx: &Context<'_>, out: &Path) -> Result<()> {
    crate::local_file::write_file(
        out,
        render_store::COMPONENT,
        crate::local_file::Readers::Everyone,
    )
    .context("writing the component")?;
    if ctx.as_json() {
        print_json(&json!({ "path": out, "bytes": render_store::COMPONENT.len() }))?;
    } else {
        println!(
            "wrote {} ({} bytes)",
            out.display(),
            render_store::COMPONENT.len()
        );
    }
    Ok(())
}
