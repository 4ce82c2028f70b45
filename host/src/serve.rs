//! The observer's HTTP endpoints:
//!
//! - `GET /healthz`
//! - `GET /history?namespace=&name=` — JSON, oldest first; 503 without a store
//! - `GET /renders/{namespace}/{name}/{renderRef}` — the canonical bytes; 404 when
//!   missing; a corrupt blob is a 500 with a message, never its content
//! - `GET /diff?namespace=&name=&render=REF[&against=REF]` — JSON diff; `against`
//!   defaults to the newest history entry
//!
//! A bad query parameter is a 400 naming it; errors are `{"error": "..."}`.

use crate::error::Error;
use crate::json_view::{diff_json, history_json};
use crate::observer::{Observer, ObserverError};
use crate::types::Release;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

/// The routes over an observer.
pub fn router(observer: Arc<Observer>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/history", get(history))
        .route("/renders/{namespace}/{name}/{render_ref}", get(render))
        .route("/diff", get(diff))
        .with_state(observer)
}

/// Serves the routes on `listener` until the process ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    observer: Arc<Observer>,
) -> std::io::Result<()> {
    axum::serve(listener, router(observer)).await
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

fn observer_error(e: ObserverError) -> Response {
    let status = match &e {
        ObserverError::NoStore => StatusCode::SERVICE_UNAVAILABLE,
        ObserverError::NoHistory(_) => StatusCode::NOT_FOUND,
        ObserverError::Store(Error::InvalidInput(_) | Error::InvalidObject { .. }) => {
            StatusCode::BAD_REQUEST
        }
        ObserverError::Store(Error::NotFound(_)) => StatusCode::NOT_FOUND,
        ObserverError::Store(Error::Bucket(_) | Error::Backend(_)) => StatusCode::BAD_GATEWAY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e)
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

async fn history(
    State(observer): State<Arc<Observer>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let p = match params(&query, &["namespace", "name"], &[]) {
        Ok(p) => p,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    let release = Release::new(p[0].unwrap_or_default(), p[1].unwrap_or_default());
    match observer.history(&release).await {
        Ok(entries) => match history_json(observer.runtime(), &entries).await {
            Ok(v) => json_response(StatusCode::OK, v),
            Err(e) => observer_error(e.into()),
        },
        Err(e) => observer_error(e),
    }
}

async fn render(
    State(observer): State<Arc<Observer>>,
    Path((namespace, name, render_ref)): Path<(String, String, String)>,
) -> Response {
    match observer
        .render(&Release::new(namespace, name), &render_ref)
        .await
    {
        Ok(bytes) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/x-ndjson")],
            bytes,
        )
            .into_response(),
        Err(e) => observer_error(e),
    }
}

async fn diff(
    State(observer): State<Arc<Observer>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let p = match params(&query, &["namespace", "name", "render"], &["against"]) {
        Ok(p) => p,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    let release = Release::new(p[0].unwrap_or_default(), p[1].unwrap_or_default());
    match observer
        .diff(&release, p[2].unwrap_or_default(), p[3])
        .await
    {
        Ok(d) => json_response(StatusCode::OK, diff_json(&d)),
        Err(e) => observer_error(e),
    }
}
