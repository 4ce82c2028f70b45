//! The server's resources against clients that misbehave on purpose (CONTRACT.md §12):
//! bodies trickled a byte at a time, answers never read, cross-site posts, folders the
//! server cannot list, and the headers every answer carries.

use super::http::{Server, large_render, populated, raw_exchange};
use super::support::*;
use render_store::{BucketCall, NewEntry, RenderStore};
use render_store_cli::serve::ServeOptions;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// A POST with extra headers; the status and the body.
async fn post_with(
    s: &Server,
    path: &str,
    body: impl Into<reqwest::Body>,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let mut request = s.client.post(format!("{}{path}", s.base)).body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

const YAML: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  port: 7\n";

/// A connection that sent a request's headers and a first byte of its body, then
/// sends one more byte at a time, never the whole body.
async fn trickler(addr: SocketAddr) -> tokio::net::TcpStream {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = "POST /diff?namespace=ns&name=app HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                Content-Type: application/yaml\r\nContent-Length: 100000\r\n\r\nk";
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// A connection that asked for `path` and reads nothing of the answer; its receive
/// buffer is small, so the server's writes soon stop.
async fn non_reader(addr: SocketAddr, path: &str) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

/// 40 clients trickling their bodies and 30 that never read a render of a dozen MiB,
/// all with the server's default limits: the release list is still answered. (Before,
/// each trickled body held one of the request places until it ended, which it never
/// does here: the client's timeout, far above any answer's time, is what fails then.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_and_unread_answers_do_not_hold_up_the_release_list() {
    let store = RenderStore::open("mem://").unwrap().unwrap();
    let app = release("app");
    let r = store.put_render(&app, &render(1)).await.unwrap();
    let entry = NewEntry {
        render_ref: r,
        synced_at: time(1_767_225_600),
        summary: "v1".into(),
    };
    store.record_history(&app, &entry).await.unwrap();
    let big = release("big");
    let objects = large_render(450, 1);
    assert!(objects.iter().map(Vec::len).sum::<usize>() > 12 << 20);
    let big_ref = store.put_render(&big, &objects).await.unwrap();
    drop(objects);
    let s = Server::start(Some(store)).await;

    let mut tricklers = Vec::new();
    for _ in 0..40 {
        tricklers.push(trickler(s.addr).await);
    }
    let mut readers = Vec::new();
    for _ in 0..30 {
        readers.push(non_reader(s.addr, &format!("/renders/ns/big/{big_ref}")).await);
    }
    // Let the server read every request's headers and write what it can of the renders;
    // the tricklers go on sending a byte now and then.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        for t in &mut tricklers {
            let _ = t.write_all(b"x").await;
        }
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    for _ in 0..3 {
        let response = client
            .get(format!("{}/releases", s.base))
            .send()
            .await
            .expect("GET /releases answered beside 40 trickled bodies and 30 unread answers");
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"app\""), "{body}");
        for t in &mut tricklers {
            let _ = t.write_all(b"x").await;
        }
    }
    drop((tricklers, readers));
}

#[tokio::test]
async fn post_diff_refuses_cross_site_requests() {
    let (_dir, store, _refs) = populated().await;
    let s = Server::start(Some(store)).await;
    let path = "/diff?namespace=ns&name=app";
    let own = s.base.clone();
    let other_port = format!("http://127.0.0.1:{}", s.addr.port().wrapping_add(1).max(1));
    for refused in [
        vec![("origin", "http://evil.example")],
        vec![("origin", other_port.as_str())],
        vec![("origin", "null")],
        vec![("sec-fetch-site", "cross-site")],
        // Another port of the same host is the same site, not the same origin.
        vec![("sec-fetch-site", "same-site")],
        vec![("origin", own.as_str()), ("sec-fetch-site", "cross-site")],
    ] {
        let mut headers = refused.clone();
        headers.push(("content-type", "application/yaml"));
        let (status, body) = post_with(&s, path, YAML, &headers).await;
        assert_eq!(status, 403, "{refused:?}: {body}");
        assert!(
            body.contains("cross-site") || body.contains("origin"),
            "{body}"
        );
        assert!(!body.contains("changed"), "{body}");
    }
    for allowed in [
        vec![],
        vec![("origin", own.as_str())],
        vec![("sec-fetch-site", "same-origin"), ("origin", own.as_str())],
        // Typed into the address bar, or sent by a tool.
        vec![("sec-fetch-site", "none")],
    ] {
        let mut headers = allowed.clone();
        headers.push(("content-type", "application/yaml"));
        let (status, body) = post_with(&s, path, YAML, &headers).await;
        assert_eq!(status, 200, "{allowed:?}: {body}");
    }
}

