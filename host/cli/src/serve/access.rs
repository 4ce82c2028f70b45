//! The access log: a line a request, at level info on its own target (on by default for
//! `serve`; `RENDER_STORE_LOG` turns it off or up), so the log of an observer says what
//! it was asked and how it answered.

use axum::http::{Method, StatusCode, Uri};
use std::time::Duration;

/// The tracing target of the access log.
pub(crate) const TARGET: &str = "render_store_cli::serve::access";

/// Logs one answered request. The pages' base path, a secret of the sessions, is
/// written as `/s/…`; the path and query are quoted, so nothing a client sent can
/// forge a line. Liveness probes (`/healthz`) are not logged: they come every few
/// seconds and say nothing.
pub(super) fn log(
    method: &Method,
    uri: &Uri,
    base: Option<&str>,
    status: StatusCode,
    took: Duration,
) {
    let path = uri.path();
    if path == "/healthz" {
        return;
    }
    let shown = match base.and_then(|b| path.strip_prefix(b)) {
        Some(rest) => format!("/s/…{rest}"),
        None => path.to_string(),
    };
    let shown = match uri.query() {
        Some(q) => format!("{shown}?{q}"),
        None => shown,
    };
    tracing::info!(
        target: TARGET,
        "{method} {shown:?} {} {} ms",
        status.as_u16(),
        took.as_millis()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_this_module() {
        // This test's own module is one level below the access log's.
        assert_eq!(Some(TARGET), module_path!().strip_suffix("::tests"));
    }
}
