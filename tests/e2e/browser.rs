//! The observer's web pages in a real headless Chromium, driven over WebDriver (the
//! W3C protocol, spoken to chromedriver over HTTP), against `render-store serve` on
//! 127.0.0.1 with a file:// store of two releases and a dozen history entries.
//!
//! Screenshots of every page land in `target/browser-screenshots/` for people to look
//! at. Without chromedriver the test says so and passes, unless CI asks for the browser
//! (`CI=true` or `RENDER_STORE_REQUIRE_BROWSER=1`): then it fails, so a CI machine
//! that lost its browser cannot pass by skipping. `RENDER_STORE_CHROMEDRIVER` and
//! `RENDER_STORE_CHROMIUM` name other binaries than the ones on `PATH`.

use super::support::{Served, serve_cli};
use render_store::{NewEntry, Release, RenderStore, SyncTime};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The key WebDriver names element references by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn browser_required() -> bool {
    std::env::var("RENDER_STORE_REQUIRE_BROWSER").is_ok_and(|v| v == "1")
        || std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// An executable: `$var`, or the first of `names` on `PATH`.
fn find(var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// chromedriver in a process group of its own, killed with every browser it started
/// when the test ends: Chromium outlives a killed chromedriver, and a failed test
/// never gets to end its session.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        // The group's id is chromedriver's pid (`process_group(0)`); the browsers it
        // started are in it.
        if let Ok(group) = i32::try_from(self.0.id()) {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Logs the browser in as the person who started `server` does: opens the login file
/// it printed, which posts the token and goes on to the pages. Returns where the pages
/// are (the server's address and the pages' base path).
async fn log_in(s: &Session, server: &Served) -> String {
    let file = server
        .login_file
        .as_ref()
        .expect("serve printed a login file");
    s.open(url::Url::from_file_path(file).unwrap().as_str())
        .await;
    let base = render_store_cli::serve::pages_base(&server.token());
    let pages = format!("http://{}{base}", server.addr);
    assert_eq!(s.url_with(&format!("{base}/")).await, format!("{pages}/"));
    pages
}

/// A server of another user on another port of 127.0.0.1: answers every request with a
/// small page and keeps the `Cookie` headers it was sent.
fn another_server() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if line.to_ascii_lowercase().starts_with("cookie:") {
                    kept.lock().unwrap().push(line.trim().to_string());
                }
                line.clear();
            }
            kept.lock().unwrap().push("(request)".to_string());
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 19\r\n\
                  connection: close\r\n\r\n<p>another page</p>",
            );
        }
    });
    (port, seen)
}

/// A WebDriver session.
struct Session {
    http: reqwest::Client,
    base: String,
}

