//! The checks every request passes before it is routed: the size of its head, `Host`,
//! the token or a session's cookie (under the pages' base path, which is taken off the
//! path here), the origin and type of a `POST /diff`, the body read whole before a
//! place is taken, the place itself and the request's time.

use super::ServeOptions;
use super::connection::{Admission, Connection, Held, Sending};
use super::endpoints::error;
use super::login::{Auth, unauthorized};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::Body as _;
use http_body_util::BodyExt as _;
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The largest request head (request line and headers) answered: a bigger one is a
/// 431. hyper's own bound is on its read buffer, which it fills beyond this, so the
/// head is measured here too.
pub(super) const MAX_HEAD_BYTES: usize = 64 << 10;

/// The checks every request passes before a handler runs.
pub(super) struct Guard {
    /// Names accepted in `Host`, lowercase.
    names: HashSet<String>,
    /// Addresses accepted in `Host` besides the loopback ones.
    addresses: HashSet<IpAddr>,
    /// The token and the browsers' sessions, when there is a token.
    pub(super) auth: Option<Auth>,
    /// Which connections showed the token, and the bounds on those that did not.
    pub(super) admission: Arc<Admission>,
    places: Arc<Semaphore>,
    body_places: Arc<Semaphore>,
    body_timeout: Duration,
    request_timeout: Duration,
    write_timeout: Duration,
    max_request_bytes: usize,
    max_diff_body_bytes: usize,
}

