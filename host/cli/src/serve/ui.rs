//! The observer for people (CONTRACT.md §7): HTML pages over the same read-only observer
//! and the component's diff as the JSON endpoints.
//!
//! - `GET /` — the releases by namespace (`GET /releases` gives the same as JSON);
//!   `q=TEXT` keeps those whose `NAMESPACE/NAME` holds the text, `sort=newest` orders
//!   the page's releases by their newest sync;
//! - `GET /ui/{namespace}/{name}` — the history, newest first, with GC's dry-run plan;
//! - `GET /ui/{namespace}/{name}/renders/{renderRef}` — a render's objects, and which
//!   history entries record it; `…/download` the render as YAML, Secret values as the
//!   pages show them;
//! - `GET /ui/{namespace}/{name}/diff?from=REF[&to=REF]` — the diff of two renders
//!   (`to` defaults to the newest entry).
//!
//! Pages are written on the server, so every view is its URL and works without
//! script; the embedded script only adds local times, copy buttons and keys. The pages
//! are maud templates, which escape every text they are given unless the code marks it
//! as markup, and the pages forbid inline script (Content-Security-Policy), so a summary
//! holding markup shows as text twice over. Nothing is loaded from the network: the
//! style and script are compiled in.

mod changes_page;
mod diff_lines;
mod images_page;
pub(super) use changes_page::changes_page;
pub(super) use images_page::images_page;

use super::{App, observer_failure, params, resolve_name, resolve_name_in};
use crate::render_sizes::render_sizes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use diff_lines::{Layout, diff_lines_html};
use maud::{DOCTYPE, Markup, html};
use render_store::controller::{DEFAULT_KEEP_HISTORY, GC_FUTURE_TOLERANCE_SECONDS};
use render_store::{
    GcPlan, HistoryEntry, ObjectForm, ObjectId, ObserverError, Release, RenderDiff, SecretValues,
    SyncTime,
};
use serde_json::json;
use std::collections::HashMap;

const STYLE: &str = include_str!("ui/app.css");
const SCRIPT: &str = include_str!("ui/app.js");

/// Pages may run only the script and style served beside them: no inline script, no
/// other origin, no frames, forms posting only here.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; \
     base-uri 'none'; frame-ancestors 'none'";

/// Characters of a renderRef's digest shown where space is short, as git shows a
/// commit: enough to tell a release's renders apart.
const SHORT_REF: usize = 12;

/// What a URL path segment leaves as it is: the unreserved characters and `:` (which
/// a renderRef holds); everything else is percent-encoded, so a name from the store
/// cannot add a segment or a query.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':');

/// `text` as one URL path segment ([`SEGMENT`]).
fn seg(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, SEGMENT).to_string()
}

/// `text` as a query value.
fn qv(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The digest's first characters, for display; the whole text when it is no renderRef.
fn short_ref(render_ref: &str) -> &str {
    match render_ref.strip_prefix("sha256:") {
        Some(hex) if hex.len() >= SHORT_REF => &hex[..SHORT_REF],
        _ => render_ref,
    }
}

/// An RFC 3339 UTC time as the component writes it, for reading: date and time to
/// the second, the fraction left to the `datetime` attribute.
fn utc_text(rfc3339: &str) -> String {
    let whole = rfc3339
        .split(['.', 'Z'])
        .next()
        .unwrap_or(rfc3339)
        .replacen('T', " ", 1);
    format!("{whole} UTC")
}

/// A time element the script completes with the local time.
fn time_html(rfc3339: &str) -> Markup {
    html! {
        time datetime=(rfc3339) title=(rfc3339) {
            span class="local" data-local {}
            span class="utc" { (utc_text(rfc3339)) }
        }
    }
}

fn bytes_text(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

// Every link starts with the pages' base path (`App::base`): the path under which a
// browser's session cookie is sent, or nothing when the server asks for no token.

fn release_href(base: &str, release: &Release) -> String {
    format!(
        "{base}/ui/{}/{}",
        seg(&release.namespace),
        seg(&release.name)
    )
}

fn render_href(base: &str, release: &Release, render_ref: &str) -> String {
    format!(
        "{}/renders/{}",
        release_href(base, release),
        seg(render_ref)
    )
}

fn diff_href(base: &str, release: &Release, from: &str, to: &str) -> String {
    format!(
        "{}/diff?from={}&to={}",
        release_href(base, release),
        qv(from),
        qv(to)
    )
}

fn copy_button(text: &str) -> Markup {
    html! {
        button type="button" class="copy" data-copy=(text) aria-label={ "Copy " (text) } {
            "copy"
        }
    }
}

/// A link of the breadcrumb: its href and its label, both plain text.
type Crumb = (String, String);

/// A whole page: `crumbs` lead from the release list to this page.
///
/// The line breaks written between elements keep the source of a page readable and
/// one history entry to a line.
fn page(base: &str, title: &str, crumbs: &[Crumb], content: Markup) -> String {
    page_of_width(base, title, crumbs, content, false)
}

/// [`page`], as wide as the window when `wide` (a side-by-side diff), else a reading
/// column.
fn page_of_width(base: &str, title: &str, crumbs: &[Crumb], content: Markup, wide: bool) -> String {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n"
            head {
                "\n"
                meta charset="utf-8"; "\n"
                meta name="viewport" content="width=device-width, initial-scale=1"; "\n"
                meta name="color-scheme" content="light dark"; "\n"
                title { (title) " · render store" } "\n"
                link rel="stylesheet" href={ (base) "/assets/app.css" }; "\n"
                script src={ (base) "/assets/app.js" } defer {} "\n"
            }
            "\n"
            body class=[wide.then_some("wide")] {
                "\n"
                a class="skip" href="#main" { "Skip to content" } "\n"
                header {
                    nav aria-label="Breadcrumb" {
                        a href={ (base) "/" } { "Releases" }
                        @for (href, label) in crumbs {
                            " " span aria-hidden="true" { "/" } " " a href=(href) { (label) }
                        }
                    }
                    button type="button" class="keys-button" data-help aria-controls="keys" {
                        "Keys"
                    }
                }
                "\n"
                main id="main" tabindex="-1" { "\n" (content) }
                "\n"
                aside id="keys" hidden {
                    h2 { "Keyboard" }
                    dl {
                        dt { kbd { "j" } " / " kbd { "k" } } dd { "next / previous item" }
                        dt { kbd { "Enter" } } dd { "open the item (expand an object)" }
                        dt { kbd { "f" } " / " kbd { "t" } }
                        dd { "history: compare from / to this entry" }
                        dt { kbd { "c" } } dd { "history: compare the chosen entries" }
                        dt { kbd { "p" } } dd { "history: diff this entry with its predecessor" }
                        dt { kbd { "u" } } dd { "up one level" }
                        dt { kbd { "?" } } dd { "show or hide this help" }
                    }
                }
                "\n"
            }
            "\n"
        }
        "\n"
    }
    .into_string()
}

/// An HTML answer within the server's response cap.
fn html(app: &App, status: StatusCode, body: String) -> Response {
    if body.len() > app.max_response_bytes {
        tracing::warn!(
            "refused a page of {} bytes: over the limit of {}",
            body.len(),
            app.max_response_bytes
        );
        let message = format!(
            "the page is {} bytes, over the response limit of {} bytes \
             (serve --max-response-bytes)",
            body.len(),
            app.max_response_bytes
        );
        return with_page_headers(
            StatusCode::INTERNAL_SERVER_ERROR,
            error_html(&app.base, "Too large", &[], &message),
        );
    }
    with_page_headers(status, body)
}

pub(super) fn with_page_headers(status: StatusCode, body: String) -> Response {
    // Text from the store (summaries, names, every line of an object) is in the page as
    // it was stored: a bidirectional control in it would reorder what a line appears to
    // say, so such characters show as escapes, as the CLI shows them.
    let body = match crate::terminal::escape_for_page(&body) {
        std::borrow::Cow::Borrowed(_) => body,
        std::borrow::Cow::Owned(escaped) => escaped,
    };
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // Pages show renders, which hold Secrets: no cache keeps a copy.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn error_html(base: &str, title: &str, crumbs: &[Crumb], message: &str) -> String {
    page(
        base,
        title,
        crumbs,
        html! {
            h1 { (title) } "\n"
            p class="error" role="alert" { (message) } "\n"
        },
    )
}

