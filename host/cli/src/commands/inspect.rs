//! `ref` and `canonical`: a render's renderRef and its canonical bytes, computed from
//! files or standard input, with no store.

use super::Context;
use crate::input::RenderInput;
use crate::output::print_json;
use anyhow::Result;
use render_store::Runtime;
use serde_json::json;
use std::io::Write;

/// `ref`: prints the renderRef of the render in `input`.
pub async fn render_ref(ctx: &Context<'_>, input: RenderInput) -> Result<()> {
    let rt = Runtime::shared()?;
    let mut render = input.read(&rt).await?;
    let render_ref = rt
        .render_ref_in(&mut render.objects)
        .await
        .map_err(|e| render.name_input(e))?;
    if ctx.as_json() {
        print_json(&json!({ "renderRef": render_ref }))?;
    } else {
        println!("{render_ref}");
    }
    Ok(())
}

/// `canonical`: writes the canonical bytes of the render in `input` (no Kubernetes
/// rule applied).
pub async fn canonical(input: RenderInput) -> Result<()> {
    let rt = Runtime::shared()?;
    let mut render = input.read_unchecked(&rt).await?;
    let bytes = rt
        .canonical_in(&mut render.objects)
        .await
        .map_err(|e| render.name_input(e))?;
    std::io::stdout().lock().write_all(&bytes)?;
    Ok(())
}
