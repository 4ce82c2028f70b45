//! The sizes of a release's render blobs, from one listing of its renders folder: what
//! `history -o wide` and the history page show beside each entry.

use render_store::{Release, RenderStore, Result};
use std::collections::HashMap;

/// The folder of `release`'s render blobs (from the component's key layout, through
/// `a_render_ref`, any renderRef of the release) and each stored blob's size by its
/// renderRef: one listing, however long the history.
pub async fn render_sizes(
    store: &RenderStore,
    release: &Release,
    a_render_ref: &str,
) -> Result<(String, HashMap<String, u64>)> {
    let key = store.runtime().render_key(release, a_render_ref).await?;
    let dir = key[..key.len() - a_render_ref.len()].to_string();
    let sizes = store
        .bucket()
        .list(&dir)
        .await?
        .into_iter()
        .filter_map(|m| Some((m.key.strip_prefix(&dir)?.to_string(), m.size)))
        .collect();
    Ok((dir, sizes))
}
