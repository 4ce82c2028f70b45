//! The names people type for a release and its renders: a release must hold keys to be
//! read, and a render is named by its whole renderRef, a unique prefix of it, or its
//! place in the history (`@0` the newest entry, `@1` the one before, …).

use crate::failure;
use anyhow::Result;
use render_store::{ObjectMeta, ParsedKey, Release, RenderStore};

/// The fewest hex digits a renderRef prefix may have: short enough to type, long enough
/// that a collision among a release's renders is practically never met (and reported
/// when it is).
pub const MIN_PREFIX_DIGITS: usize = 8;

const REF_PREFIX: &str = "sha256:";

/// Fails with "no release NS/NAME in the store" when the release holds no key at all:
/// a typo in a release name must not read as an empty history.
pub async fn require_release(store: &RenderStore, release: &Release) -> Result<()> {
    release_keys(store, release).await.map(drop)
}

/// Every release that holds a key, from one listing of the whole store (a listing that
/// fails is an error: a release left out would be left as it is without a word).
pub async fn releases(store: &RenderStore) -> Result<Vec<Release>> {
    let mut found = std::collections::BTreeSet::new();
    for object in store.bucket().list("").await? {
        let mut parts = object.key.splitn(3, '/');
        if let (Some(ns), Some(name), Some(_)) = (parts.next(), parts.next(), parts.next())
            && let Some(r) = Release::parse(&format!("{ns}/{name}"))
        {
            found.insert((r.namespace, r.name));
        }
    }
    Ok(found
        .into_iter()
        .map(|(ns, name)| Release::new(ns, name))
        .collect())
}

/// Every key of `release` (one listing of its prefix), or the error of
/// [`require_release`] when there is none.
pub async fn release_keys(store: &RenderStore, release: &Release) -> Result<Vec<ObjectMeta>> {
    let prefix = store.runtime().release_prefix(release).await?;
    let keys = store.bucket().list(&prefix).await?;
    if keys.is_empty() {
        return Err(failure::not_found(format!(
            "no release {release} in the store: nothing is stored under {prefix} (check the \
             namespace and name; `render-store ls` lists what is there)"
        )));
    }
    Ok(keys)
}

/// The renderRef `name` stands for in `release`: a whole renderRef as it is; `@N` the
/// render of the N-th newest history entry (from 0); `sha256:HEX…` or `HEX…` with at
/// least [`MIN_PREFIX_DIGITS`] digits the one stored render whose renderRef starts so.
pub async fn resolve_ref(store: &RenderStore, release: &Release, name: &str) -> Result<String> {
    if let Some(position) = name.strip_prefix('@') {
        return history_position(store, release, name, position).await;
    }
    let digits = name.strip_prefix(REF_PREFIX).unwrap_or(name);
    if digits.len() == 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        // A whole renderRef, or not a name of ours: the operation checks it in its own
        // words.
        return Ok(name.to_string());
    }
    if digits.len() < MIN_PREFIX_DIGITS {
        return Err(failure::input(format!(
            "{name:?} is too short to name a render: give at least {MIN_PREFIX_DIGITS} hex \
             digits of its renderRef, or @N for the N-th newest history entry"
        )));
    }
    let wanted = format!("{REF_PREFIX}{}", digits.to_ascii_lowercase());
    let renders_prefix = format!(
        "{}renders/{wanted}",
        store.runtime().release_prefix(release).await?
    );
    let mut matches = Vec::new();
    for object in store.bucket().list(&renders_prefix).await? {
        if let Some(ParsedKey::Render(r)) = store.runtime().parse_key(release, &object.key).await? {
            matches.push(r);
        }
    }
    match matches.len() {
        1 => Ok(matches.remove(0)),
        0 => Err(failure::not_found(format!(
            "no render of {release} has a renderRef starting with {wanted}"
        ))),
        _ => Err(failure::input(format!(
            "{wanted} names {} renders of {release}; give more digits:\n  {}",
            matches.len(),
            matches.join("\n  ")
        ))),
    }
}

async fn history_position(
    store: &RenderStore,
    release: &Release,
    name: &str,
    position: &str,
) -> Result<String> {
    let Ok(n) = position.parse::<u32>() else {
        return Err(failure::input(format!(
            "{name:?} is not a history position: @0 is the newest entry, @1 the one before"
        )));
    };
    let page = store
        .list_history_page(release, n.saturating_add(1), None)
        .await?;
    match page.entries.get(n as usize) {
        Some(entry) => Ok(entry.render_ref.clone()),
        None => Err(failure::not_found(format!(
            "{release} has {} history entries: {name} is not one of them (@0 is the newest)",
            page.entries.len()
        ))),
    }
}