/// The page for a failed read: the same status and words as the JSON endpoints.
fn failure_page(app: &App, crumbs: &[Crumb], e: ObserverError) -> Response {
    let no_store = matches!(e, ObserverError::NoStore);
    let (status, message) = observer_failure(e);
    let title = match status {
        _ if no_store => "No render store",
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::BAD_REQUEST => "Bad request",
        _ => "The server could not answer",
    };
    html(app, status, error_html(&app.base, title, crumbs, &message))
}

/// The 404 page of a release that holds no key, in the CLI's words, the near release
/// (if any) a link to its history.
fn missing_page(app: &App, crumbs: &[Crumb], missing: &crate::names::MissingRelease) -> Response {
    let content = html! {
        h1 { "No such release" } "\n"
        p class="error no-release" role="alert" {
            (missing.head())
            @if let Some(other) = &missing.similar {
                "did you mean "
                a href=(release_href(&app.base, other)) class="did-you-mean" { (other) }
                "? "
            }
            (missing.tail())
        }
        "\n"
    };
    html(
        app,
        StatusCode::NOT_FOUND,
        page(&app.base, "No such release", crumbs, content),
    )
}

/// The page of a read of `release` that failed: when it found nothing and the release
/// holds no key, the missing release's page; the read's own failure otherwise. The
/// release is only looked for once a read found nothing, so pages of releases that are
/// there pay nothing for it.
async fn read_failure_page(
    app: &App,
    crumbs: &[Crumb],
    release: &Release,
    e: ObserverError,
) -> Response {
    if super::endpoints::is_not_found(&e) {
        match super::endpoints::missing(app, release).await {
            Ok(Some(m)) => return missing_page(app, crumbs, &m),
            Ok(None) => {}
            Err(check) => tracing::warn!("checking whether {release} is stored: {check}"),
        }
    }
    failure_page(app, crumbs, e)
}

/// The 503 of a full render budget, as a page.
fn busy_page(app: &App, crumbs: &[Crumb], busy: super::budget::Busy) -> Response {
    super::budget::Busy::with_retry_after(html(
        app,
        StatusCode::SERVICE_UNAVAILABLE,
        error_html(&app.base, "Busy", crumbs, &busy.message()),
    ))
}

fn bad_request_page(app: &App, crumbs: &[Crumb], message: &str) -> Response {
    html(
        app,
        StatusCode::BAD_REQUEST,
        error_html(&app.base, "Bad request", crumbs, message),
    )
}

/// `GET /assets/{file}`: the embedded style and script.
pub(super) async fn asset(Path(file): Path<String>) -> Response {
    let (kind, body) = match file.as_str() {
        "app.css" => ("text/css; charset=utf-8", STYLE),
        "app.js" => ("text/javascript; charset=utf-8", SCRIPT),
        _ => return super::error(StatusCode::NOT_FOUND, "no such asset"),
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, kind),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// Releases a fleet page shows unless `limit` says otherwise.
pub(super) const RELEASE_PAGE: usize = 100;
/// The most releases one fleet page shows.
pub(super) const RELEASE_PAGE_MAX: usize = 1_000;

/// A release of the list, its newest time formatted.
struct Listed {
    release: Release,
    entries: u32,
    /// The newest entry's time, renderRef and summary (`None` when it does not read).
    newest: Option<(String, String, Option<String>)>,
    /// The newest entry's time as the store keeps it, to order and age releases by.
    synced: Option<SyncTime>,
}

/// A page of the fleet: the releases, the cursor of the next page, and the folders that
/// could not be listed.
struct Fleet {
    listed: Vec<Listed>,
    next_after: Option<String>,
    unlisted: Vec<String>,
}

/// What a fleet page is asked for: `namespace`, `after` (`NAMESPACE/NAME`), `limit`, the
/// text `q` a release's `NAMESPACE/NAME` must hold, and (pages only) `sort=newest`.
#[derive(Debug, Clone)]
struct FleetQuery {
    namespace: Option<String>,
    after: Option<Release>,
    limit: usize,
    search: Option<String>,
    newest_first: bool,
}

impl FleetQuery {
    /// The query of the JSON list (`sortable` false) or of the page.
    fn parse(query: &HashMap<String, String>, sortable: bool) -> Result<FleetQuery, String> {
        let optional: &[&str] = if sortable {
            &["namespace", "after", "limit", "q", "sort"]
        } else {
            &["namespace", "after", "limit", "q"]
        };
        let p = params(query, &[], optional)?;
        let newest_first = match p.get(4).copied().flatten() {
            None | Some("name") => false,
            Some("newest") => true,
            Some(other) => return Err(format!("sort={other:?}: expected name or newest")),
        };
        let after = match p[1] {
            None => None,
            Some(text) => Some(Release::parse(text).ok_or_else(|| {
                format!("after {text:?}: expected NAMESPACE/NAME, the nextAfter of a page")
            })?),
        };
        let limit = match p[2] {
            None => RELEASE_PAGE,
            Some(text) => match text.parse::<usize>() {
                Ok(n) if (1..=RELEASE_PAGE_MAX).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "limit {text:?}: expected a whole number from 1 to {RELEASE_PAGE_MAX}"
                    ));
                }
            },
        };
        Ok(FleetQuery {
            namespace: p[0].map(str::to_string),
            after,
            limit,
            search: p[3]
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string),
            newest_first,
        })
    }

    /// This query's address with `after` in place of its own (none for the first page)
    /// and the order `newest_first`, each parameter only when it is not the default.
    fn href(&self, base: &str, after: Option<&str>, newest_first: bool) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if let Some(after) = after {
            pairs.push(("after", after.to_string()));
        }
        if let Some(ns) = &self.namespace {
            pairs.push(("namespace", ns.clone()));
        }
        if self.limit != RELEASE_PAGE {
            pairs.push(("limit", self.limit.to_string()));
        }
        if let Some(text) = &self.search {
            pairs.push(("q", text.clone()));
        }
        if newest_first {
            pairs.push(("sort", "newest".to_string()));
        }
        let mut href = format!("{base}/");
        for (i, (name, value)) in pairs.iter().enumerate() {
            href.push(if i == 0 { '?' } else { '&' });
            href.push_str(&format!("{name}={}", qv(value)));
        }
        href
    }

    /// Whether `release` is one the search asks for: its `NAMESPACE/NAME` holds the
    /// text, letter case aside.
    fn matches(&self, release: &Release) -> bool {
        self.search.as_ref().is_none_or(|text| {
            release
                .to_string()
                .to_lowercase()
                .contains(&text.to_lowercase())
        })
    }
}

/// The releases of the store (or namespace) whose name the search holds, a page of them
/// after `after`: the names come from the delimiter listings alone (one of the root and
/// one per namespace), so only the page's releases have their history read.
async fn search_releases(
    app: &App,
    q: &FleetQuery,
) -> Result<render_store::ReleasePage, ObserverError> {
    let store = app.observer.store().ok_or(ObserverError::NoStore)?;
    let all = render_store::fleet::all_releases(store, q.namespace.as_deref()).await?;
    let after = |r: &Release| {
        q.after.as_ref().is_none_or(|a| {
            (r.namespace.as_str(), r.name.as_str()) > (a.namespace.as_str(), a.name.as_str())
        })
    };
    let mut found = all
        .releases
        .into_iter()
        .filter(|r| q.matches(r) && after(r));
    let releases: Vec<Release> = found.by_ref().take(q.limit).collect();
    let next_after = match found.next() {
        Some(_) => releases.last().cloned(),
        None => None,
    };
    app.observer
        .summarize_releases(render_store::fleet::ReleaseNames {
            releases,
            next_after,
            unlisted: all.unlisted,
            others: Vec::new(),
        })
        .await
}

