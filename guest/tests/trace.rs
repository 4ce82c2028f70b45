//! Traces in the guest: what is written is what the Rust host wrote before traces moved
//! here (byte for byte), what is written reads back, a recorded trace replays to the same
//! calls and result, an edited one to the first call that differs, and malformed traces
//! are refused naming their line.

use base64::Engine as _;
use render_store_guest::trace::{
    Call, CallKind, Failure, Operation, Reply, Report, parse_trace, record, replay, replay_text,
    write_trace,
};
use render_store_guest::{
    BucketError, Error, Grace, Keyring, MemoryBucket, NewEntry, Release, SyncTime,
};
use serde_json::{Value, json};

mod common;

fn app() -> Release {
    Release::new("ns", "app")
}

fn at(seconds: i64) -> SyncTime {
    SyncTime {
        seconds,
        nanoseconds: 0,
    }
}

fn object(n: usize) -> Vec<u8> {
    format!(r#"{{"kind":"ConfigMap","metadata":{{"name":"c{n}"}},"data":{{"n":"{n}"}}}}"#)
        .into_bytes()
}

/// A bucket with four renders recorded an hour apart, each put an hour before.
fn populated() -> (MemoryBucket, Vec<String>) {
    let mut bucket = MemoryBucket::new();
    let mut refs = Vec::new();
    for n in 0..4 {
        bucket.clock = at(1_700_000_000 + 3600 * n as i64);
        let r =
            render_store_guest::put_render(&mut bucket, &app(), &[object(n)], &Keyring::empty())
                .unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: at(1_700_000_000 + 3600 * n as i64),
            summary: format!("sync {n}"),
        };
        render_store_guest::record_history(&mut bucket, &app(), &entry, &Keyring::empty()).unwrap();
        refs.push(r);
    }
    bucket.take_calls();
    (bucket, refs)
}

fn gc(keep: i64, protected: &[&str], dry_run: bool) -> Operation {
    Operation::Gc {
        release: app(),
        keep,
        protected: protected.iter().map(|s| s.to_string()).collect(),
        dry_run,
        grace: Grace {
            now: at(1_700_020_000),
            seconds: 0,
        },
    }
}

fn operations(refs: &[String]) -> Vec<Operation> {
    vec![
        Operation::PutRender {
            release: app(),
            objects: vec![object(9)],
        },
        Operation::PutRender {
            release: app(),
            objects: vec![object(0)],
        },
        Operation::PutRender {
            release: app(),
            objects: vec![b"{not json".to_vec()],
        },
        Operation::GetRender {
            release: app(),
            render_ref: refs[1].clone(),
        },
        Operation::GetRender {
            release: app(),
            render_ref: format!("sha256:{}", "0".repeat(64)),
        },
        Operation::HasHistoryRef {
            release: app(),
            render_ref: refs[2].clone(),
        },
        Operation::RecordHistory {
            release: app(),
            entry: NewEntry {
                render_ref: refs[0].clone(),
                synced_at: SyncTime {
                    seconds: 1_800_000_000,
                    nanoseconds: 5,
                },
                summary: "again <&> \u{2028} \"quoted\" \n\u{1b}[31m ünï".into(),
            },
        },
        Operation::ListHistory { release: app() },
        gc(2, &[], true),
        Operation::Gc {
            release: app(),
            keep: 2,
            protected: vec![refs[0].clone()],
            dry_run: false,
            grace: Grace {
                now: at(1_700_010_000),
                seconds: u64::MAX,
            },
        },
        gc(1, &[&refs[0]], false),
        Operation::DeleteRelease { release: app() },
        Operation::ListHistory {
            release: Release::new("Bad_NS", "app"),
        },
    ]
}

/// Records `op` on `bucket` and returns the trace text.
fn traced(bucket: &mut MemoryBucket, op: &Operation) -> String {
    let (outcome, calls) = record(&mut *bucket, op, &Keyring::empty());
    write_trace(op, &[], false, &calls, &outcome)
}

