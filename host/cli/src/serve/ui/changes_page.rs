//! `GET /changes[?since=T][&until=T][&namespace=NS][&page=N]`: the fleet's timeline of
//! changes, newest first ([`render_store::fleet_changes`]): each entry synced in the
//! window with what it changed against the entry before it in its release, linking to
//! that diff. Secret keys are named, never their values.
//!
//! Only the page shown is read: the window and its order come from the history
//! listings, then the page's entries and renders are read release by release, each
//! within room in the server's render budget, as a diff page's are.

use super::{
    App, bad_request_page, busy_page, failure_page, html, no_such_page, page, pager, params, qv,
    release_href, time_html,
};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::Markup;
use render_store::ObjectId;
use render_store::fleet_changes::{EntryChanges, Page, fleet_changes_page};
use std::collections::HashMap;

/// Entries one page shows.
const ENTRIES_PER_PAGE: usize = 50;

/// The window when the address gives none: the last day.
const DEFAULT_SINCE: &str = "24h";

/// The changes page.
pub(in crate::serve) async fn changes_page(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let crumbs = [(format!("{}/", app.base), "Releases".to_string())];
    let p = match params(&query, &[], &["since", "until", "namespace", "page"]) {
        Ok(p) => p,
        Err(m) => return bad_request_page(&app, &crumbs, &m),
    };
    let [since, until, namespace, page_number] =
        [p[0], p[1], p[2], p[3]].map(|v| v.map(str::trim).filter(|v| !v.is_empty()));
    let since = since.unwrap_or(DEFAULT_SINCE);
    let page_number = match page_number.map(str::parse::<usize>) {
        None => 1,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => return bad_request_page(&app, &crumbs, "page: expected a whole number from 1"),
    };
    let Some(store) = app.observer.store() else {
        return failure_page(&app, &crumbs, render_store::ObserverError::NoStore);
    };
    let rt = app.observer.runtime();
    let window = match crate::time_window::Window::parse(rt, Some(since), until).await {
        Ok(w) => w,
        Err(e) => return bad_request_page(&app, &crumbs, &e.to_string()),
    };
    let shown = Page {
        skip: (page_number - 1).saturating_mul(ENTRIES_PER_PAGE),
        limit: Some(ENTRIES_PER_PAGE),
    };
    let (since_at, until_at) = (window.since, window.until);
    let found = match fleet_changes_page(
        store,
        namespace,
        since_at,
        until_at,
        shown,
        &app.renders.fleet(),
    )
    .await
    {
        Ok(Ok(found)) => found,
        Ok(Err(busy)) => return busy_page(&app, &crumbs, busy),
        Err(e) => return failure_page(&app, &crumbs, e.into()),
    };
    for u in &found.unlisted {
        tracing::warn!("changes: {} could not be listed: {}", u.folder, u.error);
    }
    for (release, why) in &found.unread {
        tracing::warn!("changes: {release} could not be read: {why}");
    }
    let times: Vec<_> = found.entries.iter().map(|e| e.synced_at).collect();
    let times = match rt.format_synced_at_all(&times).await {
        Ok(t) => t,
        Err(e) => return failure_page(&app, &crumbs, e.into()),
    };
    let total = found.total;
    let pages = total.div_ceil(ENTRIES_PER_PAGE).max(1);
    if page_number > pages {
        return no_such_page(&app, &crumbs, page_number, pages);
    }
    let start = shown.skip;
    let range = start..(start + ENTRIES_PER_PAGE).min(total);
    let page_href = |n: usize| {
        let mut href = format!("{}/changes?since={}", app.base, qv(since));
        for (k, v) in [("until", until), ("namespace", namespace)] {
            if let Some(v) = v {
                href.push_str(&format!("&{k}={}", qv(v)));
            }
        }
        format!("{href}&page={n}")
    };
    let base = &app.base;
    let content = html! {
        h1 { "Changes" } "\n"
        form class="search" method="get" action={ (base) "/changes" } {
            label for="since" { "Since" } " "
            input type="text" id="since" name="since" value=(since) size="14" placeholder="24h, 7d, 2026-12-01";
            " "
            label for="until" { "Until" } " "
            input type="text" id="until" name="until" value=[until] size="14";
            " "
            label for="namespace" { "Namespace" } " "
            input type="text" id="namespace" name="namespace" value=[namespace] size="12";
            " "
            button type="submit" { "Show" }
        }
        "\n"
        @if !found.complete() {
            p class="warning" id="partial" {
                "Partial: "
                @if !found.unlisted.is_empty() {
                    (found.unlisted.len())
                    " folders could not be listed; their releases are not in this list. "
                }
                @if !found.unread.is_empty() {
                    "An entry or a render of "
                    @for (i, (release, _)) in found.unread.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href=(release_href(base, release)) { (release) }
                    }
                    " could not be read; "
                    @if found.unread.len() == 1 { "its entries are" } @else { "their entries are" }
                    " not in this list ("
                    code { "render-store verify" } " says what is wrong). "
                }
                "The server log says why."
            }
        }
        p class="summary" id="summary" {
            (total) " entr" @if total == 1 { "y" } @else { "ies" }
            " synced in the window, newest first, each against the entry before it."
        }
        "\n"
        ol class="changes" {
            "\n"
            @for (e, time) in found.entries.iter().zip(&times) {
                (entry_html(base, e, time))
            }
        }
        @if pages > 1 {
            (pager("Entries", &range, total, (page_number, pages), &page_href))
        }
    };
    html(
        &app,
        StatusCode::OK,
        page(base, "Changes", &crumbs, content),
    )
}

fn id_text(id: &ObjectId) -> String {
    match id.namespace.as_str() {
        "" => format!("{} {}", id.kind, id.name),
        ns => format!("{} {ns}/{}", id.kind, id.name),
    }
}

fn entry_html(base: &str, e: &EntryChanges, time: &str) -> Markup {
    let c = &e.changes;
    let diff = e.previous_render_ref.as_ref().map(|from| {
        format!(
            "{}/diff?from={}&to={}",
            release_href(base, &e.release),
            qv(from),
            qv(&e.render_ref)
        )
    });
    html! {
        li class="change" {
            div class="change-head" {
                a href=(release_href(base, &e.release)) { (e.release) } " "
                span class="position" { "@" (e.position) } " "
                (time_html(time)) " "
                span class="entry-summary" { (e.summary) } " "
                @if let Some(diff) = &diff {
                    a class="diff-link" href=(diff) { "diff" }
                } @else {
                    span class="muted" { "first entry" }
                }
            }
            ul class="change-lines" {
                @for (mark, ids) in [("+", &c.added), ("−", &c.removed), ("~", &c.changed)] {
                    @for id in ids.iter() { li { span class="mark" { (mark) } " " (id_text(id)) } }
                }
                @for i in &c.images {
                    li class="image-change" {
                        "image " code { (i.container) } " (" (id_text(&i.object)) "): "
                        code { (i.old.as_deref().unwrap_or("(none)")) } " → "
                        code { (i.new.as_deref().unwrap_or("(none)")) }
                    }
                }
                @for k in &c.secret_keys {
                    li class="secret-key" { "secret key changed: " (id_text(&k.secret)) " " code { (k.key) } }
                }
            }
        }
        "\n"
    }
}
