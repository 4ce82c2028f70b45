//! Cost as the store grows, measured from outside: the CLI and `serve` as processes, on
//! `file://` and on the S3 emulator behind a proxy that counts every HTTP request.
//!
//! - **fleet**: 10 / 100 / 1,000 releases (10,000 with `SCALE_FLEET=10000`), in ten
//!   namespaces, each release one render and one history entry: `GET /releases`, the
//!   web page `/`, `render-store releases` and `verify` of the whole store;
//! - **history**: a release of 50 / 1,000 / 5,000 entries (each its own render): `history
//!   --limit 50`, the history page, `/diff` with its default `against`, the diff page with
//!   its default `to`, the CLI's text and JSON diff of `@1 @0`;
//! - **images**: 100 / 1,000 releases (and 3,000 on `file://`; more with
//!   `SCALE_IMAGES=N`) of 20 entries each, each entry its own render, written as a
//!   controller that does not keep the release index writes them: `images nginx` before
//!   and after `reindex`, and `export -o ndjson`, beside `ls` of every key of the same
//!   bucket;
//! - **verify**: `verify NS/NAME` of 1,000 / 2,000 entries;
//! - **renders**: 20 and 60 MB renders: `put`, `get`, the CLI diff, the render page, the
//!   diff page, `/diff`, and four diff pages at once;
//! - **budget** (`file://` only): the fleet pages within the server's render budget
//!   (`--max-render-bytes-in-flight 100000000`): 4 releases of two 39 MB renders each,
//!   one `/changes` and two at once beside the diff page of a release's two renders,
//!   then one `/images` and two at once with a 150 MB index planted in each release;
//!   the ratios of the peaks (the targets: two at once within 10% of one alone, one
//!   alone within 10% of the diff page).
//!
//! Every figure is one run (`SCALE_ROUNDS=N`: the median of N): requests (S3 only: the
//! proxy's count), wall time, and peak memory (the CLI's maximum RSS from `wait4`; the
//! server's `VmHWM`, reset before each request through `/proc/PID/clear_refs`). Growth
//! factors (requests and time from one size to the next) are printed under each part.
//! Request counts are deterministic and asserted in tests (`tests/e2e/scale_counts.rs`);
//! times are not.
//!
//! `cargo bench -p render-store-tests --bench scale` (with the emulators' `env.sh` loaded
//! for the S3 rows). `SCALE_CLI=PATH` measures another build of the CLI (an older one,
//! for before/after figures); commands it lacks are reported as not available.
//! `SCALE_ONLY=fleet,images,history,verify,renders,budget` runs some parts; `SCALE_BACKENDS=file,s3`
//! some backends.

use futures::StreamExt;
use render_store::{Bucket, open_bucket};
use render_store_guest::{Release, ReleasePrefix, SyncTime, entry_body, render_ref_of_canonical};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use std::time::{Duration, Instant};

const MIB: f64 = 1024.0 * 1024.0;

/// One measured figure.
#[derive(Clone, Copy, Default)]
struct Figure {
    /// HTTP requests to the store; `None` on `file://`.
    requests: Option<u64>,
    took: Duration,
    /// Peak resident memory in bytes.
    peak: u64,
    /// Whether the command or request succeeded.
    ok: bool,
}

#[path = "../support/counting_proxy.rs"]
mod counting_proxy;
use counting_proxy::CountingProxy as Proxy;

/// A backend of the bench: how the CLI reaches it, how the fill reaches it directly.
struct Backend {
    name: &'static str,
    /// What the measured processes are given (through the proxy on S3).
    url: String,
    /// What the fill writes through (not counted).
    direct: Arc<dyn Bucket>,
    proxy: Option<Proxy>,
    _dir: Option<tempfile::TempDir>,
}

/// The S3 emulator's parts of `RENDER_STORE_TEST_S3_URL`: the endpoint and the URL with
/// `{bucket}` and `{endpoint}` left to fill in.
struct S3 {
    endpoint: String,
    query: Vec<(String, String)>,
}