impl Guard {
    /// The guard for `options`, which [`ServeOptions::check`] accepted.
    pub(super) fn new(listening_on: SocketAddr, options: &ServeOptions) -> Self {
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
        let auth = options
            .token
            .as_ref()
            .map(|token| Auth::new(token, listening_on.port()));
        Guard {
            names,
            addresses,
            auth,
            admission: Arc::new(Admission::new(
                options.max_connections,
                options.max_unauthenticated_connections,
            )),
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

    /// Why the request's `Host` (and the authority of an absolute URI) is refused, with
    /// the status to answer.
    fn host_refusal(&self, request: &Request) -> Option<(StatusCode, &'static str)> {
        let forbidden = |why| Some((StatusCode::FORBIDDEN, why));
        let mut hosts = request.headers().get_all(header::HOST).iter();
        let host = hosts.next().and_then(|h| h.to_str().ok());
        if hosts.next().is_some() {
            // Which of them a proxy before this server checked is anybody's guess.
            return Some((
                StatusCode::BAD_REQUEST,
                "the request has more than one Host header",
            ));
        }
        let Some(host) = host else {
            return forbidden("the request has no Host header");
        };
        if !self.host_allowed(host) {
            tracing::warn!("refused a request for Host {host:?}");
            return forbidden(
                "this server does not answer for that Host (start it with --allow-host NAME \
                 to add a name)",
            );
        }
        if let Some(authority) = request.uri().authority()
            && !self.host_allowed(authority.as_str())
        {
            return forbidden("this server does not answer for that request URI's host");
        }
        None
    }

    /// Whether the request carries the token, or (`under_base`: its path was under the
    /// pages' base) the cookie of a browser that logged in, when there is a token.
    fn authenticated(&self, headers: &HeaderMap, under_base: bool) -> bool {
        match &self.auth {
            None => true,
            Some(auth) => auth.bearer(headers) || (under_base && auth.session(headers)),
        }
    }

    /// Takes the pages' base path off the request's path; whether it was there.
    fn strip_base(&self, request: &mut Request) -> bool {
        let Some(auth) = &self.auth else {
            return false;
        };
        let uri = request.uri();
        let Some(rest) = uri.path().strip_prefix(auth.base()) else {
            return false;
        };
        if !(rest.is_empty() || rest.starts_with('/')) {
            return false;
        }
        let path = if rest.is_empty() { "/" } else { rest };
        let path_and_query = match uri.query() {
            Some(q) => format!("{path}?{q}"),
            None => path.to_string(),
        };
        let mut parts = uri.clone().into_parts();
        match path_and_query.parse() {
            Ok(pq) => parts.path_and_query = Some(pq),
            Err(_) => return false,
        }
        match Uri::from_parts(parts) {
            Ok(stripped) => {
                *request.uri_mut() = stripped;
                true
            }
            Err(_) => false,
        }
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
pub(super) fn cookies<'h>(
    headers: &'h HeaderMap,
    name: &'h str,
) -> impl Iterator<Item = &'h str> + 'h {
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

pub(super) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let connection = request.extensions().get::<Connection>().cloned();
    let (method, uri, started) = (
        request.method().clone(),
        request.uri().clone(),
        Instant::now(),
    );
    let mut held = Held::default();
    let mut response = guarded(&guard, request, next, &mut held).await;
    let base = guard.auth.as_ref().map(|a| a.base());
    super::access::log(&method, &uri, base, response.status(), started.elapsed());
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

/// The size of a request's head as it came: the request line, each header line and the
/// blank line that ends them (hyper keeps no copy, so it is summed up again).
fn head_bytes(request: &Request) -> usize {
    let line =
        request.method().as_str().len() + request.uri().to_string().len() + "  HTTP/1.1\r\n".len();
    let headers: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + ": \r\n".len() + value.len())
        .sum();
    line + headers + 2
}

pub(super) async fn guarded(
    guard: &Guard,
    mut request: Request,
    next: Next,
    held: &mut Held,
) -> Response {
    if head_bytes(&request) > MAX_HEAD_BYTES {
        return error(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("the request's line and headers are over {MAX_HEAD_BYTES} bytes"),
        );
    }
    let path = request.uri().path();
    if path == "/healthz" {
        return next.run(request).await;
    }
    if let Some((status, why)) = guard.host_refusal(&request) {
        return error(status, why);
    }
    if path == "/login" {
        return match &guard.auth {
            Some(auth) => auth.login(request, guard.body_timeout).await,
            None => error(
                StatusCode::NOT_FOUND,
                "this server has no login: it was started with --no-auth",
            ),
        };
    }
    // The style and script of the pages hold nothing of the store: the login page
    // needs them before there is a session.
    let public = path.starts_with("/assets/");
    let under_base = guard.strip_base(&mut request);
    if !public && !guard.authenticated(request.headers(), under_base) {
        return unauthorized(&request);
    }
    let deadline = Instant::now() + guard.request_timeout;
    let connection = request.extensions().get::<Connection>().cloned();
    if !public && let Some(connection) = connection {
        // A client that showed the token keeps its connection among those of such
        // clients, which no crowd of connections that showed nothing can push out.
        let trusted = guard.admission.trust(&connection.admitted);
        if tokio::time::timeout_at(deadline, trusted).await.is_err() {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many connections are open (serve --max-connections); try again",
            );
        }
    }
    if request.method() == Method::POST
        && request.uri().path() == "/diff"
        && let Some(refused) = guard.diff_post_refusal(&request)
    {
        return refused;
    }
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
pub(super) enum Host {
    Address(IpAddr),
    /// Lowercase.
    Name(String),
}

pub(super) fn host_of(text: &str) -> Option<Host> {
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

pub(super) fn valid_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
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
    fn the_base_is_taken_off_and_a_cookie_counts_only_under_it() {
        let options = ServeOptions {
            token: Some("t0ken".into()),
            ..ServeOptions::default()
        };
        let guard = Guard::new("127.0.0.1:8080".parse().unwrap(), &options);
        let base = super::super::login::pages_base("t0ken");
        let strip = |uri: &str| {
            let mut request = Request::builder().uri(uri).body(Body::empty()).unwrap();
            let under = guard.strip_base(&mut request);
            (under, request.uri().to_string())
        };
        assert_eq!(strip(&base), (true, "/".to_string()));
        assert_eq!(
            strip(&format!("{base}/ui/ns/app?limit=5")),
            (true, "/ui/ns/app?limit=5".to_string())
        );
        assert_eq!(
            strip(&format!("{base}x/ui")),
            (false, format!("{base}x/ui"))
        );
        assert_eq!(strip("/ui/ns/app"), (false, "/ui/ns/app".to_string()));
        let bearer = {
            let mut h = HeaderMap::new();
            h.insert(
                header::AUTHORIZATION,
                HeaderValue::from_static("Bearer t0ken"),
            );
            h
        };
        assert!(guard.authenticated(&bearer, false) && guard.authenticated(&bearer, true));
        assert!(!guard.authenticated(&HeaderMap::new(), true));
        let open = Guard::new("127.0.0.1:8080".parse().unwrap(), &ServeOptions::default());
        assert!(open.authenticated(&HeaderMap::new(), false));
        let mut request = Request::builder().uri(&base).body(Body::empty()).unwrap();
        assert!(!open.strip_base(&mut request), "no token, no base");
    }

    #[test]
    fn a_head_is_measured_as_it_was_sent() {
        let request = Request::builder()
            .uri("/history?namespace=ns")
            .header("host", "localhost")
            .header("x-a", "12345")
            .body(Body::empty())
            .unwrap();
        let sent = "GET /history?namespace=ns HTTP/1.1\r\nhost: localhost\r\nx-a: 12345\r\n\r\n";
        assert_eq!(head_bytes(&request), sent.len());
    }
}
