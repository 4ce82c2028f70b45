//! Safety on a shared machine (CONTRACT.md §12), tried as another local user or a
//! careless operator would: links planted in a `file://` store, huge and odd files,
//! damaged blobs, and who may read what the store writes. Each test runs the real CLI.

use super::cli::Cli;
use render_store::{Observer, RenderStore};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The CLI over a fresh `file://` store.
struct Store(Cli);

impl Store {
    fn new() -> Store {
        let cli = Cli::file_store();
        std::fs::create_dir(cli.store_dir()).unwrap();
        Store(cli)
    }

    fn root(&self) -> PathBuf {
        self.0.store_dir()
    }

    fn url(&self) -> String {
        format!("file://{}", self.root().display())
    }

    fn ok(&self, args: &[&str]) -> String {
        self.0.ok(args)
    }

    fn fails(&self, args: &[&str]) -> String {
        self.0.fails(args)
    }

    fn object(&self, n: u32) -> String {
        self.0.object(
            &format!("{n}.json"),
            &format!(r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"s"}},"data":{{"n":"{n}"}}}}"#),
        )
    }

    /// Puts and records render `n` of `release`; returns its renderRef.
    fn sync(&self, release: &str, n: u32) -> String {
        let render_ref = self
            .ok(&["put", release, &self.object(n)])
            .trim()
            .to_string();
        self.ok(&[
            "record",
            release,
            &render_ref,
            "--summary",
            &format!("v{n}"),
        ]);
        render_ref
    }

    /// Makes the release's one history entry a 1 TiB sparse file.
    fn plant_huge_entry(&self, release: &str) {
        let entry = std::fs::read_dir(self.root().join(release).join("history"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&entry)
            .unwrap()
            .set_len(1 << 40)
            .unwrap();
    }
}

/// A folder outside the store with a file that must survive.
fn victim() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("precious");
    std::fs::write(&file, b"not the store's").unwrap();
    std::fs::create_dir_all(dir.path().join("history")).unwrap();
    std::fs::write(dir.path().join("history/also-precious"), b"x").unwrap();
    (dir, file)
}

fn assert_survived(dir: &Path) {
    assert_eq!(
        std::fs::read(dir.join("precious")).unwrap(),
        b"not the store's"
    );
    assert_eq!(
        std::fs::read(dir.join("history/also-precious")).unwrap(),
        b"x"
    );
}

#[test]
fn a_link_planted_in_the_store_reaches_nothing_outside_it() {
    let store = Store::new();
    let (outside, _) = victim();
    // Another user plants the release's namespace as a link to their victim folder.
    symlink(outside.path(), store.root().join("ns")).unwrap();
    let r = format!("sha256:{}", "a".repeat(64));
    for args in [
        vec!["put", "ns/app", &store.object(1)],
        vec!["get", "ns/app", &r],
        vec!["record", "ns/app", &r],
    ] {
        let err = store.fails(&args);
        assert!(err.contains("symbolic link"), "{args:?}: {err}");
    }
    // Listing operations fail closed: they neither walk the link nor read it as
    // "nothing there".
    for args in [
        vec!["history", "ns/app"],
        vec!["gc", "ns/app", "--keep", "1", "--grace", "0"],
        vec!["delete-release", "ns/app"],
        vec!["ls"],
    ] {
        let err = store.fails(&args);
        assert!(err.contains("\"ns\", a symbolic link"), "{args:?}: {err}");
    }
    assert_survived(outside.path());

    // A link deeper down, at the release folder, and one at a history entry.
    std::fs::remove_file(store.root().join("ns")).unwrap();
    store.sync("ns/app", 1);
    let history = store.root().join("ns/app/history");
    symlink(outside.path().join("precious"), history.join("20260101T000000.000000000Z-sha256:0000000000000000000000000000000000000000000000000000000000000000")).unwrap();
    symlink(outside.path(), store.root().join("ns/other")).unwrap();
    for args in [
        vec!["history", "ns/app"],
        vec!["gc", "ns/app", "--keep", "1", "--grace", "0"],
        vec!["delete-release", "ns/app"],
        vec!["delete-release", "ns/other"],
    ] {
        let err = store.fails(&args);
        assert!(err.contains("a symbolic link"), "{args:?}: {err}");
    }
    assert_survived(outside.path());
    // Nothing of the release went, and the planted links are left where they were.
    assert_eq!(
        std::fs::read_dir(store.root().join("ns/app/renders"))
            .unwrap()
            .count(),
        1
    );
    assert_eq!(std::fs::read_dir(&history).unwrap().count(), 2);
    // Once the link is gone, the release works again.
    std::fs::remove_file(history.join("20260101T000000.000000000Z-sha256:0000000000000000000000000000000000000000000000000000000000000000")).unwrap();
    assert_eq!(store.ok(&["history", "ns/app"]).lines().count(), 2);
    let deleted: serde_json::Value =
        serde_json::from_str(&store.ok(&["--json", "delete-release", "ns/app"])).unwrap();
    // The entry, its render and the release index.
    assert_eq!(deleted["deleted"], 3, "{deleted}");
    assert_survived(outside.path());
}

