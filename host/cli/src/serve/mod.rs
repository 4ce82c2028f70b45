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
//! - `GET /`, `GET /ui/…` — the same for people, as HTML pages (the `ui` module), and
//!   `GET /ui/{namespace}/{name}/renders/{renderRef}/download`, a render as a YAML
//!   stream with Secret values as the pages show them
//! - `GET /login`, `POST /login` — a browser's login with the token (the `login` module)
//!
//! A bad query parameter is a 400 naming it; errors are `{"error": "..."}`.
//!
//! The server is meant for a machine other people and other programs share (CONTRACT.md
//! §12), so every request passes these checks before it is routed:
//!
//! - its head (request line and headers) is at most [`MAX_HEAD_BYTES`](guard::MAX_HEAD_BYTES);
//! - its `Host` must be one header, a name the server knows itself by
//!   ([`ServeOptions::allowed_hosts`]): a web page that rebinds its own name to
//!   127.0.0.1 cannot read renders, Secrets included;
//! - with a token ([`ServeOptions::token`]), `Authorization: Bearer TOKEN` on any path,
//!   or, on a path under the pages' base ([`pages_base`]), the cookie of a browser that
//!   logged in: every route is served both at `/` and under the base, and the pages
//!   link under the base;
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
//! server is busy. Request headers must arrive within [`ServeOptions::header_timeout`];
//! connections whose client has shown no token are at most
//! [`ServeOptions::max_unauthenticated_connections`] (a new one closes the oldest), and
//! those whose client did at most [`ServeOptions::max_connections`]; no response
//! is larger than [`ServeOptions::max_response_bytes`], every answer says
//! `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`, and error bodies
//! never show a path, URL or backend message: those go to the log.

mod access;
mod budget;
mod connection;
mod endpoints;
mod guard;
mod login;
mod token;
mod ui;

pub(crate) use access::TARGET as ACCESS_LOG_TARGET;
pub use login::{login_file_html, pages_base};
pub use token::{TokenFile, random_secret, read_token_file};

use connection::{Connection, run_connection};
pub(crate) use endpoints::observer_failure;
use endpoints::{
    capped_json, diff, diff_local, error, history, observer_error, params, render, resolve_name,
    resolve_name_in,
};
use guard::{Guard, check, host_of};

use axum::Router;
use axum::extract::Request;
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use render_store::Observer;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

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
    /// Render bytes the requests that read renders may hold at once (each reserves
    /// twice the stored size of what it reads, learned from a metadata request);
    /// a request that finds no room within 10 s is answered 503 with `Retry-After`.
    pub max_render_bytes_in_flight: usize,
    /// Connections whose client showed the token (or a session's cookie) open at once;
    /// another such client waits for a place, within its request timeout.
    pub max_connections: usize,
    /// Connections whose client has shown no token yet (new ones, probes, those answered
    /// 401) open at once; a new one past this closes the oldest of them.
    pub max_unauthenticated_connections: usize,
    /// Names accepted in the `Host` header (without a port) besides `localhost`, the
    /// loopback addresses and the address listened on.
    pub allowed_hosts: Vec<String>,
    /// The bearer token every request but `/healthz` must carry, which `POST /login`
    /// trades for a browser's session cookie; `None` lets every client in (the CLI asks
    /// for `--no-auth` for that).
    pub token: Option<String>,
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
    /// 32 requests at once: what they hold of renders is bounded apart
    /// ([`ServeOptions::max_render_bytes_in_flight`]).
    pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 32;
    /// 1 GiB: two diffs of the largest renders the store takes (64 MiB each) at once,
    /// or a few hundred of usual ones.
    pub const DEFAULT_MAX_RENDER_BYTES_IN_FLIGHT: usize = 1 << 30;
    /// 256 connections: a few browsers and tools need a handful each, and each costs a
    /// descriptor and hyper's buffers.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
    /// 64 connections that showed no token: probes and clients on their way to a 401
    /// hold one for a moment each.
    pub const DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS: usize = 64;
}

