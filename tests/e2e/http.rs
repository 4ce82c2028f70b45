//! The observer's HTTP endpoints, with a real client against a server on 127.0.0.1.

use super::support::*;
use render_store::{
    Bucket, BucketError, NewEntry, ObjectMeta, Observer, Release, RenderStore, SyncTime,
};
use render_store_cli::serve::ServeOptions;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) addr: SocketAddr,
    pub(crate) client: reqwest::Client,
}

impl Server {
    pub(crate) async fn start(store: Option<RenderStore>) -> Server {
        let observer = Arc::new(Observer::new(store).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(render_store_cli::serve::serve(listener, observer));
        Server::at(addr)
    }

    pub(crate) async fn start_with(store: Option<RenderStore>, options: ServeOptions) -> Server {
        let observer = Arc::new(Observer::new(store).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(render_store_cli::serve::serve_with(
            listener, observer, options,
        ));
        Server::at(addr)
    }

    pub(crate) fn at(addr: SocketAddr) -> Server {
        Server {
            base: format!("http://{addr}"),
            addr,
            client: reqwest::Client::new(),
        }
    }

    /// A GET with extra headers.
    pub(crate) async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut request = self.client.get(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    pub(crate) async fn post(&self, path: &str, body: &'static str) -> (u16, String) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/yaml")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, String) {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }
}

/// A file:// store with two recorded renders; returns the folder, the store and refs.
pub(crate) async fn populated() -> (tempfile::TempDir, RenderStore, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let store = RenderStore::open(&format!("file://{}", dir.path().display()))
        .unwrap()
        .unwrap();
    let app = release("app");
    let mut refs = Vec::new();
    for n in [1, 2] {
        let mut objects = render(n);
        objects[1] = format!(r#"{{"kind":"Service","apiVersion":"v1","metadata":{{"name":"s"}},"spec":{{"port":{n}}}}}"#).into_bytes();
        let r = store.put_render(&app, &objects).await.unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: time(1_767_225_600 + n as i64),
            summary: format!("v{n}"),
        };
        store.record_history(&app, &entry).await.unwrap();
        refs.push(r);
    }
    (dir, store, refs)
}

#[tokio::test]
async fn history_renders_and_health_on_a_file_store() {
    let (dir, store, refs) = populated().await;
    let s = Server::start(Some(store)).await;
    assert_eq!(s.get("/healthz").await, (200, "ok\n".to_string()));

    let (status, body) = s.get("/history?namespace=ns&name=app").await;
    assert_eq!(status, 200, "{body}");
    let history: serde_json::Value = serde_json::from_str(&body).unwrap();
    let got: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["renderRef"].as_str().unwrap())
        .collect();
    assert_eq!(got, [refs[0].as_str(), refs[1].as_str()]);
    assert_eq!(history[0]["syncedAt"], "2026-01-01T00:00:01Z");
    assert_eq!(history[1]["summary"], "v2");

    // A page of one, newest first, then the older one through the cursor.
    let (status, body) = s.get("/history?namespace=ns&name=app&limit=1").await;
    assert_eq!(status, 200, "{body}");
    let page: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["entries"][0]["renderRef"], refs[1].as_str());
    let next = page["nextBefore"].as_str().unwrap();
    let (status, body) = s
        .get(&format!(
            "/history?namespace=ns&name=app&limit=1&before={next}"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let page: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["entries"][0]["renderRef"], refs[0].as_str());
    assert!(page["nextBefore"].is_null());
    for bad in [
        "/history?namespace=ns&name=app&limit=0",
        "/history?namespace=ns&name=app&limit=x",
        "/history?namespace=ns&name=app&before=ns/app/history/x",
        "/history?namespace=ns&name=app&limit=1&before=ns/app/renders/x",
    ] {
        assert_eq!(s.get(bad).await.0, 400, "{bad}");
    }

    let (status, body) = s.get(&format!("/renders/ns/app/{}", refs[0])).await;
    assert_eq!(status, 200);
    assert_eq!(
        body.as_bytes(),
        std::fs::read(dir.path().join("ns/app/renders").join(&refs[0])).unwrap()
    );

    let absent = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    assert_eq!(s.get(&format!("/renders/ns/app/{absent}")).await.0, 404);
    let (status, body) = s.get("/renders/ns/app/sha256:nothex").await;
    assert_eq!(status, 400);
    assert!(body.contains("renderRef"), "{body}");

    // A corrupt blob is a 500 with a message, never its content.
    let file = dir.path().join("ns/app/renders").join(&refs[1]);
    std::fs::write(&file, b"{\"secret\":\"tampered\"}\n").unwrap();
    let (status, body) = s.get(&format!("/renders/ns/app/{}", refs[1])).await;
    assert_eq!(status, 500);
    assert!(
        body.contains("corrupt") && !body.contains("tampered"),
        "{body}"
    );
}

#[tokio::test]
async fn bad_query_parameters_are_400_naming_the_parameter() {
    let (_dir, store, refs) = populated().await;
    let s = Server::start(Some(store)).await;
    for (path, needle) in [
        ("/history?namespace=ns".to_string(), "\\\"name\\\""),
        ("/history?name=app".to_string(), "\\\"namespace\\\""),
        (
            "/history?namespace=ns&name=app&color=red".to_string(),
            "\\\"color\\\"",
        ),
        ("/history?namespace=NS&name=app".to_string(), "namespace"),
        ("/diff?namespace=ns&name=app".to_string(), "\\\"render\\\""),
        (
            format!(
                "/diff?namespace=ns&name=app&render={}&against=md5:x",
                refs[0]
            ),
            "renderRef",
        ),
    ] {
        let (status, body) = s.get(&path).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.contains(needle), "{path}: {body} should name {needle}");
    }
}

#[tokio::test]
async fn diff_endpoint() {
    let (_dir, store, refs) = populated().await;
    let s = Server::start(Some(store)).await;
    let (status, body) = s
        .get(&format!(
            "/diff?namespace=ns&name=app&render={}&output=yaml",
            refs[0]
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    let yaml = d["changed"][0]["diff"].to_string();
    assert!(yaml.contains(r#""-  port: 2","+  port: 1""#), "{yaml}");
    let (status, body) = s
        .get(&format!(
            "/diff?namespace=ns&name=app&render={}&output=toml",
            refs[0]
        ))
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = s
        .get(&format!(
            "/diff?namespace=ns&name=app&render={}&output=json",
            refs[0]
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["added"][0]["name"], "c1", "{d}");
    assert_eq!(d["removed"][0]["name"], "c2");
    // Added and removed objects whole, in the diff's form (JSON here, as asked).
    let whole = |side: &str| d[side][0]["text"].as_str().unwrap().to_string();
    assert!(whole("added").contains("\"name\": \"c1\""), "{d}");
    assert!(whole("removed").contains("\"name\": \"c2\""), "{d}");
    assert_eq!(d["changed"][0]["kind"], "Service");
    let lines: Vec<&str> = d["changed"][0]["diff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines.contains(&"-    \"port\": 2") && lines.contains(&"+    \"port\": 1"),
        "{lines:?}"
    );

    let (status, body) = s
        .get(&format!(
            "/diff?namespace=ns&name=app&render={}&against={}",
            refs[1], refs[0]
        ))
        .await;
    assert_eq!(status, 200);
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["added"][0]["name"], "c2");
    let absent = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    assert_eq!(
        s.get(&format!("/diff?namespace=ns&name=app&render={absent}"))
            .await
            .0,
        404
    );
    assert_eq!(
        s.get(&format!("/diff?namespace=ns&name=other&render={}", refs[0]))
            .await
            .0,
        404,
        "no history to diff against"
    );
}

/// The endpoints and the pages take the names the CLI takes: `@N` and a unique prefix
/// of at least eight hex digits, with the CLI's errors as 400 and 404.
#[tokio::test]
async fn renders_are_named_by_history_position_and_prefix_over_http() {
    let (_dir, store, refs) = populated().await;
    let s = Server::start(Some(store)).await;
    let digits = |r: &str| r["sha256:".len().."sha256:".len() + 10].to_string();
    let (status, by_position) = s.get("/renders/ns/app/@1").await;
    assert_eq!(status, 200, "{by_position}");
    let (_, whole) = s.get(&format!("/renders/ns/app/{}", refs[0])).await;
    assert_eq!(by_position, whole);
    let (status, by_prefix) = s
        .get(&format!("/renders/ns/app/{}", digits(&refs[0])))
        .await;
    assert_eq!((status, &by_prefix), (200, &whole));

    // diff from @1 to @0, both ways of naming: the same answer as whole refs give.
    let (_, named) = s
        .get("/diff?namespace=ns&name=app&render=@0&against=@1")
        .await;
    let (_, whole) = s
        .get(&format!(
            "/diff?namespace=ns&name=app&render={}&against={}",
            refs[1], refs[0]
        ))
        .await;
    assert_eq!(named, whole);
    let (status, body) = s
        .post(
            "/diff?namespace=ns&name=app&against=@1",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: only\n",
        )
        .await;
    assert_eq!(status, 200, "{body}");

    for (path, status, needle) in [
        ("/renders/ns/app/@2".to_string(), 404, "@2"),
        ("/renders/ns/app/@x".to_string(), 400, "history position"),
        ("/renders/ns/app/abc123".to_string(), 400, "too short"),
        (
            "/diff?namespace=ns&name=app&render=@0&against=@7".to_string(),
            404,
            "@7",
        ),
        ("/ui/ns/app/renders/@5".to_string(), 404, "@5"),
        ("/ui/ns/app/diff?from=@9".to_string(), 404, "@9"),
    ] {
        let (got, body) = s.get(&path).await;
        assert_eq!(got, status, "{path}: {body}");
        assert!(body.contains(needle), "{path}: {body}");
    }
    // The diff page of @1 to @0 names both sides by their whole refs.
    let (status, page) = s.get("/ui/ns/app/diff?from=@1&to=@0").await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&refs[0]) && page.contains(&refs[1]), "{page}");
    let (status, page) = s
        .get(&format!("/ui/ns/app/renders/{}", digits(&refs[1])))
        .await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&refs[1]), "{page}");

    // The history page marks the renders the address protects, as GC would keep them.
    let (status, page) = s.get("/ui/ns/app").await;
    assert_eq!(status, 200, "{page}");
    assert!(!page.contains("badge protected"), "{page}");
    let (status, page) = s.get("/ui/ns/app?protect=@1").await;
    assert_eq!(status, 200, "{page}");
    let row = page
        .lines()
        .find(|l| l.contains("badge protected"))
        .expect("a protected entry");
    assert!(row.contains(&format!("data-ref=\"{}\"", refs[0])), "{row}");
    assert_eq!(page.matches("badge protected").count(), 1, "{page}");
    assert_eq!(s.get("/ui/ns/app?protect=@4").await.0, 404);

    // The render the Release runs, when the caller knows it (its lastSuccessful): the
    // entry is marked, and after a rollback the page says @0 is not what runs.
    let (status, page) = s.get("/ui/ns/app?running=@1").await;
    assert_eq!(status, 200, "{page}");
    let row = page
        .lines()
        .find(|l| l.contains("badge running"))
        .expect("a running entry");
    assert!(row.contains(&format!("data-ref=\"{}\"", refs[0])), "{row}");
    assert_eq!(page.matches("badge running").count(), 1, "{page}");
    assert!(page.contains("id=\"running-note\""), "{page}");
    let (_, newest) = s.get("/ui/ns/app?running=@0").await;
    assert!(newest.contains("badge running") && !newest.contains("running-note"));
    assert_eq!(s.get("/ui/ns/app?running=@4").await.0, 404);
}

#[tokio::test]
async fn without_a_store_history_is_503_and_diff_an_error() {
    let s = Server::start(None).await;
    assert_eq!(s.get("/healthz").await.0, 200);
    let (status, body) = s.get("/history?namespace=ns&name=app").await;
    assert_eq!(status, 503);
    assert!(body.contains("no render store"), "{body}");
    let r = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let (status, body) = s
        .get(&format!("/diff?namespace=ns&name=app&render={r}"))
        .await;
    assert_eq!(status, 503);
    assert!(body.contains("error"), "{body}");
}

/// What a raw HTTP/1.1 exchange gives back: everything the server sent until it closed
/// the connection or `wait` passed, and how long that took.
pub(crate) fn raw_exchange(addr: SocketAddr, request: &[u8], wait: Duration) -> (String, Duration) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    let start = Instant::now();
    stream.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), start.elapsed())
}

