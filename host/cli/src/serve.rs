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
//! - `GET /login?code=CODE` — a browser's one-time login (below)
//!
//! A bad query parameter is a 400 naming it; errors are `{"error": "..."}`.
//!
//! The server is meant for a machine other people and other programs share (CONTRACT.md
//! §12), so every request passes these checks before a handler runs:
//!
//! - its `Host` must be a name the server knows itself by ([`ServeOptions::allowed_hosts`]):
//!   a web page that rebinds its own name to 127.0.0.1 cannot read renders, Secrets
//!   included;
//! - with a token ([`ServeOptions::token`]), `Authorization: Bearer TOKEN`, or the
//!   cookie of the browser that used the one-time login code
//!   ([`ServeOptions::login_code`]);
//! - `POST /diff` must come from the server's own origin with a YAML or JSON body: with
//!   the cookie, a page of another site (or another port of this host) could otherwise
//!   make a browser send one;
//! - its body, if any, must arrive whole within [`ServeOptions::body_timeout`] and its
//!   caps, before the request takes a place: a client that trickles a body holds no
//!   place others need;
//! - it queues for one of [`ServeOptions::max_concurrent_requests`] places, and the
//!   whole request, queueing included, has [`ServeOptions::request_timeout`]. The answer
//!   keeps the place until the client has taken it, within
//!   [`ServeOptions::write_timeout`]: an answer nobody reads is memory the server still
//!   holds, so it counts against the same limit.
//!
//! `/healthz` is exempt from the `Host`, token and queue checks: it reveals nothing, and
//! a liveness probe (which sends the pod's IP as its `Host`) must reach it even when the
//! server is busy. Request headers must arrive within [`ServeOptions::header_timeout`],
//! at most [`ServeOptions::max_connections`] connections are open at once, no response
//! is larger than [`ServeOptions::max_response_bytes`], every answer says
//! `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`, and error bodies
//! never show a path, URL or backend message: those go to the log.

#[path = "serve_ui.rs"]
mod ui;

use crate::json_view::{diff_json, history_json, history_page_json};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http_body::{Body as _, Frame, SizeHint};
use http_body_util::BodyExt as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use render_store::Error;
use render_store::{ObjectForm, Release};
use render_store::{Observer, ObserverError};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;

/// How the server bounds and guards its requests.
#[derive(Clone)]
pub struct ServeOptions {
    /// Time a client has to send a request's headers, from when the connection opens
    /// or the previous response was sent; then the connection is closed.
    pub header_timeout: Duration,
    /// Time a client has to send a request's body, from its headers; then it is
    /// answered 408. The body is read before the request takes a place.
    pub body_timeout: Duration,
    /// Time a request may take from its headers to its response, its body and waiting
    /// for a place included; then it is answered 503.
    pub request_timeout: Duration,
    /// Time a client has to take a response, from when the server starts sending it;
    /// a connection that has not read it all by then is closed.
    pub write_timeout: Duration,
    /// Largest response body; a render or a JSON answer over it is refused with 500.
    pub max_response_bytes: usize,
    /// Largest request body on any endpoint; a larger one is refused with 413.
    pub max_request_bytes: usize,
    /// Largest body of a `POST /diff` (a YAML stream the component parses); a larger
    /// one is refused with 413. The smaller of this and `max_request_bytes` applies.
    pub max_diff_body_bytes: usize,
    /// Requests handled at once (from their body's arrival to the client's reading of
    /// the answer); more wait, within their request timeout. As many requests may be
    /// receiving a body at once.
    pub max_concurrent_requests: usize,
    /// Connections open at once; more wait in the listener's queue until one ends.
    pub max_connections: usize,
    /// Names accepted in the `Host` header (without a port) besides `localhost`, the
    /// loopback addresses and the address listened on.
    pub allowed_hosts: Vec<String>,
    /// The bearer token every request but `/healthz` must carry; `None` lets every
    /// client in (the CLI asks for `--no-auth` for that).
    pub token: Option<String>,
    /// A code that `GET /login?code=CODE` accepts once, within
    /// [`ServeOptions::LOGIN_CODE_LIFETIME`] of the server's start, giving that browser
    /// a session cookie. Only with a token.
    pub login_code: Option<String>,
}

