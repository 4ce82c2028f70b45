//! The observer's HTTP endpoints:
//!
//! - `GET /healthz`
//! - `GET /history?namespace=&name=` — JSON, oldest first; 503 without a store
//! - `GET /renders/{namespace}/{name}/{renderRef}` — the canonical bytes; 404 when
//!   missing; a corrupt blob is a 500 with a message, never its content
//! - `GET /diff?namespace=&name=&render=REF[&against=REF]` — JSON diff; `against`
//!   defaults to the newest history entry
//! - `GET /releases` — the releases by namespace, with their number of entries and
//!   the newest, as JSON
//! - `GET /`, `GET /ui/…` — the same for people, as HTML pages (the `ui` module)
//!
//! A bad query parameter is a 400 naming it; errors are `{"error": "..."}`.
//!
//! The server is meant for a machine other people and other programs share (CONTRACT.md
//! §12), so every request passes these checks before a handler runs:
//!
//! - its `Host` must be a name the server knows itself by ([`ServeOptions::allowed_hosts`]):
//!   a web page that rebinds its own name to 127.0.0.1 cannot read renders, Secrets
//!   included;
//! - with a token ([`ServeOptions::token`]), `Authorization: Bearer TOKEN`;
//! - it queues for one of [`ServeOptions::max_concurrent_requests`] places, and the
//!   whole request, queueing included, has [`ServeOptions::request_timeout`];
//!
//! `/healthz` is exempt from all three: it reveals nothing, and a liveness probe (which
//! sends the pod's IP as its `Host`) must reach it even when the server is busy.
//! Request headers must arrive within [`ServeOptions::header_timeout`], no response is
//! larger than [`ServeOptions::max_response_bytes`], and error bodies never show a path,
//! URL or backend message: those go to the log.

#[path = "serve_ui.rs"]
mod ui;

use crate::json_view::{diff_json, history_json, history_page_json};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use render_store::Error;
use render_store::{ObjectForm, Release};
use render_store::{Observer, ObserverError};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::sync::Semaphore;

/// How the server bounds and guards its requests.
#[derive(Clone)]
pub struct ServeOptions {
    /// Time a client has to send a request's headers, from when the connection opens
    /// or the previous response was sent; then the connection is closed.
    pub header_timeout: Duration,
    /// Time a request may take from its headers to its response, waiting for a place
    /// included; then it is answered 503.
    pub request_timeout: Duration,
    /// Largest response body; a render or a JSON answer over it is refused with 500.
    pub max_response_bytes: usize,
    /// Largest request body (the YAML stream of a `POST /diff`); a larger one is
    /// refused with 413.
    pub max_request_bytes: usize,
    /// Requests handled at once; more wait, within their request timeout.
    pub max_concurrent_requests: usize,
    /// Names accepted in the `Host` header (without a port) besides `localhost`, the
    /// loopback addresses and the address listened on.
    pub allowed_hosts: Vec<String>,
    /// The bearer token every request but `/healthz` must carry, if any.
    pub token: Option<String>,
}

impl ServeOptions {
    /// Headers must arrive within 10 s: a client on this machine or a nearby one sends
    /// them in milliseconds.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// 30 s: a diff of two 15 MB renders takes a few seconds.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// 64 MiB: the largest render the default memory cap is meant for.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;
    /// 64 MiB, as for responses.
    pub const DEFAULT_MAX_REQUEST_BYTES: usize = 64 << 20;
    /// 32 requests at once: each may hold two renders in memory.
    pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 32;
}

impl ServeOptions {
    /// What is wrong with the options, if anything: an `allowed_hosts` entry that is not
    /// a host name or IP address, or no place for a request.
    pub fn check(&self) -> Result<(), String> {
        if self.max_concurrent_requests == 0 {
            return Err("max_concurrent_requests must be at least 1".to_string());
        }
        match self.allowed_hosts.iter().find(|h| host_of(h).is_none()) {
            Some(bad) => Err(format!("{bad:?} is not a host name or IP address to allow")),
            None => Ok(()),
        }
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
            max_request_bytes: Self::DEFAULT_MAX_REQUEST_BYTES,
            max_concurrent_requests: Self::DEFAULT_MAX_CONCURRENT_REQUESTS,
            allowed_hosts: Vec::new(),
            token: None,
        }
    }
}

