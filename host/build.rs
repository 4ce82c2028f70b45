//! Builds the guest crate into the render-store component and embeds it.
//!
//! The guest is compiled by a nested cargo for `wasm32-unknown-unknown` (std there makes
//! no imports, unlike `wasm32-wasip2`, whose std imports WASI), with its own target
//! directory so it never waits on the outer build's lock, then made a component with
//! `wit-component` from the WIT metadata wit-bindgen embedded in the core module.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_TARGET: &str = "wasm32-unknown-unknown";
const GUEST_PROFILE: &str = "guest-wasm";

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir
        .parent()
        .expect("host/ is inside the workspace");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    for watched in [
        "guest/src",
        "guest/Cargo.toml",
        "wit",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    let target_dir = guest_target_dir(&out_dir);
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["rustc", "--package", "render-store-guest", "--lib"])
        .args(["--crate-type", "cdylib", "--target", GUEST_TARGET])
        .args(["--profile", GUEST_PROFILE, "--target-dir"])
        .arg(&target_dir)
        // 128-bit SIMD for the string scanner: every host we target (wasmtime, jco,
        // wasmtime-py) runs it.
        .args(["--", "-C", "target-feature=+simd128"])
        // A 64 KiB shadow stack (the default is 1 MiB): the guest's parser, encoder and
        // diff are iterative, so it never needs more, and an overflow runs below address
        // 0 and traps. Stack, data and a heap of ~160 KiB that small calls never outgrow
        // then fit in an initial memory of 256 KiB, which the host keeps resident
        // between calls (runtime.rs).
        .args(["-C", "link-arg=-zstack-size=65536"])
        .args(["-C", "link-arg=--initial-memory=262144"]);
    // The outer build's flags, target dir and wrappers (clippy's among them) are for the
    // host; the guest must build the same way whatever the outer command was.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .expect("could not run cargo to build the guest component");
    if !status.success() {
        panic!(
            "building the guest for {GUEST_TARGET} failed ({status}); if the target is \
             missing, run `rustup target add {GUEST_TARGET}`"
        );
    }

    let module_path = target_dir
        .join(GUEST_TARGET)
        .join(GUEST_PROFILE)
        .join("render_store_guest.wasm");
    let module = std::fs::read(&module_path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", module_path.display()));
    let component = wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .unwrap_or_else(|e| panic!("making a component of {}: {e:?}", module_path.display()));
    std::fs::write(out_dir.join("render_store.wasm"), component).expect("writing the component");
}

/// A target directory for the guest beside the outer one (found by the `CACHEDIR.TAG`
/// cargo writes at its root), so debug, release and clippy builds of the host share
/// one guest build; inside `OUT_DIR` if there is none.
fn guest_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(|dir| dir.join("guest"))
        .unwrap_or_else(|| out_dir.join("guest-target"))
}
