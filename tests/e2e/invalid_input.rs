//! The hostile input corpus (tests/hostile/corpus.json): invalid input gets a clear error
//! and makes no bucket call at all; keys in the bucket that do not parse are left alone.

use super::support::*;
use render_store::{Error, Limits, NewEntry, Release, RenderStore, Runtime, SyncTime};
use serde_json::Value;
use std::sync::{Arc, OnceLock};

const REF: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn corpus() -> &'static Value {
    static CORPUS: OnceLock<Value> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let text = include_str!("../hostile/corpus.json");
        serde_json::from_str(text).expect("tests/hostile/corpus.json is JSON")
    })
}

fn section(name: &str) -> &'static [Value] {
    corpus()[name]
        .as_array()
        .unwrap_or_else(|| panic!("corpus section {name}"))
}

/// A corpus string: a JSON string, or an array of parts (strings, or
/// `{"repeat": S, "times": N}`) joined.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p {
                Value::String(s) => s.clone(),
                _ => p["repeat"]
                    .as_str()
                    .expect("repeat")
                    .repeat(p["times"].as_u64().expect("times") as usize),
            })
            .collect(),
        other => panic!("not a corpus string: {other}"),
    }
}

fn objects(case: &Value) -> Vec<Vec<u8>> {
    case["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| text(o).into_bytes())
        .collect()
}

fn why(case: &Value) -> &str {
    case["why"].as_str().unwrap_or("?")
}

fn assert_invalid(err: Error, needle: &str, why: &str) {
    match &err {
        Error::InvalidInput(m) => {
            assert!(m.contains(needle), "{why}: {m:?} should mention {needle}")
        }
        other => panic!("{why}: expected InvalidInput mentioning {needle}, got {other}"),
    }
}

fn entry(render_ref: &str, synced_at: SyncTime, summary: String) -> NewEntry {
    NewEntry {
        render_ref: render_ref.to_string(),
        synced_at,
        summary,
    }
}

#[tokio::test]
async fn bad_names_reach_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    for case in section("releases") {
        let bad = Release::new(text(&case["namespace"]), text(&case["name"]));
        let (what, why) = (case["mentions"].as_str().unwrap(), why(case));
        let e = entry(REF, time(0), String::new());
        assert_invalid(
            r.store.put_render(&bad, &render(1)).await.unwrap_err(),
            what,
            why,
        );
        assert_invalid(r.store.get_render(&bad, REF).await.unwrap_err(), what, why);
        assert_invalid(
            r.store.has_history_ref(&bad, REF).await.unwrap_err(),
            what,
            why,
        );
        assert_invalid(
            r.store.record_history(&bad, &e).await.unwrap_err(),
            what,
            why,
        );
        assert_invalid(r.store.list_history(&bad).await.unwrap_err(), what, why);
        assert_invalid(
            r.store.gc(&bad, 3, &[], false).await.unwrap_err(),
            what,
            why,
        );
        assert_invalid(
            r.store.gc(&bad, 0, &[], false).await.unwrap_err(),
            what,
            why,
        );
        assert_invalid(r.store.delete_release(&bad).await.unwrap_err(), what, why);
        assert_eq!(r.calls(), [], "{why}");
    }
}

#[tokio::test]
async fn bad_refs_reach_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    let app = release("app");
    for case in section("renderRefs") {
        let (bad, why) = (text(&case["value"]), why(case));
        let e = entry(&bad, time(0), String::new());
        assert_invalid(
            r.store.get_render(&app, &bad).await.unwrap_err(),
            "renderRef",
            why,
        );
        assert_invalid(
            r.store.has_history_ref(&app, &bad).await.unwrap_err(),
            "renderRef",
            why,
        );
        assert_invalid(
            r.store.record_history(&app, &e).await.unwrap_err(),
            "renderRef",
            why,
        );
        if !bad.is_empty() {
            // An empty protected ref is ignored, as the controller's rules say.
            let protected = [REF.to_string(), bad.clone()];
            let err = r.store.gc(&app, 3, &protected, false).await.unwrap_err();
            assert_invalid(err, "renderRef", why);
        }
        assert_eq!(r.calls(), [], "{why}");
    }
}

#[tokio::test]
async fn invalid_json_reaches_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    let app = release("app");
    for case in section("renders") {
        let why = why(case);
        match r.store.put_render(&app, &objects(case)).await.unwrap_err() {
            Error::InvalidObject { index, message } => {
                assert_eq!(
                    Some(index as u64),
                    case["index"].as_u64(),
                    "{why}: {message}"
                );
                assert!(
                    message.contains("byte"),
                    "{why}: {message} names no position"
                );
            }
            other => panic!("{why}: {other}"),
        }
        assert_eq!(r.calls(), [], "{why}");
    }
}

