//! The YAML path through the component: every Go vector of
//! tests/vectors/yaml-render-ref.json and the real streams give, through
//! `logic.yaml-render-ref`, what the guest gives natively and what Go gives (success or
//! failure, the failing document's index, the renderRef).

use render_store::COMPONENT;
use wasmtime::component::{Component, Func, Linker, Val};
use wasmtime::{Config, Engine, Store};

struct Logic {
    store: Store<()>,
    render_ref: Func,
}

impl Logic {
    fn new() -> Logic {
        let engine = Engine::new(&Config::new()).unwrap();
        let component = Component::new(&engine, COMPONENT).unwrap();
        let mut linker = Linker::<()>::new(&engine);
        // The logic exports make no bucket call.
        linker.define_unknown_imports_as_traps(&component).unwrap();
        let mut store = Store::new(&engine, ());
        let instance = linker.instantiate(&mut store, &component).unwrap();
        let logic = instance
            .get_export_index(&mut store, None, "convoy:render-store/logic@0.1.0")
            .unwrap();
        let index = instance
            .get_export_index(&mut store, Some(&logic), "yaml-render-ref")
            .unwrap();
        let render_ref = instance.get_func(&mut store, index).unwrap();
        Logic { store, render_ref }
    }

    /// `Ok(renderRef)` or `Err(document index)`.
    fn yaml_render_ref(&mut self, stream: &[u8]) -> Result<String, u32> {
        let arg = Val::List(stream.iter().map(|&b| Val::U8(b)).collect());
        let mut results = [Val::Bool(false)];
        self.render_ref
            .call(&mut self.store, &[arg], &mut results)
            .unwrap();
        match &results[0] {
            Val::Result(Ok(Some(v))) => match &**v {
                Val::String(s) => Ok(s.clone()),
                other => panic!("unexpected {other:?}"),
            },
            Val::Result(Err(Some(e))) => match &**e {
                Val::Variant(case, Some(payload)) if case == "invalid-yaml" => {
                    let Val::Record(fields) = &**payload else {
                        panic!("{payload:?}")
                    };
                    match fields.iter().find(|(n, _)| n == "document") {
                        Some((_, Val::U32(d))) => Err(*d),
                        other => panic!("{other:?}"),
                    }
                }
                other => panic!("unexpected error {other:?}"),
            },
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn repo_file(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

#[test]
fn go_vectors_through_the_component() {
    use base64::Engine as _;
    let text = std::fs::read_to_string(repo_file("tests/vectors/yaml-render-ref.json")).unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut logic = Logic::new();
    let mut checked = 0;
    for case in cases.as_array().unwrap() {
        let stream = match case.get("yaml") {
            Some(y) => y.as_str().unwrap().as_bytes().to_vec(),
            None => base64::engine::general_purpose::STANDARD
                .decode(case["yaml_b64"].as_str().unwrap())
                .unwrap(),
        };
        let got = logic.yaml_render_ref(&stream);
        let native = render_store_guest::yaml_render_ref(&stream)
            .map_err(|e| u32::try_from(e.document).unwrap());
        assert_eq!(got, native, "{}", case["name"]);
        let outcomes = case
            .get("outcomes")
            .and_then(|o| o.as_array().cloned())
            .unwrap_or_else(|| vec![case.clone()]);
        let matches = outcomes
            .iter()
            .any(|o| match (&got, o.get("error_document_index")) {
                (Err(d), Some(want)) => u64::from(*d) == want.as_u64().unwrap(),
                (Ok(r), None) => o["renderRef"].as_str() == Some(r.as_str()),
                _ => false,
            });
        assert!(matches, "{}: {got:?}", case["name"]);
        checked += 1;
    }
    assert_eq!(checked, 190);

    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_file("tests/real-renders/expected.json")).unwrap(),
    )
    .unwrap();
    for render in expected["renders"].as_array().unwrap() {
        let path = format!("tests/real-renders/{}", render["yaml"].as_str().unwrap());
        let stream = std::fs::read(repo_file(&path)).unwrap();
        assert_eq!(
            logic.yaml_render_ref(&stream).as_deref(),
            Ok(render["renderRef"].as_str().unwrap()),
            "{path}"
        );
    }
}
