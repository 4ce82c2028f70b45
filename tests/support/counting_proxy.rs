//! HTTP requests counted on their way to an emulator: a proxy on a free port of
//! 127.0.0.1 that forwards each request whole and counts it. Shared by the request-count
//! tests (`tests/e2e/scale_counts.rs`) and the scale bench (`tests/benches/scale.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The proxy: where it listens, and how many requests it forwarded.
#[derive(Clone)]
pub struct CountingProxy {
    /// The address to send requests to instead of the upstream's.
    pub addr: SocketAddr,
    count: Arc<AtomicU64>,
}

impl CountingProxy {
    /// Listens on a free port and forwards every request to `upstream`
    /// (`http://host:port`), counting them.
    pub async fn start(upstream: String) -> CountingProxy {
        let count = Arc::new(AtomicU64::new(0));
        let client = reqwest::Client::new();
        let counted = count.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (client, upstream, counted) = (client.clone(), upstream.clone(), counted.clone());
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                forward(&client, &upstream, request).await
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        CountingProxy { addr, count }
    }

    /// The requests forwarded so far.
    pub fn requests(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

async fn forward(
    client: &reqwest::Client,
    upstream: &str,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes()).unwrap();
    let mut forwarded = client.request(method, format!("{upstream}{path}"));
    for (name, value) in &parts.headers {
        // The signature covers the host the client named: the emulators do not check it.
        if !matches!(
            name.as_str(),
            "host" | "content-length" | "connection" | "transfer-encoding"
        ) {
            forwarded = forwarded.header(name.as_str(), value.as_bytes());
        }
    }
    let answer = match forwarded.body(body.to_vec()).send().await {
        Ok(a) => a,
        Err(e) => return (axum::http::StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let status = axum::http::StatusCode::from_u16(answer.status().as_u16()).unwrap();
    let headers: Vec<_> = answer
        .headers()
        .iter()
        .filter(|(n, _)| !matches!(n.as_str(), "connection" | "transfer-encoding"))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let mut response = (status, answer.bytes().await.unwrap_or_default()).into_response();
    for (name, value) in headers {
        response.headers_mut().insert(name, value);
    }
    response
}