impl ServeOptions {
    /// Headers must arrive within 10 s: a client on this machine or a nearby one sends
    /// them in milliseconds.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// 10 s, as for headers: a body within the diff cap takes a fraction of that on a
    /// local or nearby link.
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);
    /// 30 s: a diff of two 15 MB renders takes a few seconds.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// 60 s: the largest response at the default cap, read at about 1 MB/s.
    pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(60);
    /// 64 MiB: the largest render the default memory cap is meant for.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;
    /// 64 MiB, as for responses.
    pub const DEFAULT_MAX_REQUEST_BYTES: usize = 64 << 20;
    /// 8 MiB: `helm template` of the largest charts, CRDs included, is a few MB of
    /// YAML, and every request place may hold one such body while it is parsed.
    pub const DEFAULT_MAX_DIFF_BODY_BYTES: usize = 8 << 20;
    /// 32 requests at once: each may hold two renders in memory.
    pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 32;
    /// 256 connections: a few browsers and tools need a handful each, and each costs a
    /// descriptor and hyper's buffers.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
    /// How long the one-time login code works after the server starts: the person who
    /// started it opens the printed URL right away.
    pub const LOGIN_CODE_LIFETIME: Duration = Duration::from_secs(5 * 60);
}

impl ServeOptions {
    /// What is wrong with the options, if anything: an `allowed_hosts` entry that is not
    /// a host name or IP address, no place for a request or a connection, or a login
    /// code without a token.
    pub fn check(&self) -> Result<(), String> {
        if self.max_concurrent_requests == 0 {
            return Err("--max-concurrent-requests must be at least 1".to_string());
        }
        if self.max_connections == 0 {
            return Err("--max-connections must be at least 1".to_string());
        }
        if self.token.as_deref().is_some_and(str::is_empty) {
            return Err("the token is empty: it would let anyone in".to_string());
        }
        match &self.login_code {
            Some(code) if code.is_empty() => return Err("the login code is empty".to_string()),
            Some(_) if self.token.is_none() => {
                return Err("a login code needs a token: without one, nobody logs in".to_string());
            }
            _ => {}
        }
        match self.allowed_hosts.iter().find(|h| host_of(h).is_none()) {
            Some(bad) => Err(format!(
                "--allow-host {bad:?} is not a host name or IP address to allow"
            )),
            None => Ok(()),
        }
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            write_timeout: Self::DEFAULT_WRITE_TIMEOUT,
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
            max_request_bytes: Self::DEFAULT_MAX_REQUEST_BYTES,
            max_diff_body_bytes: Self::DEFAULT_MAX_DIFF_BODY_BYTES,
            max_concurrent_requests: Self::DEFAULT_MAX_CONCURRENT_REQUESTS,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            allowed_hosts: Vec::new(),
            token: None,
            login_code: None,
        }
    }
}

impl std::fmt::Debug for ServeOptions {
    // The token and the login code are secrets: logs and panics show only whether
    // there is one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_diff_body_bytes", &self.max_diff_body_bytes)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("max_connections", &self.max_connections)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("token", &self.token.as_ref().map(|_| "(set)"))
            .field("login_code", &self.login_code.as_ref().map(|_| "(set)"))
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

/// A new secret from the operating system's CSPRNG: 256 bits as 64 lowercase hex
/// digits, which are safe in a URL, a header and a cookie as they are.
pub fn random_secret() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| format!("the operating system gave no random bytes: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A token written for this server alone: a file only its owner can read, in a new
/// folder only its owner can enter, both removed when this is dropped (the server
/// stops). A server killed outright leaves them; the folder is private, and a runtime
/// folder is emptied when the user's last session ends.
#[derive(Debug)]
pub struct TokenFile {
    path: std::path::PathBuf,
    // Removed, with the file, when dropped.
    _dir: tempfile::TempDir,
}

impl TokenFile {
    /// Writes `token` into a new file `token` (mode 0600) in a new folder (mode 0700)
    /// under `$XDG_RUNTIME_DIR` when it is a folder of the user's that nobody else can
    /// write, else under the temporary folder.
    pub fn create(token: &str) -> Result<TokenFile, String> {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let parent = private_runtime_dir().unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new()
            .prefix("render-store-serve.")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&parent)
            .map_err(|e| {
                format!(
                    "making a private folder for the token in {}: {e} (or give \
                     --token-file)",
                    parent.display()
                )
            })?;
        let path = dir.path().join("token");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| format!("creating the token file {}: {e}", path.display()))?;
        file.write_all(token.as_bytes())
            .map_err(|e| format!("writing the token file {}: {e}", path.display()))?;
        Ok(TokenFile { path, _dir: dir })
    }

