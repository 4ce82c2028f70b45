//! `GET /images?q=PATTERN[&namespace=NS][&since=T][&until=T][&after=NS/NAME][&limit=N]`:
//! where each image matching a pattern ran across the fleet and when, as the histories
//! record it ([`render_store::fleet_images`]), each row linking to the release's history
//! and to the render that held the image. Without a pattern only the form is shown: a
//! query of every image reads every render of the fleet, which a person asks for by `*`.
//!
//! A page is a run of releases (`limit`, by namespace and name, after `after`), as the
//! release list's pages are: a page reads only its own releases, so it is answered in
//! the time of its releases however large the fleet, and says no total.

use super::{
    App, RELEASE_PAGE_MAX, bad_request_page, busy_page, failure_page, html, page, params, qv,
    release_href, render_href, short_ref, time_html,
};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::Markup;
use render_store::Release;
use render_store::fleet::ReleaseRange;
use render_store::fleet_images::images_within;
use std::collections::HashMap;

/// Releases one page reads, unless the address says how many.
const RELEASES_PER_PAGE: usize = 50;

/// The images page.
pub(in crate::serve) async fn images_page(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let crumbs = [(format!("{}/", app.base), "Releases".to_string())];
    let p = match params(
        &query,
        &[],
        &["q", "namespace", "since", "until", "after", "limit"],
    ) {
        Ok(p) => p,
        Err(m) => return bad_request_page(&app, &crumbs, &m),
    };
    let [pattern, namespace, since, until, after, limit] =
        [p[0], p[1], p[2], p[3], p[4], p[5]].map(|v| v.map(str::trim).filter(|v| !v.is_empty()));
    let after_release = match after.map(|a| (a, Release::parse(a))) {
        None => None,
        Some((_, Some(release))) => Some(release),
        Some((text, None)) => {
            let m = format!("after {text:?}: expected NAMESPACE/NAME, the last release of a page");
            return bad_request_page(&app, &crumbs, &m);
        }
    };
    let limit = match limit.map(str::parse::<usize>) {
        None => RELEASES_PER_PAGE,
        Some(Ok(n)) if (1..=RELEASE_PAGE_MAX).contains(&n) => n,
        Some(_) => {
            let m = format!("limit: expected a whole number from 1 to {RELEASE_PAGE_MAX}");
            return bad_request_page(&app, &crumbs, &m);
        }
    };
    let form = form_html(&app.base, pattern, namespace, since, until);
    let Some(pattern) = pattern else {
        let content = html! {
            h1 { "Images" } "\n"
            (form)
            p class="muted" {
                "Give an image: a repository (" code { "nginx" } "), a reference ("
                code { "nginx:1.25" } "), a digest (" code { "@sha256:…" } ") or a glob ("
                code { "ghcr.io/org/*" } "; " code { "*" } " is every image)."
            }
        };
        return html(
            &app,
            StatusCode::OK,
            page(&app.base, "Images", &crumbs, content),
        );
    };
    let Some(store) = app.observer.store() else {
        return failure_page(&app, &crumbs, render_store::ObserverError::NoStore);
    };
    let rt = app.observer.runtime();
    let window = match crate::time_window::Window::parse(rt, since, until).await {
        Ok(w) => w,
        Err(e) => return bad_request_page(&app, &crumbs, &e.to_string()),
    };
    // Each release is read within room in the render budget, as a diff page's renders
    // are: its index and renders are what the page holds while it reads it.
    let (since_at, until_at) = (window.since, window.until);
    let budget = &app.renders.fleet();
    let range = ReleaseRange {
        after: after_release.as_ref(),
        limit: Some(limit),
    };
    let bounds = (since_at, until_at);
    let found = match images_within(store, namespace, Some(pattern), bounds, range, budget).await {
        Ok(Ok(found)) => found,
        Ok(Err(busy)) => return busy_page(&app, &crumbs, busy),
        Err(e @ render_store::Error::InvalidInput(_)) => {
            return bad_request_page(&app, &crumbs, &e.to_string());
        }
        Err(e) => return failure_page(&app, &crumbs, e.into()),
    };
    let value = match render_store::json_view::images(rt, &found).await {
        Ok(v) => v,
        Err(e) => return failure_page(&app, &crumbs, e.into()),
    };
    for (release, why) in &found.unread {
        tracing::warn!("images: {release} could not be read: {why}");
    }
    let rows = value["images"].as_array().cloned().unwrap_or_default();
    let page_href = |after: Option<&Release>| {
        let mut href = format!("{}/images?q={}", app.base, qv(pattern));
        let limit = (limit != RELEASES_PER_PAGE).then(|| limit.to_string());
        let after = after.map(Release::to_string);
        for (k, v) in [
            ("namespace", namespace),
            ("since", since),
            ("until", until),
            ("limit", limit.as_deref()),
            ("after", after.as_deref()),
        ] {
            if let Some(v) = v {
                href.push_str(&format!("&{k}={}", qv(v)));
            }
        }
        href
    };
    let paged = after_release.is_some() || found.next_after.is_some();
    let content = html! {
        h1 { "Images" } "\n"
        (form)
        @if !found.complete() {
            p class="warning" id="partial" {
                "Partial: "
                (found.unread.len() + found.unlisted.len())
                " releases or folders could not be read (the server log says why); they \
                 are not in this answer, which says nothing of them."
            }
        }
        p class="summary" id="summary" {
            (rows.len()) " interval" @if rows.len() != 1 { "s" } " of "
            code { (pattern) } " as the histories record them: from an entry's sync until \
             the next entry's; a rollback adds no entry."
            @if paged { " These are of this page's releases alone." }
        }
        "\n"
        @if !rows.is_empty() {
            table class="images" {
                thead { tr { th { "Image" } th { "Release" } th { "From" } th { "Until" } th { "Render" } } }
                tbody {
                    "\n"
                    @for row in &rows {
                        (row_html(&app.base, row))
                    }
                }
            }
        }
        @if paged {
            p class="pager" {
                @if after_release.is_some() {
                    a href=(page_href(None)) class="page-first" { "First releases" }
                }
                @if after_release.is_some() && found.next_after.is_some() { " · " }
                @if let Some(next) = &found.next_after {
                    a href=(page_href(Some(next))) class="page-next" rel="next" { "Next releases" }
                }
            }
            "\n"
        }
    };
    html(
        &app,
        StatusCode::OK,
        page(&app.base, "Images", &crumbs, content),
    )
}