/// A render of `objects` ConfigMaps of 1,000 values each; `version` changes the first
/// and the last value of every object, so the diff of two versions compares every line
/// of every object with every other (the component's LCS table: a million cells an
/// object), which takes seconds of guest work in one call.
pub(crate) fn large_render(objects: usize, version: u32) -> Vec<Vec<u8>> {
    (0..objects)
        .map(|i| {
            let data: Vec<String> = (0..1000)
                .map(|k| {
                    let v = if k == 0 || k == 999 { version } else { 0 };
                    format!(r#""key-{k:04}":"value-{v}-{}""#, "v".repeat(8))
                })
                .collect();
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}"}},"data":{{{}}}}}"#,
                data.join(",")
            )
            .into_bytes()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_while_large_diffs_run() {
    const OBJECTS: usize = 100;
    let store = RenderStore::open("mem://").unwrap().unwrap();
    let app = release("app");
    let old = large_render(OBJECTS, 1);
    let new = large_render(OBJECTS, 2);
    assert!(old.iter().map(Vec::len).sum::<usize>() > 3_000_000);
    let old = store.put_render(&app, &old).await.unwrap();
    let new = store.put_render(&app, &new).await.unwrap();
    let s = Arc::new(
        Server::start_with(
            Some(store),
            ServeOptions {
                request_timeout: Duration::from_secs(300),
                ..ServeOptions::default()
            },
        )
        .await,
    );
    let diffs: Vec<_> = (0..4)
        .map(|_| {
            let s = s.clone();
            let path =
                format!("/diff?namespace=ns&name=app&render={new}&against={old}&output=json");
            tokio::spawn(async move { s.get(&path).await })
        })
        .collect();
    // Give the diffs time to start running in the component.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let start = Instant::now();
    let health = s.get("/healthz").await;
    let took = start.elapsed();
    let still_running = diffs.iter().filter(|d| !d.is_finished()).count();
    assert_eq!(health.0, 200);
    assert!(
        still_running > 0,
        "the diffs ended before /healthz was asked: the renders are too small to test this"
    );
    assert!(
        took < Duration::from_secs(1),
        "/healthz took {took:?} while {still_running} diffs ran"
    );
    for d in diffs {
        let (status, body) = d.await.unwrap();
        assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
        let d: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(d["changed"].as_array().unwrap().len(), OBJECTS);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_its_timeout_is_answered_503_and_the_server_goes_on() {
    let store = RenderStore::open("mem://").unwrap().unwrap();
    let app = release("app");
    let old = store.put_render(&app, &large_render(150, 1)).await.unwrap();
    let new = store.put_render(&app, &large_render(150, 2)).await.unwrap();
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            request_timeout: Duration::from_millis(300),
            ..ServeOptions::default()
        },
    )
    .await;
    let start = Instant::now();
    let (status, body) = s
        .get(&format!(
            "/diff?namespace=ns&name=app&render={new}&against={old}"
        ))
        .await;
    let took = start.elapsed();
    assert_eq!(status, 503, "{}", &body[..body.len().min(300)]);
    assert!(body.contains("request timeout"), "{body}");
    // The guest call was stopped where it yielded, not run to its end.
    assert!(took < Duration::from_secs(2), "{took:?}");
    let (status, body) = s.get("/history?namespace=ns&name=app").await;
    assert_eq!((status, body.as_str()), (200, "[]\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_over_the_concurrency_limit_wait_their_turn() {
    let store = RenderStore::open("mem://").unwrap().unwrap();
    let app = release("app");
    let old = store.put_render(&app, &large_render(100, 1)).await.unwrap();
    let new = store.put_render(&app, &large_render(100, 2)).await.unwrap();
    let s = Arc::new(
        Server::start_with(
            Some(store),
            ServeOptions {
                max_concurrent_requests: 1,
                request_timeout: Duration::from_secs(300),
                ..ServeOptions::default()
            },
        )
        .await,
    );
    // On a loaded machine the diff's request may not have reached the server when
    // /history is sent, and then /history takes the place first: such a round says
    // nothing, and another is tried.
    let mut conclusive = false;
    for _ in 0..5 {
        let diff = {
            let s = s.clone();
            let path = format!("/diff?namespace=ns&name=app&render={new}&against={old}");
            tokio::spawn(async move {
                let r = s.get(&path).await;
                (r.0, Instant::now())
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!diff.is_finished(), "the diff is too quick to test this");
        let start = Instant::now();
        let (status, _) = s.get("/history?namespace=ns&name=app").await;
        let (history_done, waited) = (Instant::now(), start.elapsed());
        assert_eq!(status, 200);
        let (diff_status, diff_done) = diff.await.unwrap();
        assert_eq!(diff_status, 200);
        if diff_done <= history_done {
            // /history was answered only after the diff ended: it waited for the place.
            assert!(
                waited > Duration::from_millis(500),
                "/history took {waited:?} and did not wait for the diff's place"
            );
            conclusive = true;
            break;
        }
    }
    assert!(
        conclusive,
        "/history never found the diff holding the only place"
    );
    // /healthz never queues.
    assert_eq!(s.get("/healthz").await.0, 200);
}

#[tokio::test]
async fn half_sent_and_idle_connections_are_closed_by_the_header_timeout() {
    let s = Server::start_with(
        None,
        ServeOptions {
            header_timeout: Duration::from_secs(1),
            ..ServeOptions::default()
        },
    )
    .await;
    let addr = s.addr;
    let (half, idle, whole) = tokio::task::spawn_blocking(move || {
        (
            raw_exchange(
                addr,
                b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1",
                Duration::from_secs(10),
            ),
            raw_exchange(addr, b"", Duration::from_secs(10)),
            raw_exchange(
                addr,
                b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                Duration::from_secs(10),
            ),
        )
    })
    .await
    .unwrap();
    for (what, &(_, took)) in [("half-sent", &half), ("idle", &idle)] {
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(4),
            "the {what} connection was closed after {took:?}"
        );
    }
    assert!(!half.0.contains("ok\n"), "{}", half.0);
    // A complete request is answered, and the kept-alive connection then closed
    // as idle.
    assert!(
        whole.0.starts_with("HTTP/1.1 200") && whole.0.ends_with("ok\n"),
        "{}",
        whole.0
    );
    assert!(whole.1 < Duration::from_secs(4), "{:?}", whole.1);
}

#[tokio::test]
async fn only_expected_host_headers_are_answered() {
    let (_dir, store, _refs) = populated().await;
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            allowed_hosts: vec!["observer.example".to_string()],
            ..ServeOptions::default()
        },
    )
    .await;
    let port = s.addr.port();
    let history = "/history?namespace=ns&name=app";
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("10.0.0.1:{port}"),
        "observer.example.evil".to_string(),
    ] {
        let (status, body) = s.get_with(history, &[("host", &host)]).await;
        assert_eq!(status, 403, "{host}: {body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(error["error"].as_str().unwrap().contains("Host"), "{body}");
        assert!(!body.contains("renderRef"), "{body}");
    }
    for host in [
        s.addr.to_string(),
        format!("localhost:{port}"),
        "localhost".to_string(),
        format!("[::1]:{port}"),
        "observer.example".to_string(),
        format!("Observer.Example:{port}"),
    ] {
        let (status, body) = s.get_with(history, &[("host", &host)]).await;
        assert_eq!(status, 200, "{host}: {body}");
        assert!(body.contains("renderRef"), "{body}");
    }
    // A liveness probe sends the pod's address; /healthz reveals nothing.
    assert_eq!(s.get_with("/healthz", &[("host", "10.0.0.1")]).await.0, 200);

    // Without a Host header, and with an absolute URI naming another host.
    let addr = s.addr;
    let (no_host, other_uri) = tokio::task::spawn_blocking(move || {
        (
            raw_exchange(
                addr,
                format!("GET {history} HTTP/1.1\r\nConnection: close\r\n\r\n").as_bytes(),
                Duration::from_secs(5),
            )
            .0,
            raw_exchange(
                addr,
                format!(
                    "GET http://evil.example{history} HTTP/1.1\r\nHost: localhost\r\n\
                     Connection: close\r\n\r\n"
                )
                .as_bytes(),
                Duration::from_secs(5),
            )
            .0,
        )
    })
    .await
    .unwrap();
    for response in [no_host, other_uri] {
        assert!(
            response.starts_with("HTTP/1.1 403") || response.starts_with("HTTP/1.1 400"),
            "{response}"
        );
        assert!(!response.contains("renderRef"), "{response}");
    }
}

#[tokio::test]
async fn a_bearer_token_guards_every_endpoint_but_healthz() {
    let (_dir, store, refs) = populated().await;
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            token: Some("Zm9vYmFyYmF6cXV4".to_string()),
            ..ServeOptions::default()
        },
    )
    .await;
    let paths = [
        "/history?namespace=ns&name=app".to_string(),
        format!("/renders/ns/app/{}", refs[0]),
        format!("/diff?namespace=ns&name=app&render={}", refs[0]),
        "/releases".to_string(),
        "/".to_string(),
        "/ui/ns/app".to_string(),
        format!("/ui/ns/app/renders/{}", refs[0]),
        format!("/ui/ns/app/diff?from={}&to={}", refs[0], refs[1]),
    ];
    // The pages' style and script hold nothing of the store, and the login page needs
    // them before there is a session: answered to anyone.
    for asset in ["/assets/app.js", "/assets/app.css"] {
        assert_eq!(s.get(asset).await.0, 200, "{asset}");
    }
    for path in &paths {
        for headers in [
            vec![],
            vec![("authorization", "Bearer wrong")],
            vec![("authorization", "Bearer Zm9vYmFyYmF6cXV4x")],
            vec![("authorization", "Bearer Zm9vYmFyYmF6cXV")],
            vec![("authorization", "Basic Zm9vYmFyYmF6cXV4")],
            vec![("authorization", "Zm9vYmFyYmF6cXV4")],
        ] {
            let (status, body) = s.get_with(path, &headers).await;
            assert_eq!(status, 401, "{path} {headers:?}: {body}");
            assert!(body.contains("Bearer"), "{body}");
        }
        for scheme in ["Bearer", "bearer"] {
            let auth = format!("{scheme} Zm9vYmFyYmF6cXV4");
            let (status, body) = s.get_with(path, &[("authorization", &auth)]).await;
            assert_eq!(status, 200, "{path}: {body}");
        }
    }
    assert_eq!(s.get("/healthz").await.0, 200);
}

#[tokio::test]
async fn responses_over_the_cap_are_refused_naming_both_sizes() {
    let (_dir, store, refs) = populated().await;
    let render_len = store
        .get_render(&release("app"), &refs[0])
        .await
        .unwrap()
        .len();
    let diff = format!("/diff?namespace=ns&name=app&render={}", refs[0]);
    let open = Server::start(Some(store.clone())).await;
    let (status, full_diff) = open.get(&diff).await;
    assert_eq!(status, 200);
    let cap = 100;
    assert!(render_len > cap && full_diff.len() > cap);
    // A release stored with no history entry yet: its history is short.
    store
        .put_render(&release("other"), &render(3))
        .await
        .unwrap();

    let s = Server::start_with(
        Some(store),
        ServeOptions {
            max_response_bytes: cap,
            ..ServeOptions::default()
        },
    )
    .await;
    let (status, body) = s.get(&diff).await;
    assert_eq!(status, 500, "{body}");
    let message = serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("the diff is")
            && message.contains(&format!("{} bytes", full_diff.len()))
            && message.contains("over the response limit of 100 bytes"),
        "{message}"
    );

    let (status, body) = s.get(&format!("/renders/ns/app/{}", refs[0])).await;
    assert_eq!(status, 500, "{body}");
    assert!(
        body.contains(&format!("the render is {render_len} bytes"))
            && body.contains("over the response limit of 100 bytes"),
        "{body}"
    );
    // A history under the cap is answered.
    let (status, body) = s.get("/history?namespace=ns&name=other").await;
    assert_eq!((status, body.as_str()), (200, "[]\n"));
}

