//! The checks every request passes before a handler runs: `Host`, token or login
//! cookie, the origin and type of a `POST /diff`, the body read whole before a place is
//! taken, the place itself and the request's time.

use super::ServeOptions;
use super::connection::{Connection, Held, Sending};
use super::endpoints::error;
use super::token::random_secret;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Body as _;
use http_body_util::BodyExt as _;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The checks every request passes before a handler runs.
pub(super) struct Guard {
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
pub(super) struct Auth {
    token: [u8; 32],
    /// The login code and when it stops working, until it is used.
    login: Mutex<Option<([u8; 32], Instant)>>,
    /// The secret of the cookie the login gave, once it happened.
    session: Mutex<Option<[u8; 32]>>,
    /// The cookie's name. Browsers send a host's cookies to every port of it, so the
    /// port is in the name: two servers on one host do not overwrite each other's.
    cookie: String,
}

pub(super) fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
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

pub(super) async fn guarded(
    guard: &Guard,
    request: Request,
    next: Next,
    held: &mut Held,
) -> Response {
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
