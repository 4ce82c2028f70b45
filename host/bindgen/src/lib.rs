//! The generator of what only restates the WIT: it reads `wit/` with wit-parser and
//! writes, as committed files,
//!
//! - `guest/src/wit.rs`: every type the WIT declares, as Rust, with the component-model
//!   derives behind the guest's `component-type` feature. The guest's logic uses these
//!   types as its own, and the host passes them to the component as they are: a record
//!   is declared once, in the WIT, and converted nowhere.
//! - `guest/src/component/bindings.rs`: wit-bindgen's bindings of the world with those
//!   types mapped in, so the component's glue converts nothing either.
//! - `host/render-store/src/runtime/world.rs`: the host's typed call table (each export
//!   as an async method over those types, its type checked when the component loads) and
//!   the bucket import's linker glue.
//! - the function table of `docs/wit.md`, from the WIT's own doc comments.
//!
//! A test (`tests/fresh.rs`) fails when a committed file differs from what the WIT
//! gives; `cargo run -p render-store-bindgen` writes them again.

pub mod capi;
mod docs_table;
pub mod go;
mod guest_bindings;
mod hand_written;
mod host_api;
mod host_calls;
pub mod js;
pub mod json;
mod names;
pub mod python;
mod rust_types;
mod world;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

pub use world::World;

/// One generated file: where it goes, relative to the repository's root, and its whole
/// content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The path from the repository's root, with `/` separators.
    pub path: &'static str,
    /// The file's content as it should be committed.
    pub contents: String,
}

/// The repository's root: two folders above this crate.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every generated file, from the WIT under `root/wit`. A file of which only a part is
/// generated (the docs' table) is read and given back whole, with that part replaced.
pub fn generate(root: &Path) -> Result<Vec<Generated>> {
    let world = World::load(&root.join("wit"))?;
    let docs_path = "docs/wit.md";
    let docs = std::fs::read_to_string(root.join(docs_path))
        .with_context(|| format!("reading {docs_path}"))?;
    let mut files = vec![
        Generated {
            path: "guest/src/wit.rs",
            contents: rustfmt(root, &rust_types::module(&world)?)?,
        },
        Generated {
            path: "guest/src/component/bindings.rs",
            contents: rustfmt(root, &guest_bindings::module(&world)?)?,
        },
        Generated {
            path: "host/render-store/src/runtime/world.rs",
            contents: rustfmt(root, &host_calls::module(&world)?)?,
        },
        Generated {
            path: docs_path,
            contents: docs_table::splice(&world, &docs)
                .with_context(|| format!("the function table of {docs_path}"))?,
        },
    ];
    files.push(Generated {
        path: "host/render-store/src/store/calls.rs",
        contents: rustfmt(root, &host_api::module(&world)?)?,
    });
    files.push(Generated {
        path: "host/render-store/src/wit_json.rs",
        contents: rustfmt(root, &json::types_module(&world)?)?,
    });
    files.push(Generated {
        path: "host/render-store/src/store/json_calls.rs",
        contents: rustfmt(root, &json::calls_module(&world)?)?,
    });
    let c_docs_path = "docs/c-abi.md";
    let c_docs = std::fs::read_to_string(root.join(c_docs_path))
        .with_context(|| format!("reading {c_docs_path}"))?;
    files.push(Generated {
        path: c_docs_path,
        contents: docs_table::splice_c(&world, &c_docs)
            .with_context(|| format!("the entry-point table of {c_docs_path}"))?,
    });
    files.push(Generated {
        path: "host/capi/src/calls.rs",
        contents: rustfmt(root, &capi::module(&world)?)?,
    });
    files.extend(js::files(root, &world)?);
    files.extend(go::files(root, &world)?);
    files.extend(python::files(root, &world)?);
    Ok(files)
}

/// The paths of `files` whose committed content differs from the generated one.
pub fn stale(root: &Path, files: &[Generated]) -> Result<Vec<String>> {
    let mut stale = Vec::new();
    for file in files {
        let committed = match std::fs::read_to_string(root.join(file.path)) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", file.path)),
        };
        if committed.as_deref() != Some(file.contents.as_str()) {
            stale.push(file.path.to_string());
        }
    }
    Ok(stale)
}

/// Writes the files that changed, each through a temporary file renamed into place, and
/// returns their paths.
pub fn write(root: &Path, files: &[Generated]) -> Result<Vec<String>> {
    let stale = stale(root, files)?;
    for file in files.iter().filter(|f| stale.iter().any(|s| s == f.path)) {
        let path = root.join(file.path);
        let Some(dir) = path.parent() else {
            bail!("{} has no folder", file.path);
        };
        let temporary = dir.join(format!(
            ".{}.generated",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("file")
        ));
        std::fs::write(&temporary, &file.contents)
            .with_context(|| format!("writing {}", temporary.display()))?;
        std::fs::rename(&temporary, &path)
            .with_context(|| format!("renaming into {}", file.path))?;
    }
    Ok(stale)
}

/// The line every generated Rust file starts with.
pub(crate) fn banner(comment: &str) -> String {
    format!(
        "{comment} Generated by render-store-bindgen from wit/render-store.wit: do not edit.\n\
         {comment} Change the WIT, then run `cargo run -p render-store-bindgen`.\n"
    )
}

/// Rust source as `cargo fmt` leaves it, so the workspace's format check passes on the
/// generated files as on the rest.
fn rustfmt(root: &Path, source: &str) -> Result<String> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running rustfmt (the toolchain's rustfmt component)")?;
    let mut stdin = child.stdin.take().context("rustfmt's standard input")?;
    let text = source.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let output = child.wait_with_output().context("waiting for rustfmt")?;
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("writing to rustfmt panicked"))?
        .context("writing to rustfmt")?;
    if !output.status.success() {
        bail!(
            "rustfmt refused the generated code:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    String::from_utf8(output.stdout).context("rustfmt's output is not UTF-8")
}
