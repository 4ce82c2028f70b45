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
    let names = [
        "put-render",
        "get-render",
        "has-history-ref",
        "record-history",
        "list-history",
        "list-history-page",
        "gc",
        "delete-release",
        "a bucket call of the host (within)",
    ];
    let (store, app, entry) = (&store, &app, &entry);
    let operation = move |i: usize| -> futures::future::BoxFuture<'_, render_store::Result<()>> {
        match i {
            0 => Box::pin(async move { store.put_render(app, &render(1)).await.map(drop) }),
            1 => Box::pin(async move { store.get_render(app, REF).await.map(drop) }),
            2 => Box::pin(async move { store.has_history_ref(app, REF).await.map(drop) }),
            3 => Box::pin(async move { store.record_history(app, entry).await.map(drop) }),
            4 => Box::pin(async move { store.list_history(app).await.map(drop) }),
            5 => Box::pin(async move { store.list_history_page(app, 5, None).await.map(drop) }),
            6 => Box::pin(async move { store.gc(app, 2, &[], false).await.map(drop) }),
            7 => Box::pin(async move { store.delete_release(app).await.map(drop) }),
            8 => Box::pin(
                async move { store.within(store.bucket().list("ns/app/")).await.map(drop) },
            ),
            _ => unreachable!("{i}"),
        }
    };
    let bound = deadline + Duration::from_millis(100);
    for (i, name) in names.iter().enumerate() {
        // A machine busy with other tests may be slow to run the cut: the bound holds
        // for the best of three attempts (a deadline that did not reach the request
        // misses it every time), the error for each.
        let mut best = Duration::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let result = operation(i).await;
            let took = start.elapsed();
            assert!(
                matches!(result, Err(Error::DeadlineExceeded { .. })),
                "{name}: {result:?}"
            );
            assert!(
                took >= deadline,
                "{name} ended after {took:?}, before its deadline"
            );
            best = best.min(took);
            if best < bound {
                break;
            }
        }
        assert!(
            best < bound,
            "{name} ended after {best:?} at best in three attempts"
        );
        eprintln!("{name}: cut {:?} after its deadline", best - deadline);
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
        // As in the library's test: the bound holds for the best of three runs (a busy
        // machine may be slow to schedule the cut), the error for each.
        let mut best = Duration::MAX;
        for _ in 0..3 {
            let (out, took) = cli_timed(&args);
            assert_eq!(out.status.code(), Some(1), "{command:?}");
            let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
            assert_eq!(err["error"]["kind"], "deadline", "{err}");
            let message = err["error"]["message"].as_str().unwrap();
            assert!(message.contains("--timeout 1s"), "{message}");
            assert!(took >= Duration::from_secs(1), "{command:?} took {took:?}");
            best = best.min(took);
            if best.saturating_sub(Duration::from_secs(1) + baseline) < Duration::from_millis(100) {
                break;
            }
        }
        let over = best.saturating_sub(Duration::from_secs(1) + baseline);
        assert!(
            over < Duration::from_millis(100),
            "{command:?} took {best:?} at best in three runs (a command alone: {baseline:?})"
        );
        eprintln!(
            "render-store {command:?}: {best:?} with a 1 s deadline (the process alone: {baseline:?})"
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
