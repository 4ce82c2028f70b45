//! The fast YAML path against the general steps (libyaml-safer, go-yaml's decoding, the
//! JSON decoder): on every Go vector, the real streams, and many mutated and generated
//! streams, `yaml_objects` and `yaml_canonical` (fast path where it applies) must give
//! exactly what the general steps alone give, objects, bytes or error.

use base64::Engine;
use render_store_guest::yaml::{
    yaml_canonical_reference, yaml_fast_coverage, yaml_objects_reference,
};
use render_store_guest::{yaml_canonical, yaml_objects};
use serde_json::Value;

mod common;
use common::{Rng, repo_file};

fn vector_streams() -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(repo_file("tests/vectors/yaml-render-ref.json")).unwrap();
    let cases: Value = serde_json::from_str(&text).unwrap();
    cases
        .as_array()
        .unwrap()
        .iter()
        .map(|case| match (case.get("yaml"), case.get("yaml_b64")) {
            (Some(text), _) => text.as_str().unwrap().as_bytes().to_vec(),
            (_, Some(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64.as_str().unwrap())
                .unwrap(),
            _ => panic!("no input: {case}"),
        })
        .collect()
}

fn real_streams() -> Vec<Vec<u8>> {
    [
        "ingress-nginx-cloud",
        "metallb-native",
        "calico",
        "grafana-dashboards",
    ]
    .iter()
    .map(|name| std::fs::read(repo_file(&format!("tests/real-renders/{name}.yaml"))).unwrap())
    .collect()
}

/// The documents of a real stream, each a small base for mutations.
fn documents(stream: &[u8]) -> Vec<Vec<u8>> {
    let text = String::from_utf8_lossy(stream);
    text.split("\n---\n")
        .map(|d| format!("{d}\n").into_bytes())
        .collect()
}

/// Documents the fast composer took, and those the fast path also wrote.
#[derive(Default)]
struct Taken {
    composed: usize,
    written: usize,
}

/// Asserts both paths agree on `stream`; counts the documents the fast path took.
fn same(stream: &[u8], taken: &mut Taken) {
    let fast = yaml_objects(stream);
    let slow = yaml_objects_reference(stream);
    assert!(
        fast == slow,
        "fast and slow paths differ on {:?}:\nfast {:?}\nslow {:?}",
        String::from_utf8_lossy(stream),
        fast.map(|o| o
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect::<Vec<_>>()),
        slow.map(|o| o
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect::<Vec<_>>()),
    );
    let fast = yaml_canonical(stream);
    let slow = yaml_canonical_reference(stream);
    assert!(
        fast == slow,
        "fast and slow canonical bytes differ on {:?}:\nfast {:?}\nslow {:?}",
        String::from_utf8_lossy(stream),
        fast.map(|b| String::from_utf8_lossy(&b).into_owned()),
        slow.map(|b| String::from_utf8_lossy(&b).into_owned()),
    );
    let coverage = yaml_fast_coverage(stream);
    taken.composed += coverage.composed;
    taken.written += coverage.written;
}

