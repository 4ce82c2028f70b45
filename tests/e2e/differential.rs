//! Differential tests against the Go peer (`benches/go-peer/`, go-yaml v2 through
//! sigs.k8s.io/yaml after apimachinery's YAMLReader): every stream that `yaml_gen.rs`
//! generates gets, from the guest natively, from its libyaml-safer path alone and
//! through the component, the renderRef Go gives, or fails at the document where Go
//! fails, at the same stage.
//!
//! All streams of a run go through one Go process (`go-peer batch`). A stream where Go's
//! result follows its map order (two YAML keys that become one JSON key) is only held to
//! failing where Go fails, when both fail. A divergence is shrunk (whole lines, then
//! smaller pieces, as long as the stream still diverges) and printed as a vector in the
//! format of tests/vectors/yaml-render-ref.json, made of Go's answer, ready to be added
//! there.
//!
//! The run is seeded: `RENDER_STORE_DIFFERENTIAL_CASES` streams (2,000 by default, a
//! few seconds) from `RENDER_STORE_DIFFERENTIAL_SEED` (a fixed one by default; `.ci/run`
//! gives a fresh one each run). The seed and the index of a case reproduce it.

use super::go_peer::driver;
use super::yaml_gen;
use render_store::{Error, Limits, Runtime};
use serde_json::{Value, json};
use std::panic::catch_unwind;

const CASES: &str = "RENDER_STORE_DIFFERENTIAL_CASES";
const SEED: &str = "RENDER_STORE_DIFFERENTIAL_SEED";
/// A folder to write every stream of the run to, with Go's answer: `<index>.yaml` and
/// `<index>.json`, to look at what the generator makes.
const DUMP: &str = "RENDER_STORE_DIFFERENTIAL_DUMP";
/// Only these cases of the seed's run (indices, comma-separated), each shrunk and printed
/// if it diverges: to look again at what a run reported.
const ONLY: &str = "RENDER_STORE_DIFFERENTIAL_ONLY";
const DEFAULT_CASES: u64 = 2_000;
const DEFAULT_SEED: u64 = 0x5EED_0045;

/// What became of a stream: its renderRef, or where it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Ref(String),
    Fails {
        document: u64,
        stage: String,
    },
    /// The guest panicked (only natively: the component traps instead).
    Panics(String),
}

impl Outcome {
    fn of_go(go: &Value) -> Outcome {
        if let Some(p) = go.get("panic") {
            return Outcome::Panics(format!("Go: {p}"));
        }
        match go.get("renderRef").and_then(Value::as_str) {
            Some(r) => Outcome::Ref(r.to_owned()),
            None => Outcome::Fails {
                document: go["error_document_index"].as_u64().unwrap(),
                stage: go["error_stage"].as_str().unwrap().to_owned(),
            },
        }
    }
}

/// The guest natively, through `yaml_render_ref`.
fn native(stream: &[u8]) -> Outcome {
    match catch_unwind(|| render_store_guest::yaml_render_ref(stream)) {
        Ok(Ok(r)) => Outcome::Ref(r),
        Ok(Err(e)) => Outcome::Fails {
            document: e.document as u64,
            stage: e.stage.as_str().to_owned(),
        },
        Err(p) => Outcome::Panics(panic_text(&p)),
    }
}

/// The guest's libyaml-safer path alone (no fast path), natively.
fn reference(stream: &[u8]) -> Outcome {
    match catch_unwind(|| render_store_guest::yaml::yaml_canonical_reference(stream)) {
        Ok(Ok(c)) => Outcome::Ref(render_store_guest::render_ref_of_canonical(&c)),
        Ok(Err(e)) => Outcome::Fails {
            document: e.document as u64,
            stage: e.stage.as_str().to_owned(),
        },
        Err(p) => Outcome::Panics(panic_text(&p)),
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic".to_owned())
}

/// The component, through the Rust host.
fn component(tokio: &tokio::runtime::Runtime, rt: &Runtime, stream: &[u8]) -> Outcome {
    match tokio.block_on(rt.yaml_render_ref(stream)) {
        Ok(r) => Outcome::Ref(r),
        Err(Error::InvalidYaml {
            document, stage, ..
        }) => Outcome::Fails {
            document: u64::from(document),
            stage: stage.as_str().to_owned(),
        },
        Err(other) => Outcome::Panics(format!("component: {other}")),
    }
}

/// Whether a document of the stream, split as apimachinery's reader splits it, starts
/// with two byte order marks (one in UTF-16): go-yaml then skips the first character of
/// later lines (its check for a mark looks at its buffer's start), a known gap
/// (CONTRACT.md §11) these runs leave out.
fn known_gap(stream: &[u8]) -> bool {
    let two_marks = |doc: &[u8]| {
        [
            b"\xEF\xBB\xBF\xEF\xBB\xBF".as_slice(),
            b"\xFF\xFE\xFF\xFE",
            b"\xFE\xFF\xFE\xFF",
        ]
        .iter()
        .any(|m| doc.starts_with(m))
    };
    let mut document: Vec<u8> = Vec::new();
    for line in stream.split_inclusive(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.starts_with(b"---") && !document.is_empty() {
            if two_marks(&document) {
                return true;
            }
            document.clear();
            continue;
        }
        document.extend_from_slice(line);
        document.push(b'\n');
    }
    two_marks(&document)
}

/// Whether our outcome is Go's, as far as Go's own result is fixed.
fn agrees(go: &Value, ours: &Outcome) -> bool {
    let theirs = Outcome::of_go(go);
    if go.get("nondeterministic").and_then(Value::as_bool) == Some(true) {
        return match (&theirs, ours) {
            (Outcome::Fails { document: a, .. }, Outcome::Fails { document: b, .. }) => a == b,
            (Outcome::Panics(_), _) | (_, Outcome::Panics(_)) => false,
            _ => true,
        };
    }
    theirs == *ours
}

/// The stream's bytes for case `index` of run `seed`: `yaml_gen` reading 4 KiB of
/// SplitMix64 output.
fn case(seed: u64, index: u64) -> Vec<u8> {
    let mut state = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let bytes: Vec<u8> = (0..512)
        .flat_map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)).to_le_bytes()
        })
        .collect();
    yaml_gen::stream(&mut arbitrary::Unstructured::new(&bytes)).unwrap()
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
        Err(_) => default,
    }
}