impl Session {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method.clone(), &url);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert!(
            status.is_success(),
            "WebDriver {method} {path}: {status} {text}"
        );
        value["value"].clone()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> Value {
        self.call(reqwest::Method::GET, path, None).await
    }

    async fn open(&self, url: &str) {
        self.post("/url", json!({ "url": url })).await;
    }

    async fn url(&self) -> String {
        self.get("/url").await.as_str().unwrap().to_string()
    }

    async fn all(&self, css: &str) -> Vec<String> {
        let found = self
            .post(
                "/elements",
                json!({ "using": "css selector", "value": css }),
            )
            .await;
        found
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e[ELEMENT].as_str().unwrap().to_string())
            .collect()
    }

    async fn one(&self, css: &str) -> String {
        let all = self.all(css).await;
        assert!(
            !all.is_empty(),
            "no element matches {css:?} on {}",
            self.url().await
        );
        all[0].clone()
    }

    async fn text(&self, element: &str) -> String {
        let text = self.get(&format!("/element/{element}/text")).await;
        text.as_str().unwrap().to_string()
    }

    async fn texts(&self, css: &str) -> Vec<String> {
        let mut out = Vec::new();
        for e in self.all(css).await {
            out.push(self.text(&e).await);
        }
        out
    }

    async fn click(&self, element: &str) {
        self.post(&format!("/element/{element}/click"), json!({}))
            .await;
    }

    async fn script(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({ "script": script, "args": [] }))
            .await
    }

    async fn press(&self, keys: &str) {
        let mut actions = Vec::new();
        for c in keys.chars() {
            actions.push(json!({ "type": "keyDown", "value": c.to_string() }));
            actions.push(json!({ "type": "keyUp", "value": c.to_string() }));
        }
        self.post(
            "/actions",
            json!({ "actions": [{ "type": "key", "id": "keyboard", "actions": actions }] }),
        )
        .await;
    }

    async fn resize(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({ "width": width, "height": height }))
            .await;
    }

    async fn screenshot(&self, dir: &Path, name: &str) {
        use base64::Engine;
        let png = self.get("/screenshot").await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{name} is not a PNG");
        std::fs::write(dir.join(format!("{name}.png")), bytes).unwrap();
    }

    /// Waits for a navigation a click or key started to reach a URL holding `part`,
    /// and returns it: a form's submission can still be on its way when the click
    /// returns.
    async fn url_with(&self, part: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let url = self.url().await;
            let loaded = self
                .script("return document.readyState === 'complete'")
                .await;
            if url.contains(part) && loaded == json!(true) {
                return url;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {part:?}: at {url}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until `script` returns true, for a page a script is still finishing.
    async fn until(&self, what: &str, script: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.script(script).await != json!(true) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Starts chromedriver and a Chromium session, `dark` with the system theme dark.
async fn start_browser(driver: &Path, chromium: Option<&Path>, dark: bool) -> (Driver, Session) {
    use std::os::unix::process::CommandExt;
    let port = free_port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", driver.display()));
    let child = Driver(child);
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = match http.get(format!("{base}/status")).send().await {
            Ok(r) => r
                .text()
                .await
                .unwrap_or_default()
                .contains("\"ready\":true"),
            Err(_) => false,
        };
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "chromedriver did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut args = vec![
        "--headless=new",
        // Tests often run as root in a container, where Chromium's sandbox cannot
        // start; the browser only visits the test's own server.
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-crash-reporter",
        "--window-size=1280,1000",
    ];
    if dark {
        args.push("--force-dark-mode");
        args.push("--blink-settings=preferredColorScheme=0");
    }
    let mut options = json!({ "args": args });
    if let Some(chromium) = chromium {
        options["binary"] = json!(chromium.to_str().unwrap());
    }
    let body = json!({
        "capabilities": { "alwaysMatch": { "goog:chromeOptions": options } }
    });
    let session = Session {
        http: http.clone(),
        base: base.clone(),
    };
    let created = session.post("/session", body).await;
    let id = created["sessionId"].as_str().unwrap().to_string();
    (
        child,
        Session {
            http,
            base: format!("{base}/session/{id}"),
        },
    )
}

/// The value of the web ConfigMap's `long` key: its YAML line, `  long: ` and this, is
/// [`LONG_LINE`] characters, a line of usual length a side-by-side diff must not wrap.
fn long_value() -> String {
    "x".repeat(LONG_LINE - "  long: ".len())
}

/// The length of the ConfigMap's longest line.
const LONG_LINE: usize = 100;

/// A render of the web release at version `v`: a ConfigMap whose `version` changes
/// every time (beside a long line that does not), a Deployment, and from v5 on a
/// Service.
fn web_render(v: u32) -> Vec<Vec<u8>> {
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "web-config", "namespace": "prod"},
               "data": {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5",
                        "long": long_value(), "version": format!("v{v}")}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "prod"},
               "spec": {"replicas": 2}}),
    ];
    if v >= 5 {
        objects.push(json!({"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": "web", "namespace": "prod"}}));
    }
    objects.iter().map(|o| o.to_string().into_bytes()).collect()
}

const HOSTILE: &str = "<script>window.hostile=1</script><img src=x onerror=\"window.hostile=2\">";

