//! How a browser shows the token: a login that trades the token for a session cookie,
//! and the base path that cookie is confined to.
//!
//! A browser sends no bearer token by itself, so a person logs a browser in once, by
//! posting the token to `POST /login`: from the page `GET /login` (paste it), or from
//! the private file `serve` writes beside the token it makes, which posts it by itself.
//! The token never travels in a URL: a URL opened from a terminal lands on the command
//! line of the opener and the browser, which every local user can read in `/proc`.
//!
//! Browsers send a host's cookies to every port of it: a cookie for `/` on 127.0.0.1
//! would reach a page another user serves on 127.0.0.1:9999. So the pages and endpoints
//! a session may reach live under a base path derived from the token
//! ([`pages_base`]), and the cookie's `Path` is that base: a browser sends it to no
//! path outside it, and another server on the host cannot learn the base (it is in no
//! page another origin can read, never in a referrer, and derived one way from the
//! token). A bearer token is accepted on every path, the base included.

use super::endpoints::error;
use super::guard::cookies;
use super::token::random_secret;
use super::ui::with_page_headers;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use http_body_util::BodyExt as _;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;
use subtle::ConstantTimeEq;

/// Sessions kept at once: each browser that logs in makes one; past this many, the
/// oldest ends (its browser logs in again).
const MAX_SESSIONS: usize = 32;

/// The largest login form read: a token is a line.
const MAX_LOGIN_BODY: usize = 8 << 10;

/// The base path of the pages and endpoints a session may reach, for `token`: `/s/`
/// and 32 hex digits of SHA-256 over a label and the token. The same token gives the
/// same base, so a bookmark lasts as long as a `--token-file` does; nobody can tell the
/// token from it.
pub fn pages_base(token: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"convoy render-store pages\n")
        .chain_update(token.as_bytes())
        .finalize();
    format!("/s/{}", hex_digits(&digest[..16]))
}

fn hex_digits(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// The token, and the sessions of the browsers that logged in with it. Secrets are
/// kept as their SHA-256: comparing digests takes the same time whatever the length of
/// what a client sends.
pub(super) struct Auth {
    token: [u8; 32],
    sessions: Mutex<VecDeque<[u8; 32]>>,
    /// The cookie's name; the port in it keeps two servers' cookies apart in a browser
    /// that holds both.
    cookie: String,
    base: String,
}

impl Auth {
    pub(super) fn new(token: &str, port: u16) -> Auth {
        Auth {
            token: digest(token),
            sessions: Mutex::new(VecDeque::new()),
            cookie: format!("render-store-session-{port}"),
            base: pages_base(token),
        }
    }

    /// The base path sessions are confined to.
    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// Whether the headers carry `Authorization: Bearer TOKEN`.
    pub(super) fn bearer(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| {
                let (scheme, token) = h.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .is_some_and(|token| self.is_token(token))
    }

    fn is_token(&self, token: &str) -> bool {
        bool::from(digest(token).ct_eq(&self.token))
    }

    /// Whether the headers carry the cookie of a session (only asked for a request
    /// under the base: a browser sends the cookie nowhere else).
    pub(super) fn session(&self, headers: &HeaderMap) -> bool {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if sessions.is_empty() {
            return false;
        }
        cookies(headers, &self.cookie).any(|value| {
            let value = digest(value);
            // Every session is compared: how many match says nothing by its time.
            sessions
                .iter()
                .fold(subtle::Choice::from(0), |any, s| any | value.ct_eq(s))
                .into()
        })
    }

    /// `GET /login`: the page to paste the token into. `POST /login` with the form
    /// field `token`: a new session for this browser and a page that goes on to the
    /// base; a wrong token is a 401 with the page again.
    pub(super) async fn login(&self, request: Request, body_timeout: Duration) -> Response {
        match *request.method() {
            Method::GET | Method::HEAD => return login_page(StatusCode::OK, None),
            Method::POST => {}
            _ => {
                return error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "log in with POST /login and the form field token (the page GET /login \
                     sends it)",
                );
            }
        }
        let form = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|t| {
                t.trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            });
        if !form {
            return error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "POST /login takes a form (Content-Type application/x-www-form-urlencoded) \
                 with the field token",
            );
        }
        let read = http_body_util::Limited::new(request.into_body(), MAX_LOGIN_BODY).collect();
        let body = match tokio::time::timeout(body_timeout, read).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(_)) => {
                return error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("a login form is at most {MAX_LOGIN_BODY} bytes"),
                );
            }
            Err(_) => {
                return error(
                    StatusCode::REQUEST_TIMEOUT,
                    "the login form did not arrive within the body timeout",
                );
            }
        };
        let token = url::form_urlencoded::parse(&body)
            .find(|(name, _)| name == "token")
            .map(|(_, value)| value.trim().to_string())
            .unwrap_or_default();
        if !self.is_token(&token) {
            tracing::warn!("refused a login with a wrong token");
            return login_page(
                StatusCode::UNAUTHORIZED,
                Some("That is not this server's token."),
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
        {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            if sessions.len() == MAX_SESSIONS {
                sessions.pop_front();
            }
            sessions.push_back(digest(&secret));
        }
        // A page that goes on by itself rather than a redirect: after a post from
        // another origin (the private login file), a browser sends a SameSite=Strict
        // cookie on none of the redirects that follow, but it does on a navigation
        // this server's own page starts.
        let mut response = logged_in_page(&self.base);
        let cookie = format!(
            "{}={secret}; HttpOnly; SameSite=Strict; Path={}",
            self.cookie, self.base
        );
        match HeaderValue::from_str(&cookie) {
            Ok(value) => {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            // Hex digits, and a name and path of ASCII letters, digits, dashes and
            // slashes: always valid.
            Err(_) => return error(StatusCode::INTERNAL_SERVER_ERROR, "the server failed"),
        }
        response
    }
}

/// A page of the login's own: no breadcrumb, no script.
fn login_shell(title: &str, head: Markup, content: Markup) -> String {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) " · render store" }
                link rel="stylesheet" href="/assets/app.css";
                (head)
            }
            "\n"
            body {
                main id="main" class="login" { "\n" (content) "\n" }
            }
            "\n"
        }
        "\n"
    }
    .into_string()
}