/// Bytes that matter to YAML's syntax, and a few that do not.
const ALPHABET: &[&[u8]] = &[
    b" ",
    b"  ",
    b"-",
    b"- ",
    b":",
    b": ",
    b"#",
    b" #",
    b"'",
    b"\"",
    b"\\",
    b"|",
    b">",
    b"|-",
    b">+",
    b"\n",
    b"\n\n",
    b"{",
    b"}",
    b"{}",
    b"[",
    b"]",
    b"[]",
    b"&a ",
    b"*a",
    b"!",
    b"?",
    b"%",
    b"@",
    b"`",
    b",",
    b"a",
    b"0",
    b"1.5",
    b"yes",
    b"~",
    b".",
    b"...",
    b"---",
    b"\t",
    b"\r",
    b"\r\n",
    "é".as_bytes(),
    "\u{2028}".as_bytes(),
    b"\xC3",
    b"\xEF\xBB\xBF",
    b"\\n",
    b"\\x41",
    b"\\u00e9",
    b"\\/",
    b"\\'",
    b"''",
    b"<<: ",
    b"\"a\": ",
    b"k: v\n",
    b"\0",
];

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut s = base.to_vec();
    for _ in 0..1 + rng.below(3) {
        let len = s.len();
        let at = rng.below(len + 1);
        let lines: Vec<usize> = std::iter::once(0)
            .chain(
                s.iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .filter(|&i| i < len)
            .collect();
        let line_start = if lines.is_empty() {
            0
        } else {
            *rng.pick(&lines)
        };
        let line_end = s[line_start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(len, |i| line_start + i + 1);
        match rng.below(9) {
            0 if at < len => s[at] = rng.pick(ALPHABET)[0],
            1 => {
                let piece = rng.pick(ALPHABET).to_vec();
                s.splice(at..at, piece);
            }
            2 if at < len => {
                let n = 1 + rng.below(3).min(len - at - 1);
                s.drain(at..at + n);
            }
            3 => {
                s.drain(line_start..line_end);
            }
            4 => {
                let line = s[line_start..line_end].to_vec();
                s.splice(line_start..line_start, line);
            }
            5 => {
                let n = 1 + rng.below(4);
                s.splice(line_start..line_start, std::iter::repeat_n(b' ', n));
            }
            6 => {
                let n = s[line_start..]
                    .iter()
                    .take_while(|&&b| b == b' ')
                    .count()
                    .min(1 + rng.below(4));
                s.drain(line_start..line_start + n);
            }
            7 => {
                // Join a line with the next.
                if line_end > line_start && line_end <= len && s[line_end - 1] == b'\n' {
                    s[line_end - 1] = b' ';
                }
            }
            _ => s.truncate(at),
        }
    }
    s
}

/// A random stream of block YAML, mostly of the pieces the fast path handles, with now
/// and then one it does not.
fn generate(rng: &mut Rng) -> Vec<u8> {
    const KEYS: &[&str] = &[
        "a", "b", "key", "\"q k\"", "'s k'", "1", "true", "<<", "-x", "a b",
    ];
    const VALUES: &[&str] = &[
        "v",
        "1",
        "0x1F",
        "1e3",
        "yes",
        "null",
        "~",
        "\"d\\tq\"",
        "'it''s'",
        "{}",
        "[]",
        "plain # c",
        "http://x:1",
        "-1.5",
        "2001-12-14",
        "[a, \"b\", 'c']",
        "\"\\u00e9 x\"",
        "\"multi",
        "'multi",
    ];
    const RARE: &[&str] = &[
        "a: b", "- x", ".inf", "&a x", "*a", "!!str 1", "[1, [2]]", "\"\\/\"", "'a", "|2",
    ];
    const TEXT: &[&str] = &[
        "text",
        "more  text",
        "",
        "  indented",
        "# not a comment",
        "k: v",
    ];
    let mut out = String::new();
    if rng.below(3) == 0 {
        out.push_str("---\n");
    }
    let mut indent = 0usize;
    let mut opened = false;
    for _ in 0..1 + rng.below(25) {
        if opened {
            indent += [0, 1, 2, 4][rng.below(4)];
        } else if rng.below(5) == 0 {
            indent = indent.saturating_sub(2 * (1 + rng.below(2)));
        }
        opened = false;
        let pad = " ".repeat(indent + usize::from(rng.below(40) == 0));
        let value = if rng.below(30) == 0 {
            rng.pick(RARE)
        } else {
            rng.pick(VALUES)
        };
        match rng.below(10) {
            0 => out.push_str(&format!("{pad}# comment\n")),
            1 => out.push('\n'),
            2 | 3 => out.push_str(&format!("{pad}- {value}\n")),
            4 => {
                let block = ["|", "|-", "|+", ">", ">-", ">+"][rng.below(6)];
                out.push_str(&format!("{pad}{}: {block}\n", rng.pick(KEYS)));
                for _ in 0..1 + rng.below(4) {
                    let more = " ".repeat(indent + 2 + rng.below(2));
                    out.push_str(&format!("{more}{}\n", rng.pick(TEXT)));
                }
            }
            5 => {
                out.push_str(&format!("{pad}{}: {value}\n", rng.pick(KEYS)));
                for _ in 0..rng.below(3) {
                    let more = " ".repeat(indent + 1 + rng.below(4));
                    out.push_str(&format!("{more}{}\n", rng.pick(TEXT)));
                }
            }
            6 | 7 => {
                out.push_str(&format!("{pad}{}:\n", rng.pick(KEYS)));
                opened = true;
            }
            _ => out.push_str(&format!("{pad}{}: {value}\n", rng.pick(KEYS))),
        }
    }
    out.into_bytes()
}

#[test]
fn vectors_and_real_streams_agree() {
    let mut taken = Taken::default();
    for stream in vector_streams().iter().chain(&real_streams()) {
        same(stream, &mut taken);
    }
    // The real streams must go the fast way, else the fast path is pointless.
    for stream in real_streams() {
        let coverage = yaml_fast_coverage(&stream);
        assert_eq!(
            (coverage.composed, coverage.written),
            (coverage.documents, coverage.documents),
            "documents left to the general steps"
        );
    }
    println!(
        "{} documents composed, {} written by the fast path",
        taken.composed, taken.written
    );
    assert!(taken.composed > 100 && taken.written > 80);
}

#[test]
fn mutated_streams_agree() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut bases = vector_streams();
    for stream in real_streams() {
        bases.extend(documents(&stream));
    }
    let (mut cases, mut taken) = (0, Taken::default());
    for round in 0..12 {
        for base in &bases {
            // The large documents less often: the test stays quick.
            if base.len() > 8000 && round % 4 != 0 {
                continue;
            }
            same(&mutate(&mut rng, base), &mut taken);
            cases += 1;
        }
    }
    println!(
        "{cases} mutated streams, {} documents composed, {} written by the fast path",
        taken.composed, taken.written
    );
    assert!(cases > 3000 && taken.composed > 1000 && taken.written > 800);
}