impl std::fmt::Debug for ServeOptions {
    // The token is a secret: logs and panics show only whether there is one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("header_timeout", &self.header_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("token", &self.token.as_ref().map(|_| "(set)"))
            .finish()
    }
}

/// Reads a bearer token from a file: its content without surrounding whitespace (a
/// trailing newline is common). An empty token is refused: it would let anyone in.
pub fn read_token_file(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("reading the token file {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("the token file {} is empty", path.display()));
    }
    if token.chars().any(|c| c.is_control() || c == ' ') {
        return Err(format!(
            "the token in {} has a space or control character inside: a client cannot \
             send it in an Authorization header",
            path.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            // Not refused: Kubernetes mounts Secrets readable by all by default, and in a
            // pod nobody else is there to read it.
            tracing::warn!(
                "the token file {} can be read by other users of this machine",
                path.display()
            );
        }
    }
    Ok(token.to_string())
}

/// What the handlers share.
#[derive(Clone)]
struct App {
    observer: Arc<Observer>,
    max_response_bytes: usize,
    max_request_bytes: usize,
}

/// The routes over an observer, without the checks of [`serve_with`] (no `Host`, token,
/// timeout or concurrency checks) and with the default response cap.
pub fn router(observer: Arc<Observer>) -> Router {
    routes(App {
        observer,
        max_response_bytes: ServeOptions::DEFAULT_MAX_RESPONSE_BYTES,
        max_request_bytes: ServeOptions::DEFAULT_MAX_REQUEST_BYTES,
    })
}

fn routes(app: App) -> Router {
    let body_limit = axum::extract::DefaultBodyLimit::max(app.max_request_bytes);
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/history", get(history))
        .route("/renders/{namespace}/{name}/{render_ref}", get(render))
        .route("/diff", get(diff).post(diff_local))
        .route("/releases", get(ui::releases_json))
        .route("/", get(ui::index))
        .route("/assets/{file}", get(ui::asset))
        .route("/ui/{namespace}/{name}", get(ui::history_page))
        .route(
            "/ui/{namespace}/{name}/renders/{render_ref}",
            get(ui::render_page),
        )
        .route("/ui/{namespace}/{name}/diff", get(ui::diff_page))
        .layer(body_limit)
        .with_state(app)
}

/// Serves the routes on `listener` with the default [`ServeOptions`] until the process
/// ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    observer: Arc<Observer>,
) -> std::io::Result<()> {
    serve_with(listener, observer, ServeOptions::default()).await
}

/// Serves the routes on `listener`, bounded and guarded by `options`, until the process
/// ends.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    observer: Arc<Observer>,
    options: ServeOptions,
) -> std::io::Result<()> {
    options
        .check()
        .map_err(|m| std::io::Error::new(std::io::ErrorKind::InvalidInput, m))?;
    let guard = Arc::new(Guard::new(listener.local_addr()?, &options));
    let app = routes(App {
        observer,
        max_response_bytes: options.max_response_bytes,
        max_request_bytes: options.max_request_bytes,
    })
    .layer(axum::middleware::from_fn_with_state(guard, check));
    let service = TowerToHyperService::new(app);
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper's header timeout needs a timer to run; without one it is silently off.
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it was accepted:
                // the listener itself is fine, so wait a little and go on.
                tracing::warn!("accepting a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let connection = http.serve_connection(TokioIo::new(stream), service.clone());
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("HTTP connection ended: {e}");
            }
        });
    }
}

/// The checks every request passes before a handler runs.
struct Guard {
    /// Names accepted in `Host`, lowercase.
    names: HashSet<String>,
    /// Addresses accepted in `Host` besides the loopback ones.
    addresses: HashSet<IpAddr>,
    /// SHA-256 of the token: comparing digests takes the same time whatever the
    /// length of what a client sends.
    token_digest: Option<[u8; 32]>,
    places: Semaphore,
    request_timeout: Duration,
}