/// Two releases, a dozen entries: prod/web 11 (one past GC's default of 10), staging/api
/// one. Entry 7 of prod/web has a hostile summary. Returns the web release's refs,
/// oldest first.
async fn populate(store: &RenderStore) -> Vec<String> {
    let web = Release::new("prod", "web");
    let mut refs = Vec::new();
    for v in 1..=11u32 {
        let r = store.put_render(&web, &web_render(v)).await.unwrap();
        let summary = match v {
            7 => HOSTILE.to_string(),
            _ => format!("deploy v{v}"),
        };
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: SyncTime {
                seconds: 1_790_000_000 + i64::from(v) * 3600,
                nanoseconds: 0,
            },
            summary,
        };
        assert!(store.record_history(&web, &entry).await.unwrap());
        refs.push(r);
    }
    let api = Release::new("staging", "api");
    let secret =
        br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api","namespace":"staging"}}"#;
    let r = store.put_render(&api, &[secret.to_vec()]).await.unwrap();
    let entry = NewEntry {
        render_ref: r,
        synced_at: SyncTime {
            seconds: 1_790_100_000,
            nanoseconds: 0,
        },
        summary: "first".into(),
    };
    store.record_history(&api, &entry).await.unwrap();
    refs
}

fn screenshot_dir() -> PathBuf {
    // The binary under test lives in <target>/<profile>/.
    let bin = Path::new(env!("CARGO_BIN_EXE_render-store-under-test"));
    let dir = bin
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("browser-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pages_in_a_real_browser() {
    let Some(driver) = find("RENDER_STORE_CHROMEDRIVER", &["chromedriver"]) else {
        assert!(
            !browser_required(),
            "chromedriver is not installed (Debian: apt-get install chromium chromium-driver), \
             and CI requires the browser test"
        );
        eprintln!("browser test skipped: chromedriver is not installed");
        return;
    };
    let chromium = find("RENDER_STORE_CHROMIUM", &["chromium", "chromium-browser"]);
    let shots = screenshot_dir();

    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let store = RenderStore::open(&url).unwrap().unwrap();
    let refs = populate(&store).await;
    // With its defaults: a token, and a login file for the browser.
    let server = serve_cli(&url, &[]);
    let site = format!("http://{}", server.addr);
    let (_driver, s) = start_browser(&driver, chromium.as_deref(), false).await;

    // Before the login the pages are closed to the browser, which is shown where to
    // log in.
    s.open(&format!("{site}/")).await;
    assert!(
        s.all("section.namespace").await.is_empty(),
        "shown without a login"
    );
    assert_eq!(
        s.all("input[type=password]").await.len(),
        1,
        "no login form"
    );
    s.screenshot(&shots, "login").await;
    // The login file posts the token, sets the session cookie and leads to the release
    // list under the pages' base, with no secret in any address.
    let pages = log_in(&s, &server).await;
    assert!(!s.url().await.contains(&server.token()));
    let cookies = s.get("/cookie").await;
    let session = cookies
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["name"]
                .as_str()
                .unwrap()
                .starts_with("render-store-session-")
        })
        .expect("a session cookie")
        .clone();
    assert_eq!(session["httpOnly"], json!(true), "{session}");
    assert_eq!(session["sameSite"], json!("Strict"), "{session}");
    assert_eq!(
        session["path"],
        json!(pages.strip_prefix(&site).unwrap()),
        "{session}"
    );
    assert_eq!(
        s.script("return document.cookie").await,
        json!(""),
        "the page's script sees the session cookie"
    );
    // Another user's server on another port of the host: the browser visits it (a link,
    // a redirect) and sends it no session cookie.
    let (other_port, seen) = another_server();
    for path in ["/", "/ui/prod/web", "/s/"] {
        s.open(&format!("http://127.0.0.1:{other_port}{path}"))
            .await;
        s.url_with("127.0.0.1").await;
    }
    let seen = seen.lock().unwrap().clone();
    // The three pages, and what else the browser asks of that origin (its icon).
    assert!(
        seen.iter().filter(|l| *l == "(request)").count() >= 3,
        "{seen:?}"
    );
    assert!(
        !seen.iter().any(|l| l.contains("render-store-session")),
        "another port received the session cookie: {seen:?}"
    );
    s.open(&format!("{pages}/")).await;

    // The release list shows both releases, grouped by namespace.
    assert_eq!(
        s.texts("section.namespace h2").await,
        ["prod", "staging"],
        "namespaces"
    );
    let rows = s.all("tr.release").await;
    assert_eq!(rows.len(), 2);
    let first = s.text(&rows[0]).await;
    assert!(first.contains("web") && first.contains("11"), "{first}");
    // Each release shows its last summary and the age of its newest sync, the exact
    // time in the title.
    assert!(first.contains("deploy v11"), "{first}");
    assert!(s.text(&rows[1]).await.contains("api"));
    let ages = s
        .script(
            "return [...document.querySelectorAll('tr.release time.age')]\
             .map(t => [t.textContent, t.title])",
        )
        .await;
    let ages = ages.as_array().unwrap();
    assert_eq!(ages.len(), 2, "{ages:?}");
    for age in ages {
        let (text, title) = (age[0].as_str().unwrap(), age[1].as_str().unwrap());
        // kubectl's form, as `history` prints it: `45s`, `3d5h` and so on, then "ago".
        let kubectl_form = |span: &str| {
            let units: Vec<&str> = span
                .split(|c: char| c.is_ascii_digit())
                .filter(|u| !u.is_empty())
                .collect();
            span.starts_with(|c: char| c.is_ascii_digit())
                && (1..=2).contains(&units.len())
                && units.iter().all(|u| ["s", "m", "h", "d", "y"].contains(u))
        };
        assert!(
            text.strip_suffix(" ago").is_some_and(kubectl_form)
                || text.strip_prefix("in ").is_some_and(kubectl_form),
            "{text:?}"
        );
        assert!(
            title.starts_with("2026-") && title.ends_with(" UTC"),
            "{title}"
        );
    }
    // The two namespaces' tables have their columns at the same places.
    let columns = s
        .script(
            "return [...document.querySelectorAll('table.releases')].map(t => \
             [...t.querySelectorAll('thead th')].map(th => \
             Math.round(th.getBoundingClientRect().left)))",
        )
        .await;
    let columns = columns.as_array().unwrap();
    assert_eq!(columns.len(), 2, "{columns:?}");
    assert_eq!(columns[0].as_array().unwrap().len(), 4, "{columns:?}");
    assert_eq!(
        columns[0], columns[1],
        "the columns shift between namespaces"
    );
    s.screenshot(&shots, "releases").await;

    // Typing in the search box hides the releases whose name does not hold the text.
    let search = s.one("input[type=search][name=q]").await;
    s.click(&search).await;
    s.press("api").await;
    let visible = "return [...document.querySelectorAll('tr.release')]\
                   .filter(r => r.checkVisibility()).map(r => r.dataset.release)";
    assert_eq!(s.script(visible).await, json!(["staging/api"]));
    assert_eq!(
        s.script("return document.querySelector('section[data-namespace=prod]').hidden")
            .await,
        json!(true),
        "a namespace with no release left shows"
    );
    // Submitted, the server searches the store: the same without the script.
    s.press("\u{E007}").await;
    assert_eq!(s.url_with("q=api").await, format!("{pages}/?q=api"));
    assert_eq!(s.script(visible).await, json!(["staging/api"]));
    s.open(&format!("{pages}/?q=WEB")).await;
    assert_eq!(s.script(visible).await, json!(["prod/web"]));
    // Newest sync first: staging/api synced after prod/web's newest entry.
    s.open(&format!("{pages}/")).await;
    let newest = s.one("a.sort-newest").await;
    s.click(&newest).await;
    assert_eq!(
        s.url_with("sort=newest").await,
        format!("{pages}/?sort=newest")
    );
    assert_eq!(s.script(visible).await, json!(["staging/api", "prod/web"]));
    s.screenshot(&shots, "releases-newest").await;

    // A release that is not there is named as the CLI names it, with the one meant.
    s.open(&format!("{pages}/ui/prod/webb")).await;
    let said = s.text(&s.one("p.no-release").await).await;
    assert!(
        said.starts_with("no release prod/webb in the store")
            && said.contains("did you mean prod/web?"),
        "{said}"
    );
    s.screenshot(&shots, "no-release").await;
    let meant = s.one("a.did-you-mean").await;
    s.click(&meant).await;
    assert_eq!(
        s.url_with("/ui/prod/web").await,
        format!("{pages}/ui/prod/web")
    );
    s.open(&format!("{pages}/")).await;

    // The history lists the entries newest first, the hostile summary as text.
    let web_link = s.one("tr[data-release='prod/web'] a").await;
    s.click(&web_link).await;
    assert_eq!(s.url_with("/ui/").await, format!("{pages}/ui/prod/web"));
    let mut expected: Vec<String> = (1..=11).map(|v| format!("deploy v{v}")).collect();
    expected[6] = HOSTILE.to_string();
    expected.reverse();
    // A long summary ends in an ellipsis on its one line: its text is whole in the page
    // and in the cell's title.
    let summaries = s
        .script(
            "return [...document.querySelectorAll('td.entry-summary')]\
             .map(e => [e.textContent, e.title])",
        )
        .await;
    let summaries: Vec<(String, String)> = serde_json::from_value(summaries).unwrap();
    assert_eq!(
        summaries.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(),
        expected
    );
    assert!(
        summaries.iter().all(|(t, title)| t == title),
        "{summaries:?}"
    );
    assert_eq!(
        s.script("return window.hostile === undefined").await,
        json!(true),
        "the hostile summary ran"
    );
    assert!(
        s.all("td.entry-summary script, td.entry-summary img")
            .await
            .is_empty()
    );
    // The script ran: local times are filled in.
    s.until(
        "local times",
        "return document.querySelector('[data-local]').textContent.length > 0",
    )
    .await;
    // GC's default plan keeps 10: the oldest entry is marked for deletion.
    let markers = s.texts("tr.entry .gc").await;
    assert_eq!(markers.len(), 11);
    assert!(markers[..10].iter().all(|m| m == "keep"), "{markers:?}");
    assert_eq!(markers[10], "delete");
    // What the markers mean is said once, above the table, not in every row; the
    // marker of a deletion is muted like the legend, not an alarm's red.
    let said = s
        .script(
            "return document.body.innerText\
             .split('GC deletes the entry, and its render when no kept entry names it')\
             .length - 1",
        )
        .await;
    assert_eq!(said, json!(1), "the GC sentence is not said once");
    let colors = s
        .script(
            "const c = e => getComputedStyle(document.querySelector(e)).color; \
             return [c('tr.entry .gc.gc-delete'), c('#gc-legend')]",
        )
        .await;
    assert_eq!(colors[0], colors[1], "the delete marker is not muted");
    // Every entry is one line: rows of the same height, under two lines of text.
    let heights = s
        .script(
            "const line = parseFloat(getComputedStyle(document.querySelector('td.entry-summary'))\
             .lineHeight); \
             return [line, ...[...document.querySelectorAll('tr.entry')]\
             .map(r => r.getBoundingClientRect().height)]",
        )
        .await;
    let heights: Vec<f64> = heights
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_f64().unwrap())
        .collect();
    let (line, rows) = (heights[0], &heights[1..]);
    assert_eq!(rows.len(), 11);
    assert!(
        rows.iter().all(|h| *h == rows[0] && *h < 2.0 * line),
        "rows of more than one line (line height {line}): {rows:?}"
    );
    s.screenshot(&shots, "history").await;

    // Choosing two entries shows their diff: v4 to v5 changed the ConfigMap and added
    // the Service.
    let from = s.one("tr[data-entry='4'] input[name='from']").await;
    let to = s.one("tr[data-entry='5'] input[name='to']").await;
    s.click(&from).await;
    s.click(&to).await;
    let compare = s.one("#compare button[type='submit']").await;
    s.click(&compare).await;
    let diff_url = s.url_with("/diff?").await;
    assert!(
        diff_url.starts_with(&format!("{pages}/ui/prod/web/diff?"))
            && diff_url.contains(&refs[3]["sha256:".len()..])
            && diff_url.contains(&refs[4]["sha256:".len()..]),
        "{diff_url}"
    );
    let summary = s.text(&s.one("#summary").await).await;
    assert_eq!(summary, "1 object changed, 1 added, 0 removed, 1 unchanged");
    assert_eq!(
        s.texts("details.changed-object > summary").await,
        ["ConfigMap prod/web-config v1"]
    );
    let removed = s.texts(".changed-object .hunk .del").await;
    let added = s.texts(".changed-object .hunk .add").await;
    assert_eq!(removed, ["-  version: v4"]);
    assert_eq!(added, ["+  version: v5"]);
    let order = s
        .script(
            "const l = [...document.querySelectorAll('.hunk span')].map(e => e.className); \
             return l.indexOf('del') < l.indexOf('add')",
        )
        .await;
    assert_eq!(order, json!(true), "removed lines come before added ones");
    assert!(s.texts(".added-object").await[0].contains("Service prod/web"));
    // An added object is shown whole, every line added.
    let whole = s.texts(".added-object .hunk .add").await;
    assert!(
        whole.iter().any(|l| l.contains("kind: Service")) && whole.len() > 3,
        "{whole:?}"
    );
    s.screenshot(&shots, "diff").await;

    // A deep link reloads to the same view.
    s.post("/refresh", json!({})).await;
    assert_eq!(s.url().await, diff_url);
    assert_eq!(s.text(&s.one("#summary").await).await, summary);
    assert_eq!(s.texts(".changed-object .hunk .del").await, removed);

    // Keyboard: j moves to the newest entry, j again to the one before, p diffs it
    // with its predecessor.
    s.open(&format!("{pages}/ui/prod/web")).await;
    s.press("jjp").await;
    let keyed = s.url_with("/diff?").await;
    assert!(
        keyed.contains(&refs[8]["sha256:".len()..]) && keyed.contains(&refs[9]["sha256:".len()..]),
        "{keyed}"
    );
    assert!(
        s.text(&s.one("#summary").await)
            .await
            .contains("1 object changed")
    );

    // A render page lists the objects by kind; each expands to its YAML.
    s.open(&format!("{pages}/ui/prod/web")).await;
    let render_link = s.one("tr[data-entry='5'] td.ref a").await;
    s.click(&render_link).await;
    let render_url = s.url_with("/renders/").await;
    assert!(
        render_url.ends_with(&format!("/ui/prod/web/renders/{}", refs[4])),
        "{render_url}"
    );
    assert_eq!(
        s.texts("details.object > summary").await,
        [
            "#1 ConfigMap prod/web-config v1",
            "#2 Deployment prod/web apps/v1",
            "#3 Service prod/web v1"
        ]
    );
    let yaml = s.one("details.object pre").await;
    assert_eq!(s.text(&yaml).await, "", "collapsed until opened");
    let object = s.one("details.object > summary").await;
    s.click(&object).await;
    let text = s.text(&yaml).await;
    assert!(
        text.contains("kind: ConfigMap") && text.contains("version: v5"),
        "{text}"
    );
    // Without --show-secrets the render is downloaded as the page shows it.
    let download = s
        .script("return document.querySelector('a[download]').getAttribute('href')")
        .await;
    let base = pages.strip_prefix(&site).unwrap();
    assert_eq!(
        download,
        json!(format!("{base}/ui/prod/web/renders/{}/download", refs[4]))
    );
    // The page says which entry records the render: v5 is the sixth newest.
    let entry = s.text(&s.one("#entry").await).await;
    assert!(entry.starts_with("@6 · synced "), "{entry}");
    s.screenshot(&shots, "render").await;

    // From a render to the newest entry: v5 to v11 changed the ConfigMap only.
    let newest = s.one("a.diff-newest").await;
    s.click(&newest).await;
    let to_newest = s.url_with("/diff?").await;
    assert!(!to_newest.contains("to="), "{to_newest}");
    assert_eq!(
        s.texts(".sides a code").await,
        [&refs[4][7..19], &refs[10][7..19]]
    );
    assert_eq!(
        s.texts(".changed-object .hunk .add").await,
        ["+  version: v11"]
    );

    // A deep link to an object opens it.
    s.open(&format!("{render_url}#object-2")).await;
    s.until(
        "the linked object to open",
        "return document.getElementById('object-2').open === true",
    )
    .await;

    // Side by side at 1400 px: the diff takes the page's width, its two code columns
    // share it, and a line of usual length is one line.
    s.resize(1400, 900).await;
    s.open(&format!("{diff_url}&layout=split")).await;
    let measured = s
        .script(&format!(
            "const main = document.querySelector('main').getBoundingClientRect().width; \
             const table = document.querySelector('.changed-object table.split-lines'); \
             const width = table.getBoundingClientRect().width; \
             const code = [...table.querySelector('tr').children]\
             .filter(td => !td.classList.contains('ln'))\
             .map(td => td.getBoundingClientRect().width); \
             const long = [...document.querySelectorAll('.changed-object td.ctx')]\
             .find(td => td.textContent.length === {LONG_LINE}); \
             const short = [...document.querySelectorAll('.changed-object td.ctx')]\
             .find(td => td.textContent.length < 20); \
             return [main, width, code, long.getBoundingClientRect().height, \
             short.getBoundingClientRect().height, window.innerWidth]"
        ))
        .await;
    let m = measured.as_array().unwrap();
    let f = |v: &Value| v.as_f64().unwrap();
    let (main, table) = (f(&m[0]), f(&m[1]));
    let code: Vec<f64> = m[2].as_array().unwrap().iter().map(f).collect();
    assert!(
        table >= 0.9 * main,
        "the diff is {table} px of {main}: {m:?}"
    );
    assert!(
        main >= 0.9 * f(&m[5]),
        "the side-by-side page is a column of {main} px in a window of {}",
        m[5]
    );
    assert_eq!(code.len(), 2, "{m:?}");
    assert!(
        code.iter().all(|w| *w >= 0.4 * table),
        "code columns {code:?} of a table of {table} px"
    );
    assert_eq!(
        f(&m[3]),
        f(&m[4]),
        "a line of {LONG_LINE} characters wraps: {m:?}"
    );
    s.screenshot(&shots, "diff-split-1400px").await;

    // 400 px wide: nothing is wider than the window.
    s.resize(400, 900).await;
    s.open(&format!("{pages}/ui/prod/web")).await;
    let width = s
        .script("return document.documentElement.scrollWidth <= window.innerWidth")
        .await;
    assert_eq!(
        width,
        json!(true),
        "the history page scrolls sideways at 400 px"
    );
    s.screenshot(&shots, "history-400px").await;
    s.open(&diff_url).await;
    s.screenshot(&shots, "diff-400px").await;
    s.call(reqwest::Method::DELETE, "", None).await;

    // A dark system theme gives a dark page. A second browser of the same person has no
    // cookie: it logs in with the same login file.
    let (_dark_driver, dark) = start_browser(&driver, chromium.as_deref(), true).await;
    assert_eq!(log_in(&dark, &server).await, pages);
    dark.open(&diff_url).await;
    assert!(
        dark.text(&dark.one("#summary").await)
            .await
            .contains("changed"),
        "the diff page after the second login"
    );
    let background = dark
        .script(
            "const c = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number); \
             return c[0] + c[1] + c[2] < 150",
        )
        .await;
    assert_eq!(background, json!(true), "the page is not dark");
    dark.screenshot(&shots, "diff-dark").await;
    dark.open(&format!("{pages}/ui/prod/web")).await;
    dark.screenshot(&shots, "history-dark").await;
    dark.call(reqwest::Method::DELETE, "", None).await;
    eprintln!("browser test: screenshots in {}", shots.display());
}

