//! The single-pass canonicalizer (`json::encode_canonical`) against the decoder and
//! encoder it stands in for: on every render-ref vector, every object of the real
//! renders, and many mutations of them, the bytes or the error must be the same.

use base64::Engine;
use render_store_guest::json::{DecodeError, decode_object, encode_canonical, encode_document};
use serde_json::Value;

mod common;
use common::{Rng, repo_file};

fn general(input: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    encode_document(&decode_object(input)?, &mut out);
    Ok(out)
}

fn same(input: &[u8]) {
    let mut out = b"before".to_vec();
    let ours = encode_canonical(input, &mut out).map(|()| out[6..].to_vec());
    let theirs = general(input);
    assert!(
        ours == theirs,
        "the pass and the decoder differ on {:?}:\npass    {:?}\ndecoder {:?}",
        String::from_utf8_lossy(input),
        ours.map(|b| String::from_utf8_lossy(&b).into_owned()),
        theirs.map(|b| String::from_utf8_lossy(&b).into_owned()),
    );
}

fn vector_objects() -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(repo_file("tests/vectors/render-ref.json")).unwrap();
    let cases: Value = serde_json::from_str(&text).unwrap();
    let mut objects = Vec::new();
    for case in cases.as_array().unwrap() {
        if let Some(list) = case.get("objects") {
            for o in list.as_array().unwrap() {
                objects.push(o.as_str().unwrap().as_bytes().to_vec());
            }
        }
        if let Some(list) = case.get("objects_b64") {
            for o in list.as_array().unwrap() {
                objects.push(
                    base64::engine::general_purpose::STANDARD
                        .decode(o.as_str().unwrap())
                        .unwrap(),
                );
            }
        }
    }
    objects
}

fn real_objects() -> Vec<Vec<u8>> {
    let mut objects = Vec::new();
    for name in [
        "ingress-nginx-cloud",
        "metallb-native",
        "calico",
        "grafana-dashboards",
    ] {
        let dir = repo_file(&format!("tests/real-renders/{name}"));
        let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        objects.extend(paths.iter().map(|p| std::fs::read(p).unwrap()));
    }
    objects
}

/// Pieces that matter to JSON and to the canonical form.
const PIECES: &[&[u8]] = &[
    b" ",
    b"\n",
    b"\"",
    b"\\",
    b"\\n",
    b"\\u003c",
    b"\\u003C",
    b"\\u0041",
    b"\\u001f",
    b"\\u0008",
    b"\\/",
    b"\\ud83d\\ude00",
    b"<",
    b"&",
    "\u{2028}".as_bytes(),
    "é".as_bytes(),
    b"\xff",
    b",",
    b":",
    b"{",
    b"}",
    b"[",
    b"]",
    b"{}",
    b"[]",
    b"0",
    b"-0",
    b"1.5",
    b"1e2",
    b"123456789012345678901",
    b"-",
    b"true",
    b"null",
    b"\"a\":1,",
    b"\"zz\":1,",
    b"\"\":1,",
];

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut s = base.to_vec();
    for _ in 0..1 + rng.below(3) {
        let len = s.len();
        let at = rng.below(len + 1);
        match rng.below(5) {
            0 if at < len => {
                s[at] = PIECES[rng.below(PIECES.len())][0];
            }
            1 => {
                let piece = PIECES[rng.below(PIECES.len())];
                s.splice(at..at, piece.iter().copied());
            }
            2 if at < len => {
                let n = (1 + rng.below(4)).min(len - at);
                s.drain(at..at + n);
            }
            3 => {
                // Swap two quoted runs: keys out of order, or values moved.
                let quotes: Vec<usize> = s
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'"')
                    .map(|(i, _)| i)
                    .collect();
                if quotes.len() >= 4 {
                    let a = rng.below(quotes.len() / 2 - 1) * 2;
                    let b = a + 2;
                    let (a0, a1, b0, b1) = (quotes[a], quotes[a + 1], quotes[b], quotes[b + 1]);
                    if a1 < b0 {
                        let first = s[a0..=a1].to_vec();
                        let second = s[b0..=b1].to_vec();
                        let mut next = s[..a0].to_vec();
                        next.extend_from_slice(&second);
                        next.extend_from_slice(&s[a1 + 1..b0]);
                        next.extend_from_slice(&first);
                        next.extend_from_slice(&s[b1 + 1..]);
                        s = next;
                    }
                }
            }
            _ => s.truncate(at),
        }
    }
    s
}

#[test]
fn vectors_and_real_objects() {
    for object in vector_objects().iter().chain(&real_objects()) {
        same(object);
    }
}

/// `text` with whitespace between its tokens, as an indenting writer puts it (and a
/// little more: before `:` and `,`, and around empty containers): the pass leaves it out,
/// so what it copies comes in pieces rather than as one run.
fn spaced(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 2);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'{' | b'[' => out.extend_from_slice(&[b, b'\n', b' ', b' ']),
            b',' | b':' => out.extend_from_slice(&[b' ', b, b'\t']),
            b'}' | b']' => out.extend_from_slice(&[b'\r', b'\n', b]),
            _ => out.push(b),
        }
    }
    out
}

#[test]
fn spaced_objects() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for object in vector_objects().iter().chain(&real_objects()) {
        let spaced = spaced(object);
        same(&spaced);
        if spaced.len() < 40_000 {
            for _ in 0..3 {
                same(&mutate(&mut rng, &spaced));
            }
        }
    }
}

#[test]
fn mutated_objects() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut bases = vector_objects();
    // Small pieces of the real objects too: whole CRDs would make the test slow.
    for object in real_objects() {
        if object.len() < 20_000 {
            bases.push(object);
        }
    }
    let mut cases = 0;
    for _ in 0..20 {
        for base in &bases {
            same(&mutate(&mut rng, base));
            cases += 1;
        }
    }
    assert!(cases > 3000, "{cases}");
}