impl Guard {
    /// The guard for `options`, which [`ServeOptions::check`] accepted.
    fn new(listening_on: SocketAddr, options: &ServeOptions) -> Self {
        let mut names = HashSet::from(["localhost".to_string()]);
        let mut addresses = HashSet::new();
        if !listening_on.ip().is_unspecified() {
            addresses.insert(listening_on.ip());
        }
        for allowed in &options.allowed_hosts {
            match host_of(allowed) {
                Some(Host::Address(ip)) => {
                    addresses.insert(ip);
                }
                Some(Host::Name(name)) => {
                    names.insert(name);
                }
                // ServeOptions::check refused it.
                None => {}
            }
        }
        Guard {
            names,
            addresses,
            token_digest: options
                .token
                .as_ref()
                .map(|t| Sha256::digest(t.as_bytes()).into()),
            places: Semaphore::new(options.max_concurrent_requests),
            request_timeout: options.request_timeout,
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        match host_of(host) {
            Some(Host::Address(ip)) => ip.is_loopback() || self.addresses.contains(&ip),
            Some(Host::Name(name)) => self.names.contains(&name),
            None => false,
        }
    }

    /// Why the request's `Host` (and the authority of an absolute URI) is refused.
    fn host_refusal(&self, request: &Request) -> Option<&'static str> {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok());
        let Some(host) = host else {
            return Some("the request has no Host header");
        };
        if !self.host_allowed(host) {
            tracing::warn!("refused a request for Host {host:?}");
            return Some(
                "this server does not answer for that Host (start it with --allow-host NAME \
                 to add a name)",
            );
        }
        if let Some(authority) = request.uri().authority()
            && !self.host_allowed(authority.as_str())
        {
            return Some("this server does not answer for that request URI's host");
        }
        None
    }

    /// Whether the request carries the token, when there is one.
    fn token_accepted(&self, request: &Request) -> bool {
        let Some(expected) = &self.token_digest else {
            return true;
        };
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| {
                let (scheme, token) = h.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        presented.is_some_and(|token| {
            let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            bool::from(digest.ct_eq(expected))
        })
    }
}

async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let health = request.uri().path() == "/healthz";
    if !health {
        if let Some(why) = guard.host_refusal(&request) {
            return error(StatusCode::FORBIDDEN, why);
        }
        if !guard.token_accepted(&request) {
            let mut response = error(
                StatusCode::UNAUTHORIZED,
                "this server needs Authorization: Bearer TOKEN with its token",
            );
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return response;
        }
    }
    let handled = async {
        let _place = match health {
            true => None,
            // The semaphore is never closed.
            false => guard.places.acquire().await.ok(),
        };
        next.run(request).await
    };
    match tokio::time::timeout(guard.request_timeout, handled).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(
                "a request took longer than its timeout of {:?}",
                guard.request_timeout
            );
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the request took longer than the server's request timeout of {} s",
                    guard.request_timeout.as_secs_f64()
                ),
            )
        }
    }
}

/// A `Host` header's host, without its port.
enum Host {
    Address(IpAddr),
    /// Lowercase.
    Name(String),
}

fn host_of(text: &str) -> Option<Host> {
    let (host, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']')?;
            return match after {
                "" => Some(()),
                p => p.strip_prefix(':').filter(|p| valid_port(p)).map(|_| ()),
            }
            .and_then(|()| inside.parse::<std::net::Ipv6Addr>().ok())
            .map(|ip| Host::Address(IpAddr::V6(ip)));
        }
        None => match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        },
    };
    if port.is_some_and(|p| !valid_port(p)) || host.is_empty() {
        return None;
    }
    if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
        return Some(Host::Address(IpAddr::V4(ip)));
    }
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_';
    host.chars()
        .all(name_char)
        .then(|| Host::Name(host.to_ascii_lowercase()))
}

fn valid_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

fn json_response(status: StatusCode, value: serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        format!("{value}\n"),
    )
        .into_response()
}

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    json_response(status, json!({ "error": message.to_string() }))
}

/// Writes what it is given up to a limit, and counts the rest.
struct CappedWriter {
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
fn capped_json(what: &str, value: &serde_json::Value, limit: usize) -> Response {
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

fn over_limit(what: &str, unit: &str, len: usize, limit: usize) -> Response {
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
fn observer_error(e: ObserverError) -> Response {
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

/// Checks the query against the parameters an endpoint takes: the values of the
/// required ones, then of the optional ones; or what is wrong, naming the parameter.
fn params<'q>(
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

async fn history(State(app): State<App>, Query(query): Query<HashMap<String, String>>) -> Response {
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
                Ok(v) => capped_json("the history page", &v, app.max_response_bytes),
                Err(e) => observer_error(e.into()),
            },
            Err(e) => observer_error(e),
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
            Ok(v) => capped_json("the history", &v, app.max_response_bytes),
            Err(e) => observer_error(e.into()),
        },
        Err(e) => observer_error(e),
    }
}

async fn render(
    State(app): State<App>,
    Path((namespace, name, render_ref)): Path<(String, String, String)>,
) -> Response {
    match app
        .observer
        .render(&Release::new(namespace, name), &render_ref)
        .await
    {
        Ok(bytes) if bytes.len() > app.max_response_bytes => {
            over_limit("the render", "bytes", bytes.len(), app.max_response_bytes)
        }
        Ok(bytes) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/x-ndjson")],
            bytes,
        )
            .into_response(),
        Err(e) => observer_error(e),
    }
}

