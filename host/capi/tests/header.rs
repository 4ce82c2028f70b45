//! The committed header is what cbindgen makes of the code: a function, type or
//! comment changed on one side only fails here. Run with RENDER_STORE_UPDATE_HEADER=1
//! to rewrite the header from the code.

use std::path::Path;

#[test]
fn the_committed_header_is_generated_from_the_code() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = crate_dir.join("include/render_store.h");
    if std::env::var_os("RENDER_STORE_UPDATE_HEADER").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or(
                committed.lines().count().min(generated.lines().count()),
                |n| n,
            )
            + 1;
        panic!(
            "include/render_store.h differs from what the code generates, from line {line}: \
             run `RENDER_STORE_UPDATE_HEADER=1 cargo test -p render-store-capi --test header` \
             and commit the header"
        );
    }
    // Every function the library exports is declared, and nothing else.
    for name in [
        "rs_store_open",
        "rs_store_new",
        "rs_answer_bytes",
        "rs_replay",
        "rs_protected_refs",
    ] {
        assert!(
            generated.contains(&format!("{name}(")),
            "{name} is not in the header"
        );
    }
}