/// The page to paste the token into, with `message` above it.
pub(super) fn login_page(status: StatusCode, message: Option<&str>) -> Response {
    let body = login_shell(
        "Log in",
        html! {},
        html! {
            h1 { "Log in" } "\n"
            @if let Some(message) = message {
                p class="error" role="alert" { (message) } "\n"
            }
            p {
                "This server asks for its token. Paste it here to log this browser in: the \
                 content of the token file the server named when it started (or of its "
                code { "--token-file" } "). A browser on the machine that runs the server \
                 can instead open the login file the server named, which does this by itself."
            } "\n"
            form method="post" action="/login" {
                label for="token" { "Token" } " "
                input type="password" id="token" name="token" autocomplete="off" required
                    autofocus;
                " "
                button type="submit" { "Log in" }
            }
        },
    );
    with_page_headers(status, body)
}

/// The answer to a login: a page that opens the base right away.
fn logged_in_page(base: &str) -> Response {
    let home = format!("{base}/");
    let body = login_shell(
        "Logged in",
        html! { meta http-equiv="refresh" content={ "0; url=" (home) }; },
        html! {
            h1 { "Logged in" } "\n"
            p { a href=(home) { "Go on to the releases" } } "\n"
        },
    );
    with_page_headers(StatusCode::OK, body)
}

