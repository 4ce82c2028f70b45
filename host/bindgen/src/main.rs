//! Writes every file generated from the WIT, or with `--check` lists the stale ones and
//! fails.
//!
//! ```text
//! render-store-bindgen [--check]
//! ```

use anyhow::{Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = match args.as_slice() {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => bail!("usage: render-store-bindgen [--check]"),
    };
    let root = render_store_bindgen::repo_root();
    let files = render_store_bindgen::generate(&root)?;
    if check {
        let stale = render_store_bindgen::stale(&root, &files)?;
        if !stale.is_empty() {
            bail!(
                "generated files differ from wit/: {}; run `cargo run -p render-store-bindgen`",
                stale.join(", ")
            );
        }
        return Ok(());
    }
    for path in render_store_bindgen::write(&root, &files)? {
        println!("wrote {path}");
    }
    Ok(())
}