/// A bucket whose reads fail the way a backend would, with the paths in its message.
struct LeakyBucket;

#[async_trait::async_trait]
impl Bucket for LeakyBucket {
    async fn get(&self, key: &str, _limit: u64) -> Result<Vec<u8>, BucketError> {
        Err(BucketError::Backend {
            call: "get",
            key: key.into(),
            source: Box::new(std::io::Error::other(format!(
                "open /srv/private/store/{key}: permission denied; see https://admin:pw@internal.example/x"
            ))),
        })
    }
    async fn put(&self, _: &str, _: Vec<u8>) -> Result<(), BucketError> {
        unreachable!("the observer never writes")
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.get(key, 0).await.map(|_| None)
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        self.get(prefix, 0).await.map(|_| vec![])
    }
    async fn delete(&self, _: &str) -> Result<(), BucketError> {
        unreachable!("the observer never deletes")
    }
}

#[tokio::test]
async fn errors_show_no_internal_path() {
    let s = Server::start(Some(RenderStore::new(runtime(), Arc::new(LeakyBucket)))).await;
    let r = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    for path in [
        "/history?namespace=ns&name=app".to_string(),
        format!("/renders/ns/app/{r}"),
        format!("/diff?namespace=ns&name=app&render={r}&against={r}"),
    ] {
        let (status, body) = s.get(&path).await;
        assert_eq!(status, 502, "{path}: {body}");
        assert!(body.contains("see the server log"), "{body}");
        for secret in [
            "/srv/private",
            "internal.example",
            "permission denied",
            "pw",
        ] {
            assert!(!body.contains(secret), "{path}: {body} shows {secret:?}");
        }
    }

    // A file:// store whose render became a folder fails in the backend.
    let (dir, store, refs) = populated().await;
    let file = dir.path().join("ns/app/renders").join(&refs[0]);
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    std::fs::write(file.join("x"), b"x").unwrap();
    let s = Server::start(Some(store)).await;
    let (status, body) = s.get(&format!("/renders/ns/app/{}", refs[0])).await;
    assert_ne!(status, 200, "{body}");
    let root = dir.path().to_str().unwrap();
    assert!(!body.contains(root), "{body} shows the store's folder");
    assert!(!body.contains("/ns/app"), "{body}");
}