#[tokio::test]
async fn post_diff_needs_a_yaml_or_json_content_type() {
    let (_dir, store, _refs) = populated().await;
    let s = Server::start(Some(store)).await;
    let path = "/diff?namespace=ns&name=app";
    // What a page can send without asking first (a form, text/plain), and others.
    for refused in [
        None,
        Some("text/plain"),
        Some("text/plain; charset=utf-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/octet-stream"),
        Some("application/yamlx"),
        Some("application/json-seq"),
    ] {
        let headers: Vec<(&str, &str)> = refused.map(|t| ("content-type", t)).into_iter().collect();
        let (status, body) = post_with(&s, path, YAML, &headers).await;
        assert_eq!(status, 415, "{refused:?}: {body}");
        assert!(body.contains("application/yaml"), "{body}");
    }
    for accepted in [
        "application/yaml",
        "application/x-yaml",
        "text/yaml",
        "Application/YAML; charset=utf-8",
        "text/yaml;charset=UTF-8",
    ] {
        let (status, body) = post_with(&s, path, YAML, &[("content-type", accepted)]).await;
        assert_eq!(status, 200, "{accepted}: {body}");
    }
    let json = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"port":7}}"#;
    let (status, body) = post_with(&s, path, json, &[("content-type", "application/json")]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("+  port: 7"), "{body}");
}

#[tokio::test]
async fn post_diff_has_its_own_smaller_body_cap() {
    let (_dir, store, _refs) = populated().await;
    let s = Server::start(Some(store)).await;
    let cap = ServeOptions::default().max_diff_body_bytes;
    assert!(cap < ServeOptions::default().max_request_bytes);
    let path = "/diff?namespace=ns&name=app";
    let yaml = [("content-type", "application/yaml")];
    let over = format!("kind: A\ndata: {}\n", "x".repeat(cap));
    let (status, body) = post_with(&s, path, over.clone(), &yaml).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("--max-diff-body-bytes"), "{body}");
    // Without a length in the headers (chunked), the cap holds as the body arrives.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = over
        .into_bytes()
        .chunks(1 << 20)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let stream = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let (status, body) = post_with(&s, path, stream, &yaml).await;
    assert_eq!(status, 413, "{body}");
    // A body under the cap is read.
    let under = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\ndata: {}\n",
        "x".repeat(cap / 2)
    );
    let (status, body) = post_with(&s, path, under, &yaml).await;
    assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
}

