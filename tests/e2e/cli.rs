//! The `render-store` CLI end to end, on file:// and mem:// stores.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The CLI over a `file://` store in a fresh folder, with room for input files beside it.
pub(crate) struct Cli {
    pub(crate) url: String,
    pub(crate) dir: tempfile::TempDir,
    /// Whether `put`, `ref` and `diff --local` apply the Kubernetes object rule: most
    /// tests here use small ad-hoc objects, and `operator.rs` checks the rule itself.
    pub(crate) validate: bool,
}

impl Cli {
    pub(crate) fn file_store() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}/store?create_dir=true", dir.path().display());
        Cli {
            url,
            dir,
            validate: false,
        }
    }

    /// A file store whose commands apply every input rule, as users get them.
    pub(crate) fn validating() -> Self {
        Cli {
            validate: true,
            ..Cli::file_store()
        }
    }

    pub(crate) fn store_dir(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.run_with_env(args, &[])
    }

    /// [`Cli::run`] with more environment variables.
    pub(crate) fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
            .args(args)
            .env("RENDER_STORE_URL", &self.url)
            .env("RENDER_STORE_VALIDATE", self.validate.to_string())
            .envs(env.iter().copied())
            .output()
            .expect("the CLI runs")
    }

    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs a `diff` whose renders differ: exit status 1, as diff(1); its output.
    pub(crate) fn differs(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub(crate) fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8(out.stderr).unwrap()
    }

    pub(crate) fn object(&self, name: &str, json: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, json).unwrap();
        path.to_str().unwrap().to_string()
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn ref_and_canonical() {
    let cli = Cli::file_store();
    assert_eq!(
        cli.ok(&["ref", "--allow-empty"]).trim(),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    let a = cli.object("a.json", r#"{"b":1, "a":"<x>"}"#);
    let b = cli.object("b.json", "{\"n\":1.0e2}\n");
    assert_eq!(
        cli.ok(&["canonical", &a, &b]),
        "{\"a\":\"\\u003cx\\u003e\",\"b\":1}\n{\"n\":100}\n"
    );
    let canonical = cli.ok(&["canonical", &a, &b]);
    let want = format!("sha256:{:x}", Sha256::digest(canonical.as_bytes()));
    assert_eq!(cli.ok(&["ref", &a, &b]).trim(), want);
    let json: serde_json::Value =
        serde_json::from_str(&cli.ok(&["--json", "ref", &a, &b])).unwrap();
    assert_eq!(json["renderRef"], want.as_str());

    let bad = cli.object("bad.json", "{\"a\":");
    let err = cli.fails(&["ref", &a, &bad]);
    assert!(err.contains("object 1"), "{err}");
}

#[test]
fn put_get_history_gc_delete_on_a_file_store() {
    let cli = Cli::file_store();
    let cm = |v: u32| {
        cli.object(
            &format!("cm{v}.json"),
            &format!(r#"{{"kind":"ConfigMap","data":{{"v":"{v}"}}}}"#),
        )
    };
    let mut refs = Vec::new();
    for v in 0..4 {
        let file = cm(v);
        let render_ref = cli.ok(&["put", "ns/app", &file]).trim().to_string();
        refs.push(render_ref.clone());
        let at = format!("2026-01-01T00:00:0{v}.5+00:00");
        let out = cli.ok(&[
            "record",
            "ns/app",
            &render_ref,
            "--summary",
            &format!("v{v}"),
            "--synced-at",
            &at,
        ]);
        assert!(out.contains("recorded"), "{out}");
    }
    let out = cli.ok(&[
        "record",
        "ns/app",
        &refs[0],
        "--synced-at",
        "2026-01-02T00:00:00Z",
    ]);
    // A rollback to the oldest render: nothing added, and the entry that records it named.
    assert!(
        out.starts_with("already recorded as @3 (first applied 2026-01-01T00:00:00"),
        "{out}"
    );
    let json = cli.ok(&["--json", "record", "ns/app", &refs[1]]);
    assert!(!json.contains("already recorded"), "{json}");

    // sha256sum of each blob file equals its key.
    let renders = cli.store_dir().join("ns/app/renders");
    for r in &refs {
        let out = Command::new("sha256sum")
            .arg(renders.join(r))
            .output()
            .unwrap();
        let sum = String::from_utf8(out.stdout).unwrap();
        assert_eq!(format!("sha256:{}", &sum[..64]), *r);
    }
    let blob = cli.ok(&["get", "ns/app", &refs[1]]);
    assert_eq!(blob, "{\"data\":{\"v\":\"1\"},\"kind\":\"ConfigMap\"}\n");

    let history: serde_json::Value =
        serde_json::from_str(&cli.ok(&["--json", "history", "ns/app"])).unwrap();
    let got: Vec<(&str, &str, &str)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["renderRef"].as_str().unwrap(),
                e["syncedAt"].as_str().unwrap(),
                e["summary"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got.len(), 4);
    assert_eq!(got[0], (refs[0].as_str(), "2026-01-01T00:00:00.5Z", "v0"));
    assert_eq!(got[3].0, refs[3]);
    assert!(cli.ok(&["history", "ns/app"]).contains("v2"));

    // A page: newest first, and a cursor that pages back to the oldest entry.
    let page: serde_json::Value =
        serde_json::from_str(&cli.ok(&["--json", "history", "ns/app", "--limit", "3"])).unwrap();
    let page_refs: Vec<&str> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["renderRef"].as_str().unwrap())
        .collect();
    assert_eq!(page_refs, [got[3].0, got[2].0, got[1].0]);
    let next = page["nextBefore"].as_str().unwrap().to_string();
    assert_eq!(next, page["entries"][2]["key"]);
    let last: serde_json::Value = serde_json::from_str(&cli.ok(&[
        "--json", "history", "ns/app", "--limit", "3", "--before", &next,
    ]))
    .unwrap();
    assert_eq!(last["entries"].as_array().unwrap().len(), 1);
    assert_eq!(last["entries"][0]["summary"], "v0");
    assert!(last["nextBefore"].is_null());
    let text = cli.run(&["history", "ns/app", "--limit", "1"]);
    assert!(text.status.success());
    let stdout = String::from_utf8(text.stdout).unwrap();
    // A header and the newest entry, named by its place and a short renderRef.
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stdout.lines().nth(1).unwrap().starts_with("@0 "),
        "{stdout}"
    );
    assert!(stdout.contains(&got[3].0[7..19]), "{stdout}");
    assert!(String::from_utf8_lossy(&text.stderr).contains("older entries: --before "));
    // --before without --limit, a limit of 0, a cursor of another kind: refused.
    for args in [
        &["history", "ns/app", "--before", next.as_str()][..],
        &["history", "ns/app", "--limit", "0"][..],
        &[
            "history",
            "ns/app",
            "--limit",
            "1",
            "--before",
            "ns/app/renders/x",
        ][..],
    ] {
        let out = cli.run(args);
        assert!(!out.status.success(), "{args:?}");
    }

    let before = files_under(&cli.store_dir());
    let dry: serde_json::Value = serde_json::from_str(&cli.ok(&[
        "--json",
        "gc",
        "ns/app",
        "--keep",
        "1",
        "--protect",
        &refs[0],
        "--grace",
        "0",
        "--dry-run",
    ]))
    .unwrap();
    assert_eq!(dry["deleteHistory"].as_array().unwrap().len(), 3);
    assert_eq!(dry["deleteRenders"].as_array().unwrap().len(), 2);
    assert_eq!(
        files_under(&cli.store_dir()),
        before,
        "a dry run deletes nothing"
    );

    // With the default grace period the blobs just written are kept for now, and the
    // summary says how many.
    let out = cli.ok(&["gc", "ns/app", "--keep", "1", "--dry-run"]);
    assert!(
        out.contains("would delete 3 history entries and 0 renders")
            && out.contains("(3 more for now: written within the grace period)"),
        "{out}"
    );

    let out = cli.ok(&["gc", "ns/app", "--keep", "0"]);
    assert!(out.contains("GC is off"), "{out}");
    assert_eq!(files_under(&cli.store_dir()), before);

    let out = cli.ok(&[
        "gc",
        "ns/app",
        "--keep",
        "1",
        "--protect",
        &refs[0],
        "--grace",
        "0",
    ]);
    assert!(
        out.contains("deleted 3 history entries and 2 renders"),
        "{out}"
    );
    let left: Vec<String> = cli
        .ok(&["ls", "ns/app/"])
        .lines()
        .map(String::from)
        .collect();
    // The entry, the two renders, and the release index `record` wrote.
    assert_eq!(left.len(), 4, "{left:?}");
    assert!(
        left.iter().any(|k| k.ends_with(&refs[0]))
            && left.iter().any(|k| k.ends_with(&refs[3]))
            && left.iter().any(|k| k == "ns/app/index/v1")
    );

    // gc without --keep keeps 10 entries; refs[0], no longer protected, goes.
    let out = cli.ok(&["gc", "ns/app", "--grace", "0"]);
    assert!(
        out.contains("deleted 0 history entries and 1 render"),
        "{out}"
    );
    assert!(out.contains(&refs[0]), "{out}");

    let out = cli.ok(&["delete-release", "ns/app"]);
    assert!(out.contains("deleted 3 keys"), "{out}");
    assert!(cli.ok(&["ls"]).is_empty());
    assert!(
        cli.ok(&["delete-release", "ns/app"])
            .contains("nothing to delete")
    );
}

#[test]
fn errors_name_the_problem_and_write_nothing() {
    let cli = Cli::file_store();
    let obj = cli.object("o.json", "{}");
    cli.ok(&["put", "ns/app", &obj]);
    let before = files_under(&cli.store_dir());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["put", "ns/App", &obj], "DNS-1123"),
        (vec!["put", "ns/a/b", &obj], "DNS-1123"),
        (vec!["put", "../x", &obj], "DNS-1123"),
        (vec!["put", "noslash", &obj], "NAMESPACE/NAME"),
        (vec!["get", "ns/app", "sha256:XYZ"], "renderRef"),
        (vec!["record", "ns/app", "sha256:abc"], "renderRef"),
        (vec!["gc", "ns/app", "--protect", "md5:1"], "renderRef"),
        (
            vec![
                "record",
                "ns/app",
                "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                "--synced-at",
                "9999-12-31T23:30:00-01:00",
            ],
            "year 10000",
        ),
        (vec!["put", "ns/app", "/nonexistent/file.json"], "reading"),
    ];
    for (args, needle) in cases {
        let err = cli.fails(&args);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(files_under(&cli.store_dir()), before);

    let absent = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    assert!(cli.fails(&["get", "ns/app", absent]).contains("not found"));
}