/// The answer to a request without the token: for a browser asking for a page, the
/// login page (status 401); for anything else, a JSON error.
pub(super) fn unauthorized(request: &Request) -> Response {
    let wants_page = matches!(*request.method(), Method::GET | Method::HEAD)
        && request
            .headers()
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("text/html"));
    let mut response = if wants_page {
        login_page(
            StatusCode::UNAUTHORIZED,
            Some("This page needs a login: this browser has no session here."),
        )
    } else {
        error(
            StatusCode::UNAUTHORIZED,
            "this server needs its token: send Authorization: Bearer TOKEN with the token \
             of the file the server named at start (or of --token-file); a browser logs in \
             at /login",
        )
    };
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The login file `serve` writes beside the token it makes: a page that posts the token
/// to `login_url` as soon as a browser opens it (a button does it where script is
/// off). It holds the token, so it is written where only the token's owner can read
/// it; the browser is given its path, which tells nobody anything.
pub fn login_file_html(login_url: &str, token: &str) -> String {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="referrer" content="no-referrer";
                title { "Log in · render store" }
            }
            "\n"
            body {
                form id="login" method="post" action=(login_url) {
                    input type="hidden" name="token" value=(token);
                    p { "Logging this browser in to the render store at " (login_url) "…" }
                    button type="submit" { "Log in" }
                }
                "\n"
                script { (PreEscaped("document.getElementById(\"login\").submit();")) }
                "\n"
            }
        }
        "\n"
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn post_login(token: &str) -> Request {
        Request::builder()
            .method(Method::POST)
            .uri("/login")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(format!("token={token}")))
            .unwrap()
    }

    fn with_cookie(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_base_is_the_tokens_own_and_reveals_nothing_of_it() {
        let base = pages_base("t0ken");
        assert_eq!(base, pages_base("t0ken"));
        assert_ne!(base, pages_base("t0ken2"));
        let hex = base.strip_prefix("/s/").unwrap();
        assert_eq!(hex.len(), 32);
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!base.contains("t0ken"));
    }

    #[tokio::test]
    async fn a_login_trades_the_token_for_a_cookie_confined_to_the_base() {
        let auth = Auth::new("t0ken", 8080);
        let timeout = Duration::from_secs(5);
        assert_eq!(auth.login(post_login("t0keN"), timeout).await.status(), 401);
        let response = auth.login(post_login("t0ken"), timeout).await;
        assert_eq!(response.status(), 200);
        let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
        let (pair, attributes) = cookie.split_once("; ").unwrap();
        assert_eq!(
            attributes,
            format!("HttpOnly; SameSite=Strict; Path={}", auth.base())
        );
        let (name, secret) = pair.split_once('=').unwrap();
        assert_eq!(name, "render-store-session-8080");
        assert!(secret != "t0ken" && secret.len() == 64);
        assert!(auth.session(&with_cookie(&format!("a=b; {name}={secret}"))));
        assert!(!auth.session(&with_cookie(&format!("{name}={secret}x"))));
        assert!(!auth.session(&with_cookie(&format!("render-store-session-9090={secret}"))));
        // A second browser logs in with the same token and gets a session of its own;
        // the first one's still works.
        let again = auth.login(post_login("t0ken"), timeout).await;
        let second = again.headers()[header::SET_COOKIE].to_str().unwrap();
        let second = second.split_once("; ").unwrap().0.to_string();
        assert_ne!(second, pair);
        assert!(auth.session(&with_cookie(&second)));
        assert!(auth.session(&with_cookie(pair)));
    }

    #[tokio::test]
    async fn the_oldest_session_ends_past_the_limit() {
        let auth = Auth::new("t0ken", 8080);
        let mut cookies = Vec::new();
        for _ in 0..=MAX_SESSIONS {
            let r = auth
                .login(post_login("t0ken"), Duration::from_secs(5))
                .await;
            let c = r.headers()[header::SET_COOKIE].to_str().unwrap();
            cookies.push(c.split_once("; ").unwrap().0.to_string());
        }
        assert!(!auth.session(&with_cookie(&cookies[0])));
        assert!(cookies[1..].iter().all(|c| auth.session(&with_cookie(c))));
    }

    #[tokio::test]
    async fn a_login_takes_a_form_and_nothing_in_the_url() {
        let auth = Auth::new("t0ken", 8080);
        let timeout = Duration::from_secs(5);
        let get = Request::builder()
            .uri("/login?token=t0ken")
            .body(Body::empty())
            .unwrap();
        let page = auth.login(get, timeout).await;
        assert_eq!(page.status(), 200);
        assert!(page.headers().get(header::SET_COOKIE).is_none());
        let as_text = Request::builder()
            .method(Method::POST)
            .uri("/login")
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from("token=t0ken"))
            .unwrap();
        assert_eq!(auth.login(as_text, timeout).await.status(), 415);
        let huge = post_login(&"a".repeat(MAX_LOGIN_BODY));
        assert_eq!(auth.login(huge, timeout).await.status(), 413);
    }

    #[test]
    fn the_login_file_posts_the_token_and_escapes_what_it_holds() {
        let page = login_file_html("http://127.0.0.1:8080/login", "ab\"><x");
        assert!(
            page.contains(r#"action="http://127.0.0.1:8080/login""#),
            "{page}"
        );
        assert!(page.contains(r#"value="ab&quot;&gt;&lt;x""#), "{page}");
        assert!(page.contains(r#"method="post""#));
    }
}