#[test]
fn the_cli_serves_with_its_flags() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    let secret_file = |name: &str, text: &str, mode: u32| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    };
    let token_file = secret_file("token", "  t0ken-from-file\n", 0o600);
    let empty = secret_file("empty", "\n", 0o600);
    // Readable by others (as Kubernetes mounts Secrets unless told defaultMode: 0400):
    // everyone who can read it holds the token.
    let open_to_all = secret_file("open", "t0ken-from-file\n", 0o644);
    // Planted by another user, who knows the token it holds.
    let planted = secret_file("planted", "t0ken-of-theirs\n", 0o600);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&planted, Some(65534), None).unwrap();
    } else {
        eprintln!("not root: a token file another user owns is not tried");
    }
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let serve = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
            .args([
                "--max-concurrent-calls",
                "2",
                "serve",
                "--listen",
                "127.0.0.1:0",
            ])
            .args(args)
            .env("RENDER_STORE_URL", "mem://")
            .env_remove("RENDER_STORE_MAX_CONCURRENT_CALLS")
            .env_remove("RENDER_STORE_LOG")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut bad_flags = vec![
        (vec!["--token-file", empty.to_str().unwrap()], "empty"),
        (
            vec!["--token-file", open_to_all.to_str().unwrap()],
            "others can read or write it",
        ),
        (
            vec!["--token-file", fifo.to_str().unwrap()],
            "is not a regular file",
        ),
        (vec!["--header-timeout", "0"], "header-timeout"),
        (vec!["--request-timeout", "soon"], "request-timeout"),
        (vec!["--max-response-bytes", "0"], "max-response-bytes"),
        (
            vec!["--max-concurrent-requests", "0"],
            "max-concurrent-requests",
        ),
        (vec!["--allow-host", "a/b"], "a/b"),
        (vec!["--body-timeout", "0"], "body-timeout"),
        (vec!["--write-timeout", "later"], "write-timeout"),
        (vec!["--max-diff-body-bytes", "0"], "max-diff-body-bytes"),
        (vec!["--max-connections", "0"], "max-connections"),
        (
            vec!["--no-auth", "--token-file", token_file.to_str().unwrap()],
            "--no-auth",
        ),
    ];
    if root {
        bad_flags.push((
            vec!["--token-file", planted.to_str().unwrap()],
            "is owned by user 65534",
        ));
    }
    for (bad, says) in bad_flags {
        let out = serve(&bad).wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{bad:?}: {err}"
        );
        assert!(!err.contains("serving on"), "{bad:?}: {err}");
    }

    let mut child = serve(&[
        "--header-timeout",
        "1s",
        "--request-timeout",
        "20s",
        "--max-response-bytes",
        "1000",
        "--max-concurrent-requests",
        "4",
        "--allow-host",
        "observer.example",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut before = String::new();
    let mut line = String::new();
    while !line.contains("serving on") {
        before.push_str(&line);
        line.clear();
        assert_ne!(stderr.read_line(&mut line).unwrap(), 0, "{before}");
    }
    // Nothing secret is printed: with a token file, standard error is often a log
    // others read.
    assert!(!before.contains("t0ken-from-file"), "{before}");
    assert!(!before.contains("login.html"), "{before}");
    let addr: SocketAddr = line
        .trim()
        .rsplit("http://")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let get = |host: &str, token: &str| {
        raw_exchange(
            addr,
            format!(
                "GET /history?namespace=ns&name=app HTTP/1.1\r\nHost: {host}\r\n\
                 Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
            Duration::from_secs(10),
        )
        .0
    };
    let ok = get("observer.example", "t0ken-from-file");
    let wrong_token = get("observer.example", "t0ken");
    let foreign = get("evil.example", "t0ken-from-file");
    let (_, half_sent) = raw_exchange(addr, b"GET / HTTP/1.1\r\n", Duration::from_secs(10));
    child.kill().unwrap();
    child.wait().unwrap();
    // Let in: the store is empty, so the release is not there.
    assert!(
        ok.starts_with("HTTP/1.1 404") && ok.contains("no release ns/app in the store"),
        "{ok}"
    );
    assert!(wrong_token.starts_with("HTTP/1.1 401"), "{wrong_token}");
    assert!(foreign.starts_with("HTTP/1.1 403"), "{foreign}");
    assert!(half_sent < Duration::from_secs(4), "{half_sent:?}");
}

#[tokio::test]
async fn post_diff_previews_a_yaml_stream_and_writes_nothing() {
    let (dir, store, _refs) = populated().await;
    let before = crate::support::snapshot(dir.path());
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            max_request_bytes: 4096,
            ..ServeOptions::default()
        },
    )
    .await;
    let stream = "# Source: app/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n\
                  spec:\n  port: 7\n---\n";
    let (status, body) = s.post("/diff?namespace=ns&name=app", stream).await;
    assert_eq!(status, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["changed"][0]["kind"], "Service", "{d}");
    let lines = d["changed"][0]["diff"].to_string();
    assert!(lines.contains(r#""-  port: 2","+  port: 7""#), "{lines}");
    let (status, body) = s
        .post("/diff?namespace=ns&name=app", "kind: A\n  bad: x\n")
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("document 0"), "{body}");
    let big: &'static str =
        Box::leak(format!("kind: A\ndata: {}\n", "x".repeat(5000)).into_boxed_str());
    let (status, _) = s.post("/diff?namespace=ns&name=app", big).await;
    assert_eq!(status, 413);
    let (status, _) = s.post("/diff?namespace=ns&name=none", stream).await;
    assert_eq!(status, 404);
    // The CLI's input rule: some objects, each with its Kubernetes names.
    let (status, body) = s
        .post("/diff?namespace=ns&name=app", "---\n# nothing\n")
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("no objects in the request body"), "{body}");
    let (status, body) = s
        .post(
            "/diff?namespace=ns&name=app",
            Box::leak(format!("{stream}a: 1\n").into_boxed_str()),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("object 2 of the request body") && body.contains("no apiVersion"),
        "{body}"
    );
    assert_eq!(
        crate::support::snapshot(dir.path()),
        before,
        "a preview wrote to the store"
    );
}

