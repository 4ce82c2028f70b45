//! Traces and replay (TRACES.md): every operation records and replays to the same calls
//! and result; an edited trace replays to the decision it implies; the CLI's `--trace`
//! and `replay`.

use crate::support::{bucket_from_url, release, render, runtime, time};
use render_store::operation::Operation;
use render_store::trace::{ReplayError, ReplayReport, record};
use render_store::{Grace, Keyring, NewEntry, RenderStore};
use serde_json::{Value, json};
use std::process::Command;

/// A mem:// store with four renders recorded an hour apart.
async fn populated() -> (RenderStore, Vec<String>) {
    let store = RenderStore::new(runtime(), bucket_from_url("mem://"));
    let mut refs = Vec::new();
    for n in 0..4 {
        let r = store.put_render(&release("app"), &render(n)).await.unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: time(1_700_000_000 + 3600 * n as i64),
            summary: format!("sync {n}"),
        };
        store.record_history(&release("app"), &entry).await.unwrap();
        refs.push(r);
    }
    (store, refs)
}

fn gc(keep: i64, protected: &[&str], dry_run: bool) -> Operation {
    Operation::Gc {
        release: release("app"),
        keep,
        protected: protected.iter().map(|s| s.to_string()).collect(),
        dry_run,
        // A day after the first entry: every entry is in the past.
        grace: Grace::none_at(time(1_700_086_400)),
    }
}