    /// Where the token is.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// `$XDG_RUNTIME_DIR`, when it is an absolute path to a folder of this user's that no
/// group or other user can write (so nobody else can swap what is made inside).
fn private_runtime_dir() -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dir = std::path::PathBuf::from(std::env::var_os("XDG_RUNTIME_DIR")?);
    let meta = std::fs::metadata(&dir).ok()?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    (dir.is_absolute() && meta.is_dir() && meta.uid() == me && meta.mode() & 0o022 == 0)
        .then_some(dir)
}

/// Raises the soft limit of open files to the hard one: each connection is a
/// descriptor, and the usual soft limit is far below what the hard one allows. Returns
/// the limits before and after when it raised them, or why it could not.
pub fn raise_open_file_limit() -> Result<Option<(u64, u64)>, String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    if limit.rlim_cur >= limit.rlim_max {
        return Ok(None);
    }
    let before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    // SAFETY: setrlimit reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(format!(
            "from {before} to {}: {}",
            limit.rlim_max,
            std::io::Error::last_os_error()
        ));
    }
    #[allow(clippy::useless_conversion)] // rlim_t is u64 on Linux, not everywhere
    let raised = (u64::from(before), u64::from(limit.rlim_max));
    Ok(Some(raised))
}

/// A future that completes on the first SIGINT or SIGTERM, for [`serve_until`]; the
/// handlers are installed now, so a signal that comes before it is awaited counts too.
pub fn stop_signal() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
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

/// Serves the routes on `listener` with the default [`ServeOptions`] (no token: every
/// client is let in) until the process ends.
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
    serve_until(listener, observer, options, std::future::pending()).await
}

/// How long connections may go on after the server is told to stop: requests under
/// way finish, unless they take longer than that.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The largest read and write buffer of a connection, which bounds a request's
/// headers (a larger head is a 431) and how much of a response hyper holds beyond
/// what the response body has not handed over yet.
const CONNECTION_BUFFER_BYTES: usize = 64 << 10;

/// Serves the routes on `listener`, bounded and guarded by `options`, until `stop`
/// completes; then accepts no more connections, lets those open finish their request
/// (within a short grace period) and returns.
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    observer: Arc<Observer>,
    options: ServeOptions,
    stop: impl Future<Output = ()>,
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
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper's header timeout needs a timer to run; without one it is silently off.
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout)
        .max_buf_size(CONNECTION_BUFFER_BYTES);
    let connections = Arc::new(Semaphore::new(options.max_connections));
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        // A connection's place first: over the limit, new connections wait in the
        // listener's queue rather than being accepted and left unserved.
        let place = tokio::select! {
            place = connections.clone().acquire_owned() => match place {
                Ok(place) => place,
                Err(_) => break, // never closed
            },
            () = &mut stop => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before it was
                    // accepted: the listener itself is fine, so wait a little and go on.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let (deadline, watched) = watch::channel(None);
        let connection = Connection {
            write_deadline: Arc::new(deadline),
        };
        let service = tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: Request<hyper::body::Incoming>| {
                // hyper answers one request of a connection at a time: a new one means the
                // previous answer was sent.
                connection.write_deadline.send_replace(None);
                request.extensions_mut().insert(connection.clone());
                request
            },
        );
        let served = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        tokio::spawn(run_connection(graceful.watch(served), watched, place));
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            tracing::warn!(
                "stopped with requests still under way after {} s",
                SHUTDOWN_GRACE.as_secs()
            );
        }
    }
    Ok(())
}

/// A connection's handle, which its requests carry: the answer being sent sets the
/// time by which the client must have taken it.
#[derive(Clone)]
struct Connection {
    write_deadline: Arc<watch::Sender<Option<Instant>>>,
}