async fn diff(State(app): State<App>, Query(query): Query<HashMap<String, String>>) -> Response {
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
    let d = match app
        .observer
        .diff(&release, p[2].unwrap_or_default(), p[3], form)
        .await
    {
        Ok(d) => d,
        Err(e) => return observer_error(e),
    };
    diff_response(&app, d).await
}

/// A diff as the JSON answer, within the response cap.
async fn diff_response(app: &App, d: render_store::RenderDiff) -> Response {
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
async fn diff_local(
    State(app): State<App>,
    Query(query): Query<HashMap<String, String>>,
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
    let canonical = match app.observer.runtime().yaml_canonical(&body).await {
        Ok(c) => c,
        Err(e) => return observer_error(e.into()),
    };
    let d = match app
        .observer
        .diff_local(&release, &canonical, p[2], form)
        .await
    {
        Ok(d) => d,
        Err(e) => return observer_error(e),
    };
    diff_response(&app, d).await
}

/// The `output` parameter of `/diff`: `yaml` (the default) or `json`.
#[allow(clippy::result_large_err)] // the error is the response itself
fn object_form(output: Option<&str>) -> Result<ObjectForm, Response> {
    match output {
        None | Some("yaml") => Ok(ObjectForm::Yaml),
        Some("json") => Ok(ObjectForm::Json),
        Some(other) => Err(error(
            StatusCode::BAD_REQUEST,
            format!("output={other:?}: expected yaml or json"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_headers() {
        let options = ServeOptions {
            allowed_hosts: vec!["Observer.Example".into(), "10.1.2.3".into()],
            ..ServeOptions::default()
        };
        let guard = Guard::new("127.0.0.1:8080".parse().unwrap(), &options);
        for ok in [
            "localhost",
            "LOCALHOST:8080",
            "localhost:1234",
            "127.0.0.1",
            "127.0.0.1:8080",
            "[::1]",
            "[::1]:8080",
            "observer.example",
            "observer.example:443",
            "10.1.2.3:8080",
        ] {
            assert!(guard.host_allowed(ok), "{ok:?}");
        }
        for refused in [
            "",
            "evil.example",
            "localhost.evil.example",
            "localhost.",
            "10.1.2.4",
            "::1",
            "[::1",
            "localhost:",
            "localhost:80a",
            "localhost:123456",
            "user@localhost",
            "observer.example/x",
        ] {
            assert!(!guard.host_allowed(refused), "{refused:?}");
        }
        // Listening on every address: the machine's own addresses must be named.
        let any = Guard::new("0.0.0.0:8080".parse().unwrap(), &ServeOptions::default());
        assert!(!any.host_allowed("0.0.0.0:8080"));
        assert!(any.host_allowed("127.0.0.1:8080"));
        let v6 = Guard::new("[fd00::1]:80".parse().unwrap(), &ServeOptions::default());
        assert!(v6.host_allowed("[fd00::1]") && v6.host_allowed("[FD00:0::1]:80"));
        for bad in ["", "evil/x", "a b", "[::1"] {
            let options = ServeOptions {
                allowed_hosts: vec![bad.into()],
                ..ServeOptions::default()
            };
            assert!(options.check().is_err(), "{bad:?}");
        }
        let none = ServeOptions {
            max_concurrent_requests: 0,
            ..ServeOptions::default()
        };
        assert!(none.check().is_err());
        assert_eq!(ServeOptions::default().check(), Ok(()));
    }

    #[test]
    fn the_token_is_never_shown() {
        let options = ServeOptions {
            token: Some("s3cr3t".into()),
            ..ServeOptions::default()
        };
        assert!(!format!("{options:?}").contains("s3cr3t"));
    }
}
