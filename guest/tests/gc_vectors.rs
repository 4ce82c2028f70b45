//! GC's decisions: every case of tests/vectors/gc-plan.json through `plan_gc`, and
//! through a GC of a store holding exactly the case's keys (a dry run and a real run),
//! which must decide the same and delete exactly what the plan says.

use render_store_guest::{Error, GcPlan, Grace, MemoryBucket, Release, SyncTime, gc, plan_gc};
use serde_json::Value;
use std::collections::BTreeSet;

mod common;
use common::repo_file;

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(repo_file("tests/vectors/gc-plan.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

struct Case {
    name: String,
    release: Release,
    keep: i64,
    now: SyncTime,
    history: Vec<String>,
    renders: Vec<String>,
    protected: Vec<String>,
    want: Value,
}

fn case(v: &Value) -> Case {
    Case {
        name: v["name"].as_str().unwrap().to_string(),
        release: Release::new(
            v["release"]["namespace"].as_str().unwrap(),
            v["release"]["name"].as_str().unwrap(),
        ),
        keep: v["keep"].as_i64().unwrap(),
        now: SyncTime {
            seconds: v["now"]["seconds"].as_i64().unwrap(),
            nanoseconds: v["now"]["nanoseconds"].as_u64().unwrap() as u32,
        },
        history: strings(&v["history"]),
        renders: strings(&v["renders"]),
        protected: strings(&v["protected"]),
        want: v["want"].clone(),
    }
}

/// The plan as the vectors (and traces) write it.
fn plan_json(p: &GcPlan) -> Value {
    serde_json::json!({
        "deleteHistory": p.delete_history,
        "keepHistory": p.keep_history,
        "deleteRenders": p.delete_renders,
        "keepRenders": p.keep_renders,
        "ignored": p.ignored,
        "recentRenders": p.recent_renders,
        "futureHistory": p.future_history,
        "danglingHistory": p.dangling_history,
    })
}

#[test]
fn there_are_cases_of_each_rule() {
    let names: Vec<String> = cases().iter().map(|c| case(c).name).collect();
    for wanted in [
        "issue-44-planted-far-future-entries",
        "skewed-replica-an-hour-ahead",
        "tolerance-edge",
        "dangling-entries",
        "future-and-dangling",
        "protected-refs-and-skipped-entries",
        "keep-0",
        "gocloud-metadata-goes-with-its-key",
    ] {
        assert!(names.iter().any(|n| n == wanted), "{wanted} in {names:?}");
    }
    let distinct: BTreeSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), names.len(), "names are unique");
}

#[test]
fn every_case_plans_as_the_vector_says() {
    for v in cases() {
        let c = case(&v);
        let got = plan_gc(
            &c.release,
            c.keep,
            c.history.clone(),
            c.renders.clone(),
            &c.protected,
            c.now,
        );
        match (got, c.want.get("error")) {
            (Ok(plan), None) => assert_eq!(plan_json(&plan), c.want, "{}", c.name),
            (Err(Error::InvalidInput(_)), Some(kind)) => assert_eq!(kind, "invalid-input"),
            (other, _) => panic!("{}: {other:?}, want {}", c.name, c.want),
        }
    }
}

#[test]
fn a_store_holding_each_case_s_keys_collects_as_planned() {
    for v in cases() {
        let c = case(&v);
        if c.want.get("error").is_some() {
            continue;
        }
        let mut bucket = MemoryBucket::new();
        for key in c.history.iter().chain(&c.renders) {
            bucket.objects.insert(key.clone(), b"{}".to_vec());
        }
        let grace = Grace::none_at(c.now);
        let dry = gc(
            &mut bucket,
            &c.release,
            c.keep,
            &c.protected,
            true,
            grace,
            &render_store_guest::Keyring::empty(),
        )
        .unwrap();
        let run = gc(
            &mut bucket,
            &c.release,
            c.keep,
            &c.protected,
            false,
            grace,
            &render_store_guest::Keyring::empty(),
        )
        .unwrap();
        if c.keep <= 0 {
            // GC is off: no plan, no call, nothing deleted.
            assert_eq!((&dry, &run), (&GcPlan::default(), &GcPlan::default()));
            assert_eq!(bucket.objects.len(), c.history.len() + c.renders.len());
            continue;
        }
        assert_eq!(plan_json(&dry), c.want, "{}: dry run", c.name);
        assert_eq!(plan_json(&run), c.want, "{}: run", c.name);
        let deleted: BTreeSet<String> = strings(&c.want["deleteHistory"])
            .into_iter()
            .chain(strings(&c.want["deleteRenders"]))
            .collect();
        let left: BTreeSet<String> = bucket.objects.keys().cloned().collect();
        let expected: BTreeSet<String> = c
            .history
            .iter()
            .chain(&c.renders)
            .filter(|k| !deleted.contains(*k))
            .cloned()
            .collect();
        assert_eq!(left, expected, "{}", c.name);
    }
}