/// Runs one connection until it ends, or closes it when its client has not taken an
/// answer by the write deadline. hyper itself has no write timeout, and a response
/// body is not even polled while the socket is full, so the deadline is watched here,
/// beside the connection.
async fn run_connection<F>(
    connection: F,
    mut deadline: watch::Receiver<Option<Instant>>,
    _place: OwnedSemaphorePermit,
) where
    F: Future<Output = Result<(), hyper::Error>>,
{
    tokio::pin!(connection);
    let mut watching = true;
    loop {
        let until = *deadline.borrow_and_update();
        tokio::select! {
            ended = &mut connection => {
                if let Err(e) = ended {
                    tracing::debug!("HTTP connection ended: {e}");
                }
                return;
            }
            changed = deadline.changed(), if watching => {
                // The sender goes with the connection's service: nothing more to watch.
                watching = changed.is_ok();
            }
            () = sleep_until_some(until), if until.is_some() => {
                tracing::warn!(
                    "closed a connection whose client did not read its answer within the \
                     write timeout (serve --write-timeout)"
                );
                return;
            }
        }
    }
}

async fn sleep_until_some(until: Option<Instant>) {
    match until {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The pieces a response body hands hyper at a time: hyper asks for the next only
/// when it has written the previous, so a client that stops reading leaves the rest
/// with the body (and its place held) instead of in hyper's buffer.
const RESPONSE_CHUNK_BYTES: usize = 64 << 10;

/// What a request holds until its answer has been taken.
#[derive(Default)]
struct Held {
    place: Option<OwnedSemaphorePermit>,
    body_place: Option<OwnedSemaphorePermit>,
}

/// A response body that hands its data over in pieces, starts the connection's write
/// deadline when hyper first asks for it, and holds the request's places until it is
/// dropped: when hyper has taken all of it, or the connection is closed.
struct Sending {
    inner: Body,
    /// The part of the inner body's last frame not handed over yet.
    rest: Bytes,
    _held: Held,
    connection: Option<Connection>,
    write_timeout: Duration,
    started: bool,
}

impl http_body::Body for Sending {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if !this.started {
            this.started = true;
            if let Some(c) = &this.connection {
                c.write_deadline
                    .send_replace(Some(Instant::now() + this.write_timeout));
            }
        }
        if !this.rest.is_empty() {
            let n = this.rest.len().min(RESPONSE_CHUNK_BYTES);
            return Poll::Ready(Some(Ok(Frame::data(this.rest.split_to(n)))));
        }
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(mut data) => {
                    if data.len() > RESPONSE_CHUNK_BYTES {
                        this.rest = data.split_off(RESPONSE_CHUNK_BYTES);
                    }
                    Poll::Ready(Some(Ok(Frame::data(data))))
                }
                Err(frame) => Poll::Ready(Some(Ok(frame))),
            },
            other => Poll::Ready(other),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + rest);
        }
        hint.set_lower(inner.lower() + rest);
        hint
    }
}

/// The checks every request passes before a handler runs.
struct Guard {
    /// Names accepted in `Host`, lowercase.
    names: HashSet<String>,
    /// Addresses accepted in `Host` besides the loopback ones.
    addresses: HashSet<IpAddr>,
    /// The token and the browser login, when there is a token.
    auth: Option<Auth>,
    places: Arc<Semaphore>,
    body_places: Arc<Semaphore>,
    body_timeout: Duration,
    request_timeout: Duration,
    write_timeout: Duration,
    max_request_bytes: usize,
    max_diff_body_bytes: usize,
}