impl S3 {
    fn from_env() -> Option<S3> {
        let url = std::env::var("RENDER_STORE_TEST_S3_URL").ok()?;
        let parsed = url::Url::parse(&url).ok()?;
        let mut endpoint = None;
        let mut query = Vec::new();
        for (k, v) in parsed.query_pairs() {
            if k == "endpoint" {
                endpoint = Some(v.to_string());
            } else {
                query.push((k.to_string(), v.to_string()));
            }
        }
        Some(S3 {
            endpoint: endpoint?,
            query,
        })
    }

    fn url(&self, bucket: &str, endpoint: &str) -> String {
        let mut url = format!("s3://{bucket}?endpoint={endpoint}");
        for (k, v) in &self.query {
            url.push_str(&format!("&{k}={v}"));
        }
        url
    }
}

/// A fresh, empty store on `backend` ("file" or "s3"): a temporary folder, or a new
/// bucket of the emulator.
async fn fresh(backend: &str, s3: Option<&S3>, label: &str) -> Option<Backend> {
    match backend {
        "file" => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("file://{}", dir.path().display());
            Some(Backend {
                name: "file",
                direct: open_bucket(&url).unwrap().unwrap(),
                url,
                proxy: None,
                _dir: Some(dir),
            })
        }
        "s3" => {
            let s3 = s3?;
            let bucket = format!("scale-{label}-{}", std::process::id());
            let created = reqwest::Client::new()
                .put(format!("{}/{bucket}", s3.endpoint))
                .send()
                .await
                .ok()?;
            assert!(created.status().is_success(), "creating {bucket}");
            let proxy = Proxy::start(s3.endpoint.clone()).await;
            Some(Backend {
                name: "s3",
                direct: open_bucket(&s3.url(&bucket, &s3.endpoint))
                    .unwrap()
                    .unwrap(),
                url: s3.url(&bucket, &format!("http://{}", proxy.addr)),
                proxy: Some(proxy),
                _dir: None,
            })
        }
        _ => None,
    }
}

/// A small render of its own for `i`: canonical bytes and renderRef.
fn small_render(i: usize) -> (Vec<u8>, String) {
    let bytes = format!(
        "{{\"apiVersion\":\"v1\",\"data\":{{\"i\":\"{i}\"}},\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"c{i}\"}}}}\n"
    )
    .into_bytes();
    let r = render_ref_of_canonical(&bytes);
    (bytes, r)
}

/// Puts `keys` (key, value) many at a time.
async fn put_all(bucket: &Arc<dyn Bucket>, keys: Vec<(String, Vec<u8>)>) {
    futures::stream::iter(keys)
        .map(|(k, v)| {
            let bucket = bucket.clone();
            async move { bucket.put(&k, v).await.expect("the fill's put") }
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
}

/// The keys of a release with `entries` history entries, each naming a small render of
/// its own (stored), one a minute from 2026-01-01, summaries `sync N`.
fn release_keys(release: &Release, entries: usize, seed: usize) -> Vec<(String, Vec<u8>)> {
    let prefix = ReleasePrefix::new(release).unwrap();
    let mut keys = Vec::with_capacity(2 * entries);
    for i in 0..entries {
        let (bytes, r) = small_render(seed + i);
        let at = SyncTime {
            seconds: 1_767_225_600 + 60 * i as i64,
            nanoseconds: 0,
        };
        keys.push((prefix.render_key(&r).unwrap(), bytes));
        let body = entry_body(&r, at, &format!("sync {i}")).unwrap();
        keys.push((prefix.history_key(at, &r).unwrap(), body));
    }
    keys
}

/// Peak RSS and exit status of a child, from `wait4`.
/// The keys of `n` releases in ten namespaces, `entries` entries each.
fn fleet_keys(n: usize, entries: usize) -> Vec<(String, Vec<u8>)> {
    let mut keys = Vec::new();
    for i in 0..n {
        let release = Release::new(format!("team-{:02}", i % 10), format!("app-{i:05}"));
        keys.extend(release_keys(&release, entries, i));
    }
    keys
}

fn wait_child(child: Child) -> (bool, u64) {
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for our own child, writing into the two locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) <= 1;
    (ok, usage.ru_maxrss as u64 * 1024)
}

/// Runs the CLI with `args` against `backend`, its output discarded.
fn cli(exe: &Path, backend: &Backend, args: &[&str]) -> Figure {
    let before = backend.proxy.as_ref().map(Proxy::requests);
    let start = Instant::now();
    let child = Command::new(exe)
        .args(args)
        .env("RENDER_STORE_URL", &backend.url)
        .env_remove("RENDER_STORE_ENCRYPTION_KEYS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the CLI starts");
    let mut child = child;
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        text
    });
    let (ok, peak) = wait_child(child);
    let took = start.elapsed();
    let stderr = reader.join().unwrap_or_default();
    if !ok {
        eprintln!(
            "  ({} {}: failed: {})",
            backend.name,
            args.join(" "),
            stderr.lines().last().unwrap_or_default()
        );
    }
    Figure {
        requests: before.map(|b| backend.proxy.as_ref().unwrap().requests() - b),
        took,
        peak,
        ok,
    }
}