/// Every answer, whatever made it, tells caches to keep nothing and browsers not to
/// guess a type: renders hold Secrets.
#[tokio::test]
async fn every_answer_is_kept_out_of_caches_and_sniffing() {
    let (_dir, store, refs) = populated().await;
    let open = Server::start(Some(store.clone())).await;
    let guarded = Server::start_with(
        Some(store),
        ServeOptions {
            token: Some("t0ken-for-headers".into()),
            ..ServeOptions::default()
        },
    )
    .await;
    let absent = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let mut checked = 0;
    for (s, path, headers, status) in [
        (&open, "/healthz".to_string(), vec![], 200),
        (&open, "/history?namespace=ns&name=app".into(), vec![], 200),
        (&open, "/history?namespace=ns".into(), vec![], 400),
        (&open, format!("/renders/ns/app/{}", refs[0]), vec![], 200),
        (&open, format!("/renders/ns/app/{absent}"), vec![], 404),
        (
            &open,
            format!("/diff?namespace=ns&name=app&render={}", refs[0]),
            vec![],
            200,
        ),
        (&open, "/releases".into(), vec![], 200),
        (&open, "/".into(), vec![], 200),
        (&open, "/ui/ns/app".into(), vec![], 200),
        (
            &open,
            format!("/ui/ns/app/renders/{}", refs[0]),
            vec![],
            200,
        ),
        (
            &open,
            format!("/ui/ns/app/diff?from={}", refs[0]),
            vec![],
            200,
        ),
        (&open, "/assets/app.js".into(), vec![], 200),
        (&open, "/assets/app.css".into(), vec![], 200),
        (&open, "/no/such/page".into(), vec![], 404),
        (
            &open,
            "/releases".into(),
            vec![("host", "evil.example")],
            403,
        ),
        (&guarded, "/releases".into(), vec![], 401),
        (&guarded, "/healthz".into(), vec![], 200),
    ] {
        let mut request = s.client.get(format!("{}{path}", s.base));
        for (name, value) in &headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path}");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        assert_eq!(
            header("cache-control").as_deref(),
            Some("no-store"),
            "{path}"
        );
        assert_eq!(
            header("x-content-type-options").as_deref(),
            Some("nosniff"),
            "{path}"
        );
        checked += 1;
    }
    // And the answers a POST gets, refused or not.
    for content_type in ["application/yaml", "text/plain"] {
        let response = open
            .client
            .post(format!("{}/diff?namespace=ns&name=app", open.base))
            .header("content-type", content_type)
            .body(YAML)
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.headers().get("cache-control").unwrap(),
            "no-store",
            "{content_type}"
        );
        checked += 1;
    }
    assert_eq!(checked, 19);
}

/// One namespace folder the server cannot list (here a bucket failing that listing,
/// since tests often run as root, who reads a mode-000 folder anyway), and one release
/// whose history cannot be listed: the rest is shown, and the list says it is partial,
/// naming both (never "no such release").
#[tokio::test]
async fn an_unreadable_folder_makes_the_release_list_partial() {
    let inner = bucket_from_url("mem://");
    let writer = RenderStore::new(runtime(), inner.clone());
    for (namespace, name) in [
        ("ns", "app"),
        ("locked", "app"),
        ("ns", "broken"),
        ("zz", "z"),
    ] {
        let release = render_store::Release::new(namespace, name);
        let r = writer.put_render(&release, &render(1)).await.unwrap();
        let entry = NewEntry {
            render_ref: r,
            synced_at: time(1_767_225_600),
            summary: "v1".into(),
        };
        writer.record_history(&release, &entry).await.unwrap();
    }
    let failing = FaultyBucket::new(inner, |call| {
        matches!(call, BucketCall::ListDelimited(p) if p == "locked/")
            || matches!(call, BucketCall::List(p) if p == "ns/broken/history/")
    });
    let s = Server::start(Some(RenderStore::new(runtime(), failing))).await;
    let (status, body) = s.get("/releases").await;
    assert_eq!(status, 200, "{body}");
    let listed: serde_json::Value = serde_json::from_str(&body).unwrap();
    let names: Vec<String> = listed["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| {
            n["releases"].as_array().unwrap().iter().map(move |r| {
                format!(
                    "{}/{}",
                    n["namespace"].as_str().unwrap(),
                    r["name"].as_str().unwrap()
                )
            })
        })
        .collect();
    assert_eq!(names, ["ns/app", "zz/z"]);
    assert_eq!(listed["partial"], true, "{body}");
    assert_eq!(
        listed["unlisted"],
        serde_json::json!(["locked/", "ns/broken/"]),
        "{body}"
    );
    // The reasons, which may name paths and backends, stay in the log.
    assert!(!body.contains("fault"), "{body}");
    let (status, page) = s.get("/").await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("/ui/ns/app") && page.contains("/ui/zz/z"),
        "{page}"
    );
    assert!(!page.contains("/ui/locked/app"), "{page}");
    assert!(
        page.contains("This list is partial") && page.contains("<code>locked/</code>"),
        "{page}"
    );
    // The root itself failing is still the store failing.
    let root_fails = FaultyBucket::new(
        bucket_from_url("mem://"),
        |call| matches!(call, BucketCall::ListDelimited(p) if p.is_empty()),
    );
    let s = Server::start(Some(RenderStore::new(runtime(), root_fails))).await;
    assert_eq!(s.get("/releases").await.0, 502);
}

