//! The tool on small components built from given worlds: what it reads and what it
//! refuses. (The real component goes through it in `host/js/run.sh`, whose build checks
//! every core signature against `abi.mjs`.)

use crate::{core_module, world};

/// A component of the first world of `wit`, from wit-component's dummy module.
fn component(wit: &str) -> Vec<u8> {
    let mut resolve = wit_parser::Resolve::new();
    let package = resolve.push_str("test.wit", wit).unwrap();
    let world = resolve.select_world(&[package], None).unwrap();
    let mut module = wit_component::dummy_module(
        &resolve,
        world,
        wit_parser::ManglingAndAbi::Legacy(wit_parser::LiftLowerAbi::Sync),
    );
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .unwrap();
    wit_component::ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .unwrap()
}

const BUCKET: &str = "
    interface bucket {
        variant bucket-error { not-found, denied(string) }
        get: func(key: string) -> result<list<u8>, bucket-error>;
    }";

#[test]
fn describes_the_world_with_named_types_resolved_in_order() {
    let wasm = component(&format!(
        "package t:s@1.2.3;
         {BUCKET}
         interface logic {{
             record pair {{ zeta: u64, alpha: option<string> }}
             enum mode {{ fast, safe }}
             type alias = tuple<s32, bool>;
             check: func(p: pair, m: mode, a: alias) -> result<_, string>;
             none: func();
         }}
         world w {{ import bucket; export logic; }}"
    ));
    let described = world::describe(&wasm).unwrap().to_string();
    assert_eq!(
        described,
        concat!(
            r#"{"package":"t:s@1.2.3","#,
            r#""imports":{"bucket":{"functions":{"get":{"params":[["key","string"]],"#,
            r#""result":{"result":[{"list":"u8"},{"variant":[["not-found",null],["denied","string"]]}]}}}}},"#,
            r#""exports":{"logic":{"functions":{"check":{"params":[["p",{"record":[["zeta","u64"],"#,
            r#"["alpha",{"option":"string"}]]}],["m",{"enum":["fast","safe"]}],["a",{"tuple":["s32","bool"]}]],"#,
            r#""result":{"result":[null,"string"]}},"none":{"params":[],"result":null}}}}}"#
        )
    );
}

#[test]
fn finds_the_main_module_its_signatures_and_mutable_globals() {
    let wasm = component(&format!(
        "package t:s@1.0.0;
         {BUCKET}
         interface logic {{ f: func(a: string) -> u32; }}
         world w {{ import bucket; export logic; }}"
    ));
    let module = core_module::main_module(&wasm).unwrap();
    assert!(module.exports.get("memory").is_some_and(Option::is_none));
    assert_eq!(
        module.exports.get("t:s/logic@1.0.0#f"),
        Some(&Some((vec!["i32", "i32"], vec!["i32"])))
    );
    // The lowered get returns through a pointer: key (pointer, length) and the return area.
    assert_eq!(
        module.imports.get("t:s/bucket@1.0.0#get"),
        Some(&(vec!["i32", "i32", "i32"], vec![]))
    );
    assert!(module.bytes.starts_with(b"\0asm"));
    assert!(
        module
            .mutable_globals
            .iter()
            .all(|t| ["i32", "i64"].contains(t))
    );
}

#[test]
fn refuses_a_component_that_imports_more_than_the_bucket() {
    let wasm = component(&format!(
        "package t:s@1.0.0;
         {BUCKET}
         interface clock {{ now: func() -> u64; }}
         interface logic {{ f: func(); }}
         world w {{ import bucket; import clock; export logic; }}"
    ));
    let error = world::describe(&wasm).unwrap_err().to_string();
    assert!(
        error.contains("t:s/clock@1.0.0") && error.contains("only"),
        "{error}"
    );
}

#[test]
fn refuses_a_type_the_package_does_not_lower() {
    let wasm = component(&format!(
        "package t:s@1.0.0;
         {BUCKET}
         interface logic {{ f: func(x: f64); }}
         world w {{ import bucket; export logic; }}"
    ));
    let error = format!("{:#}", world::describe(&wasm).unwrap_err());
    assert!(
        error.contains("logic.f") && error.contains("F64"),
        "{error}"
    );

    let wasm = component(&format!(
        "package t:s@1.0.0;
         {BUCKET}
         interface logic {{ flags perms {{ read, write }} f: func(p: perms); }}
         world w {{ import bucket; export logic; }}"
    ));
    let error = format!("{:#}", world::describe(&wasm).unwrap_err());
    assert!(
        error.contains("perms") && error.contains("flags"),
        "{error}"
    );
}

#[test]
fn refuses_what_is_not_a_component() {
    assert!(world::describe(b"not wasm").is_err());
    assert!(core_module::main_module(b"\0asm\x01\0\0\0").is_err());
}
