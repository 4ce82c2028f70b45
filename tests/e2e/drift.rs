//! A component built from another WIT than the host's is refused when it is loaded,
//! with the export and the difference named, not at its first call (or never, where a
//! renamed field would have been read as another).

use crate::support::dummy_component;
use render_store::{Limits, Runtime};

fn wit() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../wit/render-store.wit"
    ))
    .unwrap()
}

fn refusal(wit: &str) -> String {
    match Runtime::with_component(&dummy_component(wit, |text| text), Limits::default()) {
        Ok(_) => panic!("a component of another WIT was loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_world_as_written_loads() {
    Runtime::with_component(&dummy_component(&wit(), |text| text), Limits::default())
        .expect("the dummy component of the host's own WIT loads");
}

#[test]
fn a_renamed_record_field_is_refused_naming_it() {
    let original = wit();
    let renamed = original.replacen(
        "        delete-history: list<string>,",
        "        deleted-history: list<string>,",
        1,
    );
    assert_ne!(
        renamed, original,
        "the WIT no longer has gc-plan.delete-history"
    );
    let message = refusal(&renamed);
    assert!(
        message.contains("delete-history") && message.contains("deleted-history"),
        "{message}"
    );
    // The first export that carries the record is named.
    assert!(message.contains("logic.plan-gc"), "{message}");
}

#[test]
fn a_missing_function_is_refused_naming_it() {
    let original = wit();
    let line = original
        .lines()
        .find(|l| l.trim_start().starts_with("check-index: func("))
        .expect("the WIT has store.check-index")
        .to_string();
    let message = refusal(&original.replace(&line, ""));
    assert!(message.contains("check-index"), "{message}");
}

#[test]
fn a_changed_parameter_type_is_refused_naming_the_function() {
    let original = wit();
    let changed = original.replacen(
        "validate-render-ref: func(render-ref: string)",
        "validate-render-ref: func(render-ref: u32)",
        1,
    );
    assert_ne!(
        changed, original,
        "the WIT no longer has logic.validate-render-ref"
    );
    let message = refusal(&changed);
    assert!(message.contains("logic.validate-render-ref"), "{message}");
}
