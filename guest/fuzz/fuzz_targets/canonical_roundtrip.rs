//! canonical(render) and renderRef on arbitrary bytes.
//!
//! The input is read twice: as one object, and as a render of several objects separated
//! by 0x1E (ASCII record separator: a control byte, so it can be part of no valid JSON
//! object, and a seed render maps to exactly one input).
//!
//! Invariants, when canonical succeeds (CONTRACT.md §4):
//! - the output is UTF-8 with exactly one `\n` per object, each object's line ending it;
//! - line i is canonical(object i) alone (the render's canonical bytes are the
//!   concatenation of its objects');
//! - each line decodes, and re-encodes to itself: canonical of the output's lines is the
//!   output, and so the renderRef of the output's objects is the input's renderRef. The
//!   one exception is Go's own: a float negative zero is written `-0`, which decodes as
//!   the integer 0 (golden vectors num_neg_zero_*); there the second pass must give the
//!   output with those tokens made `0`, and that must be a fixed point;
//! - the renderRef is `sha256:` + hex(sha256(canonical)) and validates;
//! - diffing the output against itself finds every object unchanged.
//!
//! When it fails, the error is `InvalidObject` naming the first object that does not
//! decode on its own.

#![no_main]

use libfuzzer_sys::fuzz_target;
use render_store_fuzz::{compact, fix_negative_zero};
use render_store_guest::error::ObjectError;
use render_store_guest::json::decode_object;
use render_store_guest::{
    DEFAULT_CONTEXT, Error, ObjectForm, SecretValues, canonical, diff_canonical, render_ref,
    render_ref_of_canonical, sha256_hex, show_objects, validate_render_ref,
};

const SEPARATOR: u8 = 0x1E;

fuzz_target!(|data: &[u8]| {
    check_render(&[data]);
    let objects: Vec<&[u8]> = data.split(|&b| b == SEPARATOR).collect();
    if objects.len() > 1 {
        check_render(&objects);
    }
});

fn check_render(objects: &[&[u8]]) {
    let out = match canonical(objects) {
        Ok(out) => out,
        Err(Error::InvalidObject(ObjectError { index, message })) => {
            let index = index as usize;
            assert!(index < objects.len(), "index {index} of {}", objects.len());
            for (i, object) in objects[..index].iter().enumerate() {
                assert!(
                    decode_object(object).is_ok(),
                    "object {i} decodes but canonical failed at {index}: {message}"
                );
            }
            assert!(decode_object(objects[index]).is_err(), "{message}");
            assert!(render_ref(objects).is_err());
            return;
        }
        Err(other) => panic!("canonical failed with an error other than InvalidObject: {other}"),
    };

    let text = std::str::from_utf8(&out).expect("canonical output is UTF-8");
    assert_eq!(
        out.iter().filter(|&&b| b == b'\n').count(),
        objects.len(),
        "one newline per object: {text:?}"
    );
    assert!(objects.is_empty() || out.ends_with(b"\n"));

    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').take(objects.len()).collect();
    for (line, object) in lines.iter().zip(objects) {
        let alone = canonical(&[object]).expect("a decoded object decodes alone");
        assert_eq!(
            alone[..alone.len() - 1],
            **line,
            "object alone vs in the render"
        );
        let doc = decode_object(line).unwrap_or_else(|e| panic!("line {text:?}: {e}"));
        assert_eq!(compact(&doc), fix_negative_zero(line), "line {text:?}");
    }

    let reference = render_ref(objects).expect("canonical succeeded");
    assert_eq!(reference, render_ref_of_canonical(&out));
    assert_eq!(reference, format!("sha256:{}", sha256_hex(&out)));
    validate_render_ref(&reference).expect("a computed renderRef validates");

    let again = canonical(&lines).expect("canonical output decodes");
    let expected = fix_negative_zero(&out);
    assert_eq!(
        String::from_utf8_lossy(&again),
        String::from_utf8_lossy(&expected),
        "canonical of the canonical output"
    );
    if expected == out {
        assert_eq!(
            render_ref(&lines).unwrap(),
            reference,
            "renderRef of the output"
        );
    } else {
        // The -0 exception: one more pass changes nothing.
        let lines2: Vec<&[u8]> = again.split(|&b| b == b'\n').take(objects.len()).collect();
        assert_eq!(
            canonical(&lines2).unwrap(),
            again,
            "second pass is a fixed point"
        );
    }

    for form in [ObjectForm::Yaml, ObjectForm::Json] {
        for secrets in [SecretValues::Masked, SecretValues::Shown] {
            let diff = diff_canonical(&out, &out, form, secrets, DEFAULT_CONTEXT)
                .expect("canonical output diffs");
            assert!(diff.added.is_empty() && diff.removed.is_empty() && diff.changed.is_empty());
            assert_eq!(diff.unchanged as usize, objects.len());
        }
        // Masking writes any object, Secret-like or not.
        let shown = show_objects(&out, form, SecretValues::Masked).expect("canonical output shows");
        assert_eq!(shown.len(), objects.len());
    }
    // The YAML form diffs show: every object writes, line by line.
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let doc = render_store_guest::json::decode_object(line).expect("canonical lines decode");
        let mut yaml = Vec::new();
        render_store_guest::json::encode_document_yaml(&doc, &mut yaml);
        assert!(yaml.ends_with(b"\n") && std::str::from_utf8(&yaml).is_ok());
    }
}
