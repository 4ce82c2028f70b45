//! `serve`: the observer's HTTP endpoints and web pages over the store, with the token
//! made (or read), the login file written, and what a person needs printed on standard
//! error. The server itself is [`crate::serve`].

use super::{Context, with_keys};
use crate::args::ServeArgs;
use crate::serve::ServeOptions;
use anyhow::{Context as _, Result};
use render_store::{Observer, RenderStore};

/// Serves until SIGINT or SIGTERM.
pub async fn run(ctx: &Context<'_>, args: ServeArgs) -> Result<()> {
    match crate::serve::raise_open_file_limit() {
        Ok(Some((from, to))) => tracing::debug!("raised the open-file limit from {from} to {to}"),
        Ok(None) => {}
        Err(e) => tracing::warn!(
            "could not raise the open-file limit to its hard limit ({e}): the \
             server may run out of descriptors with many connections"
        ),
    }
    let token = match (&args.token_file, args.no_auth) {
        (_, true) => None,
        (Some(path), false) => {
            Some(crate::serve::read_token_file(path).map_err(anyhow::Error::msg)?)
        }
        (None, false) => Some(crate::serve::random_secret().map_err(anyhow::Error::msg)?),
    };
    let options = ServeOptions {
        header_timeout: args.header_timeout,
        body_timeout: args.body_timeout,
        request_timeout: args.request_timeout,
        write_timeout: args.write_timeout,
        max_response_bytes: args.max_response_bytes,
        max_request_bytes: args.max_request_bytes,
        max_diff_body_bytes: args.max_diff_body_bytes,
        max_concurrent_requests: args.max_concurrent_requests,
        max_render_bytes_in_flight: args.max_render_bytes_in_flight,
        max_connections: args.max_connections,
        max_unauthenticated_connections: args.max_unauthenticated_connections,
        allowed_hosts: args.allow_host,
        token: token.clone(),
    };
    options.check().map_err(|m| anyhow::anyhow!("serve: {m}"))?;
    let store = match RenderStore::open(ctx.url)? {
        Some(store) => Some(with_keys(store, ctx.keys).await?),
        None => None,
    };
    let observer = std::sync::Arc::new(Observer::new(store)?.with_secrets(ctx.secrets));
    if observer.store().is_none() {
        tracing::warn!("no render store: /history answers 503 and /diff an error");
    }
    let listen = &args.listen;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    let addr = listener.local_addr()?;
    let stop = crate::serve::stop_signal().context("handling SIGINT and SIGTERM")?;
    // A browser on this machine reaches a server listening on every address through the
    // loopback one.
    let mut local = addr;
    if local.ip().is_unspecified() {
        local.set_ip(match local.ip() {
            std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let login_url = format!("http://{local}/login");
    // The token's file and the login file, when the server makes the token: removed
    // when this is dropped, after the server stopped.
    let made = match (&token, &args.token_file) {
        (Some(token), None) => {
            Some(crate::serve::TokenFile::create(token, &login_url).map_err(anyhow::Error::msg)?)
        }
        _ => None,
    };
    if let Some(made) = &made {
        eprintln!(
            "render-store: the token is in {}: send it as Authorization: Bearer TOKEN; the \
             file is removed when the server stops",
            made.path().display()
        );
        // A path, not a URL with a secret in it: what is opened lands on the command
        // lines of the opener and the browser, which every local user can read; the file
        // itself only this user can.
        eprintln!(
            "render-store: for the web pages, open {} in a browser of this user (it logs \
             the browser in; any browser, as often as needed)",
            file_url(made.login_path())
        );
    }
    if token.is_some() {
        eprintln!("render-store: a browser can also log in at {login_url} with the token");
    }
    if args.no_auth {
        eprintln!(
            "render-store: --no-auth: no token is asked for; every local user can read \
             every render, Secrets included"
        );
    }
    if !ctx.url.is_empty() {
        eprintln!(
            "render-store: reading {}",
            render_store::redact_url(ctx.url)
        );
    }
    eprintln!("render-store: serving on http://{addr}");
    crate::serve::serve_until(listener, observer, options, stop).await?;
    drop(made);
    eprintln!("render-store: stopped");
    Ok(())
}

/// `path` as a `file://` URL a terminal makes clickable (the path itself when it is not
/// absolute).
fn file_url(path: &std::path::Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| path.display().to_string())
}