impl ServeOptions {
    /// What is wrong with the options, if anything: an `allowed_hosts` entry that is not
    /// a host name or IP address, no place for a request or a connection, or an empty
    /// token.
    pub fn check(&self) -> Result<(), String> {
        if self.max_concurrent_requests == 0 {
            return Err("--max-concurrent-requests must be at least 1".to_string());
        }
        if self.max_render_bytes_in_flight == 0 {
            return Err("--max-render-bytes-in-flight must be at least 1".to_string());
        }
        if self.max_connections == 0 {
            return Err("--max-connections must be at least 1".to_string());
        }
        if self.max_unauthenticated_connections == 0 {
            return Err("--max-unauthenticated-connections must be at least 1".to_string());
        }
        if self.token.as_deref().is_some_and(str::is_empty) {
            return Err("the token is empty: it would let anyone in".to_string());
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
            max_render_bytes_in_flight: Self::DEFAULT_MAX_RENDER_BYTES_IN_FLIGHT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            max_unauthenticated_connections: Self::DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS,
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
            .field("body_timeout", &self.body_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_diff_body_bytes", &self.max_diff_body_bytes)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field(
                "max_render_bytes_in_flight",
                &self.max_render_bytes_in_flight,
            )
            .field("max_connections", &self.max_connections)
            .field(
                "max_unauthenticated_connections",
                &self.max_unauthenticated_connections,
            )
            .field("allowed_hosts", &self.allowed_hosts)
            .field("token", &self.token.as_ref().map(|_| "(set)"))
            .finish()
    }
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
    /// The path the pages' links start with: [`pages_base`] of the token, or nothing
    /// without one.
    base: Arc<str>,
    /// What the requests that read renders may hold at once.
    renders: Arc<budget::RenderBudget>,
}

/// The routes over an observer, without the checks of [`serve_with`] (no `Host`, token,
/// timeout or concurrency checks) and with the default response cap.
pub fn router(observer: Arc<Observer>) -> Router {
    routes(App {
        observer,
        max_response_bytes: ServeOptions::DEFAULT_MAX_RESPONSE_BYTES,
        max_request_bytes: ServeOptions::DEFAULT_MAX_REQUEST_BYTES,
        base: Arc::from(""),
        renders: Arc::new(budget::RenderBudget::new(
            ServeOptions::DEFAULT_MAX_RENDER_BYTES_IN_FLIGHT,
        )),
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
        .route("/images", get(ui::images_page))
        .route("/changes", get(ui::changes_page))
        .route("/assets/{file}", get(ui::asset))
        .route("/ui/{namespace}/{name}", get(ui::history_page))
        .route(
            "/ui/{namespace}/{name}/renders/{render_ref}",
            get(ui::render_page),
        )
        .route(
            "/ui/{namespace}/{name}/renders/{render_ref}/download",
            get(ui::render_download),
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

/// The largest read and write buffer of a connection, which bounds how much of a
/// response hyper holds beyond what the response body has not handed over yet, and a
/// request's head: hyper answers 431 when its buffer fills before the head ends (it
/// reads past this size before it gives up, so [`guard::MAX_HEAD_BYTES`] is checked
/// again on every head it parses).
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
    let admission = guard.admission.clone();
    let base = guard.auth.as_ref().map(|a| a.base()).unwrap_or_default();
    let routes = routes(App {
        observer,
        max_response_bytes: options.max_response_bytes,
        max_request_bytes: options.max_request_bytes,
        base: Arc::from(base),
        renders: Arc::new(budget::RenderBudget::new(
            options.max_render_bytes_in_flight,
        )),
    });
    // Around the whole router, not as its layer: the guard takes the pages' base off a
    // path before the route is chosen.
    let app = tower::ServiceBuilder::new()
        .layer(axum::middleware::from_fn_with_state(guard, check))
        .service(routes);
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper's header timeout needs a timer to run; without one it is silently off.
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout)
        .max_buf_size(CONNECTION_BUFFER_BYTES);
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        // Every connection is accepted: Admission bounds those that show no token by
        // closing the oldest, and makes those that do wait for a place.
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
        let admitted = admission.admit();
        let connection = Connection {
            write_deadline: Arc::new(deadline),
            admitted: admitted.clone(),
        };
        let service = tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: Request<hyper::body::Incoming>| {
                // hyper answers one request of a connection at a time: a new one means the
                // previous answer was sent.
                connection.write_deadline.send_replace(None);
                request.extensions_mut().insert(connection.clone());
                request.map(axum::body::Body::new)
            },
        );
        let served = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        tokio::spawn(run_connection(
            graceful.watch(served),
            watched,
            admission.clone(),
            admitted,
        ));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_never_shown() {
        let options = ServeOptions {
            token: Some("s3cr3t".into()),
            ..ServeOptions::default()
        };
        let shown = format!("{options:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }

    #[test]
    fn options_without_room_or_with_an_empty_token_are_refused() {
        let empty = ServeOptions {
            token: Some(String::new()),
            ..ServeOptions::default()
        };
        assert!(empty.check().is_err());
        let no_room = ServeOptions {
            max_unauthenticated_connections: 0,
            ..ServeOptions::default()
        };
        assert!(no_room.check().unwrap_err().contains("unauthenticated"));
        let token = ServeOptions {
            token: Some("t".into()),
            ..ServeOptions::default()
        };
        assert_eq!(token.check(), Ok(()));
    }
}