/// `serve` raises its soft open-file limit to the hard one: every connection is a
/// descriptor, and the usual soft limit is small.
#[test]
fn serve_raises_its_open_file_limit() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    let mut hard = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut hard) },
        0
    );
    if hard.rlim_max <= 256 {
        eprintln!(
            "open-file limit test skipped: the hard limit is {}",
            hard.rlim_max
        );
        return;
    }
    let hard = hard.rlim_max;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"));
    command
        .args([
            "--max-concurrent-calls",
            "1",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-auth",
        ])
        .env("RENDER_STORE_URL", "mem://")
        .env_remove("RENDER_STORE_LOG")
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        command.pre_exec(move || {
            let low = libc::rlimit {
                rlim_cur: 256,
                rlim_max: hard,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &low) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let mut seen = String::new();
    while !line.contains("serving on") {
        seen.push_str(&line);
        line.clear();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
    }
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.id()));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(line.contains("serving on"), "{seen}");
    let limits = limits.unwrap();
    let open_files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = open_files.split_whitespace().skip(3).take(2).collect();
    assert_eq!(
        numbers,
        [hard.to_string(), hard.to_string()],
        "{open_files}"
    );
}

/// A client that does not read its answer keeps its request place (an unread answer
/// is memory the server still holds) until the write timeout closes its connection;
/// then the place is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_answer_holds_its_place_until_the_write_timeout() {
    let store = RenderStore::open("mem://").unwrap().unwrap();
    let big = release("big");
    let big_ref = store.put_render(&big, &large_render(450, 1)).await.unwrap();
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            max_concurrent_requests: 1,
            write_timeout: Duration::from_secs(2),
            ..ServeOptions::default()
        },
    )
    .await;
    let started = Instant::now();
    let mut reader = non_reader(s.addr, &format!("/renders/ns/big/{big_ref}")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _) = s.get("/history?namespace=ns&name=big").await;
    let waited = started.elapsed();
    assert_eq!(status, 200);
    assert!(
        waited >= Duration::from_millis(1800) && waited < Duration::from_secs(5),
        "/history was answered after {waited:?}: the unread answer did not hold the \
         only place until the write timeout"
    );
    // The connection was closed: what can be read ends before the whole render.
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        use tokio::io::AsyncReadExt;
        match tokio::time::timeout(Duration::from_secs(5), reader.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => got += n,
            Err(_) => panic!("the unread connection was left open"),
        }
    }
    assert!(got < 12 << 20, "read {got} bytes: the whole render");
}