async fn list_releases(app: &App, q: &FleetQuery) -> Result<Fleet, ObserverError> {
    let page = match q.search {
        Some(_) => search_releases(app, q).await?,
        None => {
            app.observer
                .releases_page(q.namespace.as_deref(), q.after.as_ref(), q.limit)
                .await?
        }
    };
    let times: Vec<SyncTime> = page
        .releases
        .iter()
        .filter_map(|r| r.history.newest.as_ref().map(|n| n.synced_at))
        .collect();
    let mut times = app
        .observer
        .runtime()
        .format_synced_at_all(&times)
        .await?
        .into_iter();
    let mut listed: Vec<Listed> = page
        .releases
        .into_iter()
        .map(|r| Listed {
            synced: r.history.newest.as_ref().map(|n| n.synced_at),
            newest: r.history.newest.map(|n| {
                let time = times.next().unwrap_or_default();
                let summary = r.newest_summary.and_then(Result::ok);
                (time, n.render_ref, summary)
            }),
            entries: r.history.entries,
            release: r.release,
        })
        .collect();
    if q.newest_first {
        // The page's releases alone: ordering the whole store by time would read every
        // release's history. Stable, so equal times stay in name order.
        listed.sort_by_key(|l| std::cmp::Reverse(l.synced.map(|t| (t.seconds, t.nanoseconds))));
    }
    Ok(Fleet {
        listed,
        next_after: page.next_after.map(|r| r.to_string()),
        // Folders are the store's names; why they failed stays in the log.
        unlisted: page.unlisted.into_iter().map(|u| u.folder).collect(),
    })
}

/// `GET /releases[?namespace=NS][&after=NS/NAME][&limit=N][&q=TEXT]`: a page of the
/// releases (those whose `NAMESPACE/NAME` holds `TEXT`, letter case aside),
/// `{"namespaces": [{"namespace", "releases": [{"name", "entries", "newest": null |
/// {"syncedAt", "renderRef", "summary"}}]}], "nextAfter", "partial", "unlisted"}`,
/// sorted by namespace and name.
pub(super) async fn releases_json(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let q = match FleetQuery::parse(&query, false) {
        Ok(q) => q,
        Err(m) => return super::error(StatusCode::BAD_REQUEST, m),
    };
    let fleet = match list_releases(&app, &q).await {
        Ok(l) => l,
        Err(e) => return super::observer_error(e),
    };
    let mut namespaces: Vec<serde_json::Value> = Vec::new();
    for group in group_by_namespace(&fleet.listed) {
        let releases: Vec<_> = group
            .iter()
            .map(|l| {
                json!({
                    "name": l.release.name,
                    "entries": l.entries,
                    "newest": l.newest.as_ref().map(|(time, render_ref, summary)| json!({
                        "syncedAt": time,
                        "renderRef": render_ref,
                        "summary": summary,
                    })),
                })
            })
            .collect();
        namespaces.push(json!({
            "namespace": group[0].release.namespace,
            "releases": releases,
        }));
    }
    super::capped_json(
        "the release list",
        &json!({
            "namespaces": namespaces,
            "nextAfter": fleet.next_after,
            "partial": !fleet.unlisted.is_empty(),
            "unlisted": fleet.unlisted,
        }),
        app.max_response_bytes,
    )
}

/// Runs of releases of one namespace; the observer lists them sorted.
fn group_by_namespace(listed: &[Listed]) -> Vec<&[Listed]> {
    listed
        .chunk_by(|a, b| a.release.namespace == b.release.namespace)
        .collect()
}

/// The columns of every release table, as wide in each: the tables of two namespaces
/// line up.
fn release_columns() -> Markup {
    html! {
        colgroup {
            col class="col-release";
            col class="col-entries";
            col class="col-newest";
            col class="col-summary";
        }
    }
}

/// A release table's head: `what` names the first column.
fn release_head(what: &str) -> Markup {
    html! {
        thead {
            tr {
                th scope="col" { (what) }
                th scope="col" class="num" { "Entries" }
                th scope="col" { "Newest sync" }
                th scope="col" { "Last summary" }
            }
        }
    }
}

/// A release's row: its name (`label`), entries, the newest sync's age (its time in the
/// title) and that entry's summary.
fn release_row(base: &str, l: &Listed, label: &str, now: i64) -> Markup {
    html! {
        tr class="release" data-nav data-release=(l.release.to_string()) {
            th scope="row" class="release-name" {
                a href=(release_href(base, &l.release)) title=(l.release.to_string()) { (label) }
            }
            td class="num entries" { (l.entries) }
            td class="newest" {
                @match (&l.newest, l.synced) {
                    (Some((time, _, _)), Some(synced)) => {
                        time class="age" datetime=(time) title=(utc_text(time)) {
                            (crate::time_view::age_ago(synced, now))
                        }
                    }
                    _ => span class="muted" { "no history" },
                }
            }
            @match &l.newest {
                Some((_, _, Some(summary))) => {
                    td class="entry-summary" title=(summary) { (summary) }
                }
                Some((_, _, None)) => {
                    td class="entry-summary" {
                        span class="muted" { "(the entry does not read)" }
                    }
                }
                None => td class="entry-summary" {},
            }
        }
    }
}

/// `GET /[?namespace=NS][&after=NS/NAME][&limit=N][&q=TEXT][&sort=newest]`: a page of the
/// releases by namespace, or (`sort=newest`) the page's releases newest sync first.
pub(super) async fn index(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let q = match FleetQuery::parse(&query, true) {
        Ok(q) => q,
        Err(m) => return bad_request_page(&app, &[], &m),
    };
    let fleet = match list_releases(&app, &q).await {
        Ok(l) => l,
        Err(e) => return failure_page(&app, &[], e),
    };
    let now = crate::time_view::now_seconds();
    let base = &app.base;
    let listed = &fleet.listed;
    let groups = group_by_namespace(listed);
    let namespaces = {
        let mut all: Vec<&str> = listed
            .iter()
            .map(|l| l.release.namespace.as_str())
            .collect();
        all.sort_unstable();
        all.dedup();
        all.len()
    };
    let paged = q.after.is_some() || fleet.next_after.is_some();
    let first_page = q.href(base, None, q.newest_first);
    let by_name = q.href(base, None, false);
    let by_newest = q.href(base, None, true);
    let cleared = FleetQuery {
        search: None,
        ..q.clone()
    }
    .href(base, None, q.newest_first);
    let content = html! {
        h1 { "Releases" } "\n"
        p class="nav" {
            a href={ (base) "/images" } id="images-link" { "Images: where each ran, and when" }
            " · "
            a href={ (base) "/changes" } id="changes-link" { "Changes: what the fleet changed, newest first" }
        } "\n"
        form class="search" method="get" action={ (base) "/" } role="search" {
            label for="q" { "Find" } " "
            input type="search" id="q" name="q" value=[q.search.as_deref()]
                placeholder="namespace or name" autocomplete="off" data-filter;
            @if let Some(ns) = &q.namespace { input type="hidden" name="namespace" value=(ns); }
            @if q.limit != RELEASE_PAGE { input type="hidden" name="limit" value=(q.limit); }
            @if q.newest_first { input type="hidden" name="sort" value="newest"; }
            " " button type="submit" { "Find" }
            @if q.search.is_some() {
                " " a href=(cleared) class="clear" { "Clear" }
            }
            " "
            span class="sort" {
                "Order: "
                @if q.newest_first {
                    a href=(by_name) class="sort-name" { "by name" } " · " b { "newest sync first" }
                } @else {
                    b { "by name" } " · " a href=(by_newest) class="sort-newest" { "newest sync first" }
                }
            }
        }
        "\n"
        p class="summary" id="summary" {
            (listed.len()) " release" @if listed.len() != 1 { "s" }
            " in " (namespaces) " namespace" @if namespaces != 1 { "s" }
            @if paged { " on this page" }
            @if let Some(ns) = &q.namespace { " (namespace " code { (ns) } ")" }
            @if let Some(text) = &q.search { ", those whose name holds " code { (text) } }
            @if q.newest_first && paged { "; this page's releases ordered by their newest sync" }
        }
        "\n"
        @if !fleet.unlisted.is_empty() {
            p class="error partial" role="alert" {
                "This list is partial: "
                (plural(fleet.unlisted.len(), "folder", "folders"))
                " of the store could not be listed (the server log says why), so the \
                 releases under them are not shown: "
                @for (i, folder) in fleet.unlisted.iter().enumerate() {
                    @if i > 0 { ", " }
                    code { (folder) }
                }
            }
            "\n"
        }
        @if listed.is_empty() && fleet.unlisted.is_empty() && q.after.is_none() {
            @if q.search.is_some() {
                p { "No release's name holds that text." } "\n"
            } @else {
                p { "The store holds no release yet." } "\n"
            }
        }
        @if q.newest_first {
            @if !listed.is_empty() {
                section class="namespace newest-first" {
                    "\n"
                    table class="releases" {
                        (release_columns()) "\n"
                        (release_head("Release")) "\n"
                        tbody {
                            "\n"
                            @for l in listed {
                                (release_row(base, l, &l.release.to_string(), now)) "\n"
                            }
                        }
                    }
                    "\n"
                }
                "\n"
            }
        } @else {
            @for group in groups {
                @let namespace = &group[0].release.namespace;
                section class="namespace" data-namespace=(namespace) {
                    "\n"
                    h2 { (namespace) } "\n"
                    table class="releases" {
                        (release_columns()) "\n"
                        (release_head("Release")) "\n"
                        tbody {
                            "\n"
                            @for l in group {
                                (release_row(base, l, &l.release.name, now)) "\n"
                            }
                        }
                    }
                    "\n"
                }
                "\n"
            }
        }
        @if paged {
            p class="pager" {
                @if q.after.is_some() {
                    a href=(first_page) class="page-first" { "First releases" }
                }
                @if q.after.is_some() && fleet.next_after.is_some() { " · " }
                @if let Some(next) = &fleet.next_after {
                    a href=(q.href(base, Some(next), q.newest_first)) class="page-next" rel="next" {
                        "Next releases"
                    }
                }
            }
            "\n"
        }
    };
    html(
        &app,
        StatusCode::OK,
        page(&app.base, "Releases", &[], content),
    )
}