#[test]
fn odd_files_leave_the_release_usable() {
    let store = Store::new();
    let first = store.sync("ns/app", 1);
    store.sync("ns/app", 2);
    let history = store.root().join("ns/app/history");
    std::fs::write(history.join("tab\tname"), b"x").unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        history.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let listed = store.ok(&["history", "ns/app"]); // a header and two entries
    assert_eq!(listed.lines().count(), 3, "{listed}");
    let gc = store.ok(&["gc", "ns/app", "--keep", "1", "--grace", "0"]);
    assert!(gc.contains(&first), "{gc}");
    store.ok(&["delete-release", "ns/app"]);
    // What the store cannot represent as a key is left where it is.
    assert!(history.join("tab\tname").exists());
    assert!(history.join("fifo").symlink_metadata().is_ok());
}

#[test]
fn blobs_entries_and_folders_are_private() {
    let store = Store::new();
    let render_ref = store.sync("ns/app", 1);
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
    let blob = store.root().join(format!("ns/app/renders/{render_ref}"));
    assert_eq!(mode(&blob) & 0o077, 0, "blob mode {:o}", mode(&blob));
    let entries: Vec<_> = std::fs::read_dir(store.root().join("ns/app/history"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1);
    assert_eq!(mode(&entries[0]) & 0o077, 0);
    for dir in ["ns", "ns/app", "ns/app/renders", "ns/app/history"] {
        let m = mode(&store.root().join(dir));
        assert_eq!(m & 0o077, 0, "{dir} mode {m:o}");
    }
}

#[test]
fn a_truncated_blob_is_corrupt_until_the_next_put_repairs_it() {
    let store = Store::new();
    let object = store.object(7);
    let render_ref = store.ok(&["put", "ns/app", &object]).trim().to_string();
    let blob = store.root().join(format!("ns/app/renders/{render_ref}"));
    let whole = std::fs::read(&blob).unwrap();
    for damaged in [&whole[..whole.len() / 2], &b""[..]] {
        std::fs::write(&blob, damaged).unwrap();
        let err = store.fails(&["get", "ns/app", &render_ref]);
        assert!(err.contains("corrupt"), "{err}");
        assert_eq!(store.ok(&["put", "ns/app", &object]).trim(), render_ref);
        assert_eq!(std::fs::read(&blob).unwrap(), whole);
        assert_eq!(
            store.ok(&["get", "ns/app", &render_ref]).as_bytes(),
            &whole[..]
        );
    }
}

#[test]
fn delete_release_removes_staging_files_a_killed_put_left() {
    let store = Store::new();
    store.sync("ns/app", 1);
    let staging = store.root().join("ns/app/renders/sha256:abc#4242.0");
    std::fs::write(&staging, b"half a render").unwrap();
    // GC leaves it alone (it is no render); delete-release takes it.
    store.ok(&["gc", "ns/app", "--keep", "1", "--grace", "0"]);
    assert!(staging.exists());
    store.ok(&["delete-release", "ns/app"]);
    assert!(!staging.exists());
    assert!(!store.root().join("ns/app").exists());
}

/// A 1 TiB sparse history entry: `history` fails naming both sizes instead of trying
/// to allocate it.
#[test]
fn a_huge_entry_is_refused_before_it_is_read() {
    let store = Store::new();
    store.sync("ns/app", 1);
    store.plant_huge_entry("ns/app");
    let err = store.fails(&["history", "ns/app"]);
    assert!(
        err.contains("1099511627776 bytes") && err.contains("1073741824 bytes"),
        "{err}"
    );
}

/// The same entry under the server: the request fails, the server keeps answering.
#[tokio::test(flavor = "multi_thread")]
async fn a_huge_entry_does_not_take_the_server_down() {
    let store = Store::new();
    store.sync("ns/app", 1);
    store.plant_huge_entry("ns/app");
    let opened = RenderStore::open(&store.url()).unwrap();
    let observer = Arc::new(Observer::new(opened).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(render_store_cli::serve::serve(listener, observer));
    let client = reqwest::Client::new();
    for _ in 0..3 {
        let started = Instant::now();
        let history = client
            .get(format!("{base}/history?namespace=ns&name=app"))
            .send()
            .await
            .unwrap();
        assert!(history.status().is_server_error(), "{}", history.status());
        let health = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(health.status().as_u16(), 200);
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

/// Whether this process runs as root, and so can try things as another user.
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `program ARGS` run as the unprivileged user `nobody` (no groups, no capabilities),
/// as another user of the machine would.
fn as_nobody(program: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            program,
        ])
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("setpriv runs (util-linux)")
}

/// Another local user gets nothing from a `serve` started with its defaults: every
/// endpoint but /healthz answers 401 without the token, and the token's file cannot
/// be read. As root the tries run as `nobody`; otherwise as this user without the
/// token.
#[test]
fn another_user_gets_nothing_from_a_default_serve() {
    let store = Store::new();
    let render_ref = store.sync("ns/app", 1);
    let served = super::support::serve_cli(&store.url(), &[]);
    let token_file = served
        .token_file
        .clone()
        .expect("serve printed its token's file");
    let base = format!("http://{}", served.addr);
    let paths = [
        format!("/renders/ns/app/{render_ref}"),
        "/history?namespace=ns&name=app".to_string(),
        format!("/diff?namespace=ns&name=app&render={render_ref}&against={render_ref}"),
        "/releases".to_string(),
        "/".to_string(),
        "/ui/ns/app".to_string(),
        format!("/ui/ns/app/renders/{render_ref}"),
        format!("/ui/ns/app/diff?from={render_ref}"),
    ];
    let curl = |as_other: bool, path: &str, extra: &[&str]| -> (String, String) {
        let url = format!("{base}{path}");
        let mut args = vec!["-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "10"];
        args.extend_from_slice(extra);
        args.push(&url);
        let out = if as_other {
            as_nobody("curl", &args)
        } else {
            std::process::Command::new("curl")
                .args(&args)
                .output()
                .unwrap()
        };
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
        (status.to_string(), body.to_string())
    };
    let as_other = is_root();
    if !as_other {
        eprintln!("not root: trying without the token as this user, not as nobody");
    }
    for path in &paths {
        let (status, body) = curl(as_other, path, &[]);
        assert_eq!(status, "401", "{path}: {body}");
        assert!(
            !body.contains("Secret") && !body.contains("renderRef"),
            "{body}"
        );
    }
    // Nor does a guessed token posted to the login, nor a cookie made up.
    let (status, _) = curl(as_other, "/login", &["--data", "token=0000"]);
    assert_eq!(status, "401");
    let (status, _) = curl(
        as_other,
        "/releases",
        &["-H", "Cookie: render-store-session=x"],
    );
    assert_eq!(status, "401");
    // The token's file and folder are the server's user's alone.
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&token_file), 0o600, "{}", token_file.display());
    assert_eq!(mode(token_file.parent().unwrap()), 0o700);
    if as_other {
        let read = as_nobody("cat", &[token_file.to_str().unwrap()]);
        assert!(!read.status.success(), "nobody read the token file");
        assert!(read.stdout.is_empty());
    }
    // The owner, with the token, is answered: the refusals above were not an accident.
    let bearer = format!("Authorization: Bearer {}", served.token());
    for path in &paths {
        let (status, body) = curl(false, path, &["-H", &bearer]);
        assert_eq!(status, "200", "{path}: {body}");
    }
    let (status, _) = curl(as_other, "/healthz", &[]);
    assert_eq!(status, "200");
}

/// The login `serve` prints never puts a credential where another user can read it: the
/// person who started it opens a file path (which lands on the command lines of the
/// opener and the browser, readable by every local user in /proc), and the file is
/// theirs alone. Another user who polls those command lines gets nothing that logs in.
#[test]
fn what_the_login_leaves_on_command_lines_logs_nobody_in() {
    let store = Store::new();
    store.sync("ns/app", 1);
    let served = super::support::serve_cli(&store.url(), &[]);
    let token = served.token();
    let base = render_store_cli::serve::pages_base(&token);
    let login_file = served
        .login_file
        .clone()
        .expect("serve printed a login file");
    // Nothing printed holds the token or the pages' base.
    assert!(
        !served.printed.contains(&token) && !served.printed.contains(&base),
        "{}",
        served.printed
    );
    // What a terminal click does with the printed address: `xdg-open ADDRESS`, then the
    // browser with ADDRESS in its arguments.
    let printed = served
        .printed
        .lines()
        .find_map(|l| l.split_once("open ").map(|(_, rest)| rest))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("serve printed what to open")
        .to_string();
    let mut opener = std::process::Command::new("sh")
        .args(["-c", "sleep 30; exit 0", "xdg-open", &printed])
        .spawn()
        .unwrap();
    // Its command line is the opener's once it has started.
    let cmdline = format!("/proc/{}/cmdline", opener.id());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(b"sh\0")) {
        assert!(Instant::now() < deadline, "the opener did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let as_other = is_root();
    if !as_other {
        eprintln!("not root: reading the command line as this user, not as nobody");
    }
    let seen = if as_other {
        as_nobody("cat", &[&cmdline]).stdout
    } else {
        std::fs::read(&cmdline).unwrap()
    };
    let _ = opener.kill();
    let _ = opener.wait();
    let seen = String::from_utf8_lossy(&seen).replace('\0', " ");
    assert!(seen.contains(&printed), "{seen}");
    assert!(!seen.contains(&token) && !seen.contains(&base), "{seen}");
    // Whatever the other user tries with it: the file and its folder are closed to
    // them, and posting any word of the command line as the token is refused.
    let base_url = format!("http://{}", served.addr);
    let mut tries: Vec<String> = seen.split_whitespace().map(str::to_string).collect();
    tries.push(login_file.display().to_string());
    for word in &tries {
        let args = [
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--max-time",
            "10",
            "--data-urlencode",
            &format!("token={word}"),
            &format!("{base_url}/login"),
        ];
        let out = if as_other {
            as_nobody("curl", &args)
        } else {
            std::process::Command::new("curl")
                .args(args)
                .output()
                .unwrap()
        };
        assert_eq!(String::from_utf8_lossy(&out.stdout), "401", "{word}");
    }
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&login_file), 0o600);
    assert_eq!(mode(login_file.parent().unwrap()), 0o700);
    if as_other {
        let read = as_nobody("cat", &[login_file.to_str().unwrap()]);
        assert!(
            !read.status.success() && read.stdout.is_empty(),
            "nobody read the login file"
        );
    }
    // The owner's browser, posting what the file holds, is let in.
    let (action, posted) = served.login_form();
    let out = std::process::Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--data-urlencode",
            &format!("token={posted}"),
            &action,
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "200");
}