/// A `render-store serve --no-auth` process over `backend`.
struct Server {
    child: Child,
    base: String,
    http: reqwest::Client,
}

impl Server {
    fn start(exe: &Path, backend: &Backend) -> Server {
        Server::start_with(exe, backend, &[])
    }

    /// [`Server::start`] with more options.
    fn start_with(exe: &Path, backend: &Backend, options: &[&str]) -> Server {
        let mut child = Command::new(exe)
            .args([
                "serve",
                "--no-auth",
                "--listen",
                "127.0.0.1:0",
                "--request-timeout",
                "900s",
            ])
            .args(options)
            .env("RENDER_STORE_URL", &backend.url)
            .env("RENDER_STORE_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("serve says where it listens")
                .expect("a line");
            if let Some(addr) = line.strip_prefix("render-store: serving on http://") {
                break addr.to_string();
            }
        };
        // Keep draining its standard error so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
        }
    }

    fn proc_file(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("/proc/{}/{name}", self.child.id()))
    }

    /// Resets the peak RSS the kernel keeps for the process.
    fn reset_peak(&self) {
        let _ = std::fs::write(self.proc_file("clear_refs"), "5");
    }

    fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(self.proc_file("status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// GETs each of `paths` at once; the figure of them together.
    fn get(&self, rt: &tokio::runtime::Runtime, backend: &Backend, paths: &[String]) -> Figure {
        self.reset_peak();
        let before = backend.proxy.as_ref().map(Proxy::requests);
        let start = Instant::now();
        let statuses: Vec<(u16, String)> = rt.block_on(async {
            futures::future::join_all(paths.iter().map(|path| async move {
                match self.http.get(format!("{}{path}", self.base)).send().await {
                    Ok(mut r) => {
                        let status = r.status().as_u16();
                        // Read to the end but keep only the start: a CLI's peak memory
                        // counts the bench's own (see ref_of), so the bench holds no
                        // whole answer.
                        let mut start = Vec::new();
                        while let Ok(Some(chunk)) = r.chunk().await {
                            if start.len() < 300 {
                                start.extend_from_slice(&chunk[..chunk.len().min(300)]);
                            }
                        }
                        (status, String::from_utf8_lossy(&start).into())
                    }
                    Err(e) => (0, e.to_string()),
                }
            }))
            .await
        });
        let took = start.elapsed();
        let ok = statuses.iter().all(|(s, _)| *s == 200);
        if !ok {
            eprintln!("  ({} GET {}: {:?})", backend.name, paths[0], statuses[0]);
        }
        Figure {
            requests: before.map(|b| backend.proxy.as_ref().unwrap().requests() - b),
            took,
            peak: self.status_kb("VmHWM:") * 1024,
            ok,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The median figure of `rounds` runs.
fn median_of(rounds: usize, mut run: impl FnMut() -> Figure) -> Figure {
    let mut runs: Vec<Figure> = (0..rounds).map(|_| run()).collect();
    runs.sort_by_key(|f| f.took);
    runs[runs.len() / 2]
}

/// The table of one part: rows of (what, size label, figure).
struct Table {
    title: String,
    rows: Vec<(String, String, &'static str, Figure)>,
}

impl Table {
    fn new(title: impl Into<String>) -> Table {
        let title = title.into();
        println!("\n## {title}");
        println!(
            "{:<7} {:<44} {:>8} {:>9} {:>11} {:>10}",
            "store", "what", "size", "requests", "time", "peak MiB"
        );
        Table {
            title,
            rows: Vec::new(),
        }
    }

    fn add(&mut self, backend: &str, what: &str, size: &str, f: Figure) {
        let requests = match f.requests {
            Some(n) => n.to_string(),
            None => "-".into(),
        };
        let time = if f.ok {
            format!("{:.1} ms", f.took.as_secs_f64() * 1e3)
        } else {
            format!("failed {:.0} ms", f.took.as_secs_f64() * 1e3)
        };
        println!(
            "{backend:<7} {what:<44} {size:>8} {requests:>9} {time:>11} {:>10.1}",
            f.peak as f64 / MIB
        );
        self.rows
            .push((backend.to_string(), what.to_string(), leak(size), f));
    }

    /// Growth from each size to the next, per backend and measurement.
    fn growth(&self) {
        let mut groups: Vec<(Measured, Vec<(&str, Figure)>)> = Vec::new();
        for (backend, what, size, f) in &self.rows {
            let key = (backend.clone(), what.clone());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push((size, *f)),
                None => groups.push((key, vec![(size, *f)])),
            }
        }
        let grown: Vec<_> = groups.iter().filter(|(_, v)| v.len() > 1).collect();
        if grown.is_empty() {
            return;
        }
        println!("growth ({}): requests and time, size to size", self.title);
        for ((backend, what), sizes) in grown {
            let steps: Vec<String> = sizes
                .windows(2)
                .map(|w| {
                    let (a, b) = (w[0].1, w[1].1);
                    let req = match (a.requests, b.requests) {
                        (Some(x), Some(y)) if x > 0 => format!("{:.1}×", y as f64 / x as f64),
                        _ => "-".into(),
                    };
                    let time = b.took.as_secs_f64() / a.took.as_secs_f64().max(1e-9);
                    format!("{}→{}: {req} req, {time:.1}× time", w[0].0, w[1].0)
                })
                .collect();
            println!("  {backend:<6} {what:<44} {}", steps.join("; "));
        }
    }
}

/// A measurement: the backend and what was measured.
type Measured = (String, String);

/// A part of the bench, by name.
type Part = (&'static str, fn(&Bench));

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn wanted(var: &str, item: &str) -> bool {
    match std::env::var(var) {
        Ok(list) if !list.is_empty() => list.split(',').any(|x| x.trim() == item),
        _ => true,
    }
}

struct Bench {
    rt: tokio::runtime::Runtime,
    exe: PathBuf,
    s3: Option<S3>,
    rounds: usize,
    backends: Vec<&'static str>,
}

impl Bench {
    fn fleet(&self) {
        let mut sizes = vec![10usize, 100, 1_000];
        if let Some(n) = std::env::var("SCALE_FLEET")
            .ok()
            .and_then(|v| v.parse().ok())
            && n > 1_000
        {
            sizes.push(n);
        }
        let mut table =
            Table::new("fleet: N releases in 10 namespaces, one entry and one render each");
        for &backend in &self.backends {
            for &n in &sizes {
                let Some(store) =
                    self.rt
                        .block_on(fresh(backend, self.s3.as_ref(), &format!("fleet{n}")))
                else {
                    continue;
                };
                self.rt.block_on(put_all(&store.direct, fleet_keys(n, 1)));
                let size = n.to_string();
                let server = Server::start(&self.exe, &store);
                // The server's first call compiles nothing (the component cache is warm),
                // but its first request opens connections: a warm-up outside the figures.
                server.get(&self.rt, &store, &["/healthz".to_string()]);
                for (what, path) in [("GET /releases", "/releases"), ("GET / (web page)", "/")] {
                    let f = median_of(self.rounds, || {
                        server.get(&self.rt, &store, &[path.to_string()])
                    });
                    table.add(backend, what, &size, f);
                }
                drop(server);
                let f = median_of(self.rounds, || cli(&self.exe, &store, &["releases"]));
                table.add(backend, "render-store releases", &size, f);
                let f = median_of(self.rounds, || cli(&self.exe, &store, &["verify"]));
                table.add(backend, "render-store verify (every release)", &size, f);
            }
        }
        table.growth();
    }

    /// The fleet questions: where an image ran, across N releases of 20 entries each
    /// (each entry its own render), beside a plain listing of every key of the same
    /// bucket, which bounds any query that must see the whole fleet from below.
    fn images(&self) {
        let entries = 20usize;
        let extra: Option<usize> = std::env::var("SCALE_IMAGES")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 1_000);
        let mut table = Table::new(
            "images: N releases in 10 namespaces, 20 entries each, each entry its own render",
        );
        // The whole fleet is the work here: no command is cut by the CLI's default
        // timeout.
        let run = |store: &Backend, args: &[&str]| {
            let mut all = vec!["--timeout", "0"];
            all.extend_from_slice(args);
            median_of(self.rounds, || cli(&self.exe, store, &all))
        };
        for &backend in &self.backends {
            let mut sizes = vec![100usize, 1_000];
            if backend == "file" {
                sizes.push(3_000);
            }
            sizes.extend(extra);
            for &n in &sizes {
                let Some(store) =
                    self.rt
                        .block_on(fresh(backend, self.s3.as_ref(), &format!("images{n}")))
                else {
                    continue;
                };
                self.rt
                    .block_on(put_all(&store.direct, fleet_keys(n, entries)));
                let size = n.to_string();
                let f = run(&store, &["ls"]);
                table.add(backend, "render-store ls (every key: the floor)", &size, f);
                // The same requests an indexed `images` makes (the delimiter listings,
                // then a listing and a read per release): what the bucket charges for
                // that shape, whatever the query does with the answers.
                let f = run(&store, &["releases"]);
                table.add(backend, "releases (a listing + a read a release)", &size, f);
                let f = run(&store, &["images", "nginx"]);
                table.add(
                    backend,
                    "images nginx, no index (every render read)",
                    &size,
                    f,
                );
                // One round: the first reindex does the work, a second has none to do.
                let f = cli(&self.exe, &store, &["--timeout", "0", "reindex"]);
                table.add(backend, "reindex (once: every render read)", &size, f);
                let f = run(&store, &["images", "nginx"]);
                table.add(backend, "images nginx, indexed", &size, f);
                let f = run(&store, &["export", "-o", "ndjson"]);
                table.add(backend, "export -o ndjson, indexed", &size, f);
            }
        }
        table.growth();
    }

    fn history(&self) {
        let mut table = Table::new("history: one release of N entries, each its own render");
        for &backend in &self.backends {
            for n in [50usize, 1_000, 5_000] {
                let Some(store) =
                    self.rt
                        .block_on(fresh(backend, self.s3.as_ref(), &format!("history{n}")))
                else {
                    continue;
                };
                let release = Release::new("hist", "app");
                self.rt
                    .block_on(put_all(&store.direct, release_keys(&release, n, 0)));
                let size = n.to_string();
                let run = |args: &[&str]| median_of(self.rounds, || cli(&self.exe, &store, args));
                table.add(
                    backend,
                    "history --limit 50",
                    &size,
                    run(&["history", "hist/app", "--limit", "50"]),
                );
                table.add(
                    backend,
                    "diff @1 @0 (text)",
                    &size,
                    run(&["diff", "hist/app", "@1", "@0"]),
                );
                table.add(
                    backend,
                    "diff @1 @0 -o json",
                    &size,
                    run(&["diff", "hist/app", "@1", "@0", "-o", "json"]),
                );
                let server = Server::start(&self.exe, &store);
                server.get(&self.rt, &store, &["/healthz".to_string()]);
                for (what, path) in [
                    ("GET /ui/NS/NAME (history page)", "/ui/hist/app"),
                    (
                        "GET /history?limit=50",
                        "/history?namespace=hist&name=app&limit=50",
                    ),
                    (
                        "GET /diff?render=@1 (against newest)",
                        "/diff?namespace=hist&name=app&render=%401",
                    ),
                    (
                        "GET /ui/NS/NAME/diff?from=@1 (to newest)",
                        "/ui/hist/app/diff?from=%401",
                    ),
                ] {
                    let f = median_of(self.rounds, || {
                        server.get(&self.rt, &store, &[path.to_string()])
                    });
                    table.add(backend, what, &size, f);
                }
            }
        }
        table.growth();
    }

    fn verify(&self) {
        let mut table = Table::new("verify: one release of N entries, each its own render");
        for &backend in &self.backends {
            for n in [1_000usize, 2_000] {
                let Some(store) =
                    self.rt
                        .block_on(fresh(backend, self.s3.as_ref(), &format!("verify{n}")))
                else {
                    continue;
                };
                let release = Release::new("hist", "app");
                self.rt
                    .block_on(put_all(&store.direct, release_keys(&release, n, 0)));
                let f = median_of(self.rounds, || {
                    cli(&self.exe, &store, &["verify", "hist/app"])
                });
                table.add(backend, "verify NS/NAME", &n.to_string(), f);
            }
        }
        table.growth();
    }

    fn renders(&self) {
        let mut table = Table::new("renders: put, get, diff and pages of one large render");
        let dir = tempfile::tempdir().unwrap();
        for &backend in &self.backends {
            for mb in [20usize, 60] {
                let Some(store) =
                    self.rt
                        .block_on(fresh(backend, self.s3.as_ref(), &format!("render{mb}")))
                else {
                    continue;
                };
                let (old, new) = (
                    dir.path().join(format!("old-{mb}.jsonl")),
                    dir.path().join(format!("new-{mb}.jsonl")),
                );
                write_large_render(&old, mb, 0);
                write_large_render(&new, mb, 1);
                let bytes = std::fs::metadata(&new).unwrap().len();
                println!(
                    "({backend}: the {mb} MB render is {bytes} bytes, {:.1} MiB)",
                    bytes as f64 / MIB
                );
                let size = format!("{mb} MB");
                let p = |p: &Path| p.to_str().unwrap().to_string();
                if mb == 20 {
                    // What a process holds before any render: the memory ratios are
                    // of the peak less this.
                    let f = cli(&self.exe, &store, &["ref", "--allow-empty"]);
                    table.add(backend, "baseline: ref of an empty render", "0 MB", f);
                }
                // The older render goes in first, unmeasured, with its entry.
                let put_old = cli(&self.exe, &store, &["put", "big/app", &p(&old)]);
                assert!(put_old.ok, "put of the older render");
                let f = cli(&self.exe, &store, &["put", "big/app", &p(&new)]);
                table.add(backend, "put (a new render)", &size, f);
                let old_ref = ref_of(&old);
                let new_ref = ref_of(&new);
                for (r, t) in [
                    (&old_ref, "2026-01-01T00:00:00Z"),
                    (&new_ref, "2026-01-02T00:00:00Z"),
                ] {
                    assert!(
                        cli(
                            &self.exe,
                            &store,
                            &["record", "big/app", r, "--synced-at", t]
                        )
                        .ok
                    );
                }
                let run = |args: &[&str]| median_of(self.rounds, || cli(&self.exe, &store, args));
                table.add(backend, "get @0", &size, run(&["get", "big/app", "@0"]));
                table.add(
                    backend,
                    "diff @1 @0 (text)",
                    &size,
                    run(&["diff", "big/app", "@1", "@0"]),
                );
                let server = Server::start(&self.exe, &store);
                let f = server.get(&self.rt, &store, &["/healthz".to_string()]);
                if mb == 20 {
                    table.add(backend, "baseline: server, GET /healthz", "0 MB", f);
                }
                for (what, paths) in [
                    (
                        "GET /ui/NS/NAME/renders/@0 (render page)",
                        vec!["/ui/big/app/renders/%400".to_string()],
                    ),
                    (
                        "GET /ui/NS/NAME/diff?from=@1 (diff page)",
                        vec!["/ui/big/app/diff?from=%401".to_string()],
                    ),
                    (
                        "GET /diff?render=@0&against=@1",
                        vec!["/diff?namespace=big&name=app&render=%400&against=%401".to_string()],
                    ),
                    (
                        "4 diff pages at once",
                        vec!["/ui/big/app/diff?from=%401".to_string(); 4],
                    ),
                ] {
                    let f = median_of(self.rounds, || server.get(&self.rt, &store, &paths));
                    table.add(backend, what, &size, f);
                }
            }
        }
        table.growth();
    }
}

/// The server's budget for the fleet pages: what `budget` starts it with.
const BUDGET_BYTES: &str = "100000000";

/// The size of the index planted in each release of `budget`.
const PLANTED_INDEX_BYTES: usize = 150_000_000;

impl Bench {
    fn budget(&self) {
        let mut table = Table::new(format!(
            "budget: fleet pages within --max-render-bytes-in-flight {BUDGET_BYTES}"
        ));
        let Some(store) = self.rt.block_on(fresh("file", None, "budget")) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let renders: Vec<(Vec<u8>, String)> = (0..2)
            .map(|variant| {
                let path = dir.path().join(format!("render-{variant}.jsonl"));
                write_large_render(&path, 39, variant);
                let bytes = std::fs::read(&path).unwrap();
                let r = render_ref_of_canonical(&bytes);
                (bytes, r)
            })
            .collect();
        println!(
            "(4 releases of 2 renders of {} bytes, {:.1} MiB; entries a day apart)",
            renders[0].0.len(),
            renders[0].0.len() as f64 / MIB
        );
        let releases: Vec<Release> = (0..4)
            .map(|i| Release::new("big", format!("app-{i}")))
            .collect();
        for (i, release) in releases.iter().enumerate() {
            let prefix = ReleasePrefix::new(release).unwrap();
            let mut keys = Vec::new();
            for (day, (bytes, r)) in renders.iter().enumerate() {
                let at = SyncTime {
                    seconds: 1_767_225_600 + 86_400 * day as i64 + 60 * i as i64,
                    nanoseconds: 0,
                };
                keys.push((prefix.render_key(r).unwrap(), bytes.clone()));
                let body = entry_body(r, at, &format!("sync {day}")).unwrap();
                keys.push((prefix.history_key(at, r).unwrap(), body));
            }
            self.rt.block_on(put_all(&store.direct, keys));
        }
        let server = Server::start_with(
            &self.exe,
            &store,
            &["--max-render-bytes-in-flight", BUDGET_BYTES],
        );
        let baseline = server.get(&self.rt, &store, &["/healthz".to_string()]);
        table.add("file", "baseline: server, GET /healthz", "-", baseline);
        let size = "4×2×39 MB";
        let mut measure = |what: &str, paths: Vec<String>| {
            let f = median_of(self.rounds, || server.get(&self.rt, &store, &paths));
            table.add("file", what, size, f);
            f
        };
        let diff = measure(
            "diff page of a release's two renders",
            vec!["/ui/big/app-0/diff?from=%401".to_string()],
        );
        let changes = "/changes?since=2026-01-01".to_string();
        let one = measure("GET /changes", vec![changes.clone()]);
        let two = measure("2 × GET /changes at once", vec![changes; 2]);
        // What the index names for each render: rows of the index's own shape, enough
        // of them to weigh 150 MB, each naming the image the page asks for.
        let index = planted_index(&[&renders[0].1, &renders[1].1]);
        drop(renders);
        for release in &releases {
            let key = ReleasePrefix::new(release).unwrap().index_key();
            self.rt
                .block_on(store.direct.put(&key, index.clone()))
                .expect("the planted index");
        }
        println!(
            "(an index of {} bytes, {:.1} MiB, planted in each release)",
            index.len(),
            index.len() as f64 / MIB
        );
        drop(index);
        let images = "/images?q=nginx:1.0".to_string();
        let one_images = measure("GET /images (150 MB index each)", vec![images.clone()]);
        let two_images = measure("2 × GET /images at once", vec![images; 2]);
        let over = |f: Figure| f.peak.saturating_sub(baseline.peak) as f64 / MIB;
        // The ratios are of the whole peaks, as the targets are stated; the MiB beside
        // them are over the baseline: what the requests themselves added.
        println!(
            "peaks over the server's baseline ({:.1} MiB), and the ratios of the peaks:",
            baseline.peak as f64 / MIB
        );
        for (what, alone, together) in [("/changes", one, two), ("/images", one_images, two_images)]
        {
            println!(
                "  {what:<9} one {:>7.1} MiB, two at once {:>7.1} MiB, diff page {:>7.1} MiB: \
                 two / one {:.2} (target ≤ 1.10), one / diff page {:.2} (target ≤ 1.10){}",
                over(alone),
                over(together),
                over(diff),
                together.peak as f64 / alone.peak.max(1) as f64,
                alone.peak as f64 / diff.peak.max(1) as f64,
                if alone.ok && together.ok {
                    ""
                } else {
                    " (a request failed)"
                },
            );
        }
    }
}

/// A release index (`{"renders":{REF:[[apiVersion,kind,namespace,name,hash,[images]],…]},
/// "version":1}`) of about [`PLANTED_INDEX_BYTES`] naming `refs`, each object with the
/// image `nginx:1.0`: what a writer of the bucket could plant.
fn planted_index(refs: &[&str]) -> Vec<u8> {
    use std::fmt::Write;
    let mut out = String::with_capacity(PLANTED_INDEX_BYTES + 4096);
    out.push_str("{\"renders\":{");
    let per_ref = PLANTED_INDEX_BYTES / refs.len();
    for (n, r) in refs.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        write!(out, "\"{r}\":[").unwrap();
        let start = out.len();
        let mut i = 0usize;
        while out.len() - start < per_ref {
            if i > 0 {
                out.push(',');
            }
            write!(
                out,
                "[\"v1\",\"ConfigMap\",\"big\",\"cm-{i:07}\",\"{:064x}\",[\"docker.io/library/nginx:1.0\"]]",
                i * 2_654_435_761
            )
            .unwrap();
            i += 1;
        }
        out.push(']');
    }
    out.push_str("},\"version\":1}");
    out.into_bytes()
}

/// Writes a render of about `mb` megabytes of canonical JSON lines: ConfigMaps of about
/// 10 KB each; `variant` 1 changes every 100th object.
fn write_large_render(path: &Path, mb: usize, variant: usize) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let objects = mb * 100;
    for i in 0..objects {
        let changed = variant == 1 && i % 100 == 7;
        let fill: String = (0..10_000 / 16)
            .map(|j| {
                format!(
                    "{:015x} ",
                    (i * 7919 + j * 31 + usize::from(changed)) % 0xffff_ffff
                )
            })
            .collect();
        writeln!(
            out,
            "{{\"apiVersion\":\"v1\",\"data\":{{\"payload\":\"{fill}\"}},\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"cm-{i:06}\",\"namespace\":\"big\"}}}}"
        )
        .unwrap();
    }
}

/// The renderRef of a file of canonical JSON lines, hashed as it is read: a child's
/// peak memory (`wait4`'s maximum RSS) counts the bench's own high-water mark, since
/// the child is spawned sharing the bench's memory until it execs, so the bench never
/// holds a render whole.
fn ref_of(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    std::io::copy(
        &mut std::fs::File::open(path).unwrap(),
        &mut HashWriter(&mut hash),
    )
    .unwrap();
    let digest = hash.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A writer that feeds a hash.
struct HashWriter<'a>(&'a mut sha2::Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        sha2::Digest::update(self.0, buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {
    let exe = std::env::var_os("SCALE_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_render-store-under-test")));
    let s3 = S3::from_env();
    let mut backends = vec!["file"];
    if s3.is_some() {
        backends.push("s3");
    } else {
        println!("(the S3 rows are not available: RENDER_STORE_TEST_S3_URL is not set)");
    }
    backends.retain(|b| wanted("SCALE_BACKENDS", b));
    let rounds = std::env::var("SCALE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1usize)
        .max(1);
    let bench = Bench {
        rt: tokio::runtime::Runtime::new().unwrap(),
        exe,
        s3,
        rounds,
        backends,
    };
    println!("the CLI measured: {}", bench.exe.display());
    // Compile the component into the cache before anything is timed.
    let _ = Command::new(&bench.exe)
        .args(["ref", "/dev/null", "--allow-empty"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let parts: [Part; 6] = [
        ("fleet", Bench::fleet),
        ("images", Bench::images),
        ("history", Bench::history),
        ("verify", Bench::verify),
        ("renders", Bench::renders),
        ("budget", Bench::budget),
    ];
    for (name, part) in parts {
        if wanted("SCALE_ONLY", name) {
            part(&bench);
        }
    }
}
