//! A restore round-trips: the YAML form of a render (what `get -o yaml --show-secrets`
//! and the pages show) read back as a YAML stream, as `put` reads it, gives the same
//! canonical bytes and so the same renderRef. Checked on every render-ref vector, the
//! real renders, and thousands of generated objects made of the values that YAML reads
//! as something else when written plainly (`yes`, `0x1F`, `1e3`, `~`, `.inf`, leading
//! spaces, line breaks, control characters, long numbers).

use render_store_guest::{
    ObjectForm, SecretValues, canonical, json_objects, show_objects, yaml_canonical,
};
use serde_json::Value;

mod common;
use common::repo_file;

/// The canonical bytes of `canonical` written in the YAML form, object by object as
/// `get -o yaml` writes them, then read back as a YAML stream.
fn round_trip(canonical_bytes: &[u8]) -> Vec<u8> {
    let shown = show_objects(canonical_bytes, ObjectForm::Yaml, SecretValues::Shown).unwrap();
    let mut stream = String::new();
    for object in shown {
        stream.push_str("---\n");
        stream.push_str(&object.text);
        if !object.text.ends_with('\n') {
            stream.push('\n');
        }
    }
    yaml_canonical(stream.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{stream}"))
}

/// Whether canonical bytes hold a float's negative zero: Go writes it `-0`, which its
/// decoder (and this one) reads back as the integer 0, so such bytes are not the
/// canonical bytes of themselves, whatever form carries them back, in Go as here.
fn holds_negative_zero(canonical_bytes: &str) -> bool {
    ["-0,", "-0}", "-0]"].iter().any(|end| {
        canonical_bytes.contains(&format!(":{end}"))
            || canonical_bytes.contains(&format!("[{end}"))
            || canonical_bytes.contains(&format!(",{end}"))
    })
}

#[test]
fn every_vector_round_trips_through_its_yaml_form() {
    let text = std::fs::read_to_string(repo_file("tests/vectors/render-ref.json")).unwrap();
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for case in &cases {
        let Some(expected) = case["canonical"].as_str() else {
            continue;
        };
        if expected.is_empty() {
            continue;
        }
        // What putting `get`'s bytes back stores: the same bytes, but for `-0`.
        let again = canonical(&json_objects(expected.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            again == expected.as_bytes(),
            !holds_negative_zero(expected),
            "{}",
            case["name"]
        );
        assert_eq!(
            String::from_utf8(round_trip(expected.as_bytes())).unwrap(),
            String::from_utf8(again).unwrap(),
            "{}",
            case["name"]
        );
        checked += 1;
    }
    assert!(checked > 100, "only {checked} vectors had canonical bytes");
}

#[test]
fn the_real_renders_round_trip_and_their_json_lines_split_back() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_file("tests/real-renders/expected.json")).unwrap(),
    )
    .unwrap();
    for render in expected["renders"].as_array().unwrap() {
        let name = render["name"].as_str().unwrap();
        let yaml = std::fs::read(repo_file(&format!(
            "tests/real-renders/{}",
            render["yaml"].as_str().unwrap()
        )))
        .unwrap();
        let canonical_bytes = yaml_canonical(&yaml).unwrap();
        assert_eq!(round_trip(&canonical_bytes), canonical_bytes, "{name}");
        // What `get` writes, read back as JSON objects (as `put` reads it).
        let objects = json_objects(&canonical_bytes).unwrap();
        assert_eq!(canonical(&objects).unwrap(), canonical_bytes, "{name}");
    }
}

/// A small deterministic generator (xorshift), so a failure names its seed.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// Strings YAML 1.1 reads as another type, or that need quoting, escaping or block
/// style to survive.
const STRINGS: &[&str] = &[
    "",
    " ",
    "plain",
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "n",
    "true",
    "False",
    "null",
    "Null",
    "~",
    "-",
    "--",
    "---",
    "...",
    "0",
    "010",
    "0o17",
    "0x1F",
    "0b101",
    "1e3",
    "1_000",
    "+1",
    "-1.5",
    ".5",
    "1.",
    ".inf",
    "-.Inf",
    ".NaN",
    "12:30:45",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "=",
    "<<",
    "!tag",
    "&anchor",
    "*alias",
    "@at",
    "`tick",
    "%percent",
    "#hash",
    "a #comment",
    "a: b",
    "a:b",
    "- item",
    "? key",
    "[x]",
    "{x}",
    "a,b",
    "'single'",
    "\"double\"",
    "back\\slash",
    " leading",
    "trailing ",
    "line\nbreak",
    "two\n\nbreaks",
    "trailing newline\n",
    "\n",
    "tab\there",
    "cr\rhere",
    "nul\u{0}",
    "bell\u{7}",
    "del\u{7f}",
    "nel\u{85}",
    "ls\u{2028}ps\u{2029}",
    "bom\u{feff}",
    "ünïcödé",
    "emoji 🚀",
    "a long line of words that runs on well past the width at which a writer might fold it into two or more lines",
    "  indented\n  block\n",
    "|",
    ">",
    "|-",
    "key:",
    ": value",
    "!!str",
    "0.1.2",
    "1:2",
    "- ",
    "?",
    "[",
    "]",
];

/// Numbers as their JSON text (Go keeps an integer's digits, floats as Go writes them).
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "10",
    "9007199254740993",
    "-9223372036854775808",
    "18446744073709551615",
    "1.5",
    "-2.25",
    "1e21",
    "1e-7",
    "123456789.123",
    "0.1",
    "1E+2",
    "100000000000000000000",
];

fn value(g: &mut Gen, depth: usize, out: &mut String) {
    let choice = if depth > 3 { g.below(4) } else { g.below(7) };
    match choice {
        0 => out.push_str(&serde_json::to_string(g.pick(STRINGS)).unwrap()),
        1 => out.push_str(g.pick(NUMBERS)),
        2 => out.push_str(g.pick(&["true", "false", "null"])),
        3 => out.push_str(&serde_json::to_string(g.pick(STRINGS)).unwrap()),
        4 | 5 => {
            out.push('{');
            for i in 0..g.below(4) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(g.pick(STRINGS)).unwrap());
                out.push(':');
                value(g, depth + 1, out);
            }
            out.push('}');
        }
        _ => {
            out.push('[');
            for i in 0..g.below(4) {
                if i > 0 {
                    out.push(',');
                }
                value(g, depth + 1, out);
            }
            out.push(']');
        }
    }
}

#[test]
fn generated_objects_of_awkward_values_round_trip() {
    for seed in 1..=3_000u64 {
        let mut g = Gen(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut object = String::from(r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"#);
        for i in 0..1 + g.below(6) {
            if i > 0 {
                object.push(',');
            }
            object.push_str(&serde_json::to_string(g.pick(STRINGS)).unwrap());
            object.push(':');
            value(&mut g, 0, &mut object);
        }
        object.push_str("}}");
        let canonical_bytes = canonical(&[object.as_bytes()]).unwrap();
        let back = round_trip(&canonical_bytes);
        assert_eq!(
            String::from_utf8_lossy(&back),
            String::from_utf8_lossy(&canonical_bytes),
            "seed {seed}: {object}"
        );
    }
}