/// The secrets a request may show. Each is kept as its SHA-256: comparing digests
/// takes the same time whatever the length of what a client sends.
struct Auth {
    token: [u8; 32],
    /// The login code and when it stops working, until it is used.
    login: Mutex<Option<([u8; 32], Instant)>>,
    /// The secret of the cookie the login gave, once it happened.
    session: Mutex<Option<[u8; 32]>>,
    /// The cookie's name. Browsers send a host's cookies to every port of it, so the
    /// port is in the name: two servers on one host do not overwrite each other's.
    cookie: String,
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
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
        let auth = options.token.as_ref().map(|token| Auth {
            token: digest(token),
            login: Mutex::new(options.login_code.as_ref().map(|code| {
                (
                    digest(code),
                    Instant::now() + ServeOptions::LOGIN_CODE_LIFETIME,
                )
            })),
            session: Mutex::new(None),
            cookie: format!("render-store-session-{}", listening_on.port()),
        });
        Guard {
            names,
            addresses,
            auth,
            places: Arc::new(Semaphore::new(options.max_concurrent_requests)),
            body_places: Arc::new(Semaphore::new(options.max_concurrent_requests)),
            body_timeout: options.body_timeout,
            request_timeout: options.request_timeout,
            write_timeout: options.write_timeout,
            max_request_bytes: options.max_request_bytes,
            max_diff_body_bytes: options.max_diff_body_bytes,
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

    /// Whether the request carries the token, or the cookie of the browser that logged
    /// in, when there is a token.
    fn authenticated(&self, headers: &HeaderMap) -> bool {
        let Some(auth) = &self.auth else {
            return true;
        };
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| {
                let (scheme, token) = h.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        if bearer.is_some_and(|token| bool::from(digest(token).ct_eq(&auth.token))) {
            return true;
        }
        let Some(session) = *auth.session.lock().unwrap_or_else(|e| e.into_inner()) else {
            return false;
        };
        cookies(headers, &auth.cookie).any(|value| bool::from(digest(value).ct_eq(&session)))
    }

    /// `GET /login?code=CODE`: the first request with the code, within its lifetime,
    /// gets the session cookie and is sent on to `/` (so the code leaves the address
    /// bar); the code then works no more.
    fn login(&self, request: &Request) -> Response {
        let Some(auth) = &self.auth else {
            return error(
                StatusCode::NOT_FOUND,
                "this server has no login: it was started with --no-auth",
            );
        };
        if request.method() != Method::GET {
            return error(
                StatusCode::METHOD_NOT_ALLOWED,
                "log in with GET /login?code=CODE",
            );
        }
        let code = url::form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
            .find(|(name, _)| name == "code")
            .map(|(_, value)| value.into_owned());
        let mut login = auth.login.lock().unwrap_or_else(|e| e.into_inner());
        let accepted = match (&*login, &code) {
            (Some((expected, until)), Some(code)) => {
                // Compared before the time is looked at: no answer says more than "no".
                bool::from(digest(code).ct_eq(expected)) && Instant::now() < *until
            }
            _ => false,
        };
        if !accepted {
            tracing::warn!("refused a login with a wrong, used or expired code");
            return error(
                StatusCode::UNAUTHORIZED,
                format!(
                    "this login link is wrong, used or expired: the link a server prints \
                     works once, within {} minutes of its start. Restart the server for a \
                     new one, or send its token as Authorization: Bearer TOKEN",
                    ServeOptions::LOGIN_CODE_LIFETIME.as_secs() / 60
                ),
            );
        }
        let secret = match random_secret() {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("making a session for a login: {e}");
                return error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the server failed; see the server log",
                );
            }
        };
        *login = None;
        *auth.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(digest(&secret));
        let cookie = format!(
            "{}={secret}; HttpOnly; SameSite=Strict; Path=/",
            auth.cookie
        );
        let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
        match HeaderValue::from_str(&cookie) {
            Ok(value) => {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            // Hex digits and a name of ASCII letters, digits and dashes: always valid.
            Err(_) => return error(StatusCode::INTERNAL_SERVER_ERROR, "the server failed"),
        }
        // The address the code was in is never sent on as a referrer.
        response.headers_mut().insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        response
    }

    /// Why a `POST /diff` is refused before its body is read: sent from another origin,
    /// or with a body type other than YAML or JSON. A page of another site can make a
    /// browser send a form or text/plain POST (with the cookie, on another port of
    /// this host) without asking first; any other type needs a CORS preflight, which
    /// this server never grants.
    fn diff_post_refusal(&self, request: &Request) -> Option<Response> {
        let headers = request.headers();
        let text = |name: header::HeaderName| {
            headers
                .get(name)
                .map(|v| v.to_str().unwrap_or("\u{fffd}").trim().to_ascii_lowercase())
        };
        if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site"))
            && (site == "cross-site" || site == "same-site")
        {
            return Some(error(
                StatusCode::FORBIDDEN,
                "POST /diff refuses cross-site requests: send it from this server's own \
                 pages or from a tool",
            ));
        }
        if let Some(origin) = text(header::ORIGIN) {
            let host = text(header::HOST).unwrap_or_default();
            let own = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"))
                .is_some_and(|authority| !host.is_empty() && authority == host);
            if !own {
                return Some(error(
                    StatusCode::FORBIDDEN,
                    "POST /diff refuses requests whose origin is not this server's own \
                     (a cross-site request)",
                ));
            }
        }
        let media_type = text(header::CONTENT_TYPE)
            .map(|t| t.split(';').next().unwrap_or_default().trim().to_string());
        const TYPES: [&str; 4] = [
            "application/yaml",
            "application/x-yaml",
            "text/yaml",
            "application/json",
        ];
        if !media_type.is_some_and(|t| TYPES.contains(&t.as_str())) {
            return Some(error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "POST /diff takes a YAML stream or JSON: send Content-Type application/yaml \
                 (or application/x-yaml, text/yaml, application/json)",
            ));
        }
        None
    }

