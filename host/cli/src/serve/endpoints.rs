//! The JSON endpoints and what every answer is made of: JSON within the response
//! cap, errors that show no internal path, the query parameters each endpoint takes.

use super::App;
use super::budget::{Busy, held_until_sent, reserve_renders};
use crate::json_view::{diff_json, history_json, history_page_json};
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use render_store::Error;
use render_store::ObserverError;
use render_store::{DEFAULT_CONTEXT, ObjectForm, Release};
use serde_json::json;
use std::collections::HashMap;

pub(super) fn json_response(status: StatusCode, value: serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        format!("{value}\n"),
    )
        .into_response()
}

pub(super) fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    json_response(status, json!({ "error": message.to_string() }))
}

/// Writes what it is given up to a limit, and counts the rest.
pub(super) struct CappedWriter {
    bytes: Vec<u8>,
    limit: usize,
    len: usize,
}

impl std::io::Write for CappedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.len = self.len.saturating_add(buf.len());
        if self.len <= self.limit {
            self.bytes.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` as a JSON response, or a 500 naming its size and the cap when it is larger
/// than `limit` bytes. Only the first `limit` bytes are ever held.
pub(super) fn capped_json(what: &str, value: &serde_json::Value, limit: usize) -> Response {
    let mut out = CappedWriter {
        bytes: Vec::new(),
        limit,
        len: 0,
    };
    let written = serde_json::to_writer(&mut out, value)
        .and_then(|()| std::io::Write::write_all(&mut out, b"\n").map_err(serde_json::Error::io));
    if let Err(e) = written {
        tracing::error!("writing the JSON of {what}: {e}");
        return error(StatusCode::INTERNAL_SERVER_ERROR, "the server failed");
    }
    if out.len > limit {
        return over_limit(what, "bytes of JSON", out.len, limit);
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        out.bytes,
    )
        .into_response()
}

pub(super) fn over_limit(what: &str, unit: &str, len: usize, limit: usize) -> Response {
    tracing::warn!("refused a response of {len} bytes: over the limit of {limit}");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!(
            "{what} is {len} {unit}, over the response limit of {limit} bytes \
             (serve --max-response-bytes)"
        ),
    )
}

/// The status and message a client gets for a failed read. Messages the component
/// made from the request (an invalid renderRef, a render not in the store) are passed
/// on; whatever may carry a path, a URL or a backend's words goes to the log only.
pub(super) fn observer_error(e: ObserverError) -> Response {
    let (status, message) = observer_failure(e);
    error(status, message)
}

/// [`observer_error`]'s status and message, for the JSON and the HTML answers alike.
pub(crate) fn observer_failure(e: ObserverError) -> (StatusCode, String) {
    let (status, message) = match &e {
        ObserverError::NoStore | ObserverError::NoHistory(_) => {
            let status = match e {
                ObserverError::NoStore => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::NOT_FOUND,
            };
            return (status, e.to_string());
        }
        ObserverError::Store(
            Error::InvalidInput(_)
            | Error::InvalidObject { .. }
            | Error::InvalidYaml { .. }
            | Error::NotFound(_),
        ) => {
            let status = match e {
                ObserverError::Store(Error::NotFound(_)) => StatusCode::NOT_FOUND,
                _ => StatusCode::BAD_REQUEST,
            };
            return (status, e.to_string());
        }
        ObserverError::Store(Error::Corrupt(_)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "a stored object is corrupt: it does not hash to its key or does not parse; \
             see the server log",
        ),
        ObserverError::Store(Error::EncryptionKey(_)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "a render is encrypted with a key the server's keyring does not hold; see the \
             server log",
        ),
        ObserverError::Store(Error::Bucket(_) | Error::Backend(_)) => (
            StatusCode::BAD_GATEWAY,
            "the store failed; see the server log",
        ),
        ObserverError::Store(e) if e.is_stopped() => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the render-store component was stopped (over its memory cap or CPU budget, \
             or it failed); see the server log",
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the server failed; see the server log",
        ),
    };
    tracing::error!("answered {status}: {e}");
    (status, message.to_string())
}

/// The renderRef that `name` stands for in a request, read as the CLI reads it
/// ([`crate::names::resolve_ref`]): a whole renderRef, a unique prefix of at least eight
/// hex digits, or `@N`, the N-th newest history entry. A name that is not one is the
/// client's error, as an unknown render is.
pub(super) async fn resolve_name(
    app: &App,
    release: &Release,
    name: &str,
) -> Result<String, ObserverError> {
    let store = app.observer.store().ok_or(ObserverError::NoStore)?;
    crate::names::resolve_ref(store, release, name)
        .await
        .map_err(name_error)
}

/// A failure of the names module as the observer's: the store's own errors as they
/// are, refusals of a name as the client's error (404 for what is not there).
fn name_error(e: anyhow::Error) -> ObserverError {
    let e = match e.downcast::<Error>() {
        Ok(e) => return ObserverError::Store(e),
        Err(e) => e,
    };
    // A listing the names module made itself failed: the store failed.
    let e = match e.downcast::<render_store::BucketError>() {
        Ok(e) => return ObserverError::Store(Error::from(e)),
        Err(e) => e,
    };
    match e.downcast_ref::<crate::failure::Refusal>() {
        Some(r) if r.kind == "not-found" => {
            ObserverError::Store(Error::NotFound(r.message.clone()))
        }
        Some(r) => ObserverError::Store(Error::InvalidInput(r.message.clone())),
        None => ObserverError::Store(Error::InvalidInput(e.to_string())),
    }
}

/// `release`'s absence when it holds no key at all (the CLI's check,
/// [`crate::names::missing_release`]); `None` when it holds some. Asked only once a read
/// found nothing, so a request for a release that is there pays nothing for it.
pub(super) async fn missing(
    app: &App,
    release: &Release,
) -> Result<Option<crate::names::MissingRelease>, ObserverError> {
    let store = app.observer.store().ok_or(ObserverError::NoStore)?;
    crate::names::missing_release(store, release)
        .await
        .map_err(name_error)
}

/// Whether a failed read found nothing: then the release itself may be missing.
pub(super) fn is_not_found(e: &ObserverError) -> bool {
    matches!(
        e,
        ObserverError::NoHistory(_) | ObserverError::Store(Error::NotFound(_))
    )
}

/// The 404 of a missing release, in the CLI's words, with the near release (if any)
/// apart for a program to offer.
fn missing_json(m: &crate::names::MissingRelease) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        json!({
            "error": m.message(),
            "didYouMean": m.similar.as_ref().map(Release::to_string),
        }),
    )
}

/// The answer to a read of `release` that failed: a missing release's 404 when the read
/// found nothing and the release holds no key, the read's own error otherwise.
async fn read_failure(app: &App, release: &Release, e: ObserverError) -> Response {
    if is_not_found(&e) {
        match missing(app, release).await {
            Ok(Some(m)) => return missing_json(&m),
            Ok(None) => {}
            // The read's own error says enough; the check's goes to the log.
            Err(check) => tracing::warn!("checking whether {release} is stored: {check}"),
        }
    }
    observer_error(e)
}

/// An empty history of `release` as the answer `found` would give, unless the release
/// holds no key at all: then its 404. A release that exists with no entry (its renders
/// stored before any sync was recorded) answers an empty history.
async fn unless_missing(app: &App, release: &Release, found: Response) -> Response {
    match missing(app, release).await {
        Ok(Some(m)) => missing_json(&m),
        Ok(None) => found,
        Err(e) => observer_error(e),
    }
}

/// The release's history as one listing gives it (no entry read), for several names to
/// be resolved against and labelled from.
pub(super) async fn history_of(
    app: &App,
    release: &Release,
) -> Result<Vec<crate::names::ListedEntry>, ObserverError> {
    let store = app.observer.store().ok_or(ObserverError::NoStore)?;
    crate::names::history_keys(store, release)
        .await
        .map_err(name_error)
}

/// [`resolve_name`] against a history listed already ([`history_of`]): `@N` costs no
/// further call.
pub(super) async fn resolve_name_in(
    app: &App,
    release: &Release,
    history: &[crate::names::ListedEntry],
    name: &str,
) -> Result<String, ObserverError> {
    let store = app.observer.store().ok_or(ObserverError::NoStore)?;
    crate::names::resolve_ref_in(store, release, history, name)
        .await
        .map_err(name_error)
}

/// [`resolve_name`] of an optional name.
pub(super) async fn resolve_optional(
    app: &App,
    release: &Release,
    name: Option<&str>,
) -> Result<Option<String>, ObserverError> {
    match name {
        Some(name) => resolve_name(app, release, name).await.map(Some),
        None => Ok(None),
    }
}

/// Checks the query against the parameters an endpoint takes: the values of the
/// required ones, then of the optional ones; or what is wrong, naming the parameter.
pub(super) fn params<'q>(
    query: &'q HashMap<String, String>,
    required: &[&str],
    optional: &[&str],
) -> Result<Vec<Option<&'q str>>, String> {
    if let Some(unknown) = query
        .keys()
        .find(|k| !required.contains(&k.as_str()) && !optional.contains(&k.as_str()))
    {
        return Err(format!("unknown query parameter {unknown:?}"));
    }
    let mut values = Vec::new();
    for name in required {
        match query.get(*name).filter(|v| !v.is_empty()) {
            Some(v) => values.push(Some(v.as_str())),
            None => return Err(format!("missing query parameter {name:?}")),
        }
    }
    for name in optional {
        values.push(
            query
                .get(*name)
                .map(String::as_str)
                .filter(|v| !v.is_empty()),
        );
    }
    Ok(values)
}

pub(super) async fn history(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let p = match params(&query, &["namespace", "name"], &["limit", "before"]) {
        Ok(p) => p,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    let release = Release::new(p[0].unwrap_or_default(), p[1].unwrap_or_default());
    if let Some(limit) = p[2] {
        // A page: one listing and a read per entry of the page, newest first.
        let Some(limit) = limit.parse::<u32>().ok().filter(|&n| n > 0) else {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "limit {limit:?}: expected a whole number from 1 to {}",
                    u32::MAX
                ),
            );
        };
        return match app.observer.history_page(&release, limit, p[3]).await {
            Ok(page) => match history_page_json(app.observer.runtime(), &page).await {
                Ok(v) => {
                    let found = capped_json("the history page", &v, app.max_response_bytes);
                    // A cursor names an entry of a release that was there.
                    if page.entries.is_empty() && p[3].is_none() {
                        unless_missing(&app, &release, found).await
                    } else {
                        found
                    }
                }
                Err(e) => observer_error(e.into()),
            },
            Err(e) => read_failure(&app, &release, e).await,
        };
    }
    if p[3].is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "before is the cursor of a page: give limit too".to_string(),
        );
    }
    match app.observer.history(&release).await {
        Ok(entries) => match history_json(app.observer.runtime(), &entries).await {
            Ok(v) => {
                let found = capped_json("the history", &v, app.max_response_bytes);
                if entries.is_empty() {
                    unless_missing(&app, &release, found).await
                } else {
                    found
                }
            }
            Err(e) => observer_error(e.into()),
        },
        Err(e) => read_failure(&app, &release, e).await,
    }
}

pub(super) async fn render(
    State(app): State<App>,
    Path((namespace, name, render_ref)): Path<(String, String, String)>,
) -> Response {
    let release = Release::new(namespace, name);
    let render_ref = match resolve_name(&app, &release, &render_ref).await {
        Ok(r) => r,
        Err(e) => return read_failure(&app, &release, e).await,
    };
    let held = match reserve_renders(&app, &release, &[&render_ref], 0).await {
        Ok(held) => held,
        Err(busy) => return busy_json(busy),
    };
    let response = match app.observer.render(&release, &render_ref).await {
        Ok(bytes) if bytes.len() > app.max_response_bytes => {
            over_limit("the render", "bytes", bytes.len(), app.max_response_bytes)
        }
        Ok(bytes) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/x-ndjson")],
            bytes,
        )
            .into_response(),
        Err(e) => read_failure(&app, &release, e).await,
    };
    held_until_sent(response, held)
}

pub(super) async fn diff(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let p = match params(
        &query,
        &["namespace", "name", "render"],
        &["against", "output"],
    ) {
        Ok(p) => p,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    let form = match object_form(p[4]) {
        Ok(form) => form,
        Err(response) => return response,
    };
    let release = Release::new(p[0].unwrap_or_default(), p[1].unwrap_or_default());
    let names = match (
        resolve_name(&app, &release, p[2].unwrap_or_default()).await,
        resolve_optional(&app, &release, p[3]).await,
    ) {
        (Ok(render), Ok(against)) => (render, against),
        (Err(e), _) | (_, Err(e)) => return read_failure(&app, &release, e).await,
    };
    // `against` by default is the newest entry: its renderRef is needed to weigh it.
    let against = match names.1 {
        Some(a) => a,
        None => match app.observer.newest_render(&release).await {
            Ok(Some(newest)) => newest,
            Ok(None) => {
                let e = ObserverError::NoHistory(release.to_string());
                return read_failure(&app, &release, e).await;
            }
            Err(e) => return observer_error(e),
        },
    };
    let held = match reserve_renders(&app, &release, &[&names.0, &against], 0).await {
        Ok(held) => held,
        Err(busy) => return busy_json(busy),
    };
    let d = match app
        .observer
        .diff(&release, &names.0, Some(&against), form, DEFAULT_CONTEXT)
        .await
    {
        Ok(d) => d,
        Err(e) => return read_failure(&app, &release, e).await,
    };
    held_until_sent(diff_response(&app, d).await, held)
}

/// The 503 of a full render budget, as JSON.
pub(super) fn busy_json(busy: Busy) -> Response {
    Busy::with_retry_after(error(StatusCode::SERVICE_UNAVAILABLE, busy.message()))
}

/// A diff as the JSON answer, within the response cap.
pub(super) async fn diff_response(app: &App, d: render_store::RenderDiff) -> Response {
    // Writing the JSON of a large diff takes long enough to stall the async worker.
    let limit = app.max_response_bytes;
    tokio::task::spawn_blocking(move || capped_json("the diff", &diff_json(&d), limit))
        .await
        .unwrap_or_else(|e| {
            tracing::error!("writing a diff: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "the server failed")
        })
}

/// `POST /diff?namespace=&name=[&against=][&output=]`: what applying the render in the
/// body (a YAML stream, as `helm template` writes it) would change against the newest
/// history entry or `against`. Nothing is stored: the observer's bucket is read-only.
pub(super) async fn diff_local(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
    let p = match params(&query, &["namespace", "name"], &["against", "output"]) {
        Ok(p) => p,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    let form = match object_form(p[3]) {
        Ok(form) => form,
        Err(response) => return response,
    };
    let release = Release::new(p[0].unwrap_or_default(), p[1].unwrap_or_default());
    let against = match resolve_optional(&app, &release, p[2]).await {
        Ok(Some(a)) => a,
        Ok(None) => match app.observer.newest_render(&release).await {
            Ok(Some(newest)) => newest,
            Ok(None) => return observer_error(ObserverError::NoHistory(release.to_string())),
            Err(e) => return observer_error(e),
        },
        Err(e) => return observer_error(e),
    };
    // The body is parsed into objects and made canonical: a few times its size.
    let body_weight = (body.len() as u64).saturating_mul(4);
    let held = match reserve_renders(&app, &release, &[&against], body_weight).await {
        Ok(held) => held,
        Err(busy) => return busy_json(busy),
    };
    let rt = app.observer.runtime();
    // JSON objects (one, or a stream of them as `get` writes) when the body says it is
    // JSON; a YAML stream otherwise. The guard let no other type through.
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    let objects = match if json {
        rt.json_objects(&body).await
    } else {
        rt.yaml_objects(&body).await
    } {
        Ok(objects) => objects,
        Err(Error::InvalidObject { index, message }) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "object {} of the request body is not a JSON object: {message}",
                    index + 1
                ),
            );
        }
        Err(e) => return observer_error(e.into()),
    };
    // The rule for a render a person gives (CONTRACT.md §4): some objects, each a
    // Kubernetes object, as the component decides.
    if objects.is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            "no objects in the request body: send the YAML stream to preview",
        );
    }
    match rt.check_objects(&objects).await {
        Ok(()) => {}
        Err(Error::InvalidObject { index, message }) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("object {} of the request body {message}", index + 1),
            );
        }
        Err(e) => return observer_error(e.into()),
    }
    let canonical = match rt.canonical(&objects).await {
        Ok(c) => c,
        Err(e) => return observer_error(e.into()),
    };
    drop(objects);
    let d = match app
        .observer
        .diff_local(&release, &canonical, Some(&against), form, DEFAULT_CONTEXT)
        .await
    {
        Ok(d) => d,
        Err(e) => return observer_error(e),
    };
    held_until_sent(diff_response(&app, d).await, held)
}

/// The `output` parameter of `/diff`: `yaml` (the default) or `json`.
#[allow(clippy::result_large_err)] // the error is the response itself
pub(super) fn object_form(output: Option<&str>) -> Result<ObjectForm, Response> {
    match output {
        None | Some("yaml") => Ok(ObjectForm::Yaml),
        Some("json") => Ok(ObjectForm::Json),
        Some(other) => Err(error(
            StatusCode::BAD_REQUEST,
            format!("output={other:?}: expected yaml or json"),
        )),
    }
}