#[tokio::test]
async fn a_64_mib_render_is_stored_or_refused_whole() {
    for case in section("largeRenders") {
        let (render, why) = (objects(case), why(case));
        let r = Recorded::new(bucket_from_url("mem://"));
        let render_ref = r.store.put_render(&release("app"), &render).await.unwrap();
        let stored = r
            .store
            .get_render(&release("app"), &render_ref)
            .await
            .unwrap();
        assert_eq!(stored.len(), render[0].len() + 1, "{why}");
        assert_eq!(stored.len(), render_store::MAX_RENDER_BYTES, "{why}");
        // One byte longer is over the largest render: refused before any bucket call.
        let mut longer = render.clone();
        // `{"s":"` then the string: one more character of it.
        longer[0].insert(6, b'x');
        let r = Recorded::new(bucket_from_url("mem://"));
        let e = r
            .store
            .put_render(&release("app"), &longer)
            .await
            .unwrap_err();
        assert_invalid(e, "largest render", why);
        assert_eq!(r.calls(), [], "{why}");

        let cap = case["smallCapMib"].as_u64().unwrap() as usize;
        let small = Runtime::new(Limits {
            memory_bytes: cap << 20,
            ..Limits::default()
        })
        .unwrap();
        let r = Recorded::new(bucket_from_url("mem://"));
        let store = RenderStore::new(Arc::new(small), r.recorder.clone());
        match store.put_render(&release("app"), &render).await {
            Err(Error::MemoryCap { wanted, cap }) => assert!(wanted > cap, "{why}: {wanted} {cap}"),
            other => panic!("{why}: expected the memory cap, got {other:?}"),
        }
        assert_eq!(r.calls(), [], "{why}");
    }
}

#[tokio::test]
async fn oversized_summaries_reach_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    let app = release("app");
    for case in section("summaries") {
        let e = entry(REF, time(0), text(&case["value"]));
        let err = r.store.record_history(&app, &e).await.unwrap_err();
        assert_invalid(err, case["mentions"].as_str().unwrap(), why(case));
        assert_eq!(r.calls(), [], "{}", why(case));
    }
    // The limit itself is accepted.
    let e = entry(REF, time(0), "s".repeat(64 * 1024));
    assert!(r.store.record_history(&app, &e).await.unwrap());
}

#[tokio::test]
async fn times_outside_0000_to_9999_reach_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    let app = release("app");
    for case in section("syncTimes") {
        let synced_at = SyncTime {
            seconds: case["seconds"].as_i64().unwrap(),
            nanoseconds: case["nanoseconds"].as_u64().unwrap() as u32,
        };
        let err = r
            .store
            .record_history(&app, &entry(REF, synced_at, String::new()))
            .await;
        assert!(
            matches!(err, Err(Error::InvalidInput(_))),
            "{}: {err:?}",
            why(case)
        );
        assert_eq!(r.calls(), []);
    }
    let rt = runtime();
    for case in section("syncedAtTexts") {
        let parsed = rt.parse_synced_at(&text(&case["value"])).await;
        assert!(
            matches!(parsed, Err(Error::InvalidInput(_))),
            "{}: {parsed:?}",
            why(case)
        );
    }
}

#[tokio::test]
async fn keys_that_do_not_parse_are_left_alone() {
    let bucket = bucket_from_url("mem://");
    let r = Recorded::new(bucket.clone());
    let app = release("app");
    let mut kept = Vec::new();
    for n in 0..3 {
        let render_ref = r.store.put_render(&app, &render(n)).await.unwrap();
        let e = entry(
            &render_ref,
            time(1_000_000 * (n as i64 + 1)),
            format!("{n}"),
        );
        r.store.record_history(&app, &e).await.unwrap();
        kept.push(render_ref);
    }
    let foreign: Vec<String> = section("bucketKeys")
        .iter()
        .map(|c| text(&c["key"]))
        .collect();
    for key in &foreign {
        bucket.put(key, b"not ours".to_vec()).await.unwrap();
    }
    r.calls();

    let history = r.store.list_history(&app).await.unwrap();
    assert_eq!(
        history.iter().map(|e| &e.render_ref).collect::<Vec<_>>(),
        kept.iter().collect::<Vec<_>>()
    );
    let plan = r.store.gc(&app, 1, &[], false).await.unwrap();
    let mut ignored = plan.ignored.clone();
    ignored.sort();
    let mut under_folders: Vec<String> = foreign
        .iter()
        .filter(|k| k.starts_with("ns/app/renders/") || k.starts_with("ns/app/history/"))
        .cloned()
        .collect();
    under_folders.sort();
    assert_eq!(ignored, under_folders);
    for key in &foreign {
        assert_eq!(
            bucket.get(key, u64::MAX).await.unwrap(),
            b"not ours",
            "{key}"
        );
        assert!(!r.calls().iter().any(|c| matches!(c, render_store::BucketCall::Put(k) | render_store::BucketCall::Delete(k) if k == key)));
    }
    assert_eq!(plan.delete_history.len(), 2);

    assert!(r.store.delete_release(&app).await.unwrap() as usize >= foreign.len());
    assert!(bucket.list("ns/app/").await.unwrap().is_empty());
}