/// A body that does not arrive within the body timeout is answered 408 and holds no
/// request place meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_in_time_is_408() {
    let (_dir, store, _refs) = populated().await;
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            max_concurrent_requests: 1,
            body_timeout: Duration::from_secs(3),
            ..ServeOptions::default()
        },
    )
    .await;
    let addr = s.addr;
    let slow = tokio::task::spawn_blocking(move || {
        raw_exchange(
            addr,
            b"POST /diff?namespace=ns&name=app HTTP/1.1\r\nHost: 127.0.0.1\r\n\
              Content-Type: application/yaml\r\nContent-Length: 1000\r\n\r\nkind: A\n",
            Duration::from_secs(10),
        )
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(s.get("/history?namespace=ns&name=app").await.0, 200);
    // Answered while the slow body still waits for its timeout: it did not queue behind it.
    assert!(
        !slow.is_finished(),
        "the slow body was answered before the history"
    );
    let (answer, took) = slow.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// Another user's program that opens `count` connections to `addr`, sends nothing, and
/// says how many the server has not closed whenever it is sent a line. Runs as
/// `nobody` when this test runs as root.
struct IdleConnections {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl IdleConnections {
    fn open(addr: SocketAddr, count: usize) -> IdleConnections {
        use std::io::BufRead;
        const SCRIPT: &str = r#"
import socket, sys
addr = (sys.argv[1], int(sys.argv[2]))
socks = [socket.create_connection(addr) for _ in range(int(sys.argv[3]))]
print("open", flush=True)
for _ in sys.stdin:
    still = 0
    for s in socks:
        s.setblocking(False)
        try:
            still += s.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            still += 1
        except OSError:
            pass
    print(still, flush=True)
"#;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let mut command = if root {
            let mut c = std::process::Command::new("setpriv");
            // The system's interpreter: one under a user's home is not nobody's to run.
            c.args([
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "/usr/bin/python3",
            ]);
            c
        } else {
            std::process::Command::new("python3")
        };
        let mut child = command
            .args([
                "-c",
                SCRIPT,
                &addr.ip().to_string(),
                &addr.port().to_string(),
                &count.to_string(),
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "open", "the idle connections did not open");
        IdleConnections {
            child,
            stdin,
            stdout,
        }
    }

    /// How many of them the server has not closed.
    fn still_open(&mut self) -> usize {
        use std::io::{BufRead, Write};
        writeln!(self.stdin).unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim().parse().unwrap()
    }
}

impl Drop for IdleConnections {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// 400 connections that send nothing, from another user's process: they cannot keep a
/// liveness probe or a client with the token waiting. Those that showed no token are at
/// most `max_unauthenticated_connections`, and each new connection past that closes the
/// oldest (before, they held every connection place until the header timeout, which is
/// set long here, so the probe and the request would have waited for it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_that_show_no_token_hold_up_nobody() {
    let (_dir, store, _refs) = populated().await;
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            token: Some("t0ken".into()),
            header_timeout: Duration::from_secs(120),
            ..ServeOptions::default()
        },
    )
    .await;
    let mut idle = IdleConnections::open(s.addr, 400);
    let limit = ServeOptions::DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS;
    let quick = Duration::from_secs(20);
    let healthz = tokio::time::timeout(quick, s.get("/healthz")).await;
    assert_eq!(healthz.expect("/healthz waited").0, 200);
    let bearer = [("authorization", "Bearer t0ken")];
    let history =
        tokio::time::timeout(quick, s.get_with("/history?namespace=ns&name=app", &bearer)).await;
    assert_eq!(history.expect("a request with the token waited").0, 200);
    let open = tokio::task::spawn_blocking(move || (idle.still_open(), idle))
        .await
        .unwrap()
        .0;
    assert!(
        open <= limit,
        "{open} idle connections still open, over the bound of {limit}"
    );
    // A client with the token keeps its connection whatever arrives after it.
    let mut client = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let request =
        "GET /releases HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t0ken\r\n\r\n";
    for round in 0..2 {
        client.write_all(request.as_bytes()).await.unwrap();
        let answer = read_answer(&mut client).await;
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "round {round}: {answer}"
        );
        if round == 0 {
            drop(IdleConnections::open(s.addr, 2 * limit));
        }
    }
}

/// One answer of a keep-alive connection: its head and a body of `content-length`.
async fn read_answer(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut buf))
            .await
            .expect("no answer")
            .unwrap();
        assert_ne!(n, 0, "closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
    }
}

/// Clients with the token are at most `max_connections`; another one waits for a place
/// (here, until the header timeout closes the first one's idle connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_with_the_token_over_the_limit_wait_for_one_to_end() {
    let s = Server::start_with(
        None,
        ServeOptions {
            token: Some("t0ken".into()),
            max_connections: 1,
            header_timeout: Duration::from_secs(1),
            ..ServeOptions::default()
        },
    )
    .await;
    let request = "GET /history?namespace=ns&name=app HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                   Authorization: Bearer t0ken\r\n\r\n";
    let mut first = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    first.write_all(request.as_bytes()).await.unwrap();
    assert!(read_answer(&mut first).await.starts_with("HTTP/1.1 503"));
    let start = Instant::now();
    let mut second = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    second.write_all(request.as_bytes()).await.unwrap();
    let answer = read_answer(&mut second).await;
    let took = start.elapsed();
    // 503: no store; answered once the first connection's place was free.
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(10),
        "{took:?}"
    );
    // Meanwhile a probe, which shows no token, is not held up.
    drop(first);
}

