//! The npm package's build step in Rust: reads the render-store component with
//! wit-parser (its world's types) and wasmparser (its main core module) and writes the
//! JavaScript module the package runs, so that nothing in the package parses WIT or
//! walks WebAssembly, at build time or at run time.
//!
//! ```text
//! render-store-js-describe COMPONENT OUT_DIR
//! ```
//!
//! Writes `OUT_DIR/component.js` (`WORLD`, `MUTABLE_GLOBALS`, `CORE_MODULE`) and its
//! declarations `OUT_DIR/component.d.ts`, and prints the core type of every function
//! the module imports and exports as JSON on standard output, which `build.mjs` checks
//! against the signatures `abi.mjs` gives the world's functions.

mod core_module;
mod json;
mod world;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::json::Json;

fn main() -> Result<()> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [component, out] = args.as_slice() else {
        bail!("usage: render-store-js-describe COMPONENT OUT_DIR");
    };
    let bytes =
        std::fs::read(component).with_context(|| format!("reading {}", component.display()))?;
    let world = world::describe(&bytes).with_context(|| component.display().to_string())?;
    let module =
        core_module::main_module(&bytes).with_context(|| component.display().to_string())?;
    write_module(out, &hex::encode(Sha256::digest(&bytes)), &world, &module)?;
    println!("{}", module.signatures());
    Ok(())
}

fn write_module(
    out: &Path,
    sha: &str,
    world: &Json,
    module: &core_module::CoreModule,
) -> Result<()> {
    let globals = Json::Array(
        module
            .mutable_globals
            .iter()
            .map(|t| Json::string(t))
            .collect(),
    );
    let core = base64::engine::general_purpose::STANDARD.encode(module.bytes);
    let js = format!(
        "// Written by render-store-js-describe from the component (sha256 {sha}).\n\
         /** The WIT types of the component's imports and exports, every named type resolved. */\n\
         export const WORLD = {world};\n\
         /** The value type of each mutable global the main core module defines. */\n\
         export const MUTABLE_GLOBALS = {globals};\n\
         /** The component's main core module, base64. */\n\
         export const CORE_MODULE = \"{core}\";\n"
    );
    let dts = "export declare const WORLD: object;\n\
               export declare const MUTABLE_GLOBALS: string[];\n\
               export declare const CORE_MODULE: string;\n";
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for (name, text) in [("component.js", js.as_str()), ("component.d.ts", dts)] {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
