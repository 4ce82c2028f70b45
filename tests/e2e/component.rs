//! The component itself: what it imports and what it exports.

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

fn component() -> (Engine, Component) {
    let engine = Engine::new(&Config::new()).unwrap();
    let component = Component::new(&engine, render_store::COMPONENT).unwrap();
    (engine, component)
}

#[test]
fn imports_nothing_but_the_bucket() {
    let (engine, component) = component();
    let imports: Vec<String> = component
        .component_type()
        .imports(&engine)
        .map(|(name, _)| name.to_string())
        .collect();
    assert_eq!(imports, ["convoy:render-store/bucket@0.9.0"]);
}

#[test]
fn exports_the_logic_and_the_store() {
    let (engine, component) = component();
    let mut exports: Vec<String> = component
        .component_type()
        .exports(&engine)
        .map(|(name, _)| name.to_string())
        .collect();
    exports.sort();
    assert_eq!(
        exports,
        [
            "convoy:render-store/logic@0.9.0",
            "convoy:render-store/store@0.9.0",
            "convoy:render-store/trace@0.9.0",
            "convoy:render-store/types@0.9.0",
        ]
    );
}