/// A request head of exactly the documented limit is read; one byte more is a 431,
/// whichever part of the head is long: the request line, one header or many.
#[tokio::test]
async fn the_head_limit_is_the_documented_one() {
    let s = Server::start(None).await;
    let limit = 64 << 10;
    let head = |size: usize, shape: &str| -> Vec<u8> {
        let start = "GET /healthz";
        let end = " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
        let fixed = start.len() + end.len() + 2;
        let mut text = String::from(start);
        match shape {
            "line" => {
                text.push('?');
                text.push_str(&"a".repeat(size - fixed - 1));
                text.push_str(end);
            }
            "one header" => {
                text.push_str(end);
                let line = "X-Pad: \r\n";
                text.push_str(&format!(
                    "X-Pad: {}\r\n",
                    "a".repeat(size - fixed - line.len())
                ));
            }
            _ => {
                text.push_str(end);
                let mut left = size - fixed;
                let mut i = 0;
                while left > 0 {
                    let name = format!("X-{i:02}: ");
                    let take = (left - name.len() - 2).min(2_000);
                    let take = if left - (name.len() + take + 2) < 12 {
                        left - name.len() - 2
                    } else {
                        take
                    };
                    text.push_str(&format!("{name}{}\r\n", "a".repeat(take)));
                    left -= name.len() + take + 2;
                    i += 1;
                }
            }
        }
        text.push_str("\r\n");
        assert_eq!(text.len(), size, "{shape}");
        text.into_bytes()
    };
    for shape in ["line", "one header", "many headers"] {
        for (size, expect) in [(limit, "HTTP/1.1 200"), (limit + 1, "HTTP/1.1 431")] {
            let request = head(size, shape);
            let addr = s.addr;
            let (answer, _) = tokio::task::spawn_blocking(move || {
                raw_exchange(addr, &request, Duration::from_secs(10))
            })
            .await
            .unwrap();
            assert!(
                answer.starts_with(expect),
                "{shape}, {size} bytes: {answer}"
            );
        }
    }
}

/// Two `Host` headers are refused: which of them a proxy before the server checked is
/// anybody's guess.
#[tokio::test]
async fn two_host_headers_are_a_bad_request() {
    let s = Server::start(None).await;
    for hosts in [
        "Host: 127.0.0.1\r\nHost: evil.example\r\n",
        "Host: evil.example\r\nHost: 127.0.0.1\r\n",
        "Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n",
    ] {
        let request = format!("GET /releases HTTP/1.1\r\n{hosts}Connection: close\r\n\r\n");
        let addr = s.addr;
        let (answer, _) = tokio::task::spawn_blocking(move || {
            raw_exchange(addr, request.as_bytes(), Duration::from_secs(10))
        })
        .await
        .unwrap();
        assert!(answer.starts_with("HTTP/1.1 400"), "{hosts:?}: {answer}");
        assert!(answer.contains("more than one Host header"), "{answer}");
    }
}

/// Bidirectional controls in a summary or an object are shown as escapes on every page,
/// as the CLI shows them, so they cannot reorder what a line appears to say.
#[tokio::test]
async fn bidirectional_controls_show_as_escapes_on_the_pages() {
    let dir = tempfile::tempdir().unwrap();
    let store = RenderStore::open(&format!("file://{}", dir.path().display()))
        .unwrap()
        .unwrap();
    let app = render_store::Release::new("ns", "app");
    let mut refs = Vec::new();
    for (n, value) in ["plain", "admin\u{202e}gnp.exe\u{2066}"].iter().enumerate() {
        let object = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c"}},"data":{{"v":"{value}"}}}}"#
        );
        let r = store
            .put_render(&app, &[object.into_bytes()])
            .await
            .unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: render_store::SyncTime {
                seconds: 1_767_225_600 + n as i64,
                nanoseconds: 0,
            },
            summary: format!("deploy \u{202e}{n}lanif\u{202c} \u{200f}"),
        };
        store.record_history(&app, &entry).await.unwrap();
        refs.push(r);
    }
    let s = Server::start(Some(store)).await;
    for path in [
        "/ui/ns/app".to_string(),
        format!("/ui/ns/app/renders/{}", refs[1]),
        format!("/ui/ns/app/diff?from={}&to={}", refs[0], refs[1]),
    ] {
        let (status, page) = s.get(&path).await;
        assert_eq!(status, 200, "{path}: {page}");
        for raw in ['\u{202e}', '\u{2066}', '\u{202c}', '\u{200f}'] {
            assert!(!page.contains(raw), "{path} shows {raw:?} raw");
        }
        assert!(page.contains("\\u{202e}"), "{path}: {page}");
    }
    // The JSON endpoints stay exact: JSON escaping is for machines.
    let (_, history) = s.get("/history?namespace=ns&name=app").await;
    let history: serde_json::Value = serde_json::from_str(&history).unwrap();
    assert_eq!(
        history[0]["summary"],
        "deploy \u{202e}0lanif\u{202c} \u{200f}"
    );
}

