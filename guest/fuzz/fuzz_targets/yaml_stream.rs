//! The YAML path on arbitrary bytes (CONTRACT.md §11).
//!
//! Invariants:
//! - no panic, whatever the stream;
//! - `yaml_objects`, `yaml_canonical` and `yaml_render_ref` agree: all succeed or all
//!   fail with the same error;
//! - on success every object is a JSON object the canonical decoder accepts, the
//!   canonical bytes are `canonical(objects)` and the renderRef is their hash;
//! - the same stream gives the same answer twice (no dependence on map order);
//! - the fast composer changes nothing: libyaml-safer alone gives the same objects or
//!   the same error.

#![no_main]

use libfuzzer_sys::fuzz_target;
use render_store_guest::json::decode_object;
use render_store_guest::yaml::yaml_objects_reference;
use render_store_guest::{
    canonical, render_ref_of_canonical, yaml_canonical, yaml_objects, yaml_render_ref,
};

fuzz_target!(|data: &[u8]| {
    let objects = yaml_objects(data);
    let bytes = yaml_canonical(data);
    let reference = yaml_render_ref(data);
    match (&objects, &bytes, &reference) {
        (Ok(objects), Ok(bytes), Ok(reference)) => {
            for object in objects {
                decode_object(object).expect("every object decodes as a JSON object");
            }
            assert_eq!(&canonical(objects).expect("objects decode"), bytes);
            assert_eq!(&render_ref_of_canonical(bytes), reference);
        }
        (Err(a), Err(b), Err(c)) => {
            assert_eq!(a, b);
            assert_eq!(a, c);
            assert!(a.line >= 1 && a.column >= 1, "{a}");
        }
        _ => panic!("the three calls disagree: {objects:?} {bytes:?} {reference:?}"),
    }
    assert_eq!(yaml_objects(data), objects, "same stream, same answer");
    assert_eq!(
        yaml_objects_reference(data),
        objects,
        "the fast path and libyaml-safer agree"
    );
});