    /// The request with its whole body read, within the body timeout and its cap,
    /// holding one of the places for bodies; or the answer that refuses it.
    async fn read_body(&self, request: Request, held: &mut Held) -> Result<Request, Response> {
        if request.body().is_end_stream() {
            return Ok(request);
        }
        let diff = request.method() == Method::POST && request.uri().path() == "/diff";
        let (cap, flag) = if diff && self.max_diff_body_bytes <= self.max_request_bytes {
            (self.max_diff_body_bytes, "--max-diff-body-bytes")
        } else {
            (self.max_request_bytes, "--max-request-bytes")
        };
        let too_large = || {
            error(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request's body is over the limit of {cap} bytes (serve {flag})"),
            )
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > cap as u64) {
            return Err(too_large());
        }
        let started = Instant::now();
        let body_timeout = self.body_timeout;
        let late = || {
            error(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request's body did not arrive within the body timeout of {} s \
                     (serve --body-timeout)",
                    body_timeout.as_secs_f64()
                ),
            )
        };
        let Ok(Ok(place)) =
            tokio::time::timeout(body_timeout, self.body_places.clone().acquire_owned()).await
        else {
            return Err(error(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many requests are sending bodies at once; try again",
            ));
        };
        held.body_place = Some(place);
        let (parts, body) = request.into_parts();
        let read = http_body_util::Limited::new(body, cap).collect();
        match tokio::time::timeout_at(started + body_timeout, read).await {
            Err(_) => Err(late()),
            Ok(Ok(collected)) => Ok(Request::from_parts(parts, Body::from(collected.to_bytes()))),
            Ok(Err(e))
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some() =>
            {
                Err(too_large())
            }
            Ok(Err(e)) => {
                tracing::debug!("reading a request's body: {e}");
                Err(error(
                    StatusCode::BAD_REQUEST,
                    "the request's body could not be read",
                ))
            }
        }
    }
}

/// The values of the cookies named `name` in the request's `Cookie` headers.
fn cookies<'h>(headers: &'h HeaderMap, name: &'h str) -> impl Iterator<Item = &'h str> + 'h {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(move |pair| {
            let (n, v) = pair.trim().split_once('=')?;
            (n == name).then_some(v.trim())
        })
}

async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let connection = request.extensions().get::<Connection>().cloned();
    let mut held = Held::default();
    let mut response = guarded(&guard, request, next, &mut held).await;
    let headers = response.headers_mut();
    // Renders hold Secrets: no cache keeps a copy of any answer, and no browser reads
    // one as another type than it says.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    let write_timeout = guard.write_timeout;
    response.map(|inner| {
        Body::new(Sending {
            inner,
            rest: Bytes::new(),
            _held: held,
            connection,
            write_timeout,
            started: false,
        })
    })
}

