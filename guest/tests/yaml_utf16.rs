//! UTF-16 streams are decoded as go-yaml decodes them (libyaml-safer's own UTF-16
//! reader loses its alignment): a whole stream parses, an unpaired surrogate is an
//! error, and nothing panics.

use render_store_guest::{Stage, yaml_objects};

fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
    let mut out = if big_endian {
        vec![0xFE, 0xFF]
    } else {
        vec![0xFF, 0xFE]
    };
    for unit in text.encode_utf16() {
        out.extend(if big_endian {
            unit.to_be_bytes()
        } else {
            unit.to_le_bytes()
        });
    }
    out
}

#[test]
fn a_utf16_be_document_parses_like_its_utf8_text() {
    // Big-endian: the splitter cuts after the 0x0A of 00 0A, so units stay whole.
    let stream = utf16("kind: ConfigMap\ndata:\n  k: \"é ✓\"\n", true);
    let objects = yaml_objects(&stream).unwrap();
    assert_eq!(
        objects,
        vec![r#"{"data":{"k":"é ✓"},"kind":"ConfigMap"}"#.as_bytes().to_vec()]
    );
}

#[test]
fn broken_utf16_is_a_yaml_error_not_a_panic() {
    // An unpaired high surrogate before the line break.
    let mut unpaired = utf16("kind: A", true);
    unpaired.extend([0xD8, 0x3D, 0x00, 0x0A]);
    let e = yaml_objects(&unpaired).unwrap_err();
    assert_eq!((e.stage, e.document), (Stage::Yaml, 0));
    assert!(e.message.contains("UTF-16"), "{}", e.message);
    // Valid UTF-16 whose text is not an object, found by the fuzzer: an error, no panic.
    let fuzzed = include_bytes!("../fuzz/corpus/yaml_stream/utf16_misaligned");
    assert!(yaml_objects(fuzzed).is_err());
}