/// Records `op` on `store`: the trace's lines, parsed.
async fn traced(store: &RenderStore, op: Operation) -> Vec<Value> {
    let (_, trace) = record(store, &op).await;
    let lines = lines(&trace.unwrap());
    assert_eq!(lines[0]["format"], "render-store-trace");
    assert_eq!(lines[0]["version"], 6);
    assert_eq!(lines[0]["operation"], op.name());
    lines
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn unlines(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

async fn replay(lines: &[Value]) -> (ReplayReport, Value) {
    let report = runtime()
        .replay(&unlines(lines), &Keyring::default())
        .await
        .unwrap();
    let json = serde_json::from_str(&report.json).unwrap();
    (report, json)
}

#[tokio::test]
async fn every_operation_replays_to_the_same_calls_and_result() {
    let (store, refs) = populated().await;
    let app = release("app");
    let operations = [
        Operation::PutRender {
            release: app.clone(),
            objects: render(9),
        },
        Operation::PutRender {
            release: app.clone(),
            objects: render(0),
        },
        Operation::PutRender {
            release: app.clone(),
            objects: vec![b"{not json".to_vec()],
        },
        Operation::GetRender {
            release: app.clone(),
            render_ref: refs[1].clone(),
        },
        Operation::GetRender {
            release: app.clone(),
            render_ref: format!("sha256:{}", "0".repeat(64)),
        },
        Operation::HasHistoryRef {
            release: app.clone(),
            render_ref: refs[2].clone(),
        },
        Operation::RecordHistory {
            release: app.clone(),
            entry: NewEntry {
                render_ref: refs[0].clone(),
                synced_at: time(1_800_000_000),
                summary: "again".into(),
            },
        },
        Operation::ListHistory {
            release: app.clone(),
        },
        gc(2, &[], true),
        gc(2, &[&refs[0]], false),
        Operation::DeleteRelease { release: app },
    ];
    for op in operations {
        let trace = traced(&store, op.clone()).await;
        let (report, json) = replay(&trace).await;
        assert!(report.matches, "{op:?}: {}", report.text);
        assert_eq!(json["calls"], trace.len() - 2, "{op:?}");
        assert_eq!(json["result"], trace.last().unwrap()["result"], "{op:?}");
        assert!(
            report
                .text
                .ends_with("every call and the result match the trace\n")
        );
    }
}

#[tokio::test]
async fn a_trace_holds_the_answers_and_the_writes() {
    let (store, _) = populated().await;
    let trace = traced(
        &store,
        Operation::PutRender {
            release: release("app"),
            objects: render(7),
        },
    )
    .await;
    let [_, exists, put, result] = &trace[..] else {
        panic!("{trace:?}")
    };
    assert_eq!(
        (&exists["call"], &exists["answer"]),
        (&json!("exists"), &json!({ "ok": null }))
    );
    assert_eq!(put["call"], "put");
    let render_ref = result["result"]["ok"]["renderRef"].as_str().unwrap();
    assert!(put["key"].as_str().unwrap().ends_with(render_ref));
    use base64::Engine as _;
    let value = base64::engine::general_purpose::STANDARD
        .decode(put["value"].as_str().unwrap())
        .unwrap();
    assert_eq!(value, runtime().canonical(&render(7)).await.unwrap());
}

#[tokio::test]
async fn a_gc_trace_with_one_more_listed_entry_replays_to_its_deletion() {
    let (store, refs) = populated().await;
    let mut trace = traced(&store, gc(2, &[], false)).await;
    assert_eq!(
        trace.last().unwrap()["result"]["ok"]["deleteHistory"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // An older entry and its render the real listings did not have (an entry whose
    // render is not listed would not count: CONTRACT.md §5).
    let old_ref = format!("sha256:{}", "a".repeat(64));
    let old_entry = format!("ns/app/history/20000101T000000.000000000Z-{old_ref}");
    for (folder, key) in [
        ("ns/app/history/", old_entry.clone()),
        ("ns/app/renders/", format!("ns/app/renders/{old_ref}")),
    ] {
        let listing = trace
            .iter_mut()
            .find(|c| c["call"] == "list" && c["key"] == folder)
            .expect("GC lists the folder");
        let objects = listing["answer"]["ok"].as_array_mut().unwrap();
        let mut extra = objects[0].clone();
        extra["key"] = json!(key);
        objects.insert(0, extra);
    }

    let (report, json) = replay(&trace).await;
    assert!(!report.matches);
    let deleted_now = json["result"]["ok"]["deleteHistory"].as_array().unwrap();
    assert_eq!(deleted_now.len(), 3);
    assert_eq!(deleted_now[0], json!(old_entry));
    // The first call that differs is the batch deleting the extra entry, before the
    // others, after the two listings.
    let first = &json["firstDifference"];
    let oks = vec![json!({ "ok": null }); 3];
    assert_eq!(
        first["replayed"],
        json!({ "call": "delete-many", "keys": deleted_now, "answer": { "ok": oks } })
    );
    assert_eq!(first["recorded"]["keys"], json!(deleted_now[1..]));
    assert_eq!(first["position"], 3);
    assert!(refs.iter().all(|r| !old_entry.contains(r.as_str())));
    assert!(
        report.text.contains("call 3 differs from the trace:\n"),
        "{}",
        report.text
    );
}

#[tokio::test]
async fn a_gc_trace_without_its_protected_ref_replays_to_that_render_deleted() {
    let (store, refs) = populated().await;
    let mut trace = traced(&store, gc(1, &[&refs[0]], false)).await;
    let render_key = format!("ns/app/renders/{}", refs[0]);
    let kept = &trace.last().unwrap()["result"]["ok"]["keepRenders"];
    assert!(kept.as_array().unwrap().contains(&json!(render_key)));

    trace[0]["arguments"]["protected"] = json!([]);
    let (report, json) = replay(&trace).await;
    assert!(!report.matches);
    let deleted = json["result"]["ok"]["deleteRenders"].as_array().unwrap();
    assert!(deleted.contains(&json!(render_key)));
    // The calls before it (the listings, the history deletions) are the recorded ones.
    let first = &json["firstDifference"];
    assert!(first["position"].as_u64().unwrap() > 2, "{first}");
    assert_eq!(first["replayed"]["call"], "delete-many");
    assert!(
        first["replayed"]["keys"]
            .as_array()
            .unwrap()
            .contains(&json!(render_key))
    );
}

#[tokio::test]
async fn an_edited_blob_replays_to_corrupt() {
    let (store, refs) = populated().await;
    let mut trace = traced(
        &store,
        Operation::GetRender {
            release: release("app"),
            render_ref: refs[3].clone(),
        },
    )
    .await;
    use base64::Engine as _;
    trace[1]["answer"]["ok"] =
        json!(base64::engine::general_purpose::STANDARD.encode(b"{\"kind\":\"Changed\"}\n"));
    let (report, json) = replay(&trace).await;
    // The component was given the edited answer, as recorded: the calls agree, the
    // result does not.
    assert_eq!(json["firstDifference"], Value::Null);
    assert_eq!(json["resultMatches"], false);
    assert!(!report.matches);
    assert_eq!(json["result"]["error"]["kind"], "corrupt");
}

#[tokio::test]
async fn a_bad_trace_is_refused_naming_the_line() {
    let header = r#"{"format":"render-store-trace","version":2,"operation":"list-history","arguments":{"release":{"namespace":"ns","name":"app"}}}"#;
    let list = r#"{"call":"list","key":"ns/app/history/","answer":{"ok":[]}}"#;
    let result = r#"{"result":{"ok":{"entries":[]}}}"#;
    let ok = format!("{header}\n{list}\n{result}\n");
    assert!(
        runtime()
            .replay(&ok, &Keyring::default())
            .await
            .unwrap()
            .matches
    );
    let cases = [
        (String::new(), 1, "empty"),
        (
            ok.replace(r#""version":2"#, r#""version":1"#),
            1,
            "version 1",
        ),
        (ok.replace("render-store-trace", "other"), 1, "format"),
        (format!("{header}\n"), 1, "result line is missing"),
        (ok.replace(r#""ok":[]"#, r#""ok":true"#), 2, "list's answer"),
        (
            ok.replace(r#""call":"list""#, r#""call":"rename""#),
            2,
            "unknown call",
        ),
        (ok.replace(result, "{}"), 3, "result"),
        (
            ok.replace("list-history", "compact"),
            1,
            "unknown operation",
        ),
        (
            format!(
                "{header}\n{{\"call\":\"get\",\"key\":\"k\",\"answer\":{{\"ok\":\"%%\"}}}}\n{result}"
            ),
            2,
            "base64",
        ),
        (format!("{header}\nnot json\n{result}"), 2, "not JSON"),
    ];
    for (text, line, what) in cases {
        match runtime().replay(&text, &Keyring::default()).await {
            Err(e @ ReplayError::Trace { line: l, .. }) => {
                let message = e.to_string();
                assert_eq!(l, line, "{message}");
                assert!(
                    message.starts_with(&format!("trace line {line}:")) && message.contains(what),
                    "{message}"
                );
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

fn cli(url: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        // Ad-hoc objects without Kubernetes names: this topic is not that rule.
        .env("RENDER_STORE_VALIDATE", "false")
        .args(args)
        .env("RENDER_STORE_URL", url)
        .output()
        .expect("the CLI runs")
}

/// The trace of a put-render is the same bytes from build to build: tests/vectors/traces
/// holds one written by the 0.6.0 CLI (whose WIT still had the `text`/`raw` forms of
/// `data`), of a Secret with non-ASCII text and a ConfigMap with a byte that is not UTF-8.
/// Only its header's `version` has changed since (3 to 5, changes of GC's alone).
#[test]
fn a_put_render_trace_is_the_same_bytes_as_the_recorded_vector() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}/store?create_dir=true", dir.path().display());
    let vectors = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/traces");
    let trace = dir.path().join("put.jsonl");
    let out = cli(
        &url,
        &[
            "put",
            "ns/app",
            &format!("{vectors}/put-render.1.json"),
            &format!("{vectors}/put-render.2.json"),
            "--trace",
            trace.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read(format!("{vectors}/put-render.jsonl")).unwrap();
    let got = std::fs::read(&trace).unwrap();
    assert!(
        got == want,
        "the trace differs from the vector:\n{}\n{}",
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
}

#[test]
fn cli_records_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}/store?create_dir=true", dir.path().display());
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let out = cli(&url, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    for n in 0..3 {
        std::fs::write(
            path(&format!("{n}.json")),
            format!(r#"{{"kind":"ConfigMap","n":{n}}}"#),
        )
        .unwrap();
        let r = ok(&[
            "put",
            "ns/app",
            &path(&format!("{n}.json")),
            "--trace",
            &path(&format!("put{n}.jsonl")),
        ]);
        let at = format!("2026-01-0{}T00:00:00Z", n + 1);
        ok(&[
            "record",
            "ns/app",
            r.trim(),
            "--synced-at",
            &at,
            "--trace",
            &path(&format!("record{n}.jsonl")),
        ]);
    }
    ok(&[
        "gc",
        "ns/app",
        "--keep",
        "1",
        "--grace",
        "0",
        "--trace",
        &path("gc.jsonl"),
    ]);
    // A failed operation is traced too: get of a render GC deleted.
    let put0 = lines(&std::fs::read_to_string(path("put0.jsonl")).unwrap());
    let gone = put0.last().unwrap()["result"]["ok"]["renderRef"]
        .as_str()
        .unwrap()
        .to_string();
    let out = cli(
        &url,
        &["get", "ns/app", &gone, "--trace", &path("get.jsonl")],
    );
    assert!(!out.status.success());
    let get = lines(&std::fs::read_to_string(path("get.jsonl")).unwrap());
    assert_eq!(get.last().unwrap()["result"]["error"]["kind"], "not-found");

    for name in ["put0", "put2", "record1", "gc", "get"] {
        let report = ok(&["replay", &path(&format!("{name}.jsonl")), "--json"]);
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        assert_eq!(report["matches"], true, "{name}: {report:#}");
    }
    let human = ok(&["replay", &path("gc.jsonl")]);
    assert!(
        human.contains("every call and the result match the trace"),
        "{human}"
    );

    // Edited: the history listing of the GC trace gains an old entry, and the render
    // listing its blob (an entry whose render is not listed would not count).
    let text = std::fs::read_to_string(path("gc.jsonl")).unwrap();
    let old_ref = format!("sha256:{}", "b".repeat(64));
    let old = format!("ns/app/history/19990101T000000.000000000Z-{old_ref}");
    let mut edited = text.clone();
    for (folder, key) in [
        ("history", old.clone()),
        ("renders", format!("ns/app/renders/{old_ref}")),
    ] {
        let before = edited.clone();
        edited = edited.replacen(
            &format!(r#""ok":[{{"key":"ns/app/{folder}/"#),
            &format!(r#""ok":[{{"key":"{key}","size":2,"modified":{{"seconds":0,"nanoseconds":0}}}},{{"key":"ns/app/{folder}/"#),
            1,
        );
        assert_ne!(edited, before);
    }
    std::fs::write(path("edited.jsonl"), edited).unwrap();
    let out = cli(&url, &["replay", &path("edited.jsonl")]);
    assert!(!out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("call 3 differs from the trace") && stdout.contains(&old),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not match the trace"));

    let out = cli(&url, &["ls", "--trace", &path("ls.jsonl")]);
    assert!(!out.status.success());
    // Only the store operations take --trace: clap refuses it elsewhere, as a usage error.
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--trace'"));
    assert!(!dir.path().join("ls.jsonl").exists());
}

/// The GC conformance trace (tests/vectors/traces/gc-skipped-entries.jsonl, written by
/// guest/tests/trace.rs) replays to a match in the Rust host, through the library and
/// the CLI: entries dated more than 5 minutes after the GC's `now`, and an entry whose
/// render is missing, pushed no real entry out (CONTRACT.md §5).
#[tokio::test]
async fn the_gc_conformance_trace_replays_as_recorded() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/vectors/traces/gc-skipped-entries.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let (report, json) = replay(&lines(&text)).await;
    assert!(report.matches, "{}", report.text);
    let plan = &json["result"]["ok"];
    let count = |name: &str| plan[name].as_array().unwrap().len();
    assert_eq!(
        (
            count("keepHistory"),
            count("futureHistory"),
            count("danglingHistory"),
            count("deleteHistory")
        ),
        (16, 11, 1, 1)
    );
    let out = cli("mem://", &["replay", path, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_cli, json);
}

/// The authenticated record's conformance trace (tests/vectors/traces/
/// record-authenticated.jsonl, written by guest/tests/trace.rs) replays to a match
/// through the CLI with the keyring `k1` it was recorded with, reading the planted
/// entry and putting the real one with its MAC; with another key of that id the MAC,
/// hence the put, differs.
#[test]
fn the_authenticated_record_trace_replays_with_its_keyring_alone() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/vectors/traces/record-authenticated.jsonl"
    );
    let dir = tempfile::tempdir().unwrap();
    let keys = super::encryption::keyring_file(dir.path(), &["k1"]);
    let out = cli(
        "mem://",
        &[
            "replay",
            path,
            "--json",
            "--encryption-keys",
            keys.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["result"]["ok"]["added"], true, "{report}");
    let other = super::encryption::keyring_file(dir.path(), &["x2"]);
    let renamed = std::fs::read_to_string(&other)
        .unwrap()
        .replacen("x2", "k1", 1);
    std::fs::write(&other, renamed).unwrap();
    let out = cli(
        "mem://",
        &["replay", path, "--encryption-keys", other.to_str().unwrap()],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