fn form_html(
    base: &str,
    pattern: Option<&str>,
    namespace: Option<&str>,
    since: Option<&str>,
    until: Option<&str>,
) -> Markup {
    html! {
        form class="search" method="get" action={ (base) "/images" } role="search" {
            label for="q" { "Image" } " "
            input type="search" id="q" name="q" value=[pattern] placeholder="nginx, nginx:1.25, @sha256:…, ghcr.io/org/*";
            " "
            label for="namespace" { "Namespace" } " "
            input type="text" id="namespace" name="namespace" value=[namespace] size="12";
            " "
            label for="since" { "Since" } " "
            input type="text" id="since" name="since" value=[since] placeholder="7d, 2026-12-01" size="12";
            " "
            label for="until" { "Until" } " "
            input type="text" id="until" name="until" value=[until] size="12";
            " "
            button type="submit" { "Find" }
        }
        "\n"
    }
}

fn row_html(base: &str, row: &serde_json::Value) -> Markup {
    let text = |k: &str| row[k].as_str().unwrap_or_default().to_string();
    let release = Release::new(text("namespace"), text("name"));
    let first = row["renderRefs"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    html! {
        tr class="image-row" {
            td { code { (text("image")) } }
            td { a href=(release_href(base, &release)) { (release) } }
            td { (time_html(&text("from"))) }
            td {
                @match row["until"].as_str() {
                    Some(until) => (time_html(until)),
                    None => span class="badge newest" title="the newest entry's render holds it" { "newest" },
                }
            }
            td { a href=(render_href(base, &release, &first)) title=(first) { code { (short_ref(&first)) } } }
        }
        "\n"
    }
}
