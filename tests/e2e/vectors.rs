//! Every golden vector (made by Go's encoding/json; tests/vectors/render-ref.json, format in
//! CONTRACT.md §4), natively and through the component.

use super::support::runtime;
use base64::Engine as _;
use serde_json::Value;

const VECTORS: &str = include_str!("../vectors/render-ref.json");

struct Case {
    name: String,
    objects: Vec<Vec<u8>>,
    /// canonical bytes and renderRef, or the index of the first bad object.
    expected: Result<(Vec<u8>, String), u32>,
}

fn cases() -> Vec<Case> {
    let all: Vec<Value> = serde_json::from_str(VECTORS).expect("vectors parse");
    assert!(all.len() >= 100, "only {} vectors", all.len());
    all.into_iter()
        .map(|c| {
            let objects = if let Some(texts) = c.get("objects") {
                texts
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().as_bytes().to_vec())
                    .collect()
            } else {
                c["objects_b64"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| {
                        base64::engine::general_purpose::STANDARD
                            .decode(t.as_str().unwrap())
                            .unwrap()
                    })
                    .collect()
            };
            let expected = if c.get("error").is_some() {
                Err(c["error_object_index"].as_u64().unwrap() as u32)
            } else {
                Ok((
                    c["canonical"].as_str().unwrap().as_bytes().to_vec(),
                    c["renderRef"].as_str().unwrap().to_string(),
                ))
            };
            Case {
                name: c["name"].as_str().unwrap().to_string(),
                objects,
                expected,
            }
        })
        .collect()
}

#[test]
fn every_vector_natively() {
    let mut failures = Vec::new();
    for case in cases() {
        let got = render_store_guest::canonical(&case.objects);
        match (&case.expected, got) {
            (Ok((canonical, render_ref)), Ok(bytes)) => {
                if &bytes != canonical {
                    failures.push(format!(
                        "{}: canonical {:?} != {:?}",
                        case.name,
                        String::from_utf8_lossy(&bytes),
                        String::from_utf8_lossy(canonical)
                    ));
                } else if &render_store_guest::render_ref_of_canonical(&bytes) != render_ref {
                    failures.push(format!("{}: renderRef differs", case.name));
                }
            }
            (
                Err(index),
                Err(render_store_guest::Error::InvalidObject(
                    render_store_guest::error::ObjectError { index: got, .. },
                )),
            ) => {
                if u64::from(*index) != u64::from(got) {
                    failures.push(format!(
                        "{}: failed at object {got}, not {index}",
                        case.name
                    ));
                }
            }
            (expected, got) => failures.push(format!(
                "{}: expected {:?}, got {:?}",
                case.name,
                expected.as_ref().map(|_| "success"),
                got.map(|_| "success")
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn every_vector_through_the_component() {
    let rt = runtime();
    let mut failures = Vec::new();
    for case in cases() {
        let canonical = rt.canonical(&case.objects).await;
        let render_ref = rt.render_ref(&case.objects).await;
        match (&case.expected, canonical, render_ref) {
            (Ok((want_bytes, want_ref)), Ok(bytes), Ok(r)) => {
                if &bytes != want_bytes || &r != want_ref {
                    failures.push(format!("{}: differs", case.name));
                }
            }
            (
                Err(index),
                Err(render_store::Error::InvalidObject { index: a, .. }),
                Err(render_store::Error::InvalidObject { index: b, .. }),
            ) => {
                if a != *index || b != *index {
                    failures.push(format!("{}: failed at {a}/{b}, not {index}", case.name));
                }
            }
            (_, c, r) => failures.push(format!(
                "{}: unexpected outcome {:?} / {:?}",
                case.name,
                c.map(|_| ()),
                r.map(|_| ())
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// tests/vectors/gc-plan.json (CONTRACT.md §5): every GC decision through the
/// component's `logic.plan-gc`, as every host calls it.
#[tokio::test]
async fn every_gc_plan_vector_through_the_component() {
    let doc: Value = serde_json::from_str(include_str!("../vectors/gc-plan.json")).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 10, "only {} cases", cases.len());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let rt = runtime();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let release = render_store::Release::new(
            c["release"]["namespace"].as_str().unwrap(),
            c["release"]["name"].as_str().unwrap(),
        );
        let now = render_store::SyncTime {
            seconds: c["now"]["seconds"].as_i64().unwrap(),
            nanoseconds: c["now"]["nanoseconds"].as_u64().unwrap() as u32,
        };
        let got = rt
            .plan_gc(
                &release,
                c["keep"].as_i64().unwrap(),
                &strings(&c["history"]),
                &strings(&c["renders"]),
                &strings(&c["protected"]),
                now,
            )
            .await;
        match (got, c["want"].get("error")) {
            (Ok(plan), None) => {
                // The JSON the component writes for a plan, as --json and traces show it.
                let json = rt
                    .output_json(&render_store::operation::Output::Plan(plan))
                    .await
                    .unwrap();
                let json: Value = serde_json::from_str(&json).unwrap();
                assert_eq!(json["ok"], c["want"], "{name}");
            }
            (Err(render_store::Error::InvalidInput(_)), Some(kind)) => {
                assert_eq!(kind, "invalid-input", "{name}")
            }
            (other, _) => panic!("{name}: {other:?}, want {}", c["want"]),
        }
    }
}

/// tests/vectors/check-objects.json (CONTRACT.md §4): the Kubernetes object rule through
/// the component's `logic.check-objects`, as every host calls it.
#[tokio::test]
async fn every_check_objects_vector_through_the_component() {
    let doc: Value = serde_json::from_str(include_str!("../vectors/check-objects.json")).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 10, "only {} cases", cases.len());
    let rt = runtime();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let objects: Vec<Vec<u8>> = c["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap().as_bytes().to_vec())
            .collect();
        match (rt.check_objects(&objects).await, &c["want"]) {
            (Ok(()), Value::String(ok)) => assert_eq!(ok, "ok", "{name}"),
            (Err(render_store::Error::InvalidObject { index, message }), want)
                if want.is_object() =>
            {
                assert_eq!(Some(u64::from(index)), want["index"].as_u64(), "{name}");
                let part = want["message"].as_str().unwrap();
                assert!(message.contains(part), "{name}: {message}");
            }
            (got, want) => panic!("{name}: got {got:?}, want {want}"),
        }
    }
}