/// A divergence: the stream, Go's answer and each of ours.
struct Divergence {
    index: u64,
    stream: Vec<u8>,
    go: Value,
    ours: Vec<(&'static str, Outcome)>,
}

/// Every way of ours that disagrees with Go on `stream`, given Go's answer.
fn check(
    tokio: &tokio::runtime::Runtime,
    rt: &Runtime,
    stream: &[u8],
    go: &Value,
) -> Vec<(&'static str, Outcome)> {
    [
        ("native", native(stream)),
        ("reference", reference(stream)),
        ("component", component(tokio, rt, stream)),
    ]
    .into_iter()
    .filter(|(_, o)| !agrees(go, o))
    .collect()
}

/// A smaller stream that still diverges: whole lines dropped first, then pieces of
/// 16, 4 and 1 bytes, as long as one of them keeps the divergence; a few thousand
/// tries at most, each round one batch through Go.
fn shrink(
    peer: &driver::GoPeer,
    tokio: &tokio::runtime::Runtime,
    rt: &Runtime,
    stream: &[u8],
) -> (Vec<u8>, Value) {
    let mut best = stream.to_vec();
    let mut best_go = peer.batch(std::slice::from_ref(&best)).remove(0);
    let mut budget = 20_000usize;
    'rounds: while budget > 0 {
        let mut candidates: Vec<Vec<u8>> = Vec::new();
        let lines: Vec<usize> = std::iter::once(0)
            .chain(
                best.iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        for w in lines.windows(2) {
            candidates.push([&best[..w[0]], &best[w[1]..]].concat());
        }
        for size in [16, 4, 1] {
            for at in (0..best.len()).step_by(size) {
                let end = (at + size).min(best.len());
                candidates.push([&best[..at], &best[end..]].concat());
            }
        }
        candidates.truncate(budget);
        budget -= candidates.len();
        let answers = peer.batch(&candidates);
        for (candidate, go) in candidates.into_iter().zip(answers) {
            if !check(tokio, rt, &candidate, &go).is_empty() {
                best = candidate;
                best_go = go;
                continue 'rounds;
            }
        }
        break;
    }
    (best, best_go)
}

/// A vector for tests/vectors/yaml-render-ref.json made of Go's answer.
fn vector(name: &str, stream: &[u8], go: &Value) -> Value {
    let mut v = serde_json::Map::new();
    v.insert("name".into(), json!(name));
    v.insert("category".into(), json!("differential"));
    match std::str::from_utf8(stream) {
        Ok(text) => v.insert("yaml".into(), json!(text)),
        Err(_) => {
            use base64::Engine as _;
            v.insert(
                "yaml_b64".into(),
                json!(base64::engine::general_purpose::STANDARD.encode(stream)),
            )
        }
    };
    for key in [
        "documents",
        "skipped_documents",
        "objects",
        "canonical",
        "renderRef",
        "error",
        "error_document_index",
        "error_stage",
    ] {
        if let Some(value) = go.get(key) {
            v.insert(key.into(), value.clone());
        }
    }
    if go.get("renderRef").is_some() && go.get("objects").is_none() {
        v.insert("objects".into(), json!([]));
    }
    Value::Object(v)
}

#[test]
fn generated_streams_agree_with_go() {
    let peer = match driver::GoPeer::build() {
        Ok(peer) => peer,
        Err(why) if driver::go_required() => {
            panic!(
                "{}=1 but the Go peer is not available: {why}",
                driver::REQUIRE_GO
            )
        }
        Err(why) => {
            eprintln!("differential run skipped: {why}");
            return;
        }
    };
    let cases = env_u64(CASES, DEFAULT_CASES);
    let seed = env_u64(SEED, DEFAULT_SEED);
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rt = Runtime::new(Limits::default()).unwrap();

    let started = std::time::Instant::now();
    let (mut agreed_objects, mut nondeterministic, mut gaps) = (0u64, 0u64, 0u64);
    // Refusals both agree on, by stage, and Go's most frequent wordings.
    let mut refused: std::collections::BTreeMap<String, u64> = Default::default();
    let mut wordings: std::collections::HashMap<String, u64> = Default::default();
    let mut divergences: Vec<Divergence> = Vec::new();
    let only: Option<Vec<u64>> = std::env::var(ONLY).ok().map(|v| {
        v.split(',')
            .map(|i| i.trim().parse().expect("case indices"))
            .collect()
    });
    let all: Vec<u64> = only.clone().unwrap_or_else(|| (0..cases).collect());
    // Batches of 5,000 keep the memory of a long run flat.
    for batch in all.chunks(5_000) {
        let indices = batch.to_vec();
        let streams: Vec<Vec<u8>> = indices.iter().map(|&i| case(seed, i)).collect();
        let answers = peer.batch(&streams);
        if let Some(dir) = std::env::var_os(DUMP) {
            std::fs::create_dir_all(&dir).unwrap();
            for ((index, stream), go) in indices.iter().zip(&streams).zip(&answers) {
                let path = std::path::Path::new(&dir).join(index.to_string());
                std::fs::write(path.with_extension("yaml"), stream).unwrap();
                std::fs::write(path.with_extension("json"), go.to_string()).unwrap();
            }
        }
        for ((index, stream), go) in indices.into_iter().zip(streams).zip(answers) {
            if known_gap(&stream) {
                gaps += 1;
                continue;
            }
            let ours = check(&tokio, &rt, &stream, &go);
            if go.get("nondeterministic").and_then(Value::as_bool) == Some(true) {
                nondeterministic += 1;
            }
            if ours.is_empty() {
                match Outcome::of_go(&go) {
                    Outcome::Ref(_) => agreed_objects += 1,
                    _ => {
                        *refused
                            .entry(go["error_stage"].as_str().unwrap_or("?").to_owned())
                            .or_default() += 1;
                        // Go's wording without its line number.
                        let error = go["error"].as_str().unwrap_or_default();
                        let wording = match error.split_once(": line ") {
                            Some((head, tail)) => format!(
                                "{head}: {}",
                                tail.split_once(": ").map_or(tail, |(_, rest)| rest)
                            ),
                            None => error.to_owned(),
                        };
                        *wordings.entry(wording).or_default() += 1;
                    }
                }
            } else {
                divergences.push(Divergence {
                    index,
                    stream,
                    go,
                    ours,
                });
            }
        }
    }
    let mut common: Vec<(String, u64)> = wordings.into_iter().collect();
    common.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    common.truncate(8);
    eprintln!(
        "differential: seed {seed}, {} streams in {:.1} s: {agreed_objects} same \
         renderRef, refused alike {refused:?}, {nondeterministic} where Go follows its map \
         order, {gaps} left out (known gap), {} divergences; Go's most frequent refusals: \
         {common:?}",
        all.len(),
        started.elapsed().as_secs_f64(),
        divergences.len()
    );
    // The first few, shrunk and as vectors; the others by index.
    let shown = if only.is_some() { usize::MAX } else { 5 };
    let mut report = Vec::new();
    for d in divergences.iter().take(shown) {
        let (small, go) = shrink(&peer, &tokio, &rt, &d.stream);
        let ours = check(&tokio, &rt, &small, &go);
        report.push(format!(
            "case {} of seed {seed}: Go {:?}, ours {:?}\n  stream {:?}\n  shrunk {:?}: Go \
             {:?}, ours {ours:?}\n  vector: {}",
            d.index,
            Outcome::of_go(&d.go),
            d.ours,
            String::from_utf8_lossy(&d.stream),
            String::from_utf8_lossy(&small),
            Outcome::of_go(&go),
            vector(&format!("differential_{seed}_{}", d.index), &small, &go)
        ));
    }
    let rest: Vec<u64> = divergences.iter().skip(shown).map(|d| d.index).collect();
    assert!(
        divergences.is_empty(),
        "{} of {} generated streams diverge from Go:\n{}\n{}",
        divergences.len(),
        all.len(),
        report.join("\n"),
        if rest.is_empty() {
            String::new()
        } else {
            format!("and cases {rest:?}")
        }
    );
}