#[test]
fn generated_streams_agree() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut taken = Taken::default();
    for _ in 0..20_000 {
        let stream = generate(&mut rng);
        same(&stream, &mut taken);
        same(&mutate(&mut rng, &stream), &mut taken);
    }
    println!(
        "40000 generated streams, {} documents composed, {} written by the fast path",
        taken.composed, taken.written
    );
    assert!(taken.composed > 4000 && taken.written > 2000);
}

/// Keys and values that resolve to every kind go-yaml has, in mappings whose keys are
/// mostly distinct, so that the fast path writes them rather than giving up on repeated
/// keys.
fn generate_scalars(rng: &mut Rng) -> Vec<u8> {
    const KEYS: &[&str] = &[
        "k",
        "1",
        "-1",
        "01",
        "0x1F",
        "1_0",
        "1.5",
        "1e3",
        ".inf",
        "true",
        "yes",
        "Off",
        "y",
        "2001-12-14",
        "\"q\"",
        "'s'",
        "\"1\"",
        "\"<<\"",
        "a<b",
        "é",
        "Z",
        "_",
        "a b",
    ];
    // Keys the fast path leaves to the general steps.
    const RARE_KEYS: &[&str] = &[
        "-0.0",
        "0.0",
        ".nan",
        "~",
        "null",
        "18446744073709551615",
        "<<",
    ];
    const VALUES: &[&str] = &[
        "v",
        "1",
        "-0",
        "+12",
        "0777",
        "0o17",
        "0b101",
        "0x_ff",
        "1_000",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "0.0",
        "-0.0",
        "1.10",
        "1e21",
        "1e-7",
        "1e400",
        ".5",
        ".5_5",
        "08",
        "1.5e+3",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43",
        "~",
        "",
        "NULL",
        "no",
        "On",
        "\"<&>\u{2028}\"",
        "'a''b'",
        "\"\\u00e9\\t\"",
        "a\"b",
        "x\\y",
        "[1, b, \"c\"]",
        "[]",
        "{}",
    ];
    let mut out = String::new();
    let mut depth = 0usize;
    let mut used: Vec<String> = Vec::new();
    for n in 0..1 + rng.below(20) {
        let pad = "  ".repeat(depth);
        let key = if rng.below(40) == 0 {
            rng.pick(RARE_KEYS)
        } else {
            rng.pick(KEYS)
        };
        let value = if rng.below(40) == 0 {
            rng.pick(&["-.inf", ".nan", ".Inf"])
        } else {
            rng.pick(VALUES)
        };
        // A key already written in the document is mostly replaced, so that only a few
        // repeat (more than the text says: `y` and `true` are one key).
        let key = if used.iter().any(|u| u == key) && rng.below(8) != 0 {
            format!("k{n}")
        } else {
            key.to_string()
        };
        used.push(key.clone());
        match rng.below(8) {
            0 if depth < 5 => {
                out.push_str(&format!("{pad}{key}:\n"));
                depth += 1;
            }
            1 if depth > 0 => {
                depth -= 1;
                out.push_str(&format!(
                    "{}{key}: {}\n",
                    "  ".repeat(depth),
                    rng.pick(VALUES)
                ));
            }
            2 => {
                out.push_str(&format!("{pad}{key}:\n"));
                for _ in 0..1 + rng.below(3) {
                    out.push_str(&format!("{pad}- {}\n", rng.pick(VALUES)));
                }
            }
            _ => out.push_str(&format!("{pad}{key}: {value}\n")),
        }
    }
    out.into_bytes()
}

#[test]
fn generated_scalars_agree() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut taken = Taken::default();
    for _ in 0..20_000 {
        let stream = generate_scalars(&mut rng);
        same(&stream, &mut taken);
    }
    println!(
        "20000 generated streams of scalars, {} documents composed, {} written by the fast path",
        taken.composed, taken.written
    );
    assert!(taken.written > 5000, "{}", taken.written);
}
