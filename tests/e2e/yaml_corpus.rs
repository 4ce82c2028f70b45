//! The real-world corpus (`tests/yaml-corpus/`, its README and `corpus.json`): every
//! stream gives, through the component and natively, the renderRef Go computed for it, or
//! fails at the document and stage where Go fails. The JS, Python and Go hosts run the
//! same check.

use render_store::{Error, Limits, Runtime};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("yaml-corpus")
}

/// The corpus's entries, as `corpus.json` lists them.
fn entries() -> Vec<Value> {
    let text = std::fs::read_to_string(corpus_dir().join("corpus.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    manifest["files"].as_array().unwrap().clone()
}

/// What Go made of an entry's stream: `Ok(renderRef)` or `Err((document, stage))`.
fn expected(entry: &Value) -> Result<String, (u64, String)> {
    match entry.get("renderRef").and_then(Value::as_str) {
        Some(r) => Ok(r.to_owned()),
        None => Err((
            entry["error_document_index"].as_u64().unwrap(),
            entry["error_stage"].as_str().unwrap().to_owned(),
        )),
    }
}

#[test]
fn the_corpus_is_what_its_manifest_says() {
    let entries = entries();
    assert!(entries.len() >= 2_000, "{} streams", entries.len());
    let mut total = 0;
    for entry in &entries {
        let file = entry["file"].as_str().unwrap();
        let bytes = std::fs::read(corpus_dir().join(file)).unwrap();
        // The bytes as fetched: a checkout that changed line breaks would change refs.
        assert_eq!(
            hex(&Sha256::digest(&bytes)),
            entry["sha256"].as_str().unwrap(),
            "{file}"
        );
        assert_eq!(
            bytes.len() as u64,
            entry["bytes"].as_u64().unwrap(),
            "{file}"
        );
        for key in ["repository", "commit", "path", "license"] {
            assert!(
                entry[key].as_str().is_some_and(|v| !v.is_empty()),
                "{file}: {key}"
            );
        }
        assert!(
            ["Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause"]
                .contains(&entry["license"].as_str().unwrap()),
            "{file}"
        );
        total += bytes.len();
    }
    assert!(total <= 15 << 20, "{total} bytes");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn real_world_streams_give_go_s_render_refs() {
    let rt = Runtime::new(Limits::default()).unwrap();
    let mut failures = Vec::new();
    let entries = entries();
    for entry in &entries {
        let file = entry["file"].as_str().unwrap();
        let stream = std::fs::read(corpus_dir().join(file)).unwrap();
        let want = expected(entry);
        let component = match rt.yaml_render_ref(&stream).await {
            Ok(r) => Ok(r),
            Err(Error::InvalidYaml {
                document, stage, ..
            }) => Err((u64::from(document), stage.as_str().to_owned())),
            Err(other) => panic!("{file}: {other}"),
        };
        let native = render_store_guest::yaml_render_ref(&stream)
            .map_err(|e| (e.document as u64, e.stage.as_str().to_owned()));
        if component != want || native != want {
            failures.push(format!(
                "{file}: Go {want:?}, component {component:?}, native {native:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} streams differ from Go:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
}