#[test]
fn urls_are_checked() {
    let run = |url: &str, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
            .args(args)
            .env("RENDER_STORE_URL", url)
            .env("RENDER_STORE_VALIDATE", "false")
            .output()
            .unwrap()
    };
    let out = run("", &["history", "ns/app"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no render store"));
    let out = run("ftp://x", &["history", "ns/app"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown scheme \"ftp\""));
    let out = run("mem://?region=x", &["history", "ns/app"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown parameter \"region\""));

    // mem:// works for a single command; --render-store-url wins over the variable.
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("o.json");
    std::fs::write(&obj, "{}").unwrap();
    let out = run(
        "ftp://ignored",
        &[
            "--render-store-url",
            "mem://",
            "put",
            "ns/app",
            obj.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("sha256:"));
    // Each command has a store of its own: the next one finds no release.
    let out = run("mem://", &["history", "ns/app"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no release ns/app in the store"));
}

#[test]
fn component_out_writes_the_embedded_component() {
    let cli = Cli::file_store();
    let out = cli.dir.path().join("render-store.wasm");
    cli.ok(&["component", "--out", out.to_str().unwrap()]);
    assert_eq!(std::fs::read(&out).unwrap(), render_store::COMPONENT);
}

#[test]
fn demo_runs() {
    let cli = Cli::file_store();
    let out = cli.ok(&["demo"]);
    // Three revisions of a real manifest, the last sync's change in its container, a
    // local edit against the newest, GC, and where to go next.
    assert_eq!(out.matches("19 objects, sha256:").count(), 3, "{out}");
    assert!(
        out.contains("containers[name=controller].args[5]\n")
            && out.contains("+        - --enable-metrics=true"),
        "{out}"
    );
    assert!(out.contains("+        imagePullPolicy: Always"), "{out}");
    assert!(
        out.contains("deleted 1 history entry and 1 render"),
        "{out}"
    );
    assert!(out.contains("render-store serve"), "{out}");
    let history = cli.store_dir().join("ingress-nginx/ingress-nginx/history");
    assert_eq!(files_under(&history).len(), 2);
    // What the demo stored is what the CLI reads: its newest render's two changes.
    let diff = cli.run(&["diff", "ingress-nginx/ingress-nginx", "@1", "@0"]);
    assert_eq!(diff.status.code(), Some(1), "{diff:?}");
    assert!(String::from_utf8_lossy(&diff.stdout).contains("--enable-metrics=true"));
}

#[test]
fn diff_between_stored_renders() {
    let cli = Cli::file_store();
    let a = cli.object(
        "a.json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"1"}}"#,
    );
    let b = cli.object(
        "b.json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"2"}}"#,
    );
    let ra = cli.ok(&["put", "ns/app", &a]).trim().to_string();
    let rb = cli.ok(&["put", "ns/app", &b]).trim().to_string();
    // Old, then new; different renders exit 1, as diff(1).
    let out = cli.differs(&["diff", "ns/app", &ra, &rb]);
    assert!(out.contains("changed  v1 ConfigMap a"), "{out}");
    assert!(
        out.starts_with(&format!("--- {ra} (not in the history)\n+++ {rb}")),
        "{out}"
    );
    // YAML by default, the old line before the new one, no colour into a pipe.
    let removed = out.find("    -  k: '1'\n");
    let added = out.find("    +  k: '2'\n");
    assert!(
        matches!((removed, added), (Some(r), Some(a)) if r < a),
        "{out}"
    );
    assert!(!out.contains('\x1b'), "{out}");
    let json = cli.differs(&[
        "diff", "ns/app", &ra, &rb, "--form", "json", "--color", "always",
    ]);
    assert!(
        json.contains("\x1b[31m-    \"k\": \"1\"\x1b[0m")
            && json.contains("\x1b[32m+    \"k\": \"2\"\x1b[0m"),
        "{json}"
    );
    assert!(
        out.contains("0 added, 0 removed, 1 changed, 0 unchanged"),
        "{out}"
    );
    // @0 is the newest entry; there is none yet.
    assert!(
        cli.fails(&["diff", "ns/app", "@0", &rb])
            .contains("history")
    );
    cli.ok(&["record", "ns/app", &ra]);
    let json: serde_json::Value =
        serde_json::from_str(&cli.differs(&["--json", "diff", "ns/app", "@0", &rb])).unwrap();
    assert_eq!(json["changed"][0]["name"], "a");
    assert_eq!(
        cli.run(&["diff", "ns/app", "@0", &ra]).status.code(),
        Some(0)
    );
}

#[tokio::test]
async fn serve_answers_on_loopback() {
    let cli = Cli::file_store();
    let obj = cli.object("o.json", "{}");
    let r = cli.ok(&["put", "ns/app", &obj]).trim().to_string();
    cli.ok(&["record", "ns/app", &r, "--summary", "first"]);
    let served = super::support::serve_cli(&cli.url, &[]);
    let base = format!("http://{}", served.addr);
    assert!(base.starts_with("http://127.0.0.1:"), "{}", served.printed);
    let client = reqwest::Client::new();
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    let body = client
        .get(format!("{base}/history?namespace=ns&name=app"))
        .bearer_auth(served.token())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let history: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    assert_eq!(history[0]["summary"], "first", "{history}");
}

#[test]
fn the_same_commands_work_on_every_cloud_backend() {
    for (name, url) in super::support::cloud_urls() {
        let cli = Cli {
            url: url.clone(),
            dir: tempfile::tempdir().unwrap(),
            validate: false,
        };
        // A namespace of its own: the emulator's bucket is shared by the whole run.
        let release = format!("cli-{}-{name}/app", std::process::id());
        let a = cli.object("a.json", r#"{"kind":"ConfigMap","data":{"v":"1"}}"#);
        let b = cli.object("b.json", r#"{"kind":"ConfigMap","data":{"v":"2"}}"#);
        let ra = cli.ok(&["put", &release, &a]).trim().to_string();
        let rb = cli.ok(&["put", &release, &b]).trim().to_string();
        cli.ok(&[
            "record",
            &release,
            &ra,
            "--synced-at",
            "2026-01-01T00:00:00Z",
            "--summary",
            "one",
        ]);
        cli.ok(&[
            "record",
            &release,
            &rb,
            "--synced-at",
            "2026-01-01T00:01:00Z",
            "--summary",
            "two",
        ]);
        assert_eq!(
            cli.ok(&["get", &release, &ra]),
            "{\"data\":{\"v\":\"1\"},\"kind\":\"ConfigMap\"}\n",
            "{name}"
        );
        let history = cli.ok(&["history", &release]);
        assert!(
            history.contains("one") && history.contains("two"),
            "{name}: {history}"
        );
        let out = cli.ok(&["gc", &release, "--keep", "1", "--grace", "0"]);
        assert!(
            out.contains("deleted 1 history entry and 1 render"),
            "{name}: {out}"
        );
        let prefix = format!("{}/", release);
        // The entry, its render and the release index (CONTRACT.md §3).
        let left = cli.ok(&["ls", &prefix]);
        assert_eq!(left.lines().count(), 3, "{name}: {left}");
        assert!(
            left.contains(&format!("{prefix}index/v1")),
            "{name}: {left}"
        );
        assert!(
            cli.ok(&["delete-release", &release])
                .contains("deleted 3 keys"),
            "{name}"
        );
        assert_eq!(cli.ok(&["ls", &prefix]), "", "{name}");
    }
}

#[test]
fn human_output_escapes_what_came_from_the_store() {
    let cli = Cli::file_store();
    let obj = cli.object("o.json", "{}");
    let r = cli.ok(&["put", "ns/app", &obj]).trim().to_string();
    let summary =
        "v1\n2026-01-01T00:00:00Z  sha256:forged\u{1b}]0;owned\u{7}\u{1b}[2J\r\u{7f}\u{9b}1m";
    cli.ok(&[
        "record",
        "ns/app",
        &r,
        "--summary",
        summary,
        "--synced-at",
        "2026-01-01T00:00:00Z",
    ]);
    let raw = |text: &str| text.chars().any(|c| c.is_control() && c != '\n');

    let out = cli.ok(&["history", "ns/app"]);
    assert_eq!(
        out.lines().count(),
        2,
        "a header and one line per entry: {out:?}"
    );
    assert!(!raw(&out), "{out:?}");
    assert!(
        out.contains("v1\\n2026-01-01T00:00:00Z  sha256:forged\\u{1b}]0;owned"),
        "{out:?}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&cli.ok(&["--json", "history", "ns/app"])).unwrap();
    assert_eq!(json[0]["summary"], summary, "--json is exact");

    // A replay prints the trace's calls and result, where JSON leaves DEL and C1 raw.
    let trace = cli.dir.path().join("history.jsonl");
    cli.ok(&["history", "ns/app", "--trace", trace.to_str().unwrap()]);
    let out = cli.ok(&["replay", trace.to_str().unwrap()]);
    assert!(out.contains("every call and the result match"), "{out}");
    assert!(out.contains("\\u{7f}\\u{9b}1m"), "{out:?}");
    assert!(!raw(&out), "{out:?}");
}

#[test]
fn a_trace_file_is_private_and_no_link_is_followed() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let cli = Cli::file_store();
    let trace = cli.dir.path().join("trace.jsonl");
    let trace_arg = trace.to_str().unwrap();
    let obj = cli.object("o.json", "{}");
    cli.ok(&["put", "ns/app", &obj]);
    cli.ok(&["history", "ns/app", "--trace", trace_arg]);
    let mode = std::fs::metadata(&trace).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");

    // An existing file readable by others is made private too.
    std::fs::set_permissions(&trace, std::fs::Permissions::from_mode(0o644)).unwrap();
    cli.ok(&["history", "ns/app", "--trace", trace_arg]);
    let mode = std::fs::metadata(&trace).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");

    // A link planted at FILE is refused and what it points at left alone.
    let victim = cli.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = cli.dir.path().join("link.jsonl");
    symlink(&victim, &link).unwrap();
    let err = cli.fails(&["history", "ns/app", "--trace", link.to_str().unwrap()]);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

    // A file with another name (a hard link) is replaced, not written into: the other
    // name keeps what it had and never sees the trace.
    let hard = cli.dir.path().join("hard.jsonl");
    std::fs::hard_link(&victim, &hard).unwrap();
    cli.ok(&["history", "ns/app", "--trace", hard.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        std::fs::read_to_string(&hard)
            .unwrap()
            .contains("list-history")
    );
}

/// Another user's file or FIFO planted at FILE in a shared folder receives nothing;
/// `replay` reads neither a FIFO nor a file too large to replay.
#[test]
fn a_planted_trace_file_or_fifo_receives_nothing() {
    use std::os::unix::fs::{PermissionsExt, chown};
    let cli = Cli::file_store();
    let obj = cli.object("o.json", "{}");
    cli.ok(&["put", "ns/app", &obj]);
    let shared = cli.dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let fifo = shared.join("trace.jsonl");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o666),
        0,
    )
    .unwrap();
    // A reader of the FIFO would get the trace; nothing may block or be written.
    let started = std::time::Instant::now();
    let err = cli.fails(&["history", "ns/app", "--trace", fifo.to_str().unwrap()]);
    assert!(err.contains("not a regular file"), "{err}");
    let err = cli.fails(&["replay", fifo.to_str().unwrap()]);
    assert!(err.contains("not a regular file"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    // As root, a file another user planted (and can read) is refused and left as it is.
    if unsafe { libc::geteuid() } == 0 {
        let planted = shared.join("planted.jsonl");
        std::fs::write(&planted, "theirs").unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o666)).unwrap();
        chown(&planted, Some(65534), Some(65534)).unwrap();
        let err = cli.fails(&["history", "ns/app", "--trace", planted.to_str().unwrap()]);
        assert!(err.contains("another user"), "{err}");
        assert_eq!(std::fs::read_to_string(&planted).unwrap(), "theirs");
    }

    let huge = shared.join("huge.jsonl");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let err = cli.fails(&["--memory-cap-mib", "16", "replay", huge.to_str().unwrap()]);
    assert!(err.contains("over the call's memory cap"), "{err}");
    // Nothing was left in the shared folder but what was planted.
    let mut left: Vec<_> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let planted: &[&str] = if unsafe { libc::geteuid() } == 0 {
        &["huge.jsonl", "planted.jsonl", "trace.jsonl"]
    } else {
        &["huge.jsonl", "trace.jsonl"]
    };
    assert_eq!(left, planted);
}

#[test]
fn demo_without_a_url_uses_a_fresh_private_folder() {
    let tmp = tempfile::tempdir().unwrap();
    // Another user's trap at the folder the demo used to share with everyone.
    let victim = tmp.path().join("victim");
    std::fs::create_dir_all(victim.join("history")).unwrap();
    std::fs::write(victim.join("precious.txt"), "keep me").unwrap();
    std::fs::write(victim.join("history/entry"), "keep me too").unwrap();
    std::fs::create_dir_all(tmp.path().join("render-store-demo/ingress-nginx")).unwrap();
    std::os::unix::fs::symlink(
        &victim,
        tmp.path()
            .join("render-store-demo/ingress-nginx/ingress-nginx"),
    )
    .unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .arg("demo")
        .env_remove("RENDER_STORE_URL")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("precious.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("history/entry")).unwrap(),
        "keep me too"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("deleted 1 history entry and 1 render"),
        "{stdout}"
    );
    assert!(stdout.contains("render-store-demo-"), "{stdout}");
    // The demo's own folder is gone when it ends.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("render-store-demo-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let cli = Cli::file_store();
    // Far more than a pipe holds, so the CLI is still writing when the reader goes.
    let big = cli.object(
        "big.json",
        &format!(r#"{{"data":"{}"}}"#, "x".repeat(4 << 20)),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(["canonical", &big])
        .env("RENDER_STORE_URL", &cli.url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // The read end is closed here, as `| head -c 16` closes it.
    let out = child.wait_with_output().unwrap();
    assert_eq!(&head[..9], br#"{"data":""#);
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{:?}",
        out.status
    );
}

#[test]
fn record_refuses_a_render_the_store_does_not_hold() {
    let cli = Cli::file_store();
    let absent = format!("sha256:{}", "b".repeat(64));
    let err = cli.fails(&["record", "ns/app", &absent, "--summary", "typo"]);
    assert!(
        err.contains(&absent) && err.contains("is not stored"),
        "{err}"
    );
    assert!(
        files_under(&cli.store_dir()).is_empty(),
        "record wrote something"
    );
    // Once the render is stored, it is recorded.
    let object = cli.object("o.json", r#"{"kind":"A","metadata":{"name":"a"}}"#);
    let stored = cli.ok(&["put", "ns/app", &object]).trim().to_string();
    assert!(cli.ok(&["record", "ns/app", &stored]).contains("recorded"));
}

/// docs/cli.md's command table names every command `--help` lists, and no other.
#[test]
fn the_cli_doc_command_table_matches_help() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md")).unwrap();
    let table = readme
        .split("| command | flags | what it does |")
        .nth(1)
        .expect("docs/cli.md has the command table");
    let mut in_readme: Vec<String> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| l[3..].split([' ', '`']).next().unwrap().to_string())
        .collect();
    in_readme.dedup();
    in_readme.sort();
    let help = Cli::file_store().ok(&["--help"]);
    let mut in_help: Vec<String> = help
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    in_help.sort();
    assert_eq!(in_readme, in_help);
}

/// `releases`: every release with its entry count and newest summary, as text and JSON,
/// a namespace alone, pages that join up, and a store with none. A namespace folder
/// that cannot be listed (a link in it, which a `file://` store never follows) makes
/// the list partial: named on standard error, `partial` in JSON, exit status 1, the
/// rest still listed, and never "(no release)".
#[test]
fn releases_lists_the_fleet_and_says_when_the_list_is_partial() {
    let cli = Cli::file_store();
    assert_eq!(cli.ok(&["releases"]).trim(), "(no release)");
    let mut n = 0;
    for (release, syncs) in [("prod/web", 2), ("prod/api", 1), ("staging/web", 1)] {
        for s in 0..syncs {
            n += 1;
            let file = cli.object(
                &format!("r{n}.json"),
                &format!(r#"{{"kind":"ConfigMap","data":{{"n":"{n}"}}}}"#),
            );
            let r = cli.ok(&["put", release, &file]).trim().to_string();
            let at = format!("2026-01-0{}T00:00:00Z", s + 1);
            cli.ok(&[
                "record",
                release,
                &r,
                "--summary",
                &format!("sync {s}"),
                "--synced-at",
                &at,
            ]);
        }
    }
    let text = cli.ok(&["releases"]);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["prod/api", "1", "2026-01-01T00:00:00Z", "sync", "0"],
            vec!["prod/web", "2", "2026-01-02T00:00:00Z", "sync", "1"],
            vec!["staging/web", "1", "2026-01-01T00:00:00Z", "sync", "0"],
        ],
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&cli.ok(&["releases", "-n", "prod", "-o", "json"])).unwrap();
    assert_eq!(json["partial"], false);
    assert_eq!(json["nextAfter"], serde_json::Value::Null);
    let listed: Vec<(&str, u64, &str)> = json["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["entries"].as_u64().unwrap(),
                r["newest"]["summary"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed, [("api", 1, "sync 0"), ("web", 2, "sync 1")]);
    // Two pages of two and one: the cursor of the first starts the second.
    let first: serde_json::Value =
        serde_json::from_str(&cli.ok(&["releases", "--limit", "2", "-o", "json"])).unwrap();
    assert_eq!(first["releases"].as_array().unwrap().len(), 2);
    assert_eq!(first["nextAfter"], "prod/web");
    let second: serde_json::Value = serde_json::from_str(&cli.ok(&[
        "releases", "--limit", "2", "--after", "prod/web", "-o", "json",
    ]))
    .unwrap();
    assert_eq!(second["releases"][0]["namespace"], "staging");
    assert_eq!(second["nextAfter"], serde_json::Value::Null);
    assert!(
        cli.fails(&["releases", "--after", "prod"])
            .contains("--after")
    );

    // A link in the prod folder: prod cannot be listed, staging still is.
    std::os::unix::fs::symlink(
        cli.store_dir().join("staging"),
        cli.store_dir().join("prod/elsewhere"),
    )
    .unwrap();
    let out = cli.run(&["releases"]);
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(
        stdout.contains("staging/web") && !stdout.contains("prod/"),
        "{stdout}"
    );
    assert!(!stdout.contains("(no release)"), "{stdout}");
    assert!(
        stderr.contains("partial") && stderr.contains("prod/"),
        "{stderr}"
    );
    let out = cli.run(&["releases", "-n", "prod", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["partial"], true);
    assert_eq!(json["releases"], serde_json::json!([]));
    assert_eq!(json["unlisted"][0]["folder"], "prod/");
}