async fn guarded(guard: &Guard, request: Request, next: Next, held: &mut Held) -> Response {
    let path = request.uri().path();
    if path == "/healthz" {
        return next.run(request).await;
    }
    if let Some(why) = guard.host_refusal(&request) {
        return error(StatusCode::FORBIDDEN, why);
    }
    if path == "/login" {
        return guard.login(&request);
    }
    if !guard.authenticated(request.headers()) {
        let mut response = error(
            StatusCode::UNAUTHORIZED,
            "this server needs its token: send Authorization: Bearer TOKEN with the token \
             of the file the server named at start (or of --token-file); a browser logs \
             in once with the login URL the server printed",
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    if request.method() == Method::POST
        && path == "/diff"
        && let Some(refused) = guard.diff_post_refusal(&request)
    {
        return refused;
    }
    let deadline = Instant::now() + guard.request_timeout;
    let handled = async {
        // The body first, then a place: a client that trickles its body keeps none.
        let request = match guard.read_body(request, held).await {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        // The semaphore is never closed.
        held.place = guard.places.clone().acquire_owned().await.ok();
        next.run(request).await
    };
    match tokio::time::timeout_at(deadline, handled).await {
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
            login_code: Some("c0de".into()),
            ..ServeOptions::default()
        };
        let shown = format!("{options:?}");
        assert!(
            !shown.contains("s3cr3t") && !shown.contains("c0de"),
            "{shown}"
        );
    }

    #[test]
    fn a_login_code_needs_a_token() {
        let code_alone = ServeOptions {
            login_code: Some("c0de".into()),
            ..ServeOptions::default()
        };
        assert!(code_alone.check().unwrap_err().contains("token"));
        let empty = ServeOptions {
            token: Some(String::new()),
            ..ServeOptions::default()
        };
        assert!(empty.check().is_err());
        let both = ServeOptions {
            token: Some("t".into()),
            login_code: Some("c".into()),
            ..ServeOptions::default()
        };
        assert_eq!(both.check(), Ok(()));
    }

    #[test]
    fn secrets_are_random_hex() {
        let a = random_secret().unwrap();
        let b = random_secret().unwrap();
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }

    fn login_request(code: &str) -> Request {
        Request::builder()
            .uri(format!("/login?code={code}"))
            .body(Body::empty())
            .unwrap()
    }

    fn guard_with_login(code: &str) -> Guard {
        let options = ServeOptions {
            token: Some("t0ken".into()),
            login_code: Some(code.into()),
            ..ServeOptions::default()
        };
        Guard::new("127.0.0.1:8080".parse().unwrap(), &options)
    }

    #[tokio::test]
    async fn a_login_code_works_once() {
        let guard = guard_with_login("c0de");
        assert_eq!(guard.login(&login_request("c0dE")).status(), 401);
        let response = guard.login(&login_request("c0de"));
        assert_eq!(response.status(), 303);
        assert_eq!(response.headers()[header::LOCATION], "/");
        let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
        let (pair, attributes) = cookie.split_once("; ").unwrap();
        assert_eq!(attributes, "HttpOnly; SameSite=Strict; Path=/");
        let (name, secret) = pair.split_once('=').unwrap();
        assert_eq!(name, "render-store-session-8080");
        assert!(secret != "c0de" && secret != "t0ken" && secret.len() == 64);
        assert_eq!(guard.login(&login_request("c0de")).status(), 401);

        let with_cookie = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::COOKIE, HeaderValue::from_str(value).unwrap());
            guard.authenticated(&headers)
        };
        assert!(with_cookie(&format!("a=b; {name}={secret}")));
        assert!(with_cookie(&format!("{name}={secret};other=1")));
        assert!(!with_cookie(&format!("{name}={secret}x")));
        assert!(!with_cookie(&format!("render-store-session-9090={secret}")));
        assert!(!with_cookie("render-store-session-8080="));
        assert!(!guard.authenticated(&HeaderMap::new()));
    }

    #[tokio::test]
    async fn an_expired_login_code_is_refused() {
        let guard = guard_with_login("c0de");
        let auth = guard.auth.as_ref().unwrap();
        let started = Instant::now();
        let mut login = auth.login.lock().unwrap();
        // As if the server had started a lifetime and a second ago.
        login.as_mut().unwrap().1 = started - Duration::from_secs(1);
        drop(login);
        assert_eq!(guard.login(&login_request("c0de")).status(), 401);
        assert!(auth.session.lock().unwrap().is_none());
    }

    #[test]
    fn no_cookie_is_accepted_before_a_login() {
        let guard = guard_with_login("c0de");
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("render-store-session-8080="),
        );
        assert!(!guard.authenticated(&headers));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer t0ken"),
        );
        assert!(guard.authenticated(&headers));
    }
}