/// The conformance trace `name` of tests/vectors/traces, checked to be `text`, what this
/// build writes (`RENDER_STORE_UPDATE_VECTORS=1` writes it again after a deliberate
/// change).
fn the_vector(name: &str, text: &str) -> String {
    let path = common::repo_file(&format!("tests/vectors/traces/{name}"));
    if std::env::var_os("RENDER_STORE_UPDATE_VECTORS").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let vector = std::fs::read_to_string(&path).unwrap();
    assert!(
        text == vector,
        "this build writes another trace:\n{text}\nthe vector:\n{vector}"
    );
    vector
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn time_json(t: SyncTime) -> Value {
    json!({ "seconds": t.seconds, "nanoseconds": t.nanoseconds })
}

/// The trace as the Rust host wrote it before: serde_json values (keys sorted), one
/// `to_string` a line.
fn serde_trace(op: &Operation, calls: &[Call], result: Value) -> String {
    let r = op.release();
    let mut args = json!({ "release": { "namespace": r.namespace, "name": r.name } });
    match op {
        Operation::PutRender { objects, .. } => {
            args["objects"] = json!(objects.iter().map(|o| b64(o)).collect::<Vec<_>>())
        }
        Operation::GetRender { render_ref, .. } | Operation::HasHistoryRef { render_ref, .. } => {
            args["renderRef"] = json!(render_ref)
        }
        Operation::RecordHistory { entry, .. } => {
            args["entry"] = json!({
                "renderRef": entry.render_ref,
                "syncedAt": time_json(entry.synced_at),
                "summary": entry.summary,
            })
        }
        Operation::Gc {
            keep,
            protected,
            dry_run,
            grace,
            ..
        } => {
            args["keep"] = json!(keep);
            args["protected"] = json!(protected);
            args["dryRun"] = json!(dry_run);
            args["now"] = time_json(grace.now);
            args["graceSeconds"] = json!(grace.seconds);
        }
        Operation::ListHistory { .. } | Operation::DeleteRelease { .. } => {}
    }
    let mut lines = vec![json!({
        "format": "render-store-trace",
        "version": 6,
        "operation": op.name(),
        "arguments": args,
    })];
    for c in calls {
        let mut line = match c.kind {
            CallKind::DeleteMany => json!({ "call": c.kind.name(), "keys": c.keys }),
            _ => json!({ "call": c.kind.name(), "key": c.key }),
        };
        if let Some(v) = &c.value {
            line["value"] = json!(b64(v));
        }
        let error = |e: &BucketError| match e {
            BucketError::NotFound => json!({ "error": { "kind": "not-found" } }),
            BucketError::Denied(m) => json!({ "error": { "kind": "denied", "message": m } }),
            BucketError::Failed(m) => json!({ "error": { "kind": "failed", "message": m } }),
        };
        line["answer"] = match &c.answer {
            Ok(Reply::Each(answers)) => json!({ "ok": answers.iter().map(|a| match a {
                Ok(()) => json!({ "ok": null }),
                Err(e) => error(e),
            }).collect::<Vec<_>>() }),
            Ok(Reply::Bytes(b)) => json!({ "ok": b64(b) }),
            Ok(Reply::Done) => json!({ "ok": null }),
            Ok(Reply::Size(s)) => json!({ "ok": s }),
            Ok(Reply::Listing(objects)) => json!({ "ok": objects.iter().map(|o| json!({
                "key": o.key, "size": o.size, "modified": time_json(o.modified.into()),
            })).collect::<Vec<_>>() }),
            Err(e) => error(e),
        };
        lines.push(line);
    }
    lines.push(json!({ "result": result }));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn traces_are_byte_for_byte_what_serde_json_wrote_and_read_back() {
    let (mut bucket, refs) = populated();
    for op in operations(&refs) {
        let (outcome, calls) = record(&mut bucket, &op, &Keyring::empty());
        let text = write_trace(&op, &[], false, &calls, &outcome);
        // The result JSON of the trace, as serde_json reads and writes it again.
        let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(
            text,
            serde_trace(&op, &calls, last["result"].clone()),
            "{op:?}"
        );
        let trace = parse_trace(&text).unwrap();
        assert_eq!((&trace.operation, &trace.calls), (&op, &calls), "{text}");
        assert_eq!(
            trace.result.json,
            render_store_guest::trace::outcome_json(&outcome)
        );
        assert_eq!(
            trace.result.error_kind.as_deref(),
            outcome.as_ref().err().map(|f| match f {
                Failure::Error(Error::InvalidInput(_)) => "invalid-input",
                Failure::Error(Error::InvalidObject { .. }) => "invalid-object",
                Failure::Error(Error::NotFound(_)) => "not-found",
                Failure::Error(Error::Corrupt(_)) => "corrupt",
                Failure::Error(Error::InvalidYaml(_)) => "invalid-yaml",
                Failure::Error(Error::Bucket(_)) => "bucket",
                Failure::Error(Error::EncryptionKey(_)) => "encryption-key",
                Failure::Trap(_) => "trap",
            })
        );
    }
}

#[test]
fn a_put_trace_and_a_gc_trace_byte_for_byte() {
    let mut bucket = MemoryBucket::new();
    bucket.clock = at(1_767_225_600);
    let op = Operation::PutRender {
        release: app(),
        objects: vec![br#"{"kind":"A"}"#.to_vec()],
    };
    let put = traced(&mut bucket, &op);
    let r = "sha256:2ae64b3e2f2afc0a2e04f2cc6da22df8dfa4ad11cb9d6a2d6e2b2ab3b52fc0c2";
    let r = {
        let actual = render_store_guest::render_ref(&[br#"{"kind":"A"}"#]).unwrap();
        assert_ne!(actual, r, "the placeholder is not a real renderRef");
        actual
    };
    assert_eq!(
        put,
        format!(
            concat!(
                r#"{{"arguments":{{"objects":["eyJraW5kIjoiQSJ9"],"release":{{"name":"app","namespace":"ns"}}}},"format":"render-store-trace","operation":"put-render","version":6}}"#,
                "\n",
                r#"{{"answer":{{"ok":null}},"call":"exists","key":"ns/app/renders/{r}"}}"#,
                "\n",
                r#"{{"answer":{{"ok":null}},"call":"put","key":"ns/app/renders/{r}","value":"eyJraW5kIjoiQSJ9Cg=="}}"#,
                "\n",
                r#"{{"result":{{"ok":{{"renderRef":"{r}"}}}}}}"#,
                "\n",
            ),
            r = r
        )
    );

    let mut bucket = MemoryBucket::new();
    bucket.clock = at(1_767_225_600);
    bucket
        .put(&format!("ns/app/renders/{r}"), b"{\"kind\":\"A\"}\n")
        .unwrap();
    let op = Operation::Gc {
        release: app(),
        keep: 1,
        protected: vec![],
        dry_run: false,
        grace: Grace {
            now: SyncTime {
                seconds: 1_767_226_199,
                nanoseconds: 7,
            },
            seconds: 600,
        },
    };
    let text = traced(&mut bucket, &op);
    assert_eq!(
        text,
        format!(
            concat!(
                r#"{{"arguments":{{"dryRun":false,"graceSeconds":600,"keep":1,"now":{{"nanoseconds":7,"seconds":1767226199}},"protected":[],"release":{{"name":"app","namespace":"ns"}}}},"format":"render-store-trace","operation":"gc","version":6}}"#,
                "\n",
                r#"{{"answer":{{"ok":[]}},"call":"list","key":"ns/app/history/"}}"#,
                "\n",
                r#"{{"answer":{{"ok":[{{"key":"ns/app/renders/{r}","modified":{{"nanoseconds":0,"seconds":1767225600}},"size":13}}]}},"call":"list","key":"ns/app/renders/"}}"#,
                "\n",
                r#"{{"answer":{{"ok":[]}},"call":"list","key":"ns/app/history/"}}"#,
                "\n",
                r#"{{"result":{{"ok":{{"danglingHistory":[],"deleteHistory":[],"deleteRenders":[],"futureHistory":[],"ignored":[],"keepHistory":[],"keepRenders":[],"recentRenders":["ns/app/renders/{r}"]}}}}}}"#,
                "\n",
            ),
            r = r
        )
    );
}

use render_store_guest::Bucket as _;

#[test]
fn every_recorded_operation_replays_to_the_same_calls_and_result() {
    let (mut bucket, refs) = populated();
    for op in operations(&refs) {
        let text = traced(&mut bucket, &op);
        let report = replay_text(&text, &Keyring::empty()).unwrap();
        assert!(report.matches(), "{op:?}: {}", report.to_text());
        assert_eq!(report.calls, parse_trace(&text).unwrap().calls);
        assert!(
            report
                .to_text()
                .ends_with("every call and the result match the trace\n")
        );
        let json: Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["matches"], true);
        assert_eq!(json["firstDifference"], Value::Null);
        let recorded: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(json["result"], recorded["result"]);
        // The human form shows the result as serde_json's pretty printer did.
        let pretty = serde_json::to_string_pretty(&recorded["result"]).unwrap();
        assert!(
            report.to_text().contains(&format!("\nresult: {pretty}\n")),
            "{}",
            report.to_text()
        );
        assert_eq!(json["calls"], report.calls.len());
    }
}

/// `trace` with one more entry, older than all, in its first history listing, and its
/// render in the render listing (an entry whose render is not listed would not count).
fn with_an_older_entry(text: &str) -> (String, String) {
    let r = format!("sha256:{}", "b".repeat(64));
    let old = format!("ns/app/history/19990101T000000.000000000Z-{r}");
    let mut edited = text.to_string();
    for (folder, key) in [
        ("history", old.clone()),
        ("renders", format!("ns/app/renders/{r}")),
    ] {
        let before = edited.clone();
        edited = edited.replacen(
            &format!(r#""ok":[{{"key":"ns/app/{folder}/"#),
            &format!(
                r#""ok":[{{"key":"{key}","size":2,"modified":{{"seconds":0,"nanoseconds":0}}}},{{"key":"ns/app/{folder}/"#
            ),
            1,
        );
        assert_ne!(edited, before);
    }
    (edited, old)
}

#[test]
fn an_edited_answer_replays_to_the_first_call_that_differs() {
    let (mut bucket, _) = populated();
    let text = traced(&mut bucket, &gc(2, &[], false));
    let (edited, old) = with_an_older_entry(&text);
    let report: Report = replay_text(&edited, &Keyring::empty()).unwrap();
    assert!(!report.matches() && !report.result_matches);
    let first = report.first_difference.clone().expect("a difference");
    // The extra entry is deleted first, where the trace deleted the oldest real one,
    // after the two listings.
    assert_eq!(first.position, 3);
    let extra = first.replayed.expect("the replay made a call there");
    assert_eq!(
        (extra.kind, extra.keys[0].as_str()),
        (CallKind::DeleteMany, &old[..])
    );
    let recorded = first.recorded.unwrap();
    assert_eq!(recorded.kind, CallKind::DeleteMany);
    assert_eq!(extra.keys[1..], recorded.keys);
    let json: Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["matches"], false);
    assert_eq!(json["firstDifference"]["position"], 3);
    let oks = vec![json!({ "ok": null }); extra.keys.len()];
    assert_eq!(
        json["firstDifference"]["replayed"],
        json!({ "call": "delete-many", "keys": extra.keys, "answer": { "ok": oks } })
    );
    assert_eq!(
        json["result"]["ok"]["deleteHistory"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let human = report.to_text();
    let lines: Vec<&str> = human.lines().collect();
    assert!(lines[0].starts_with("replayed gc of ns/app: "), "{human}");
    assert!(human.contains("\ncall 3 differs from the trace:\n  trace:  {\"answer\""));
    assert!(human.contains("  replay: {\"answer\":{\"ok\":[{\"ok\":null},"));
    assert!(human.contains(&format!("\"call\":\"delete-many\",\"keys\":[\"{old}\",")));
    assert!(
        human.ends_with("the result differs from the trace's\n"),
        "{human}"
    );
}

#[test]
fn an_edited_blob_replays_to_corrupt_with_the_calls_agreeing() {
    let (mut bucket, refs) = populated();
    let op = Operation::GetRender {
        release: app(),
        render_ref: refs[3].clone(),
    };
    let (outcome, mut calls) = record(&mut bucket, &op, &Keyring::empty());
    calls[0].answer = Ok(Reply::Bytes(b"{\"kind\":\"Changed\"}\n".to_vec()));
    let report = replay(
        &parse_trace(&write_trace(&op, &[], false, &calls, &outcome)).unwrap(),
        &Keyring::empty(),
    );
    assert_eq!(report.first_difference, None);
    assert!(!report.result_matches);
    assert!(matches!(
        report.outcome,
        Err(Failure::Error(Error::Corrupt(_)))
    ));
}

#[test]
fn a_recorded_trap_compares_by_kind_and_replays_to_a_difference() {
    let (mut bucket, _) = populated();
    let op = Operation::ListHistory { release: app() };
    let (_, calls) = record(&mut bucket, &op, &Keyring::empty());
    let trapped = write_trace(
        &op,
        &[],
        false,
        &calls,
        &Err(Failure::Trap("out of fuel".into())),
    );
    assert!(
        trapped.ends_with(
            "{\"result\":{\"error\":{\"kind\":\"trap\",\"message\":\"out of fuel\"}}}\n"
        )
    );
    // The replay is not stopped, so its result is no trap: only the kinds are compared.
    let report = replay_text(&trapped, &Keyring::empty()).unwrap();
    assert_eq!(report.first_difference, None);
    assert!(!report.result_matches);
    // Another message of a trap would not matter; another kind does.
    let edited = trapped.replace("out of fuel", "memory cap");
    assert!(
        !replay_text(&edited, &Keyring::empty())
            .unwrap()
            .result_matches
    );
}

#[test]
fn replay_answers_by_the_rules_of_traces_md() {
    let objects = [br#"{"kind":"A"}"#.to_vec()];
    let r = render_store_guest::render_ref(&objects).unwrap();
    let key = format!("ns/app/renders/{r}");
    let header = format!(
        r#"{{"format":"render-store-trace","version":2,"operation":"get-render","arguments":{{"release":{{"namespace":"ns","name":"app"}},"renderRef":"{r}"}}}}"#
    );
    // A read the trace never saw fails with "not in the trace".
    let unseen =
        format!("{header}\n{{\"result\":{{\"ok\":{{\"render\":\"eyJraW5kIjoiQSJ9Cg==\"}}}}}}\n");
    let report = replay_text(&unseen, &Keyring::empty()).unwrap();
    let first = report.first_difference.clone().unwrap();
    assert_eq!((first.position, first.recorded), (1, None));
    assert_eq!(
        first.replayed.unwrap().answer,
        Err(BucketError::Failed("not in the trace".into()))
    );
    assert_eq!(
        report.outcome,
        Err(Failure::Error(Error::Bucket(format!(
            "get {key}: not in the trace"
        ))))
    );
    assert!(report.to_text().contains("  trace:  (no call)\n"));

    // Answers of one call and key are used in order, then the last again.
    let list = |keys: &[&str]| {
        let items: Vec<Value> = keys
            .iter()
            .map(|k| json!({ "key": k, "size": 1, "modified": { "seconds": 0, "nanoseconds": 0 } }))
            .collect();
        json!({ "call": "list", "key": "ns/app/history/", "answer": { "ok": items } }).to_string()
    };
    let e1 = format!("ns/app/history/20240101T000000.000000000Z-{r}");
    let header = r#"{"format":"render-store-trace","version":2,"operation":"list-history","arguments":{"release":{"namespace":"ns","name":"app"}}}"#;
    let result = r#"{"result":{"ok":{"entries":[]}}}"#;
    let text = format!("{header}\n{}\n{result}\n", list(&[&e1]));
    let report = replay_text(&text, &Keyring::empty()).unwrap();
    // The entry's body was never read in the trace: the get fails, as an unseen read.
    assert_eq!(report.calls[1].kind, CallKind::Get);
    assert_eq!(report.calls.len(), 2);
    assert!(!report.matches());
}

#[test]
fn malformed_traces_are_refused_naming_the_line() {
    let header = r#"{"format":"render-store-trace","version":2,"operation":"list-history","arguments":{"release":{"namespace":"ns","name":"app"}}}"#;
    let list = r#"{"call":"list","key":"ns/app/history/","answer":{"ok":[]}}"#;
    let result = r#"{"result":{"ok":{"entries":[]}}}"#;
    let ok = format!("{header}\n{list}\n{result}\n");
    assert_eq!(parse_trace(&ok).unwrap().calls.len(), 1);
    // Blank lines and CRLF are fine, and count as lines.
    let crlf = format!("\r\n{}", ok.replace('\n', "\r\n"));
    assert_eq!(parse_trace(&crlf).unwrap().calls.len(), 1);
    let cases = [
        (String::new(), 1, "the trace is empty"),
        (
            ok.replace(r#""version":2"#, r#""version":1"#),
            1,
            "trace version 1 is not supported: this build reads versions 2 to 6",
        ),
        (
            ok.replace(r#""version":2"#, r#""version":7"#),
            1,
            "trace version 7 is not supported: this build reads versions 2 to 6",
        ),
        (
            ok.replace(r#","version":2"#, ""),
            1,
            "trace version null is not supported",
        ),
        (
            ok.replace("render-store-trace", "other"),
            1,
            r#"not a render-store trace: the first line must have "format":"render-store-trace""#,
        ),
        (
            format!("{header}\n"),
            1,
            "the trace ends after its header: the result line is missing",
        ),
        (
            ok.replace(r#""ok":[]"#, r#""ok":true"#),
            2,
            "a list's answer must be an array of objects",
        ),
        (
            ok.replace(
                r#""ok":[]"#,
                r#""ok":[{"key":"k","size":-1,"modified":{"seconds":0,"nanoseconds":0}}]"#,
            ),
            2,
            r#""size" must be a 64-bit unsigned integer"#,
        ),
        (
            ok.replace(
                r#""ok":[]"#,
                r#""ok":[{"key":"k","size":1,"modified":{"seconds":0,"nanoseconds":1000000000}}]"#,
            ),
            2,
            r#""nanoseconds" must be an integer below 1000000000"#,
        ),
        (
            ok.replace(r#""call":"list""#, r#""call":"rename""#),
            2,
            r#"unknown call "rename": expected get, put, exists, list, delete or delete-many"#,
        ),
        (
            ok.replace(r#""call":"list""#, r#""call":"delete-many""#),
            2,
            r#"a delete-many has "keys", not "key""#,
        ),
        (
            ok.replace(
                r#""call":"list","key":"ns/app/history/""#,
                r#""call":"delete-many","keys":"k""#,
            ),
            2,
            r#""keys" must be an array of strings"#,
        ),
        (
            ok.replace(
                r#""call":"list","key":"ns/app/history/""#,
                r#""call":"delete-many","keys":["k"]"#,
            ),
            2,
            r#"a delete-many of 1 keys has 0 answers: it needs one per key"#,
        ),
        (
            ok.replace(
                r#""call":"list","key":"ns/app/history/","answer":{"ok":[]}"#,
                r#""call":"delete-many","keys":["k"],"answer":{"ok":[{"ok":1}]}"#,
            ),
            2,
            r#"1 is not an answer to delete"#,
        ),
        (
            ok.replace(r#""call":"list""#, r#""call":"list","value":"""#),
            2,
            r#"a list has no "value""#,
        ),
        (
            ok.replace(r#"{"ok":[]}"#, r#"{"ok":[],"error":{"kind":"failed"}}"#),
            2,
            r#""answer" must have exactly one of "ok" and "error""#,
        ),
        (
            ok.replace(r#"{"ok":[]}"#, r#"{"error":{"kind":"gone"}}"#),
            2,
            r#"unknown bucket error "gone": expected not-found, denied or failed"#,
        ),
        (
            ok.replace(result, "{}"),
            3,
            r#"the last line must be the result: {"result":{…}}"#,
        ),
        (
            ok.replace(result, r#"{"result":{"error":{"message":"m"}}}"#),
            3,
            r#"field "kind" is missing"#,
        ),
        (
            ok.replace("list-history", "compact"),
            1,
            r#"unknown operation "compact": expected put-render"#,
        ),
        (
            ok.replace(r#""name":"app""#, r#""name":7"#),
            1,
            r#"field "name" must be a string"#,
        ),
        (
            format!(
                "{header}\n{{\"call\":\"get\",\"key\":\"k\",\"answer\":{{\"ok\":\"%%\"}}}}\n{result}"
            ),
            2,
            "a get's answer is not standard base64: Invalid symbol 37, offset 0.",
        ),
        (
            format!(
                "{header}\n{{\"call\":\"exists\",\"key\":\"k\",\"answer\":{{\"ok\":\"1\"}}}}\n{result}"
            ),
            2,
            r#""1" is not an answer to exists: see TRACES.md for each call's answer"#,
        ),
        (
            format!(
                "{header}\n{{\"call\":\"put\",\"key\":\"k\",\"answer\":{{\"ok\":null}}}}\n{result}"
            ),
            2,
            r#"a put needs its "value""#,
        ),
        (format!("{header}\nnot json\n{result}"), 2, "not JSON: "),
        (
            format!("{header}\n[1]\n{result}"),
            2,
            "a call line must be a JSON object",
        ),
        (format!("\n\n{header}\n\n{list}\n\n{{"), 7, "not JSON: "),
    ];
    for (text, line, what) in cases {
        let e = parse_trace(&text).unwrap_err();
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.message.contains(what), "{text}: {e}");
        assert!(e.to_string().starts_with(&format!("trace line {line}: ")));
    }
}

#[test]
fn gc_trace_integers_past_i64_and_2_53_stay_exact() {
    let header = r#"{"format":"render-store-trace","version":2,"operation":"gc","arguments":{"release":{"namespace":"ns","name":"app"},"keep":9223372036854775807,"protected":[],"dryRun":true,"now":{"seconds":-9223372036854775808,"nanoseconds":0},"graceSeconds":18446744073709551615}}"#;
    let text = format!(
        "{header}\n{}\n{}\n{}\n",
        r#"{"call":"list","key":"ns/app/history/","answer":{"ok":[]}}"#,
        r#"{"call":"list","key":"ns/app/renders/","answer":{"ok":[{"key":"ns/app/renders/x","size":18446744073709551615,"modified":{"seconds":0,"nanoseconds":0}}]}}"#,
        r#"{"result":{"ok":{"deleteHistory":[],"keepHistory":[],"deleteRenders":[],"keepRenders":[],"ignored":["ns/app/renders/x"],"recentRenders":[]}}}"#
    );
    let trace = parse_trace(&text).unwrap();
    let Operation::Gc { keep, grace, .. } = &trace.operation else {
        panic!("{:?}", trace.operation)
    };
    assert_eq!(
        (*keep, grace.seconds, grace.now.seconds),
        (i64::MAX, u64::MAX, i64::MIN)
    );
    let Ok(Reply::Listing(listed)) = &trace.calls[1].answer else {
        panic!()
    };
    assert_eq!(listed[0].size, u64::MAX);
    assert!(
        replay(&trace, &Keyring::empty()).matches(),
        "{}",
        replay(&trace, &Keyring::empty()).to_text()
    );
    // Written again, the numbers are the same digits.
    let again = write_trace(
        &trace.operation,
        &[],
        false,
        &trace.calls,
        &Ok(render_store_guest::trace::Output::Deleted(0)),
    );
    assert!(again.contains("\"graceSeconds\":18446744073709551615"));
    assert!(again.contains("\"keep\":9223372036854775807"));
    assert!(again.contains("\"size\":18446744073709551615"));
}

#[test]
fn report_text_writes_control_characters_out() {
    let (mut bucket, _) = populated();
    let entry = NewEntry {
        render_ref: format!("sha256:{}", "c".repeat(64)),
        synced_at: at(1_800_000_000),
        summary: "\u{1b}]0;t\u{7}\u{7f}\u{202e}".into(),
    };
    render_store_guest::record_history(&mut bucket, &app(), &entry, &Keyring::empty()).unwrap();
    let text = traced(&mut bucket, &Operation::ListHistory { release: app() });
    let human = replay_text(&text, &Keyring::empty()).unwrap().to_text();
    assert!(
        !human.contains('\u{1b}') && !human.contains('\u{7f}') && !human.contains('\u{202e}'),
        "{human}"
    );
    // JSON escapes the C0 controls itself; DEL and bidi controls are written out for the
    // terminal.
    assert!(human.contains(r"\u001b]0;t\u0007\u{7f}\u{202e}"), "{human}");
}

/// A GC trace of this build as a version 3 build wrote the same run: `renders/` listed
/// after the second history listing, and a plan without the lists of skipped entries
/// (the run must have skipped none, as that build skipped none).
fn as_version_3(text: &str) -> String {
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[0]["version"] = json!(3);
    let is_list =
        |l: &Value, folder: &str| l["call"] == "list" && l["key"] == format!("ns/app/{folder}/");
    let renders = lines.iter().position(|l| is_list(l, "renders")).unwrap();
    let listing = lines.remove(renders);
    let second = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| is_list(l, "history"))
        .nth(1)
        .map(|(i, _)| i)
        .unwrap();
    lines.insert(second + 1, listing);
    let plan = lines.last_mut().unwrap()["result"]["ok"]
        .as_object_mut()
        .unwrap();
    for skipped in ["futureHistory", "danglingHistory"] {
        assert_eq!(plan.remove(skipped), Some(json!([])));
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_version_3_and_a_version_2_trace_still_replay_as_their_builds_ran() {
    let (mut bucket, _) = populated();
    let text = traced(&mut bucket, &gc(1, &[], false));
    let v4 = parse_trace(&text).unwrap();
    assert!(v4.calls.iter().any(|c| c.kind == CallKind::DeleteMany));
    assert_eq!(
        v4.calls[1].key, "ns/app/renders/",
        "renders/ is listed second"
    );
    let v3 = as_version_3(&text);
    assert!(!v3.contains("futureHistory"));
    let report = replay_text(&v3, &Keyring::empty()).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    assert!(!report.to_json().contains("futureHistory"));
    // The same trace as version 2 builds wrote it: a delete line for each key.
    let mut v2 = String::new();
    for line in v3.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if value["call"] == "delete-many" {
            for key in value["keys"].as_array().unwrap() {
                let one = json!({ "answer": { "ok": null }, "call": "delete", "key": key });
                v2.push_str(&format!("{one}\n"));
            }
        } else {
            v2.push_str(&line.replace(r#""version":3"#, r#""version":2"#));
            v2.push('\n');
        }
    }
    assert!(v2.contains(r#""version":2"#) && !v2.contains("delete-many"));
    let report = replay_text(&v2, &Keyring::empty()).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    assert!(report.calls.iter().all(|c| c.kind != CallKind::DeleteMany));
    // Version 4 replays with batches, in its own order.
    assert!(replay_text(&text, &Keyring::empty()).unwrap().matches());
}

/// A version 3 trace of a GC over a planted future-dated entry replays to what that
/// build did (the real entry deleted); the same listings under version 4 keep it.
#[test]
fn a_version_3_gc_over_a_planted_entry_replays_by_its_own_rules() {
    let r = render_store_guest::render_ref(&[object(0)]).unwrap();
    let real = format!("ns/app/history/20231114T221320.000000000Z-{r}");
    let planted = format!(
        "ns/app/history/99991231T235950.000000000Z-sha256:{}",
        "e".repeat(64)
    );
    let listed = |key: &str| json!({ "key": key, "size": 2, "modified": { "seconds": 0, "nanoseconds": 0 } });
    let args = json!({
        "release": { "namespace": "ns", "name": "app" }, "keep": 1, "protected": [],
        "dryRun": false, "now": { "seconds": 1_700_020_000, "nanoseconds": 0 }, "graceSeconds": 0,
    });
    let render_key = format!("ns/app/renders/{r}");
    let v3_lines = [
        json!({ "format": "render-store-trace", "version": 3, "operation": "gc", "arguments": args }),
        json!({ "call": "list", "key": "ns/app/history/", "answer": { "ok": [listed(&real), listed(&planted)] } }),
        json!({ "call": "delete-many", "keys": [real], "answer": { "ok": [{ "ok": null }] } }),
        json!({ "call": "list", "key": "ns/app/history/", "answer": { "ok": [listed(&planted)] } }),
        json!({ "call": "list", "key": "ns/app/renders/", "answer": { "ok": [listed(&render_key)] } }),
        json!({ "call": "delete-many", "keys": [render_key], "answer": { "ok": [{ "ok": null }] } }),
        json!({ "result": { "ok": {
            "deleteHistory": [real], "keepHistory": [planted], "deleteRenders": [render_key],
            "keepRenders": [], "ignored": [], "recentRenders": [],
        } } }),
    ];
    let v3: String = v3_lines.iter().map(|l| format!("{l}\n")).collect();
    let report = replay_text(&v3, &Keyring::empty()).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    // This build, on the same store, deletes nothing: its trace replays as recorded.
    let v4_lines = [
        json!({ "format": "render-store-trace", "version": 4, "operation": "gc", "arguments": args }),
        json!({ "call": "list", "key": "ns/app/history/", "answer": { "ok": [listed(&real), listed(&planted)] } }),
        json!({ "call": "list", "key": "ns/app/renders/", "answer": { "ok": [listed(&render_key)] } }),
        json!({ "call": "list", "key": "ns/app/history/", "answer": { "ok": [listed(&real), listed(&planted)] } }),
        json!({ "result": { "ok": {
            "deleteHistory": [], "keepHistory": [real, planted], "deleteRenders": [],
            "keepRenders": [render_key], "ignored": [], "recentRenders": [],
            "futureHistory": [planted], "danglingHistory": [],
        } } }),
    ];
    let v4: String = v4_lines.iter().map(|l| format!("{l}\n")).collect();
    let report = replay_text(&v4, &Keyring::empty()).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    // The version 3 trace read by this build's rules would not match: the rule is the
    // version's, not the reader's.
    let report = replay_text(
        &v3.replace(r#""version":3"#, r#""version":4"#),
        &Keyring::empty(),
    )
    .unwrap();
    assert!(!report.matches());
    let json: Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["firstDifference"]["position"], 2);
    assert_eq!(
        json["firstDifference"]["replayed"]["key"],
        "ns/app/renders/"
    );
    assert_eq!(json["result"]["ok"]["futureHistory"], json!([planted]));
}

#[test]
fn an_encrypted_store_s_trace_names_its_key_ids_and_replays_only_with_that_keyring() {
    use render_store_guest::SealingKey;
    let ring = |ids: &[&str]| {
        Keyring::new(
            ids.iter()
                .map(|id| SealingKey::new(id, &[id.as_bytes()[1]; 32]).unwrap())
                .collect(),
        )
        .unwrap()
    };
    let keys = ring(&["k2", "k1"]);
    let op = Operation::PutRender {
        release: app(),
        objects: vec![br#"{"kind":"Secret","stringData":{"p":"Wq8Lm3Xr7Tb2Vn5Kc9"}}"#.to_vec()],
    };
    let (outcome, calls) = record(MemoryBucket::new(), &op, &keys);
    let text = write_trace(&op, &keys.ids(), false, &calls, &outcome);
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["keyIds"], json!(["k2", "k1"]));
    // The put records the sealed blob, not the Secret, and no key.
    assert!(!text.contains("Wq8Lm3Xr7Tb2Vn5Kc9"));
    assert_eq!(parse_trace(&text).unwrap().key_ids, ["k2", "k1"]);
    assert!(replay_text(&text, &keys).unwrap().matches());
    for (given, says) in [
        (Keyring::empty(), "none was given"),
        (ring(&["k1", "k2"]), "was given keys \"k1\", \"k2\""),
    ] {
        let e = replay_text(&text, &given).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.message.contains(says) && e.message.contains("\"k2\", \"k1\""),
            "{e}"
        );
    }
    // A plaintext store's trace has no keyIds and refuses a keyring.
    let (outcome, calls) = record(MemoryBucket::new(), &op, &Keyring::empty());
    let plain = write_trace(&op, &[], false, &calls, &outcome);
    assert!(!plain.contains("keyIds"));
    assert!(
        replay_text(&plain, &keys)
            .unwrap_err()
            .message
            .contains("without encryption")
    );
}

#[test]
fn a_trace_run_with_encryption_required_says_so_and_replays_under_the_same_rule() {
    use render_store_guest::SealingKey;
    let keys = Keyring::new(vec![SealingKey::new("k1", &[1; 32]).unwrap()]).unwrap();
    let required = keys.clone().require(true).unwrap();
    // A plaintext blob where the store requires sealed ones: get-render refuses it.
    let objects = vec![br#"{"kind":"ConfigMap","data":{"a":"b"}}"#.to_vec()];
    let mut bucket = MemoryBucket::new();
    let r =
        render_store_guest::put_render(&mut bucket, &app(), &objects, &Keyring::empty()).unwrap();
    let op = Operation::GetRender {
        release: app(),
        render_ref: r,
    };
    let (outcome, calls) = record(&mut bucket, &op, &required);
    assert!(
        matches!(&outcome, Err(Failure::Error(Error::Corrupt(m))) if m.contains("encryption is required")),
        "{outcome:?}"
    );
    let text = write_trace(&op, &keys.ids(), true, &calls, &outcome);
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["encryptionRequired"], json!(true));
    assert!(parse_trace(&text).unwrap().encryption_required);
    // The rule comes from the trace: the same keys replay it to the same refusal.
    let report = replay_text(&text, &keys).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    // Without the member the plaintext blob reads, which is not what was recorded.
    let edited = text.replacen(",\"encryptionRequired\":true", "", 1);
    assert!(!edited.contains("encryptionRequired"));
    assert!(!replay_text(&edited, &keys).unwrap().matches());
    // A trace without it keeps its bytes; one that requires encryption without keys,
    // or says it with anything but a boolean, is refused at line 1.
    let plain = write_trace(&op, &keys.ids(), false, &calls, &outcome);
    assert!(!plain.contains("encryptionRequired"));
    for (bad, says) in [
        (
            text.replacen("\"keyIds\":[\"k1\"],", "", 1),
            "has no \"keyIds\"",
        ),
        (
            text.replacen("\"encryptionRequired\":true", "\"encryptionRequired\":1", 1),
            "must be true or false",
        ),
    ] {
        let e = parse_trace(&bad).unwrap_err();
        assert!(e.line == 1 && e.message.contains(says), "{bad}: {e}");
    }
}

/// The conformance trace every host replays (tests/vectors/traces/gc-skipped-entries.jsonl):
/// a real GC, `keep 4`, the current render protected, over four real entries and an
/// older one, an entry from a replica whose clock ran half an hour ahead, an entry whose
/// render is missing, ten planted `99991231T235950…` entries, a blob within the grace
/// period and a foreign key. This build writes it byte for byte;
/// `RENDER_STORE_UPDATE_VECTORS=1` writes it again after a deliberate change.
#[test]
fn the_gc_trace_vector_is_what_this_build_writes_and_replays() {
    let now = 1_767_268_800; // 2026-01-01T12:00:00Z
    let mut bucket = MemoryBucket::new();
    let record_at = |bucket: &mut MemoryBucket, written: i64, synced: i64, r: &str| {
        bucket.clock = at(written);
        let entry = NewEntry {
            render_ref: r.to_string(),
            synced_at: at(synced),
            summary: format!("synced at {synced}"),
        };
        render_store_guest::record_history(bucket, &app(), &entry, &Keyring::empty()).unwrap();
    };
    let put = |bucket: &mut MemoryBucket, written: i64, n: usize| {
        bucket.clock = at(written);
        render_store_guest::put_render(bucket, &app(), &[object(n)], &Keyring::empty()).unwrap()
    };
    let mut refs = Vec::new();
    for n in 0..5 {
        let t = now - 3_600 * (5 - n as i64);
        let r = put(&mut bucket, t, n);
        record_at(&mut bucket, t, t, &r);
        refs.push(r);
    }
    // A replica whose clock runs half an hour ahead: the bucket's time is right, the
    // key's is not.
    let skewed = put(&mut bucket, now - 1_800, 5);
    record_at(&mut bucket, now - 1_800, now + 1_800, &skewed);
    let missing = render_store_guest::render_ref_of_canonical(b"a render nobody stored\n");
    record_at(&mut bucket, now - 1_200, now - 1_200, &missing);
    bucket.clock = at(now - 600);
    for n in 0..10 {
        let r = render_store_guest::render_ref_of_canonical(format!("planted {n}\n").as_bytes());
        bucket
            .put(
                &format!("ns/app/history/99991231T235950.000000000Z-{r}"),
                b"{}",
            )
            .unwrap();
    }
    put(&mut bucket, now - 120, 6);
    bucket.put("ns/app/renders/tmp-upload", b"x").unwrap();
    bucket.take_calls();

    let op = Operation::Gc {
        release: app(),
        keep: 4,
        protected: vec![refs[4].clone()],
        dry_run: false,
        grace: Grace {
            now: at(now),
            seconds: 600,
        },
    };
    let text = traced(&mut bucket, &op);
    let vector = the_vector("gc-skipped-entries.jsonl", &text);

    let report = replay_text(&vector, &Keyring::empty()).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    let json: Value = serde_json::from_str(&report.to_json()).unwrap();
    let plan = &json["result"]["ok"];
    let count = |name: &str| plan[name].as_array().unwrap().len();
    assert_eq!(
        [
            "deleteHistory",
            "keepHistory",
            "futureHistory",
            "danglingHistory",
            "deleteRenders",
            "keepRenders",
            "recentRenders",
            "ignored",
        ]
        .map(count),
        // Every entry but the oldest real one is kept; 4 real ones counted.
        [1, 16, 11, 1, 1, 5, 1, 1]
    );
    assert_eq!(
        report
            .calls
            .iter()
            .map(|c| c.kind.name())
            .collect::<Vec<_>>(),
        ["list", "list", "delete-many", "list", "delete-many"]
    );
}

/// A version 4 trace of a GC over a store gocloud's fileblob wrote (a metadata file
/// beside each key) replays as that build ran, the metadata of a deleted blob left
/// behind; this build (version 5 and later) deletes it with the blob, in the same batch.
#[test]
fn a_version_4_gc_leaves_metadata_files_and_version_5_deletes_them_with_their_key() {
    let old = render_store_guest::render_ref(&[object(0)]).unwrap();
    let new = render_store_guest::render_ref(&[object(1)]).unwrap();
    let entry = format!("ns/app/history/20231114T221320.000000000Z-{new}");
    let old_key = format!("ns/app/renders/{old}");
    let new_key = format!("ns/app/renders/{new}");
    let listed = |key: &str| json!({ "key": key, "size": 2, "modified": { "seconds": 0, "nanoseconds": 0 } });
    let args = json!({
        "release": { "namespace": "ns", "name": "app" }, "keep": 1, "protected": [],
        "dryRun": false, "now": { "seconds": 1_700_020_000, "nanoseconds": 0 }, "graceSeconds": 0,
    });
    let mut render_keys = [
        old_key.clone(),
        format!("{old_key}.attrs"),
        new_key.clone(),
        format!("{new_key}.attrs"),
    ];
    render_keys.sort();
    let renders = json!({ "call": "list", "key": "ns/app/renders/",
        "answer": { "ok": render_keys.iter().map(|k| listed(k)).collect::<Vec<_>>() } });
    let history = json!({ "call": "list", "key": "ns/app/history/", "answer": { "ok": [
        listed(&entry), listed(&format!("{entry}.attrs")),
    ] } });
    let trace = |version: u64, deleted: Vec<String>, mut ignored: Vec<String>| -> String {
        ignored.sort();
        let lines = [
            json!({ "format": "render-store-trace", "version": version, "operation": "gc", "arguments": args }),
            history.clone(),
            renders.clone(),
            history.clone(),
            json!({ "call": "delete-many", "keys": deleted.clone(),
                    "answer": { "ok": deleted.iter().map(|_| json!({ "ok": null })).collect::<Vec<_>>() } }),
            json!({ "result": { "ok": {
                "deleteHistory": [], "keepHistory": [entry], "deleteRenders": deleted,
                "keepRenders": [new_key], "ignored": ignored, "recentRenders": [],
                "futureHistory": [], "danglingHistory": [],
            } } }),
        ];
        lines.iter().map(|l| format!("{l}\n")).collect()
    };
    let v4 = trace(
        4,
        vec![old_key.clone()],
        vec![
            format!("{entry}.attrs"),
            format!("{old_key}.attrs"),
            format!("{new_key}.attrs"),
        ],
    );
    let report = replay_text(&v4, &Keyring::empty()).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    let v5 = trace(
        5,
        vec![old_key.clone(), format!("{old_key}.attrs")],
        vec![format!("{entry}.attrs"), format!("{new_key}.attrs")],
    );
    let report = replay_text(&v5, &Keyring::empty()).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    // The rule is the version's: the version 4 trace read as version 5 differs at the
    // delete.
    let report = replay_text(
        &v4.replace(r#""version":4"#, r#""version":5"#),
        &Keyring::empty(),
    )
    .unwrap();
    assert!(!report.matches());
}

/// The conformance trace of an authenticated record (tests/vectors/traces/
/// record-authenticated.jsonl), which every host replays with the keyring `k1` (32
/// bytes of `1`, the hosts' test keyrings): encryption required, a writer of the
/// bucket has planted an entry naming the render, so record-history reads it, finds no
/// MAC, and puts the real entry with its MAC (CONTRACT.md §5, §14).
#[test]
fn the_authenticated_record_trace_vector_is_what_this_build_writes_and_replays() {
    let keyring = Keyring::new(vec![
        render_store_guest::SealingKey::new("k1", &[b'1'; 32]).unwrap(),
    ])
    .unwrap()
    .require(true)
    .unwrap();
    let mut bucket = MemoryBucket::new();
    let objects = [object(7)];
    let r = render_store_guest::put_render(&mut bucket, &app(), &objects, &keyring).unwrap();
    let planted = format!("ns/app/history/20251231T000000.000000000Z-{r}");
    let body = render_store_guest::entry_body(&r, at(1_767_139_200), "planted").unwrap();
    bucket.put(&planted, &body).unwrap();
    bucket.take_calls();
    let op = Operation::RecordHistory {
        release: app(),
        entry: NewEntry {
            render_ref: r.clone(),
            synced_at: at(1_767_225_600),
            summary: "v2 bump nginx".into(),
        },
    };
    let (outcome, calls) = record(&mut bucket, &op, &keyring);
    let text = write_trace(&op, &keyring.ids(), true, &calls, &outcome);
    let vector = the_vector("record-authenticated.jsonl", &text);
    let kinds: Vec<CallKind> = calls.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [CallKind::List, CallKind::Get, CallKind::Put]);
    assert!(
        text.contains("\"result\":{\"ok\":{\"added\":true}}"),
        "{text}"
    );
    let report = replay_text(&vector, &keyring).unwrap();
    assert!(report.matches(), "{}", report.to_text());
    // Another key of the same id writes another MAC: the put differs.
    let other = Keyring::new(vec![
        render_store_guest::SealingKey::new("k1", &[b'2'; 32]).unwrap(),
    ])
    .unwrap();
    assert!(!replay_text(&vector, &other).unwrap().matches());
}
