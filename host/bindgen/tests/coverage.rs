//! Every function the world exports (`logic`, `store`, `trace`) has its counterpart in
//! every layer over the component: the C ABI's header, the Go package, the Python
//! package and the npm package. The exports are listed from the WIT with wit-parser;
//! each layer's name for one is the generator's (hand-written or generated), and the
//! test finds it defined in that layer's sources.

use render_store_bindgen::{World, repo_root};
use std::collections::BTreeSet;
use std::path::Path;

/// Every `interface.function` of the exported interfaces.
fn exports(world: &World) -> BTreeSet<String> {
    world
        .exports
        .iter()
        .flat_map(|i| {
            world
                .functions(i)
                .map(move |f| format!("{}.{}", i.name, f.name))
        })
        .collect()
}

/// The text of every file under `dir` (not recursing into `skip`) whose name ends in
/// `suffix` and not in `not`.
fn sources(dir: &Path, suffix: &str, not: &str) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if ![
                    "node_modules",
                    "test",
                    "tests",
                    "build",
                    "examples",
                    "bench",
                ]
                .contains(&name.as_str())
                {
                    stack.push(path);
                }
            } else if name.ends_with(suffix) && (not.is_empty() || !name.ends_with(not)) {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
                text.push('\n');
            }
        }
    }
    text
}

fn world() -> World {
    World::load(&repo_root().join("wit")).unwrap()
}

fn gaps(layer: &str, names: Vec<(String, String)>, defined: impl Fn(&str) -> bool) -> Vec<String> {
    let world = world();
    let mut missing = Vec::new();
    for export in exports(&world) {
        match names.iter().find(|(e, _)| *e == export) {
            None => missing.push(format!("{layer}: no name for {export}")),
            Some((_, name)) if !defined(name) => {
                missing.push(format!("{layer}: {export} as `{name}` is not defined"))
            }
            Some(_) => {}
        }
    }
    missing
}

#[test]
fn every_export_has_a_c_entry_point() {
    let header =
        std::fs::read_to_string(repo_root().join("host/capi/include/render_store.h")).unwrap();
    let world = world();
    let names = exports(&world)
        .into_iter()
        .map(|e| {
            let (i, f) = e.split_once('.').unwrap();
            (e.clone(), render_store_bindgen::capi::c_name(i, f))
        })
        .collect();
    let missing = gaps("C", names, |n| header.contains(&format!(" *{n}(")));
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn every_export_has_an_npm_function() {
    let root = repo_root();
    let text = sources(&root.join("host/js"), ".mjs", ".d.mts");
    let names = render_store_bindgen::js::names(&world()).unwrap();
    let missing = gaps("npm", names, |n| {
        [
            format!("export const {n} ="),
            format!("export function {n}("),
            format!("export async function {n}("),
        ]
        .iter()
        .any(|d| text.contains(d.as_str()))
    });
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn every_export_has_a_go_function() {
    let text = sources(&repo_root().join("host/go"), ".go", "_test.go");
    let names = render_store_bindgen::go::names(&world()).unwrap();
    let missing = gaps("Go", names, |n| {
        let name = n.rsplit('.').next().unwrap_or(n);
        text.contains(&format!("func {name}("))
            || text.contains(&format!("func {name}["))
            || text.contains(&format!(") {name}("))
    });
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn every_export_has_a_python_function() {
    let text = sources(&repo_root().join("host/python/src/render_store"), ".py", "");
    let names = render_store_bindgen::python::names(&world()).unwrap();
    let missing = gaps("Python", names, |n| text.contains(&format!("def {n}(")));
    assert!(missing.is_empty(), "{missing:#?}");
}
