//! Deadlines reach the bucket request in flight (CONTRACT.md §15): on an s3:// endpoint
//! that accepts connections and never answers, each operation of a store with a deadline
//! ends within 100 ms of it with the deadline's error; a dropped call closes its
//! connection; the cloud client's own timeouts are URL parameters; the CLI's --timeout
//! ends the command.

use super::support::*;
use render_store::{Error, NewEntry, RenderStore};
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A listener on 127.0.0.1 that accepts every connection and never answers. It keeps
/// the connections it accepted, so a test can see whether the client closed them.
struct BlackHole {
    addr: std::net::SocketAddr,
    accepted: Arc<Mutex<Vec<TcpStream>>>,
}

impl BlackHole {
    fn new() -> BlackHole {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(Mutex::new(Vec::new()));
        let held = accepted.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                held.lock().unwrap().push(conn);
            }
        });
        BlackHole { addr, accepted }
    }

    fn url(&self) -> String {
        format!(
            "s3://renders?region=us-east-1&endpoint=http://{}&use_path_style=true&anonymous=true",
            self.addr
        )
    }

    /// Whether every connection accepted so far was closed by the client (a read
    /// answers end of file after the request's bytes), waiting up to a second.
    fn all_closed(&self) -> bool {
        let conns: Vec<TcpStream> = self
            .accepted
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.try_clone().unwrap())
            .collect();
        !conns.is_empty()
            && conns.into_iter().all(|mut c| {
                c.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                let mut buf = [0u8; 4096];
                loop {
                    match c.read(&mut buf) {
                        Ok(0) => return true,
                        Ok(_) => continue,
                        Err(_) => return false,
                    }
                }
            })
    }
}

const REF: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// Every operation of a store with a timeout, on a bucket that never answers.
#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_ends_every_operation_on_a_black_hole() {
    let hole = BlackHole::new();
    let deadline = Duration::from_millis(300);
    let store = RenderStore::open(&hole.url())
        .unwrap()
        .unwrap()
        .with_timeout(deadline);
    let app = release("app");
    let entry = NewEntry {
        render_ref: REF.into(),
        synced_at: time(1_767_225_600),
        summary: "v1".into(),
    };
    let operations: Vec<(
        &str,
        futures::future::BoxFuture<'_, render_store::Result<()>>,
    )> = vec![
        (
            "put-render",
            Box::pin(async { store.put_render(&app, &render(1)).await.map(drop) }),
        ),
        (
            "get-render",
            Box::pin(async { store.get_render(&app, REF).await.map(drop) }),
        ),
        (
            "has-history-ref",
            Box::pin(async { store.has_history_ref(&app, REF).await.map(drop) }),
        ),
        (
            "record-history",
            Box::pin(async { store.record_history(&app, &entry).await.map(drop) }),
        ),
        (
            "list-history",
            Box::pin(async { store.list_history(&app).await.map(drop) }),
        ),
        (
            "list-history-page",
            Box::pin(async { store.list_history_page(&app, 5, None).await.map(drop) }),
        ),
        (
            "gc",
            Box::pin(async { store.gc(&app, 2, &[], false).await.map(drop) }),
        ),
        (
            "delete-release",
            Box::pin(async { store.delete_release(&app).await.map(drop) }),
        ),
        (
            "a bucket call of the host (within)",
            Box::pin(async { store.within(store.bucket().list("ns/app/")).await.map(drop) }),
        ),
    ];
    for (name, call) in operations {
        let start = Instant::now();
        let result = call.await;
        let took = start.elapsed();
        assert!(
            matches!(result, Err(Error::DeadlineExceeded { .. })),
            "{name}: {result:?}"
        );
        assert!(
            took >= deadline && took < deadline + Duration::from_millis(100),
            "{name} ended after {took:?}"
        );
        eprintln!("{name}: cut {:?} after its deadline", took - deadline);
    }
    let hole = Arc::new(hole);
    let closed = tokio::task::spawn_blocking({
        let hole = hole.clone();
        move || hole.all_closed()
    });
    assert!(
        closed.await.unwrap(),
        "a cut request left its connection open"
    );
}