fn release_crumbs(base: &str, release: &Release) -> Vec<Crumb> {
    vec![(release_href(base, release), release.to_string())]
}

/// What GC's dry-run plan says of an entry and its render: the row's class and the
/// marker.
fn gc_marker(plan: &GcPlan, entry: &HistoryEntry, render_key: &str) -> (&'static str, Markup) {
    let is = |keys: &[String]| keys.iter().any(|k| k == &entry.key);
    // A skipped entry is kept: the row reads as kept, its marker says it does not count
    // and its title why.
    let (class, label, why) = if is(&plan.future_history) {
        (
            "gc-keep",
            "keep, uncounted",
            format!(
                "GC keeps this entry but does not count it: dated more than {} after now (a \
                 clock running ahead, or a planted key)",
                crate::output::seconds_in_words(GC_FUTURE_TOLERANCE_SECONDS)
            ),
        )
    } else if is(&plan.dangling_history) {
        (
            "gc-keep",
            "keep, uncounted",
            "GC keeps this entry but does not count it: its render is not stored".to_string(),
        )
    } else if is(&plan.delete_history) {
        (
            "gc-delete",
            "delete",
            format!("GC deletes this entry: older than the newest {DEFAULT_KEEP_HISTORY}"),
        )
    } else {
        (
            "gc-keep",
            "keep",
            format!("GC keeps this entry: one of the newest {DEFAULT_KEEP_HISTORY}"),
        )
    };
    let has = |keys: &[String]| keys.iter().any(|k| k == render_key);
    let render = if has(&plan.delete_renders) {
        "; its render is deleted: no kept entry names it"
    } else if has(&plan.recent_renders) {
        "; its render is kept for now: written within GC's grace period"
    } else if has(&plan.keep_renders) {
        "; its render is kept"
    } else if is(&plan.dangling_history) {
        ""
    } else {
        "; its render is missing"
    };
    let why = format!("{why}{render}");
    // The words are the marker's title only: the legend above the table says what the
    // markers mean once, so a row stays one line however long the history.
    (
        class,
        html! {
            span class={ "gc " (class) } title=(why) { (label) }
        },
    )
}

/// What the GC markers of a history page mean, said once for the whole table.
fn gc_legend(protected: usize) -> Markup {
    html! {
        p class="legend" id="gc-legend" {
            "GC column: what a GC now would do, keeping the newest "
            (DEFAULT_KEEP_HISTORY) " entries (the default), "
            @match protected {
                0 => {
                    "without the Release's protected renders, which only the controller knows \
                     (add " code { "?protect=REF,REF" } " to give them). "
                }
                n => {
                    "protecting the " (plural(n, "render", "renders"))
                    " the address names (" code { "protect" } "). "
                }
            }
            span class="gc" { "keep" } " one of the newest " (DEFAULT_KEEP_HISTORY) "; "
            span class="gc gc-delete" { "delete" }
            " older than those: GC deletes the entry, and its render when no kept entry \
             names it; "
            span class="gc" { "keep, uncounted" }
            " kept but not counted (dated ahead of now, or its render is not stored). \
             A marker's title says more. Nothing is deleted until someone runs GC."
        }
        "\n"
    }
}

/// Entries a history page shows unless `limit` says otherwise.
const HISTORY_PAGE: u32 = 50;
/// The most entries one history page shows.
const HISTORY_PAGE_MAX: u32 = 1_000;