/// The diff page on a real manifest: calico's DaemonSet with the `image:` of two of its
/// containers changed. Each hunk names the container it is in, the changed part of a
/// line is marked, the far context is folded and opens on a click, and the page reads
/// side by side too.
#[tokio::test(flavor = "multi_thread")]
async fn the_diff_page_names_each_hunk_and_folds_the_rest() {
    let Some(driver) = find("RENDER_STORE_CHROMEDRIVER", &["chromedriver"]) else {
        assert!(
            !browser_required(),
            "chromedriver is not installed (Debian: apt-get install chromium chromium-driver), \
             and CI requires the browser test"
        );
        eprintln!("browser test skipped: chromedriver is not installed");
        return;
    };
    let chromium = find("RENDER_STORE_CHROMIUM", &["chromium", "chromium-browser"]);
    let shots = screenshot_dir();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let store = RenderStore::open(&url).unwrap().unwrap();
    let release = Release::new("kube-system", "calico");
    let calico = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/real-renders/calico.yaml"
    ))
    .unwrap();
    let mut refs = Vec::new();
    for (v, yaml) in [
        calico.clone(),
        calico.replace("quay.io/calico/node:master", "quay.io/calico/node:v3.29.1"),
    ]
    .into_iter()
    .enumerate()
    {
        let objects = store.runtime().yaml_objects(yaml.as_bytes()).await.unwrap();
        let r = store.put_render(&release, &objects).await.unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: SyncTime {
                seconds: 1_790_000_000 + v as i64 * 60,
                nanoseconds: 0,
            },
            summary: format!("calico {v}"),
        };
        store.record_history(&release, &entry).await.unwrap();
        refs.push(r);
    }
    let server = serve_cli(&url, &[]);
    let (_driver, s) = start_browser(&driver, chromium.as_deref(), false).await;
    let pages = log_in(&s, &server).await;
    let diff = format!(
        "{pages}/ui/kube-system/calico/diff?from={}&to={}",
        refs[0], refs[1]
    );
    s.open(&diff).await;
    assert_eq!(
        s.texts("details.changed-object > summary").await,
        ["DaemonSet kube-system/calico-node apps/v1"]
    );
    assert_eq!(
        s.texts(".changed-object .hunk-path").await,
        [
            "spec.template.spec.containers[name=calico-node].image",
            "spec.template.spec.initContainers[name=ebpf-bootstrap].image",
        ]
    );
    assert_eq!(
        s.texts(".hunk .add mark").await,
        ["v3.29.1", "v3.29.1"],
        "the changed part of each line is marked"
    );
    // Line numbers of both sides: a removed line has its old number, an added one its
    // new number, and they are not part of the line's text.
    let numbers = s
        .script(
            "const d = document.querySelector('.hunk .del'); \
             const a = document.querySelector('.hunk .add'); \
             return [d.children[0].dataset.n, d.children[1].dataset.n, \
                     a.children[0].dataset.n, a.children[1].dataset.n, d.innerText]",
        )
        .await;
    let numbers = numbers.as_array().unwrap();
    assert!(numbers[0].as_str().unwrap().parse::<u32>().unwrap() > 1);
    assert_eq!(numbers[1], json!(""));
    assert_eq!(numbers[2], json!(""));
    assert_eq!(numbers[0], numbers[3], "one line replaced by one");
    assert!(numbers[4].as_str().unwrap().starts_with("-"), "{numbers:?}");
    // The far context is folded; a click opens it.
    let folds = s.all("details.fold").await;
    assert!(folds.len() >= 2, "{} folds", folds.len());
    let hidden = s
        .script("return !document.querySelector('details.fold > span.ctx').checkVisibility()")
        .await;
    assert_eq!(hidden, json!(true), "folded lines are hidden");
    let summary = s.one("details.fold > summary").await;
    let label = s.text(&summary).await;
    assert!(label.contains("unchanged lines"), "{label}");
    s.click(&summary).await;
    let shown = s
        .script("return document.querySelector('details.fold > span.ctx').checkVisibility()")
        .await;
    assert_eq!(shown, json!(true), "a click opens the fold");
    s.screenshot(&shots, "diff-calico").await;

    // Side by side: old on the left, new on the right, the same hunks.
    let toggle = s.one("a.layout").await;
    assert_eq!(s.text(&toggle).await, "Side by side");
    s.click(&toggle).await;
    let split = s.url_with("layout=split").await;
    assert!(
        split.contains(&refs[0]["sha256:".len()..]) && split.contains(&refs[1]["sha256:".len()..]),
        "{split}"
    );
    assert_eq!(
        s.texts(".changed-object .hunk-path").await.len(),
        2,
        "the same hunks side by side"
    );
    let row = s
        .script(
            "const r = [...document.querySelectorAll('table.split-lines tr')]\
             .find(r => r.querySelector('td.del')); \
             return [r.querySelector('td.del').innerText, r.querySelector('td.add').innerText]",
        )
        .await;
    let row = row.as_array().unwrap();
    assert!(
        row[0]
            .as_str()
            .unwrap()
            .contains("quay.io/calico/node:master")
            && row[1]
                .as_str()
                .unwrap()
                .contains("quay.io/calico/node:v3.29.1"),
        "{row:?}"
    );
    s.screenshot(&shots, "diff-calico-split").await;
    assert_eq!(s.text(&s.one("a.layout").await).await, "One column");
}