/// A store's deadline is an instant: every call after it fails before any bucket call;
/// a cancel token ends the call in flight from another thread.
#[tokio::test]
async fn a_deadline_passed_makes_no_request_and_a_cancel_ends_the_call() {
    let hole = BlackHole::new();
    let store = RenderStore::open(&hole.url()).unwrap().unwrap();
    let past = store.with_deadline(Instant::now());
    let start = Instant::now();
    let result = past.get_render(&release("app"), REF).await;
    assert!(
        matches!(result, Err(Error::DeadlineExceeded { .. })),
        "{result:?}"
    );
    assert!(start.elapsed() < Duration::from_millis(20));
    assert!(
        hole.accepted.lock().unwrap().is_empty(),
        "a request was made"
    );

    let token = render_store::CancelToken::new();
    let cancellable = store.with_cancel(token.clone());
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        token.cancel();
    });
    let start = Instant::now();
    let result = cancellable.delete_release(&release("app")).await;
    assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
    assert!(start.elapsed() < Duration::from_millis(300));
    assert!(result.unwrap_err().is_cut());
    canceller.join().unwrap();
}

/// Dropping a call's future (a caller's own timeout, a select) cancels it too: the
/// request's connection is closed, and the store serves the next call.
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_call_closes_its_request() {
    let hole = BlackHole::new();
    let store = RenderStore::open(&hole.url()).unwrap().unwrap();
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        store.put_render(&release("app"), &render(1)),
    )
    .await;
    assert!(dropped.is_err(), "the call answered: {dropped:?}");
    let hole = Arc::new(hole);
    let closed = tokio::task::spawn_blocking({
        let hole = hole.clone();
        move || hole.all_closed()
    });
    assert!(
        closed.await.unwrap(),
        "the dropped call left its connection open"
    );
    // Its instance slot was given back: a call with a deadline runs (and is cut).
    let result = store
        .with_timeout(Duration::from_millis(100))
        .get_render(&release("app"), REF)
        .await;
    assert!(
        matches!(result, Err(Error::DeadlineExceeded { .. })),
        "{result:?}"
    );
}

/// The cloud client's request timeout and retry budget are URL parameters: with no
/// deadline at all, a request to a server that never answers fails on its own.
#[tokio::test]
async fn the_url_s_timeout_and_retries_bound_a_request_without_a_deadline() {
    let hole = BlackHole::new();
    let url = format!("{}&timeout=200ms&retries=1&retry_timeout=1s", hole.url());
    let store = RenderStore::open(&url).unwrap().unwrap();
    let start = Instant::now();
    let result = store.get_render(&release("app"), REF).await;
    let took = start.elapsed();
    assert!(matches!(result, Err(Error::Bucket(_))), "{result:?}");
    // Two attempts of 200 ms and a backoff between them.
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

fn cli_timed(args: &[&str]) -> (std::process::Output, Duration) {
    let start = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(args)
        .env_remove("RENDER_STORE_URL")
        .env_remove("RENDER_STORE_TIMEOUT")
        .output()
        .expect("the CLI runs");
    (out, start.elapsed())
}

/// The CLI's --timeout ends a command whose store never answers, with the kind
/// `deadline`; the process exits within 100 ms of the deadline (past its own start).
#[test]
fn the_cli_s_timeout_ends_the_command() {
    let hole = BlackHole::new();
    let url = hole.url();
    // The process's own start and exit (the component loaded), measured on a command
    // that makes no request.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("render.json");
    std::fs::write(
        &file,
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"}}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let baseline = (0..3)
        .map(|_| cli_timed(&["--timeout", "1s", "ref", file]).1)
        .min()
        .unwrap();
    for command in [
        &["get", "ns/app", REF][..],
        &["history", "ns/app"],
        &["gc", "ns/app", "--keep", "2"],
        &["delete-release", "ns/app"],
    ] {
        let mut args = vec![
            "--render-store-url",
            url.as_str(),
            "--timeout",
            "1s",
            "-o",
            "json",
        ];
        args.extend_from_slice(command);
        let (out, took) = cli_timed(&args);
        assert_eq!(out.status.code(), Some(1), "{command:?}");
        let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(err["error"]["kind"], "deadline", "{err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains("--timeout 1s"), "{message}");
        let over = took.saturating_sub(Duration::from_secs(1) + baseline);
        assert!(
            took >= Duration::from_secs(1) && over < Duration::from_millis(100),
            "{command:?} took {took:?} (a command alone: {baseline:?})"
        );
        eprintln!(
            "render-store {command:?}: {took:?} with a 1 s deadline (the process alone: {baseline:?})"
        );
    }
    // 0 turns it off: the URL's own request timeout ends the command then.
    let slow = format!("{url}&timeout=300ms&retries=0");
    let (out, took) = cli_timed(&[
        "--render-store-url",
        &slow,
        "--timeout",
        "0",
        "get",
        "ns/app",
        REF,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(took < Duration::from_secs(2), "{took:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("timed out") || err.contains("timeout"),
        "{err}"
    );
}