/// The pages' headers: HTML, no inline script allowed, nothing cached.
fn page_headers_ok(response: &reqwest::Response) {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert!(header("content-type").starts_with("text/html"));
    let csp = header("content-security-policy");
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(header("cache-control"), "no-store");
}

#[tokio::test]
async fn the_release_list_and_the_pages_over_http() {
    let (_dir, store, refs) = populated().await;
    let other = release("other");
    let hostile = "<script>alert(1)</script> & \"q\"";
    let r = store.put_render(&other, &render(7)).await.unwrap();
    let entry = NewEntry {
        render_ref: r.clone(),
        synced_at: time(1_767_225_700),
        summary: hostile.to_string(),
    };
    store.record_history(&other, &entry).await.unwrap();
    let s = Server::start(Some(store)).await;

    let (status, body) = s.get("/releases").await;
    assert_eq!(status, 200, "{body}");
    let listed: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        listed,
        serde_json::json!({"namespaces": [{"namespace": "ns", "releases": [
            {"name": "app", "entries": 2,
             "newest": {"syncedAt": "2026-01-01T00:00:02Z", "renderRef": refs[1],
                        "summary": "v2"}},
            {"name": "other", "entries": 1,
             "newest": {"syncedAt": "2026-01-01T00:01:40Z", "renderRef": r,
                        "summary": hostile}},
        ]}], "nextAfter": null, "partial": false, "unlisted": []})
    );
    // A page at a time, by namespace.
    let (_, first) = s.get("/releases?limit=1").await;
    let first: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["nextAfter"], "ns/app", "{first}");
    let (_, next) = s.get("/releases?limit=1&after=ns/app").await;
    let next: serde_json::Value = serde_json::from_str(&next).unwrap();
    assert_eq!(
        next["namespaces"][0]["releases"][0]["name"], "other",
        "{next}"
    );
    assert_eq!(next["nextAfter"], serde_json::Value::Null, "{next}");
    let (_, none) = s.get("/releases?namespace=elsewhere").await;
    assert!(none.contains("\"namespaces\":[]"), "{none}");
    for bad in ["limit=0", "limit=1001", "after=nons", "other=1"] {
        assert_eq!(s.get(&format!("/releases?{bad}")).await.0, 400, "{bad}");
    }
    let (_, paged) = s.get("/?limit=1").await;
    assert!(
        paged.contains("Next releases") && paged.contains("after=ns%2Fapp"),
        "{paged}"
    );

    let response = s.client.get(format!("{}/", s.base)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    page_headers_ok(&response);
    let index = response.text().await.unwrap();
    assert!(index.contains("href=\"/ui/ns/app\"") && index.contains("href=\"/ui/ns/other\""));

    // Everything from the store is escaped: the summary is text, not markup.
    let (status, page) = s.get("/ui/ns/other").await;
    assert_eq!(status, 200);
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;"),
        "{page}"
    );
    let (status, page) = s.get("/ui/ns/app").await;
    assert_eq!(status, 200);
    let newest = page.find(&refs[1][7..19]).unwrap();
    let oldest = page.find(&refs[0][7..19]).unwrap();
    assert!(newest < oldest, "the history is newest first");

    let (status, page) = s.get(&format!("/ui/ns/app/renders/{}", refs[0])).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("ConfigMap") && page.contains("Service"),
        "{page}"
    );
    let (status, page) = s
        .get(&format!("/ui/ns/app/diff?from={}&to={}", refs[0], refs[1]))
        .await;
    assert_eq!(status, 200);
    assert!(
        page.contains("1 object changed, 1 added, 1 removed, 0 unchanged"),
        "{page}"
    );
    assert!(page.contains("<span class=\"del\">"), "{page}");
    // `to` defaults to the newest entry.
    let (_, defaulted) = s.get(&format!("/ui/ns/app/diff?from={}", refs[0])).await;
    assert!(defaulted.contains("1 object changed"), "{defaulted}");

    // Bad requests name what is wrong, as the JSON endpoints do.
    let (status, page) = s.get("/ui/ns/app/diff").await;
    assert_eq!(status, 400);
    assert!(
        page.contains("missing query parameter &quot;from&quot;"),
        "{page}"
    );
    let (status, _) = s.get("/ui/ns/app/renders/sha256:nothex").await;
    assert_eq!(status, 400);
    let absent = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    assert_eq!(s.get(&format!("/ui/ns/app/renders/{absent}")).await.0, 404);
    assert_eq!(s.get("/ui/Bad_Namespace/app").await.0, 400);

    // The page's own weight, without data: under 200 KB.
    let (_, css) = s.get("/assets/app.css").await;
    let (_, js) = s.get("/assets/app.js").await;
    let (_, empty) = Server::start(Some(RenderStore::open("mem://").unwrap().unwrap()))
        .await
        .get("/")
        .await;
    let weight = css.len() + js.len() + empty.len();
    assert!(weight < 200_000, "{weight} bytes");
    assert!(empty.contains("no release yet"), "{empty}");
    assert_eq!(s.get("/assets/other.js").await.0, 404);
}

#[tokio::test]
async fn without_a_store_the_pages_say_so() {
    let s = Server::start(None).await;
    for path in ["/", "/ui/ns/app", "/ui/ns/app/diff?from=x"] {
        let response = s
            .client
            .get(format!("{}{path}", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 503, "{path}");
        page_headers_ok(&response);
        let body = response.text().await.unwrap();
        assert!(body.contains("no render store"), "{path}: {body}");
    }
    let (status, body) = s.get("/releases").await;
    assert_eq!(status, 503);
    assert!(body.contains("no render store"), "{body}");
}

#[tokio::test]
async fn pages_over_the_response_cap_are_refused() {
    let (_dir, store, _) = populated().await;
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            max_response_bytes: 2000,
            ..ServeOptions::default()
        },
    )
    .await;
    let (status, page) = s.get("/ui/ns/app").await;
    assert_eq!(status, 500);
    assert!(
        page.contains("over the response limit of 2000 bytes"),
        "{page}"
    );
}

/// The answer to a request sent with `headers`, redirects not followed: status,
/// headers and body.
async fn exchange(
    s: &Server,
    method: reqwest::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, reqwest::header::HeaderMap, String) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut request = client
        .request(method, format!("{}{path}", s.base))
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