/// Render work in flight is bounded server-wide: with room for one large render, a
/// client that does not read its render holds that room (its answer is memory the
/// server still holds), and a second large request waits, then is answered 503 with
/// `Retry-After`; a small render still fits beside it, and once the first answer is gone
/// the large one is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn render_work_waits_for_room_then_is_answered_busy() {
    let store = RenderStore::open("mem://").unwrap().unwrap();
    let big = release("big");
    let objects = large_render(200, 1);
    let size = objects.iter().map(|o| o.len() + 1).sum::<usize>();
    let big_ref = store.put_render(&big, &objects).await.unwrap();
    drop(objects);
    let small = release("small");
    let small_ref = store.put_render(&small, &render(1)).await.unwrap();
    // Room for one read of the large render (twice its size) and a little more.
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            max_render_bytes_in_flight: 2 * size + (64 << 10),
            ..ServeOptions::default()
        },
    )
    .await;
    let path = format!("/renders/ns/big/{big_ref}");
    let holder = non_reader(s.addr, &path).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _) = s.get(&format!("/renders/ns/small/{small_ref}")).await;
    assert_eq!(status, 200, "a small render fits beside the large one");
    let started = Instant::now();
    let response = s
        .client
        .get(format!("{}{path}", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "5");
    let body = response.text().await.unwrap();
    assert!(
        body.contains("busy") && body.contains("--max-render-bytes-in-flight"),
        "{body}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
    // The unread answer goes with its connection, and its room with it.
    drop(holder);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _) = s.get(&path).await;
    assert_eq!(status, 200);
}

/// The fleet pages read within the same budget as renders and diffs: while an unread
/// answer holds the room a large render needs, `/changes` and `/images`, which would
/// read that render, wait for it and are answered 503 with `Retry-After`, as a diff is;
/// once the room is free, both are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fleet_pages_wait_for_room_in_the_render_budget() {
    let store = RenderStore::open("mem://").unwrap().unwrap();
    let big = release("big");
    let objects = large_render(200, 1);
    let size = objects.iter().map(|o| o.len() + 1).sum::<usize>();
    let big_ref = store.put_render(&big, &objects).await.unwrap();
    drop(objects);
    let entry = NewEntry {
        render_ref: big_ref.clone(),
        synced_at: time(1_767_225_600),
        summary: "big".into(),
    };
    store.record_history(&big, &entry).await.unwrap();
    let s = Server::start_with(
        Some(store),
        ServeOptions {
            max_render_bytes_in_flight: 2 * size + (64 << 10),
            ..ServeOptions::default()
        },
    )
    .await;
    let holder = non_reader(s.addr, &format!("/renders/ns/big/{big_ref}")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pages = ["/changes?since=2025-01-01", "/images?q=*"];
    let server = &s;
    let answers = futures::future::join_all(pages.iter().map(|path| async move {
        let response = server
            .client
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let retry = response.headers().get("retry-after").cloned();
        (status, retry, response.text().await.unwrap())
    }))
    .await;
    for (path, (status, retry, body)) in pages.iter().zip(answers) {
        assert_eq!(status, 503, "{path}: {body}");
        assert_eq!(retry.unwrap(), "5", "{path}");
        assert!(
            body.contains("--max-render-bytes-in-flight"),
            "{path}: {body}"
        );
    }
    drop(holder);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, changes) = s.get(pages[0]).await;
    assert_eq!(status, 200, "{changes}");
    assert_eq!(changes.matches("class=\"change\"").count(), 1, "{changes}");
    let (status, images) = s.get(pages[1]).await;
    assert_eq!(status, 200, "{images}");
    assert!(!images.contains("id=\"partial\""), "{images}");
}
