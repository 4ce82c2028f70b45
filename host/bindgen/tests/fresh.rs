//! Every generated file is what the WIT gives today. Run
//! `cargo run -p render-store-bindgen` after changing the WIT (or the generator), or
//! set `RENDER_STORE_UPDATE_GENERATED=1` when running this test.

#[test]
fn generated_files_are_fresh() {
    let root = render_store_bindgen::repo_root();
    let files = render_store_bindgen::generate(&root).expect("generating from wit/");
    if std::env::var_os("RENDER_STORE_UPDATE_GENERATED").is_some() {
        render_store_bindgen::write(&root, &files).expect("writing the generated files");
    }
    let stale = render_store_bindgen::stale(&root, &files).unwrap();
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}; run `cargo run -p render-store-bindgen`"
    );
}