/// The session cookie a `POST /login` answer sets, as `name=value`.
fn session_cookie(headers: &reqwest::header::HeaderMap) -> String {
    headers["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

/// A browser logs in by posting the token (never in a URL); its cookie then stands for
/// the token under the pages' base path alone, and cannot be used to post a diff from
/// another origin.
#[tokio::test]
async fn a_login_gives_the_browser_a_cookie_confined_to_the_base() {
    let (_dir, store, refs) = populated().await;
    let token = "t0ken-of-the-test";
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            token: Some(token.into()),
            ..ServeOptions::default()
        },
    )
    .await;
    let base = render_store_cli::serve::pages_base(token);
    let get = reqwest::Method::GET;
    let post = reqwest::Method::POST;
    let pages = [
        "/".to_string(),
        "/releases".to_string(),
        "/ui/ns/app".to_string(),
        format!("/renders/ns/app/{}", refs[0]),
    ];
    for path in &pages {
        for at in [path.clone(), format!("{base}{path}")] {
            assert_eq!(exchange(&s, get.clone(), &at, &[], "").await.0, 401, "{at}");
        }
    }
    // A browser asking for a page without a session gets the login page, not JSON.
    let (status, headers, body) = exchange(
        &s,
        get.clone(),
        "/ui/ns/app",
        &[("accept", "text/html")],
        "",
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert!(body.contains(r#"action="/login""#), "{body}");
    assert!(
        !body.contains(&base),
        "the base is shown to no one without the token"
    );
    let (status, headers, body) = exchange(&s, get.clone(), "/login", &[], "").await;
    assert_eq!(status, 200);
    assert!(headers.get("set-cookie").is_none());
    assert!(body.contains(r#"type="password""#), "{body}");
    // The page's style is served to it before any login, and holds nothing.
    assert_eq!(
        exchange(&s, get.clone(), "/assets/app.css", &[], "")
            .await
            .0,
        200
    );

    let form = |token: &str| format!("token={token}");
    let as_form = ("content-type", "application/x-www-form-urlencoded");
    let login = |body: String, extra: Option<(&'static str, &'static str)>| {
        let s = &s;
        let post = post.clone();
        async move {
            let mut headers = vec![as_form];
            headers.extend(extra);
            exchange(s, post, "/login", &headers, &body).await
        }
    };
    let (status, headers, body) = login(form("t0ken-of-the-tesT"), None).await;
    assert_eq!(status, 401, "{body}");
    assert!(headers.get("set-cookie").is_none());
    // The login must come for this server's name, as every other request.
    assert_eq!(
        login(form(token), Some(("host", "evil.example"))).await.0,
        403
    );
    // A token in the URL is not a login.
    let (status, headers, _) =
        exchange(&s, get.clone(), &format!("/login?token={token}"), &[], "").await;
    assert_eq!(status, 200);
    assert!(headers.get("set-cookie").is_none());

    let (status, headers, body) = login(form(token), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    assert!(
        body.contains(&format!(r#"content="0; url={base}/""#)),
        "the page goes on to the base: {body}"
    );
    let set_cookie = headers["set-cookie"].to_str().unwrap().to_string();
    assert!(
        set_cookie.ends_with(&format!("; HttpOnly; SameSite=Strict; Path={base}")),
        "{set_cookie}"
    );
    let cookie = session_cookie(&headers);
    assert!(
        cookie.starts_with(&format!("render-store-session-{}=", s.addr.port())),
        "{cookie}"
    );
    assert!(!cookie.contains(token));
    let with_cookie = [("cookie", cookie.as_str())];
    for path in &pages {
        let at = format!("{base}{path}");
        let (status, _, body) = exchange(&s, get.clone(), &at, &with_cookie, "").await;
        assert_eq!(status, 200, "{at}: {body}");
        // Outside the base the cookie is nothing, as a browser would not send it there.
        assert_eq!(
            exchange(&s, get.clone(), path, &with_cookie, "").await.0,
            401,
            "{path}"
        );
    }
    // The pages link under the base, so a session's browser stays within it.
    let (_, _, index) = exchange(&s, get.clone(), &format!("{base}/"), &with_cookie, "").await;
    assert!(
        index.contains(&format!(r#"href="{base}/ui/ns/app""#)),
        "{index}"
    );
    assert!(
        index.contains(&format!(r#"href="{base}/assets/app.css""#)),
        "{index}"
    );
    assert!(!index.contains(r#"href="/ui/"#), "{index}");
    // A second login (another browser) gets its own session; the first one's stays.
    let (_, headers, _) = login(form(token), None).await;
    let second = session_cookie(&headers);
    assert_ne!(second, cookie);
    for c in [&cookie, &second] {
        let at = format!("{base}/releases");
        assert_eq!(
            exchange(&s, get.clone(), &at, &[("cookie", c)], "").await.0,
            200
        );
    }
    // Another value under the name is nothing.
    let forged = format!("render-store-session-{}=0000", s.addr.port());
    let at = format!("{base}/releases");
    assert_eq!(
        exchange(&s, get.clone(), &at, &[("cookie", &forged)], "")
            .await
            .0,
        401
    );
    // The token goes on working beside the cookie, inside and outside the base.
    let bearer = [("authorization", "Bearer t0ken-of-the-test")];
    for at in ["/releases".to_string(), format!("{base}/releases")] {
        assert_eq!(exchange(&s, get.clone(), &at, &bearer, "").await.0, 200);
    }

    // The cookie does not make a page of another origin able to post a diff.
    let yaml = "kind: Service\napiVersion: v1\nmetadata:\n  name: s\n";
    let path = format!("{base}/diff?namespace=ns&name=app");
    let other_origin = format!("http://127.0.0.1:{}", s.addr.port() ^ 1);
    for headers in [
        vec![
            ("cookie", cookie.as_str()),
            ("origin", other_origin.as_str()),
            ("content-type", "application/yaml"),
        ],
        vec![
            ("cookie", cookie.as_str()),
            ("sec-fetch-site", "same-site"),
            ("content-type", "application/yaml"),
        ],
    ] {
        assert_eq!(
            exchange(&s, post.clone(), &path, &headers, yaml).await.0,
            403,
            "{headers:?}"
        );
    }
    let form_post = [
        ("cookie", cookie.as_str()),
        ("content-type", "application/x-www-form-urlencoded"),
    ];
    assert_eq!(
        exchange(&s, post.clone(), &path, &form_post, yaml).await.0,
        415
    );
    let own = s.base.clone();
    let same_origin = [
        ("cookie", cookie.as_str()),
        ("origin", own.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("content-type", "application/yaml"),
    ];
    let (status, _, body) = exchange(&s, post.clone(), &path, &same_origin, yaml).await;
    assert_eq!(status, 200, "{body}");

    // Without a token there is no login, and the pages are at the root.
    let (_open_dir, open_store, _) = populated().await;
    let open = Server::start(Some(open_store)).await;
    assert_eq!(exchange(&open, get.clone(), "/login", &[], "").await.0, 404);
    let (status, _, index) = exchange(&open, get, "/", &[], "").await;
    assert_eq!(status, 200);
    assert!(index.contains(r#"href="/assets/app.css""#), "{index}");
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `serve` with its defaults makes a token in a private folder of the runtime folder
/// (when that is the user's alone) with a login file beside it, prints their paths, and
/// removes both when it is stopped with SIGTERM or SIGINT; a runtime folder others can
/// write is not used.
#[tokio::test]
async fn serve_makes_a_private_token_and_removes_it_when_stopped() {
    let (dir, _store, refs) = populated().await;
    let url = format!("file://{}", dir.path().display());
    let runtime = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        runtime.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let runtime_path = runtime.path().to_str().unwrap().to_string();
    let served = serve_cli_with(&url, &[], &[("XDG_RUNTIME_DIR", Some(&runtime_path))]);
    let token_file = served.token_file.clone().expect("a token file");
    assert!(token_file.starts_with(runtime.path()), "{}", served.printed);
    assert_eq!(mode(&token_file), 0o600);
    assert_eq!(mode(token_file.parent().unwrap()), 0o700);
    let token = served.token();
    assert!(token.len() >= 32, "{token}");
    let s = Server::at(served.addr);
    let render = format!("/renders/ns/app/{}", refs[0]);
    assert_eq!(s.get(&render).await.0, 401);
    let bearer = format!("Bearer {token}");
    assert_eq!(
        s.get_with(&render, &[("authorization", &bearer)]).await.0,
        200
    );
    // The login file the server printed: private, beside the token, posting it to
    // this server. Nothing printed holds the token or the pages' base.
    let login_file = served.login_file.clone().expect("a login file");
    assert_eq!(login_file.parent(), token_file.parent());
    assert_eq!(mode(&login_file), 0o600);
    let base = render_store_cli::serve::pages_base(&token);
    assert!(
        !served.printed.contains(&token) && !served.printed.contains(&base),
        "{}",
        served.printed
    );
    let (action, posted) = served.login_form();
    assert_eq!(action, format!("{}/login", s.base));
    assert_eq!(posted, token);
    let (status, headers, _) = exchange(
        &s,
        reqwest::Method::POST,
        "/login",
        &[("content-type", "application/x-www-form-urlencoded")],
        &format!("token={posted}"),
    )
    .await;
    assert_eq!(status, 200);
    let cookie = session_cookie(&headers);
    assert_eq!(
        s.get_with(&format!("{base}/"), &[("cookie", &cookie)])
            .await
            .0,
        200
    );
    let status = served.stop(libc::SIGTERM);
    assert!(status.success(), "{status:?}");
    assert!(
        !token_file.parent().unwrap().exists(),
        "the token's folder is left"
    );

    // A runtime folder others can write is passed over, for the temporary folder.
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        shared.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let shared_path = shared.path().to_str().unwrap().to_string();
    let served = serve_cli_with(&url, &[], &[("XDG_RUNTIME_DIR", Some(&shared_path))]);
    let token_file = served.token_file.clone().expect("a token file");
    assert!(
        !token_file.starts_with(shared.path()),
        "{}",
        token_file.display()
    );
    assert_eq!(mode(token_file.parent().unwrap()), 0o700);
    let status = served.stop(libc::SIGINT);
    assert!(status.success(), "{status:?}");
    assert!(!token_file.exists());
    assert!(std::fs::read_dir(shared.path()).unwrap().next().is_none());

    // With --token-file the server makes no token and no login file: a browser logs in
    // at /login, which it names (no secret in that).
    let given = runtime.path().join("given-token");
    std::fs::write(&given, "g1ven-t0ken\n").unwrap();
    std::fs::set_permissions(&given, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let served = serve_cli(&url, &["--token-file", given.to_str().unwrap()]);
    assert!(served.token_file.is_none(), "{}", served.printed);
    assert!(served.login_file.is_none(), "{}", served.printed);
    assert!(
        served
            .printed
            .contains(&format!("log in at http://{}/login", served.addr)),
        "{}",
        served.printed
    );
    let s = Server::at(served.addr);
    assert_eq!(
        s.get_with(&render, &[("authorization", "Bearer g1ven-t0ken")])
            .await
            .0,
        200
    );
    assert!(served.stop(libc::SIGTERM).success());
    assert!(given.exists(), "the given token file was removed");
}

/// Without a token only with --no-auth, whose help says what that exposes.
#[tokio::test]
async fn serve_without_a_token_only_when_asked() {
    let (dir, _store, refs) = populated().await;
    let url = format!("file://{}", dir.path().display());
    let served = serve_cli(&url, &["--no-auth"]);
    assert!(
        served.token_file.is_none() && served.login_file.is_none(),
        "{}",
        served.printed
    );
    assert!(
        served.printed.contains("every local user"),
        "{}",
        served.printed
    );
    let s = Server::at(served.addr);
    assert_eq!(s.get(&format!("/renders/ns/app/{}", refs[0])).await.0, 200);
    drop(served);
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("--no-auth")
            && help.contains("Every local user of this machine")
            && help.contains("can then read every render, Secrets included"),
        "{help}"
    );
}

/// `serve`'s log, read as `kubectl logs` shows it (standard error to a file): which store
/// it reads, a line a request with the status, the pages' base shown as `/s/…` and no
/// probe, and no escape sequence.
#[tokio::test]
async fn the_log_says_what_was_asked_and_nothing_secret() {
    let (dir, _store, refs) = populated().await;
    let url = format!("file://{}?create_dir=true", dir.path().display());
    let log_dir = tempfile::tempdir().unwrap();
    let log_path = log_dir.path().join("serve.log");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("RENDER_STORE_URL", &url)
        .env_remove("RENDER_STORE_LOG")
        .env("TERM", "xterm-256color")
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let (addr, token_file) = loop {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let after = |marker: &str| {
            log.lines()
                .find_map(|l| l.split_once(marker).map(|(_, rest)| rest.to_string()))
        };
        if let (Some(addr), Some(token)) = (after("serving on http://"), after("the token is in "))
        {
            let addr: SocketAddr = addr.trim().parse().unwrap();
            break (addr, token.split(": send").next().unwrap().to_string());
        }
        assert!(Instant::now() < deadline, "serve did not start: {log}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let token = std::fs::read_to_string(&token_file).unwrap();
    let base = render_store_cli::serve::pages_base(token.trim());
    let s = Server::at(addr);
    let bearer = format!("Bearer {}", token.trim());
    assert_eq!(s.get("/healthz").await.0, 200);
    assert_eq!(s.get("/releases").await.0, 401);
    let page = format!("{base}/ui/ns/app/renders/{}", refs[0]);
    assert_eq!(
        s.get_with(&page, &[("authorization", &bearer)]).await.0,
        200
    );
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGTERM);
    }
    child.wait().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        log.contains(&format!(
            "reading file://{}?create_dir=true",
            dir.path().display()
        )),
        "{log}"
    );
    assert!(log.contains(r#"GET "/releases" 401"#), "{log}");
    assert!(
        log.contains(&format!(r#"GET "/s/…/ui/ns/app/renders/{}" 200"#, refs[0])),
        "{log}"
    );
    assert!(!log.contains(&base), "the log shows the pages' base: {log}");
    assert!(!log.contains(token.trim()), "the log shows the token");
    assert!(!log.contains("/healthz"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "escape sequences in a log file: {log:?}"
    );
}

/// A release that is not stored is a 404 on every endpoint and page that reads it, in
/// the CLI's words, with the release meant when one is near; a release that is stored
/// with no history entry is an empty history.
#[tokio::test]
async fn a_missing_release_is_404_in_the_cli_words() {
    let (dir, store, refs) = populated().await;
    // Renders stored before any sync was recorded: the release is there, its history
    // empty.
    store
        .put_render(&release("early"), &render(3))
        .await
        .unwrap();
    let url = format!("file://{}", dir.path().display());
    let s = Server::start(Some(store)).await;

    // What the CLI says of the same typo, word for word.
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(["history", "ns/ap"])
        .env("RENDER_STORE_URL", &url)
        .output()
        .unwrap();
    let cli_said = String::from_utf8(cli.stderr).unwrap();
    assert!(!cli.status.success(), "{cli_said}");
    for path in [
        "/history?namespace=ns&name=ap",
        "/history?namespace=ns&name=ap&limit=5",
        &format!("/renders/ns/ap/{}", refs[0]),
        "/renders/ns/ap/@0",
        &format!("/diff?namespace=ns&name=ap&render={}", refs[0]),
    ] {
        let (status, body) = s.get(path).await;
        assert_eq!(status, 404, "{path}: {body}");
        let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
        let message = answer["error"].as_str().unwrap();
        assert!(
            message.starts_with("no release ns/ap in the store: nothing is stored under ns/ap/")
                && message.contains("did you mean ns/app?"),
            "{path}: {message}"
        );
        assert!(
            cli_said.contains(message),
            "{path}: {message} vs the CLI's {cli_said}"
        );
        assert_eq!(answer["didYouMean"], "ns/app", "{path}");
    }
    // A name far from every release gets no guess.
    let (status, body) = s.get("/history?namespace=ns&name=ingress-nginx").await;
    assert_eq!(status, 404, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        !answer["error"].as_str().unwrap().contains("did you mean"),
        "{answer}"
    );
    assert!(answer["didYouMean"].is_null(), "{answer}");
    // Stored, with no entry: an empty history, not a 404.
    assert_eq!(
        s.get("/history?namespace=ns&name=early").await,
        (200, "[]\n".to_string())
    );
    let (status, body) = s.get("/history?namespace=ns&name=early&limit=5").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"entries\":[]"), "{body}");

    // The pages say the same, the near release a link to its history.
    for path in [
        "/ui/ns/ap".to_string(),
        "/ui/ns/ap/renders/@0".to_string(),
        format!("/ui/ns/ap/renders/{}", refs[0]),
        format!("/ui/ns/ap/diff?from={}", refs[0]),
        format!("/ui/ns/ap/diff?from={}&to={}", refs[0], refs[1]),
    ] {
        let response = s
            .client
            .get(format!("{}{path}", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{path}");
        page_headers_ok(&response);
        let page = response.text().await.unwrap();
        assert!(
            page.contains("no release ns/ap in the store")
                && page.contains(
                    "did you mean <a href=\"/ui/ns/app\" class=\"did-you-mean\">ns/app</a>? "
                ),
            "{path}: {page}"
        );
    }
    let (status, page) = s.get("/ui/ns/early").await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("This release has no history entry."),
        "{page}"
    );

    // A render page says which entry records its render, or that none does.
    let (status, page) = s.get(&format!("/ui/ns/app/renders/{}", refs[0])).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains(
            "<span class=\"position\">@1</span> · synced <time datetime=\"2026-01-01T00:00:01Z\""
        ),
        "{page}"
    );
    let early = RenderStore::open(&url)
        .unwrap()
        .unwrap()
        .put_render(&release("early"), &render(3))
        .await
        .unwrap();
    let (status, page) = s.get(&format!("/ui/ns/early/renders/{early}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("Not in the history: no entry of ns/early records this render."),
        "{page}"
    );
}

/// The render page's download gives Secret values masked unless the server was started
/// with --show-secrets.
#[test]
fn the_render_download_masks_secrets_unless_the_server_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let secret = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"ns"},"data":{"password":"aHVudGVyMg=="},"stringData":{"token":"plain-t0ken"}}"#;
    let config = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"k":"visible"}}"#;
    let r = rt.block_on(async {
        let store = RenderStore::open(&url).unwrap().unwrap();
        let app = release("app");
        let r = store
            .put_render(
                &app,
                &[secret.as_bytes().to_vec(), config.as_bytes().to_vec()],
            )
            .await
            .unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: time(1_767_225_600),
            summary: "with a Secret".into(),
        };
        store.record_history(&app, &entry).await.unwrap();
        r
    });
    for shown in [false, true] {
        let mut args = vec!["--no-auth"];
        if shown {
            args.push("--show-secrets");
        }
        let server = serve_cli_with(&url, &args, &[("RENDER_STORE_SHOW_SECRETS", None)]);
        let s = Server::at(server.addr);
        let (page, body, headers) = rt.block_on(async {
            let (status, page) = s.get(&format!("/ui/ns/app/renders/{r}")).await;
            assert_eq!(status, 200, "{page}");
            // The link the page gives, whatever it is.
            let start = page.find("<a href=\"").unwrap();
            let link = page[start..]
                .split("<a href=\"")
                .find_map(|a| {
                    let (href, rest) = a.split_once('"')?;
                    rest.starts_with(" download").then(|| href.to_string())
                })
                .expect("a download link");
            let response = s
                .client
                .get(format!("{}{link}", s.base))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{link}");
            let headers = response.headers().clone();
            (page, response.text().await.unwrap(), headers)
        });
        assert_eq!(
            headers.get("cache-control").unwrap(),
            "no-store",
            "{headers:?}"
        );
        assert!(body.contains("visible"), "{body}");
        if shown {
            assert!(
                body.contains("aHVudGVyMg==") && body.contains("plain-t0ken"),
                "--show-secrets: {body}"
            );
        } else {
            for value in ["aHVudGVyMg==", "hunter2", "plain-t0ken"] {
                assert!(!body.contains(value), "the download holds {value}: {body}");
                assert!(!page.contains(value), "the page shows {value}: {page}");
            }
            assert!(body.contains("***"), "{body}");
            assert!(page.contains("Secret values masked"), "{page}");
        }
    }
}

/// The images page: the form alone without a pattern; the intervals of a pattern, each
/// linking to its release and render; the changes page: the entries of a window newest
/// first, each linking to its diff; a bad pattern or time is a 400 saying what to give.
#[tokio::test]
async fn the_images_and_changes_pages_answer_fleet_questions() {
    let dir = tempfile::tempdir().unwrap();
    let store = RenderStore::open(&format!("file://{}", dir.path().display()))
        .unwrap()
        .unwrap();
    let web = Release::new("prod", "web");
    for (day, image) in [(1, "nginx:1.25"), (2, "nginx:1.26")] {
        let object = format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web"}},"spec":{{"template":{{"spec":{{"containers":[{{"name":"web","image":"{image}"}}]}}}}}}}}"#
        );
        let r = store
            .put_render(&web, &[object.into_bytes()])
            .await
            .unwrap();
        let entry = NewEntry {
            render_ref: r,
            synced_at: SyncTime {
                seconds: 1_800_000_000 + day * 86_400,
                nanoseconds: 0,
            },
            summary: image.to_string(),
        };
        store.record_history(&web, &entry).await.unwrap();
    }
    let s = Server::start(Some(store)).await;
    let (status, form) = s.get("/images").await;
    assert_eq!(status, 200, "{form}");
    assert!(
        form.contains("name=\"q\"") && !form.contains("image-row"),
        "{form}"
    );
    let (status, found) = s.get("/images?q=nginx").await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found.matches("class=\"image-row\"").count(), 2, "{found}");
    assert!(found.contains("docker.io/library/nginx:1.25"), "{found}");
    assert!(found.contains("href=\"/ui/prod/web\""), "{found}");
    assert!(found.contains("badge newest"), "{found}");
    assert!(!found.contains("id=\"partial\""), "{found}");
    let (_, one) = s.get("/images?q=nginx:1.26").await;
    assert_eq!(one.matches("class=\"image-row\"").count(), 1, "{one}");
    for (path, says) in [
        ("/images?q=nginx:", "image pattern"),
        ("/images?q=nginx&since=soon", "--since"),
        ("/changes?since=soon", "--since"),
    ] {
        let (status, page) = s.get(path).await;
        assert_eq!(status, 400, "{path}: {page}");
        assert!(page.contains(says), "{path}: {page}");
    }

    // The fleet's changes, newest first: the bump against the entry before it, with a
    // link to that diff; the first entry against nothing.
    let (status, changes) = s.get("/changes?since=2026-01-01").await;
    assert_eq!(status, 200, "{changes}");
    assert_eq!(changes.matches("class=\"change\"").count(), 2, "{changes}");
    let bump = changes
        .find("nginx:1.25</code> → <code>nginx:1.26")
        .expect("the bump");
    let first = changes.find("first entry").expect("the first entry");
    assert!(bump < first, "newest first: {changes}");
    assert!(
        changes.contains("/ui/prod/web/diff?from=sha256"),
        "{changes}"
    );
    let (_, none) = s.get("/changes?since=2026-01-01&namespace=dev").await;
    assert_eq!(none.matches("class=\"change\"").count(), 0, "{none}");
    // A page past the end is no page, as on every other paged page.
    let path = "/changes?since=2026-01-01&page=2";
    let (status, page) = s.get(path).await;
    assert_eq!(status, 404, "{path}: {page}");
    assert!(page.contains("page 2: there is 1 page"), "{path}: {page}");
}

/// The images page is paged by releases, as the release list is: a page reads and shows
/// its own releases' intervals and links to the next releases, with no total.
#[tokio::test]
async fn the_images_page_is_paged_by_releases() {
    let dir = tempfile::tempdir().unwrap();
    let store = RenderStore::open(&format!("file://{}", dir.path().display()))
        .unwrap()
        .unwrap();
    for (name, image) in [("api", "nginx:1.25"), ("web", "nginx:1.26")] {
        let release = Release::new("prod", name);
        let object = format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},"spec":{{"template":{{"spec":{{"containers":[{{"name":"c","image":"{image}"}}]}}}}}}}}"#
        );
        let r = store
            .put_render(&release, &[object.into_bytes()])
            .await
            .unwrap();
        let entry = NewEntry {
            render_ref: r,
            synced_at: SyncTime {
                seconds: 1_800_000_000,
                nanoseconds: 0,
            },
            summary: image.to_string(),
        };
        store.record_history(&release, &entry).await.unwrap();
    }
    let s = Server::start(Some(store)).await;
    let (status, all) = s.get("/images?q=nginx").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all.matches("class=\"image-row\"").count(), 2, "{all}");
    assert!(!all.contains("page-next"), "one page: {all}");
    let (status, first) = s.get("/images?q=nginx&limit=1").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first.matches("class=\"image-row\"").count(), 1, "{first}");
    assert!(
        first.contains("nginx:1.25") && !first.contains("nginx:1.26"),
        "{first}"
    );
    let next = "/images?q=nginx&amp;limit=1&amp;after=prod%2Fapi";
    assert!(first.contains(next), "{first}");
    let (status, second) = s.get(&next.replace("&amp;", "&")).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second.matches("class=\"image-row\"").count(), 1, "{second}");
    assert!(second.contains("nginx:1.26"), "{second}");
    assert!(
        !second.contains("page-next") && second.contains("page-first"),
        "{second}"
    );
    for bad in [
        "/images?q=nginx&after=nope",
        "/images?q=nginx&limit=0",
        "/images?q=nginx&page=2",
    ] {
        let (status, page) = s.get(bad).await;
        assert_eq!(status, 400, "{bad}: {page}");
    }
}