/// `GET /ui/{namespace}/{name}[?limit=N][&before=KEY]`: the history, newest first, a
/// page at a time: the entries of the page alone are read, however long the history.
pub(super) async fn history_page(
    State(app): State<App>,
    Path((namespace, name)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let release = Release::new(namespace, name);
    let crumbs = release_crumbs(&app.base, &release);
    let p = match params(&query, &[], &["limit", "before", "protect", "running"]) {
        Ok(p) => p,
        Err(m) => return bad_request_page(&app, &crumbs, &m),
    };
    let limit = match p[0] {
        None => HISTORY_PAGE,
        Some(text) => match text.parse::<u32>() {
            Ok(n) if (1..=HISTORY_PAGE_MAX).contains(&n) => n,
            _ => {
                return bad_request_page(
                    &app,
                    &crumbs,
                    &format!(
                        "limit {text:?}: expected a whole number from 1 to {HISTORY_PAGE_MAX}"
                    ),
                );
            }
        },
    };
    // The renders the Release protects, which only the controller knows, as it would
    // pass them to GC: named as everywhere else, comma-separated.
    let mut protected = Vec::new();
    for name in p[2]
        .unwrap_or_default()
        .split(',')
        .filter(|n| !n.is_empty())
    {
        match resolve_name(&app, &release, name.trim()).await {
            Ok(r) => protected.push(r),
            Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
        }
    }
    // The render the Release runs, when the caller knows it (its lastSuccessful): after
    // a rollback it is not the newest entry's.
    let running = match p[3] {
        Some(name) => match resolve_name(&app, &release, name.trim()).await {
            Ok(r) => Some(r),
            Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
        },
        None => None,
    };
    let marks = Marks {
        protected: &protected,
        running: running.as_deref(),
    };
    let main = match history_html(&app, &release, limit, p[1], marks).await {
        Ok(Some(main)) => main,
        // No entry at all: a release that is there (its renders stored before any sync
        // was recorded), or none.
        Ok(None) => match super::endpoints::missing(&app, &release).await {
            Ok(Some(m)) => return missing_page(&app, &crumbs, &m),
            Ok(None) => html! {
                h1 { (release) } "\n"
                p class="summary" id="summary" { "0 entries." } "\n"
                p class="no-history" { "This release has no history entry." } "\n"
            },
            Err(e) => return failure_page(&app, &crumbs, e),
        },
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    html(
        &app,
        StatusCode::OK,
        page(&app.base, &release.to_string(), &crumbs, main),
    )
}

/// What the caller of the history page knows of the Release and the page marks: the
/// renders it protects, and the one it runs.
#[derive(Debug, Clone, Copy)]
struct Marks<'a> {
    protected: &'a [String],
    running: Option<&'a str>,
}

/// The history page's content; `None` when the release has no entry at all (the caller
/// tells a missing release from an empty one).
async fn history_html(
    app: &App,
    release: &Release,
    limit: u32,
    before: Option<&str>,
    marks: Marks<'_>,
) -> Result<Option<Markup>, ObserverError> {
    let Marks { protected, running } = marks;
    let store = app.observer.store().ok_or(ObserverError::NoStore)?;
    let rt = app.observer.runtime();
    // One entry more than shown: the oldest shown one's predecessor, for its "with
    // previous" link, and the sign that an older page exists.
    let page = app
        .observer
        .history_page(release, limit + 1, before)
        .await?;
    if page.entries.is_empty() && before.is_none() {
        return Ok(None);
    }
    let shown = page.entries.len().min(limit as usize);
    let older = (page.entries.len() > shown).then(|| page.entries[shown - 1].key.clone());
    let entries = &page.entries;
    let times: Vec<SyncTime> = entries[..shown].iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    let (renders_dir, sizes) = match entries.first() {
        Some(e) => render_sizes(store, release, &e.render_ref).await?,
        None => (String::new(), HashMap::new()),
    };
    // The plan lists every entry, kept or deleted: their number, and each one's place.
    let plan = store
        .gc(release, DEFAULT_KEEP_HISTORY, protected, true)
        .await?;
    // Where encryption is required, entries that do not authenticate have no `@N`
    // (CONTRACT.md §14): the plan names those it read, the newest ones, which are the
    // ones that would shift the places people read here.
    let unnumbered: std::collections::BTreeSet<&String> =
        plan.unauthenticated_history.iter().collect();
    let mut all_keys: Vec<&String> = plan
        .keep_history
        .iter()
        .chain(&plan.delete_history)
        .filter(|k| !unnumbered.contains(k))
        .collect();
    all_keys.sort();
    let count = all_keys.len();
    let position = |key: &String| all_keys.binary_search(&key).ok();
    let numbered =
        |entry: &render_store::HistoryEntry| entry.trust.counts_where(store.encryption_required());

    let summary = html! {
        p class="summary" id="summary" {
            (count) " entr" @if count == 1 { "y" } @else { "ies" } ", newest first."
        }
        "\n"
    };
    if entries.is_empty() {
        return Ok(Some(html! {
            h1 { (release) } "\n"
            (summary)
            p { "No entry is older than the one this page starts after." } "\n"
        }));
    }
    let newest_ref = (before.is_none()).then(|| entries[0].render_ref.as_str());
    let mut limit_query = match limit {
        HISTORY_PAGE => String::new(),
        n => format!("&limit={n}"),
    };
    if !protected.is_empty() {
        limit_query.push_str("&protect=");
        limit_query.push_str(&qv(&protected.join(",")));
    }
    if let Some(running) = running {
        limit_query.push_str("&running=");
        limit_query.push_str(&qv(running));
    }
    let newest_page = before.is_some().then(|| {
        format!(
            "{}{}",
            release_href(&app.base, release),
            limit_query.replacen('&', "?", 1)
        )
    });
    let older_page = older.map(|key| {
        format!(
            "{}?before={}{limit_query}",
            release_href(&app.base, release),
            qv(&key)
        )
    });
    Ok(Some(html! {
        h1 { (release) } "\n"
        (summary)
        @if let (Some(running), Some(newest)) = (running, newest_ref) {
            @if running != newest {
                p class="running-note" id="running-note" {
                    "The release runs " code { (short_ref(running)) } ", not the newest \
                     entry's render: the history keeps each render at its first apply, so a \
                     rollback does not make it the newest."
                }
                "\n"
            }
        }
        (gc_legend(protected.len()))
        form method="get" action={ (release_href(&app.base, release)) "/diff" } id="compare" {
            "\n"
            p class="compare-bar" {
                "Pick a " b { "from" } " and a " b { "to" } " entry, then "
                button type="submit" { "Compare" }
            }
            "\n"
            table class="history" {
                "\n"
                thead {
                    tr {
                        th scope="col" title="compare from" { "From" }
                        th scope="col" title="compare to" { "To" }
                        th scope="col" { "Synced" }
                        th scope="col" { "Summary" }
                        th scope="col" { "Render" }
                        th scope="col" class="num" { "Size" }
                        th scope="col" { "GC" }
                        th scope="col" { "Diff" }
                    }
                }
                "\n"
                tbody {
                    "\n"
                    @for (k, (entry, time)) in entries[..shown].iter().zip(&times).enumerate() {
                        // Entries count from the oldest; `@N` counts back from the newest,
                        // as the CLI and the HTTP API name them.
                        // Saturating: an entry left out of the numbering (below) has no
                        // place among the others.
                        @let index = position(&entry.key).unwrap_or(count.saturating_sub(1 + k));
                        @let number = index + 1;
                        @let back = count.saturating_sub(1 + index);
                        @let render_key = format!("{renders_dir}{}", entry.render_ref);
                        @let (gc_class, marker) = gc_marker(&plan, entry, &render_key);
                        @let r = &entry.render_ref;
                        tr class={ "entry " (gc_class) } data-nav data-entry=(number) data-ref=(r) {
                            td {
                                input type="radio" name="from" value=(r) checked[k == 1]
                                    aria-label={ "compare from entry " (number) };
                            }
                            td {
                                input type="radio" name="to" value=(r) checked[k == 0]
                                    aria-label={ "compare to entry " (number) };
                            }
                            td class="time" {
                                (time_html(time)) " "
                                @if numbered(entry) {
                                    span class="position" title="its name in the CLI and the HTTP API" {
                                        "@" (back)
                                    }
                                } @else {
                                    span class="position muted"
                                        title="not numbered: it does not authenticate, and encryption is required" {
                                        "no @N"
                                    }
                                }
                            }
                            td class="entry-summary" title=(entry.summary) {
                                (entry.summary)
                                @if let render_store::EntryTrust::Unauthenticated(why) = &entry.trust {
                                    " "
                                    span class="badge unauthenticated"
                                        title={ "does not authenticate under the keyring: " (why) } {
                                        "unauthenticated"
                                    }
                                }
                            }
                            td class="ref" {
                                a href=(render_href(&app.base, release, r)) title=(r) {
                                    code { (short_ref(r)) }
                                }
                                (copy_button(r))
                                @if newest_ref == Some(r.as_str()) && k == 0 {
                                    " "
                                    span class="badge newest"
                                        title="the render the newest entry records: what the \
                                               release runs if its last sync succeeded" {
                                        "newest"
                                    }
                                }
                                @if running == Some(r.as_str()) {
                                    " "
                                    span class="badge running"
                                        title="the render the Release runs (running in the \
                                               address, as its lastSuccessful says)" {
                                        "running"
                                    }
                                }
                                @if protected.contains(r) {
                                    " "
                                    span class="badge protected"
                                        title="a render the Release protects (protect in the \
                                               address): GC keeps it whatever the history says" {
                                        "protected"
                                    }
                                }
                            }
                            td class="num" {
                                @match sizes.get(r) {
                                    Some(&n) => (bytes_text(n)),
                                    None => span class="muted" { "missing" },
                                }
                            }
                            td { (marker) }
                            td {
                                @match entries.get(k + 1) {
                                    None => span class="muted" { "first" },
                                    Some(prev) => {
                                        a class="diff-prev"
                                            href=(diff_href(&app.base, release, &prev.render_ref, r)) {
                                            "with previous"
                                        }
                                    }
                                }
                            }
                        }
                        "\n"
                    }
                }
                "\n"
            }
            "\n"
        }
        "\n"
        @if newest_page.is_some() || older_page.is_some() {
            p class="pager" {
                @if let Some(href) = &newest_page {
                    a href=(href) class="page-newest" { "Newest entries" }
                }
                @if newest_page.is_some() && older_page.is_some() { " · " }
                @if let Some(href) = &older_page {
                    a href=(href) class="page-older" rel="next" { "Older entries" }
                }
            }
            "\n"
        }
    }))
}

fn id_text(id: &ObjectId) -> String {
    let place = match (id.namespace.is_empty(), id.name.is_empty()) {
        (true, true) => "(no name)".to_string(),
        (true, false) => id.name.clone(),
        (false, _) => format!("{}/{}", id.namespace, id.name),
    };
    let kind = if id.kind.is_empty() {
        "(no kind)"
    } else {
        &id.kind
    };
    format!("{kind} {place}")
}

fn id_html(id: &ObjectId) -> Markup {
    let text = id_text(id);
    let (kind, place) = text.split_once(' ').unwrap_or_default();
    html! {
        span class="kind" { (kind) } " "
        span class="obj-name" { (place) } " "
        span class="api" { (id.api_version) }
    }
}

/// The text of a page's objects (a render's, or a diff's changed ones), at most: a
/// render of any size the store takes is shown a page at a time, each well within the
/// response cap, and a browser keeps up.
const PAGE_TEXT_BYTES: usize = 4 << 20;

/// The pages of objects of the text sizes given, in display order: each page's range,
/// its objects' text within [`PAGE_TEXT_BYTES`] (an object larger than that has a page
/// of its own).
fn pages_of(sizes: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut pages = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, &size) in sizes.iter().enumerate() {
        if i > start && bytes + size > PAGE_TEXT_BYTES {
            pages.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < sizes.len() || pages.is_empty() {
        pages.push(start..sizes.len());
    }
    pages
}

/// A changed object's lines as a page shows them: all, or the first ones within the
/// page's budget, and whether some were left out.
fn shown_lines(lines: &[String]) -> (&[String], bool) {
    let mut bytes = 0;
    for (i, line) in lines.iter().enumerate() {
        bytes += line.len() + 1;
        if bytes > PAGE_TEXT_BYTES {
            return (&lines[..i], true);
        }
    }
    (lines, false)
}

/// The `page` query parameter: from 1, 1 when absent.
fn page_number(given: Option<&str>) -> Result<usize, String> {
    match given.map(str::parse::<usize>) {
        None => Ok(1),
        Some(Ok(n)) if n >= 1 => Ok(n),
        Some(_) => Err("page: expected a whole number from 1".to_string()),
    }
}

/// The line that says which of `total` objects a page shows, with links to the pages
/// before and after it.
fn pager(
    what: &str,
    range: &std::ops::Range<usize>,
    total: usize,
    (number, pages): (usize, usize),
    href: &dyn Fn(usize) -> String,
) -> Markup {
    html! {
        p class="pager" {
            (what) " " (range.start + 1) "–" (range.end) " of " (total)
            " (page " (number) " of " (pages) ")"
            @if number > 1 {
                " · " a href=(href(number - 1)) rel="prev" { "Previous page" }
            }
            @if number < pages {
                " · " a href=(href(number + 1)) rel="next" { "Next page" }
            }
        }
        "\n"
    }
}

/// The page saying there is no such page.
fn no_such_page(app: &App, crumbs: &[Crumb], number: usize, pages: usize) -> Response {
    html(
        app,
        StatusCode::NOT_FOUND,
        error_html(
            &app.base,
            "Not found",
            crumbs,
            &format!(
                "page {number}: there {}",
                match pages {
                    1 => "is 1 page".to_string(),
                    n => format!("are {n} pages"),
                }
            ),
        ),
    )
}

/// `GET /ui/{namespace}/{name}/renders/{renderRef}`: the render's objects.
pub(super) async fn render_page(
    State(app): State<App>,
    Path((namespace, name, render_ref)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let release = Release::new(namespace, name);
    let mut crumbs = release_crumbs(&app.base, &release);
    let page_number = match params(&query, &[], &["page"]).and_then(|p| page_number(p[0])) {
        Ok(n) => n,
        Err(m) => return bad_request_page(&app, &crumbs, &m),
    };
    // One listing of the history resolves `@N` and says which entries record the render.
    let history = match super::endpoints::history_of(&app, &release).await {
        Ok(h) => h,
        Err(e) => return failure_page(&app, &crumbs, e),
    };
    let name = render_ref;
    let render_ref = match resolve_name_in(&app, &release, &history, &name).await {
        Ok(r) => r,
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    let entries = match entries_of(&app, &history, &render_ref, &name).await {
        Ok(entries) => entries,
        Err(e) => return failure_page(&app, &crumbs, e),
    };
    drop(history);
    crumbs.push((
        render_href(&app.base, &release, &render_ref),
        format!("render {}", short_ref(&render_ref)),
    ));
    let held = match super::budget::reserve_renders(&app, &release, &[&render_ref], 0).await {
        Ok(held) => held,
        Err(busy) => return busy_page(&app, &crumbs, busy),
    };
    // Only this page's objects leave the sandbox: the render is read, listed and cut
    // into pages there, so a render of any size is held once.
    let page_of = u32::try_from(page_number).unwrap_or(u32::MAX);
    let shown = match app
        .observer
        .render_page(
            &release,
            &render_ref,
            ObjectForm::Yaml,
            PAGE_TEXT_BYTES as u64,
            page_of,
        )
        .await
    {
        Ok(p) => p,
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    // The canonical bytes hold Secret values as they are: a person gets them only from
    // a server that shows Secrets, and otherwise the render as the page shows it.
    let (download, download_label) = match app.observer.secrets() {
        SecretValues::Shown => (
            format!(
                "{}/renders/{}/{}/{}",
                app.base,
                seg(&release.namespace),
                seg(&release.name),
                seg(&render_ref)
            ),
            "Download the canonical bytes",
        ),
        SecretValues::Masked => (
            format!("{}/download", render_href(&app.base, &release, &render_ref)),
            "Download as YAML (Secret values masked)",
        ),
    };
    // `to` left out: the diff page compares with the newest entry.
    let newest_diff = format!(
        "{}/diff?from={}",
        release_href(&app.base, &release),
        qv(&render_ref)
    );
    let page_href = {
        let here = render_href(&app.base, &release, &render_ref);
        move |n: usize| format!("{here}?page={n}")
    };
    // Writing the page of a large render takes long enough to stall the async worker.
    let body = tokio::task::spawn_blocking(move || {
        let pages = shown.pages as usize;
        if shown.shown.is_empty() && page_number > 1 {
            return Err(pages);
        }
        let objects = shown.objects as usize;
        let paged = pages > 1;
        // The page's place among the listed objects, for the pager.
        let start = shown.start as usize;
        let range = start..start + shown.shown.len();
        Ok(html! {
            h1 { "Render " code class="full-ref" { (render_ref) } " " (copy_button(&render_ref)) }
            "\n"
            p class="entry-of" id="entry" {
                @if entries.shown.is_empty() {
                    "Not in the history: no entry of " (release) " records this render."
                }
                @for (i, (back, time)) in entries.shown.iter().enumerate() {
                    @if i > 0 { ", also " }
                    span class="position" { "@" (back) } " · synced " (time_html(time))
                }
                @if entries.more > 0 {
                    " and " (plural(entries.more, "older entry", "older entries"))
                }
            }
            "\n"
            p class="summary" id="summary" {
                (objects) " object" @if objects != 1 { "s" } ", "
                (bytes_text(shown.size)) " canonical. "
                a href=(download) download { (download_label) }
                " · "
                a href=(newest_diff) class="diff-newest" { "Diff to the newest entry" }
                " "
                button type="button" data-expand { "Expand all" }
                " "
                button type="button" data-collapse { "Collapse all" }
            }
            "\n"
            @if paged {
                (pager("Objects", &range, objects, (page_number, pages), &page_href))
            }
            div class="objects" {
                "\n"
                @for o in &shown.shown {
                    @let i = o.index as usize;
                    @let cut = o.full_len > o.text.len() as u64;
                    details class="object" id={ "object-" (i + 1) } data-nav {
                        summary { span class="index" { "#" (i + 1) } " " (id_html(&o.id)) }
                        pre class="yaml" { code { (o.text) } }
                        @if cut {
                            p class="cut" {
                                "The object is longer than a page shows ("
                                (bytes_text(o.full_len)) " of YAML): "
                                a href=(download) download { "download the render" }
                                " for the rest."
                            }
                        }
                    }
                    "\n"
                }
            }
            "\n"
        })
    })
    .await;
    drop(held);
    match body {
        Ok(Ok(content)) => html(
            &app,
            StatusCode::OK,
            page(&app.base, "Render", &crumbs, content),
        ),
        Ok(Err(pages)) => no_such_page(&app, &crumbs, page_number, pages),
        Err(e) => {
            tracing::error!("writing a render page: {e}");
            html(
                &app,
                StatusCode::INTERNAL_SERVER_ERROR,
                error_html(&app.base, "The server failed", &crumbs, "the server failed"),
            )
        }
    }
}

/// Entries a render page names among those recording its render; it counts the rest.
const ENTRIES_NAMED: usize = 5;

/// The history entries that record a render, as its page names them: `@N` and the time
/// of the newest few (the one the page was asked for by, `@N`, first), and how many more.
struct EntriesOf {
    shown: Vec<(usize, String)>,
    more: usize,
}

/// [`EntriesOf`] `render_ref`, asked for as `name`, from the history listed once: the
/// names and times come from the keys, no entry is read.
async fn entries_of(
    app: &App,
    history: &[crate::names::ListedEntry],
    render_ref: &str,
    name: &str,
) -> Result<EntriesOf, ObserverError> {
    let asked = name.strip_prefix('@').and_then(|n| n.parse::<usize>().ok());
    let mut holding: Vec<(usize, SyncTime)> = history
        .iter()
        .rev()
        .enumerate()
        .filter(|(_, e)| e.render_ref == render_ref)
        .map(|(back, e)| (back, e.synced_at))
        .collect();
    if let Some(i) = holding.iter().position(|(back, _)| Some(*back) == asked) {
        let first = holding.remove(i);
        holding.insert(0, first);
    }
    let more = holding.len().saturating_sub(ENTRIES_NAMED);
    holding.truncate(ENTRIES_NAMED);
    let times: Vec<SyncTime> = holding.iter().map(|(_, t)| *t).collect();
    let times = app.observer.runtime().format_synced_at_all(&times).await?;
    Ok(EntriesOf {
        shown: holding.iter().map(|(back, _)| *back).zip(times).collect(),
        more,
    })
}

/// `GET /ui/{namespace}/{name}/renders/{renderRef}/download`: the render as a YAML
/// stream, Secret values as the server shows them (masked unless it was started with
/// `--show-secrets`), as `get -o yaml` writes it.
pub(super) async fn render_download(
    State(app): State<App>,
    Path((namespace, name, render_ref)): Path<(String, String, String)>,
) -> Response {
    let release = Release::new(namespace, name);
    let crumbs = release_crumbs(&app.base, &release);
    let render_ref = match resolve_name(&app, &release, &render_ref).await {
        Ok(r) => r,
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    // The canonical bytes and the YAML made of them are held at once: twice the weight
    // of one read.
    let held = match super::budget::reserve_renders(&app, &release, &[&render_ref, &render_ref], 0)
        .await
    {
        Ok(held) => held,
        Err(busy) => return busy_page(&app, &crumbs, busy),
    };
    let canonical = match app.observer.render(&release, &render_ref).await {
        Ok(bytes) => bytes,
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    let shown = match app
        .observer
        .show_objects(&canonical, ObjectForm::Yaml)
        .await
    {
        Ok(shown) => shown,
        Err(e) => return failure_page(&app, &crumbs, e),
    };
    drop(canonical);
    let mut yaml = String::new();
    for object in &shown {
        yaml.push_str("---\n");
        yaml.push_str(&object.text);
        if !object.text.ends_with('\n') {
            yaml.push('\n');
        }
    }
    drop(shown);
    if yaml.len() > app.max_response_bytes {
        return super::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "the render's YAML is {} bytes, over the response limit of {} bytes \
                 (serve --max-response-bytes)",
                yaml.len(),
                app.max_response_bytes
            ),
        );
    }
    let file = format!(
        "attachment; filename=\"{}-{}-{}.yaml\"",
        release.namespace,
        release.name,
        short_ref(&render_ref)
    );
    let mut response = (StatusCode::OK, yaml).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/yaml; charset=utf-8"),
    );
    if let Ok(value) = HeaderValue::from_str(&file) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    super::budget::held_until_sent(response, held)
}

/// `GET /ui/{namespace}/{name}/diff?from=REF[&to=REF]`.
pub(super) async fn diff_page(
    State(app): State<App>,
    Path((namespace, name)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let release = Release::new(namespace, name);
    let mut crumbs = release_crumbs(&app.base, &release);
    let p = match params(&query, &["from"], &["to", "layout", "page"]) {
        Ok(p) => p,
        Err(m) => return bad_request_page(&app, &crumbs, &m),
    };
    let number = match page_number(p[3]) {
        Ok(n) => n,
        Err(m) => return bad_request_page(&app, &crumbs, &m),
    };
    let layout = match p[2] {
        None | Some("unified") => Layout::Unified,
        Some("split") => Layout::Split,
        Some(other) => {
            return bad_request_page(
                &app,
                &crumbs,
                &format!("layout={other:?}: expected unified or split"),
            );
        }
    };
    // One listing of the history serves both names, the default `to` and the labels:
    // a diff reads its two renders and the entries that label them, nothing more,
    // however long the history.
    let history = match super::endpoints::history_of(&app, &release).await {
        Ok(h) => h,
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    let from = match resolve_name_in(&app, &release, &history, p[0].unwrap_or_default()).await {
        Ok(r) => r,
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    let to = match p[1] {
        Some(to) => match resolve_name_in(&app, &release, &history, to).await {
            Ok(r) => r,
            Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
        },
        None => match history.last() {
            Some(newest) => newest.render_ref.clone(),
            None => {
                let e = ObserverError::NoHistory(release.to_string());
                return read_failure_page(&app, &crumbs, &release, e).await;
            }
        },
    };
    crumbs.push((
        diff_href(&app.base, &release, &from, &to),
        format!("diff {} → {}", short_ref(&from), short_ref(&to)),
    ));
    let held = match super::budget::reserve_renders(&app, &release, &[&from, &to], 0).await {
        Ok(held) => held,
        Err(busy) => return busy_page(&app, &crumbs, busy),
    };
    let d = match app
        .observer
        // Whole objects: the page folds the unchanged runs itself, so a reader can open
        // any of them.
        .diff(&release, &to, Some(&from), ObjectForm::Yaml, u32::MAX)
        .await
    {
        Ok(d) => d,
        Err(e) => return read_failure_page(&app, &crumbs, &release, e).await,
    };
    // What each side is, from its newest entry: a render may have no entry (GC'd, or
    // protected only). A label that cannot be read is left empty.
    let labels = side_labels(&app, &release, &history, [&from, &to]).await;
    drop(history);
    let [from_label, to_label] = labels;
    let layout_query = |l: Layout| match l {
        Layout::Unified => "",
        Layout::Split => "&layout=split",
    };
    let swap = format!(
        "{}{}",
        diff_href(&app.base, &release, &to, &from),
        layout_query(layout)
    );
    let other_layout = match layout {
        Layout::Unified => ("Side by side", Layout::Split),
        Layout::Split => ("One column", Layout::Unified),
    };
    let toggle = (
        other_layout.0,
        format!(
            "{}{}",
            diff_href(&app.base, &release, &from, &to),
            layout_query(other_layout.1)
        ),
    );
    let from_href = render_href(&app.base, &release, &from);
    let to_href = render_href(&app.base, &release, &to);
    let page_href = {
        let here = format!(
            "{}{}",
            diff_href(&app.base, &release, &from, &to),
            layout_query(layout)
        );
        move |n: usize| format!("{here}&page={n}")
    };
    let body = tokio::task::spawn_blocking(move || {
        let sizes: Vec<usize> = d
            .changed
            .iter()
            .map(|c| c.lines.iter().map(|l| l.len() + 1).sum())
            .collect();
        let pages = pages_of(&sizes);
        let range = pages.get(number - 1).cloned().ok_or(pages.len())?;
        Ok(diff_html(
            &d,
            [(&from, &from_href, &from_label), (&to, &to_href, &to_label)],
            &swap,
            (toggle.0, &toggle.1),
            layout,
            (range, (number, pages.len()), &page_href),
        ))
    })
    .await;
    // The diff and its page are made: what is left is the page's text.
    drop(held);
    match body {
        Ok(Err(pages)) => no_such_page(&app, &crumbs, number, pages),
        Ok(Ok(content)) => html(
            &app,
            StatusCode::OK,
            page_of_width(&app.base, "Diff", &crumbs, content, layout == Layout::Split),
        ),
        Err(e) => {
            tracing::error!("writing a diff page: {e}");
            html(
                &app,
                StatusCode::INTERNAL_SERVER_ERROR,
                error_html(&app.base, "The server failed", &crumbs, "the server failed"),
            )
        }
    }
}

/// "TIME UTC: SUMMARY" of the newest entry recording each of `refs`, from the history
/// listed once and a read of those entries alone; empty for a render no entry records,
/// or whose entry does not read.
async fn side_labels(
    app: &App,
    release: &Release,
    history: &[crate::names::ListedEntry],
    refs: [&String; 2],
) -> [String; 2] {
    let mut labels = [String::new(), String::new()];
    let Some(store) = app.observer.store() else {
        return labels;
    };
    let entries: Vec<Option<&crate::names::ListedEntry>> = refs
        .iter()
        .map(|r| history.iter().rev().find(|e| &e.render_ref == *r))
        .collect();
    let mut keys: Vec<String> = entries.iter().flatten().map(|e| e.key.clone()).collect();
    keys.dedup();
    if keys.is_empty() {
        return labels;
    }
    let Ok(read) = store.read_history_entries(release, &keys).await else {
        return labels;
    };
    let summaries: HashMap<&String, &str> = keys
        .iter()
        .zip(&read)
        .filter_map(|(k, r)| match r {
            render_store::EntryRead::Entry(e) => Some((k, e.summary.as_str())),
            _ => None,
        })
        .collect();
    let times: Vec<SyncTime> = entries.iter().flatten().map(|e| e.synced_at).collect();
    let Ok(times) = app.observer.runtime().format_synced_at_all(&times).await else {
        return labels;
    };
    let mut times = times.into_iter();
    for (label, entry) in labels.iter_mut().zip(entries) {
        if let Some(entry) = entry {
            let time = times.next().unwrap_or_default();
            if let Some(summary) = summaries.get(&entry.key) {
                *label = format!("{}: {summary}", utc_text(&time));
            }
        }
    }
    labels
}

/// An object that comes (`mark` `+`) or goes (`-`) as one hunk of a unified diff, so
/// that it is laid out as a changed object's lines are.
fn whole_object_lines(text: &str, mark: char) -> Vec<String> {
    let n = text.lines().count();
    let header = match mark {
        '+' => format!("@@ -0,0 +1,{n} @@"),
        _ => format!("@@ -1,{n} +0,0 @@"),
    };
    std::iter::once(header)
        .chain(text.lines().map(|l| format!("{mark}{l}")))
        .collect()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A page's share of the changed objects: their range, the page's number and how many
/// there are, and the address of page N.
type Paging<'a> = (
    std::ops::Range<usize>,
    (usize, usize),
    &'a dyn Fn(usize) -> String,
);

fn diff_html(
    d: &RenderDiff,
    sides: [(&String, &String, &String); 2],
    swap: &str,
    toggle: (&str, &str),
    layout: Layout,
    (range, (number, pages), page_href): Paging<'_>,
) -> Markup {
    let same = d.changed.is_empty() && d.added.is_empty() && d.removed.is_empty();
    html! {
        h1 { "Diff" } "\n"
        p class="summary" id="summary" {
            (plural(d.changed.len(), "object", "objects")) " changed, "
            (d.added.len()) " added, " (d.removed.len()) " removed, "
            (d.unchanged) " unchanged"
        }
        "\n"
        dl class="sides" {
            "\n"
            @for ((render_ref, href, label), name) in sides.iter().zip(["From", "To"]) {
                dt { (name) }
                dd {
                    a href=(href) title=(render_ref) { code { (short_ref(render_ref)) } }
                    " " (copy_button(render_ref)) " "
                    span class="side-label" { (label) }
                }
                "\n"
            }
        }
        "\n"
        p class="diff-actions" {
            a href=(swap) class="swap" { "Swap from and to" }
            " · "
            a href=(toggle.1) class="layout" { (toggle.0) }
        }
        "\n"
        @if !d.changed.is_empty() {
            section class="changed" {
                h2 { "Changed" } "\n"
                @if pages > 1 {
                    (pager("Changed objects", &range, d.changed.len(), (number, pages), page_href))
                }
                @for (i, c) in d.changed.iter().enumerate().skip(range.start).take(range.len()) {
                    @let (lines, cut) = shown_lines(&c.lines);
                    details class="object changed-object" id={ "changed-" (i + 1) } data-nav open {
                        summary { (id_html(&c.id)) }
                        div class="diff" { (diff_lines_html(lines, layout)) }
                        @if cut {
                            p class="cut" {
                                "The change is longer than a page shows: "
                                code { "render-store diff" } " or the JSON diff shows it whole."
                            }
                        }
                    }
                    "\n"
                }
            }
            "\n"
        }
        // An object that comes or goes is shown whole, each line marked, as kubectl
        // diff and helm-diff show it (Secret values as the server shows them).
        @for (title, class, mark, objects) in [
            ("Added", "added", '+', &d.added),
            ("Removed", "removed", '-', &d.removed),
        ] {
            @if !objects.is_empty() {
                section class=(class) {
                    h2 { (title) } "\n"
                    @for (i, o) in objects.iter().enumerate() {
                        @let lines = whole_object_lines(&o.text, mark);
                        @let (lines, cut) = shown_lines(&lines);
                        details class={ "object " (class) "-object" } id={ (class) "-" (i + 1) } data-nav open {
                            summary { (id_html(&o.id)) }
                            div class="diff" { (diff_lines_html(lines, layout)) }
                            @if cut {
                                p class="cut" {
                                    "The object is longer than a page shows: "
                                    code { "render-store diff" } " or the JSON diff shows it whole."
                                }
                            }
                        }
                        "\n"
                    }
                }
                "\n"
            }
        }
        section class="unchanged" {
            h2 { "Unchanged" }
            p {
                (plural(d.unchanged as usize, "object", "objects"))
                " identical in both renders (not shown)."
            }
        }
        "\n"
        @if same {
            p class="same" { "The two renders hold the same objects." } "\n"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_quotes_are_escaped() {
        let hostile = "<script>alert('x')</script> & \"q\"";
        let escaped = "&lt;script&gt;alert('x')&lt;/script&gt; &amp; &quot;q&quot;";
        // Text and attribute values alike; every attribute is double-quoted, so a single
        // quote ends none.
        assert_eq!(
            copy_button(hostile).into_string(),
            format!(
                "<button type=\"button\" class=\"copy\" data-copy=\"{escaped}\" \
                 aria-label=\"Copy {escaped}\">copy</button>"
            )
        );
        let page = page(
            "",
            hostile,
            &[(hostile.to_string(), hostile.to_string())],
            html! { p { (hostile) } },
        );
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(!page.contains("='"), "{page}");
        assert_eq!(page.matches(escaped).count(), 4, "{page}");
        assert_eq!(seg("a/b?c#d e"), "a%2Fb%3Fc%23d%20e");
        assert_eq!(seg("sha256:ab"), "sha256:ab");
    }

    #[test]
    fn a_render_is_shown_in_pages_of_a_bounded_size() {
        let mb = 1 << 20;
        let one_page = |pages: Vec<std::ops::Range<usize>>| {
            assert_eq!(pages.len(), 1);
            pages[0].clone()
        };
        assert_eq!(one_page(pages_of(&[])), 0..0);
        assert_eq!(one_page(pages_of(&[10, 20])), 0..2);
        assert_eq!(
            pages_of(&[3 * mb, 2 * mb, 5 * mb, mb, mb]),
            [0..1, 1..2, 2..3, 3..5]
        );
        let lines = vec!["x".repeat(1 << 20); 5];
        assert_eq!(shown_lines(&lines).0.len(), 3);
        assert!(shown_lines(&lines).1 && !shown_lines(&lines[..3]).1);
    }

    #[test]
    fn a_fleet_query_keeps_what_it_was_asked_in_its_links() {
        let query: HashMap<String, String> =
            [("q", "Web"), ("namespace", "prod"), ("sort", "newest")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let q = FleetQuery::parse(&query, true).unwrap();
        assert!(q.newest_first);
        assert!(q.matches(&Release::new("prod", "web-api")));
        assert!(!q.matches(&Release::new("prod", "api")));
        assert_eq!(
            q.href("/s/x", Some("prod/web"), false),
            "/s/x/?after=prod%2Fweb&namespace=prod&q=Web"
        );
        // The JSON list takes no order: it groups by namespace.
        assert!(
            FleetQuery::parse(&query, false)
                .unwrap_err()
                .contains("sort")
        );
    }

    #[test]
    fn times_and_sizes_read_well() {
        assert_eq!(
            utc_text("2024-05-01T12:00:00.5Z"),
            "2024-05-01 12:00:00 UTC"
        );
        assert_eq!(utc_text("2024-05-01T12:00:00Z"), "2024-05-01 12:00:00 UTC");
        assert_eq!(bytes_text(999), "999 B");
        assert_eq!(bytes_text(1536), "1.5 KiB");
        assert_eq!(bytes_text(3 << 20), "3.0 MiB");
        assert_eq!(
            short_ref(&format!("sha256:{}", "ab".repeat(32))),
            "abababababab"
        );
    }
}
