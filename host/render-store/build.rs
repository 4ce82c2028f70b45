//! Builds the guest crate into the render-store component and embeds it.
//!
//! The guest is compiled by a nested cargo for `wasm32-unknown-unknown` (std there makes
//! no imports, unlike `wasm32-wasip2`, whose std imports WASI), with its own target
//! directory so it never waits on the outer build's lock, then made a component with
//! `wit-component` from the WIT metadata wit-bindgen embedded in the core module.
//!
//! A toolchain without the wasm target gets it from rustup (machines with
//! `RUSTUP_AUTO_INSTALL=0` do not add the toolchain file's targets by themselves).
//! `RENDER_STORE_COMPONENT=/path/to/render-store.wasm` embeds a prebuilt component
//! instead (as `render-store component --out` writes it), so a user of the library needs
//! no wasm toolchain at all; CI checks that such a build equals a fresh one.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

// The `precompiled` feature: wasmtime, without its runtime, compiles the component here
// with the settings the runtime uses (the same file, included), for the build's target.
#[cfg(feature = "precompiled")]
#[path = "src/runtime/engine_config.rs"]
#[allow(dead_code)]
mod engine_config;

const GUEST_TARGET: &str = "wasm32-unknown-unknown";
const GUEST_PROFILE: &str = "guest-wasm";

/// The environment variable naming a prebuilt component to embed.
const PREBUILT_VAR: &str = "RENDER_STORE_COMPONENT";

fn main() {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    emit_wit_package();
    println!("cargo:rerun-if-env-changed={PREBUILT_VAR}");
    if let Some(prebuilt) = env::var_os(PREBUILT_VAR).filter(|v| !v.is_empty()) {
        embed_prebuilt(Path::new(&prebuilt), &out_dir);
        return;
    }
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir
        .ancestors()
        .nth(2)
        .expect("host/render-store/ is inside the workspace");
    for watched in [
        "guest/src",
        "guest/Cargo.toml",
        "wit",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    ensure_guest_target(root);
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
        // between calls (src/runtime/mod.rs, KEEP_RESIDENT).
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
             missing, run `rustup target add {GUEST_TARGET}`, or set {PREBUILT_VAR} to a \
             prebuilt component"
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
    write_component(&out_dir, &component);
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

/// Embeds the component at `path` after checking it is one: a wrong file would only fail
/// when the first store is opened, far from its cause.
fn embed_prebuilt(path: &Path, out_dir: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
    let bytes = std::fs::read(path)
        .unwrap_or_else(|e| panic!("{PREBUILT_VAR}={}: cannot read it: {e}", path.display()));
    // `\0asm`, then the component-model layer's version (0x0d) and layer (1).
    const COMPONENT_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
    if !bytes.starts_with(&COMPONENT_HEADER) {
        panic!(
            "{PREBUILT_VAR}={}: not a WebAssembly component (write one with \
             `render-store component --out FILE`)",
            path.display()
        );
    }
    write_component(out_dir, &bytes);
}

/// Adds the guest's target with rustup when the toolchain lacks it.
fn ensure_guest_target(root: &Path) {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let Some(sysroot) = sysroot else { return };
    if sysroot.join("lib/rustlib").join(GUEST_TARGET).is_dir() {
        return;
    }
    println!("cargo:warning=adding the {GUEST_TARGET} target with rustup (the guest needs it)");
    // In the workspace folder, rustup acts on the toolchain rust-toolchain.toml names.
    let added = Command::new("rustup")
        .current_dir(root)
        .args(["target", "add", GUEST_TARGET])
        .status()
        .map(|status| status.success())
        .unwrap_or(false);
    if !added {
        panic!(
            "the toolchain has no {GUEST_TARGET} target and rustup could not add it: run \
             `rustup target add {GUEST_TARGET}`, or set {PREBUILT_VAR} to a prebuilt component"
        );
    }
}

/// Writes the component to embed, and its SHA-256 (hex), which names its entry in the
/// compiled-component cache: computed here once rather than at every process start.
/// With the `precompiled` feature, the component compiled for the target too.
fn write_component(out_dir: &Path, component: &[u8]) {
    use sha2::{Digest, Sha256};
    std::fs::write(out_dir.join("render_store.wasm"), component).expect("writing the component");
    #[cfg(feature = "precompiled")]
    precompile(out_dir, component);
    let digest: String = Sha256::digest(component)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(out_dir.join("render_store.wasm.sha256"), digest)
        .expect("writing the component's digest");
}

/// Gives the crate the WIT package its component implements (`WIT_PACKAGE`), read from
/// the package line of wit/render-store.wit, so the version is written once.
fn emit_wit_package() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let wit = manifest_dir.join("../../wit/render-store.wit");
    println!("cargo:rerun-if-changed={}", wit.display());
    let text =
        std::fs::read_to_string(&wit).unwrap_or_else(|e| panic!("reading {}: {e}", wit.display()));
    let package = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("package ")?.strip_suffix(';'))
        .unwrap_or_else(|| panic!("{} has no package line", wit.display()));
    println!("cargo:rustc-env=RENDER_STORE_WIT_PACKAGE={package}");
}

/// Compiles the component for the target being built, as the runtime's engine would
/// with the default limits and the portable CPU features, into `render_store.cwasm`.
/// The runtime loads it only where wasmtime agrees it was made for that engine.
#[cfg(feature = "precompiled")]
fn precompile(out_dir: &Path, component: &[u8]) {
    let target = env::var("TARGET").expect("set by cargo");
    let mut config = wasmtime::Config::new();
    engine_config::compile_settings(&mut config, engine_config::DEFAULT_MEMORY_RESERVATION);
    engine_config::portable_target(&mut config, &target)
        .unwrap_or_else(|e| panic!("precompiling the component for {target}: {e:#}"));
    let engine = wasmtime::Engine::new(&config)
        .unwrap_or_else(|e| panic!("precompiling the component for {target}: {e:#}"));
    let compiled = engine
        .precompile_component(component)
        .unwrap_or_else(|e| panic!("precompiling the component for {target}: {e:#}"));
    std::fs::write(out_dir.join("render_store.cwasm"), compiled)
        .expect("writing the precompiled component");
    println!("cargo:rustc-env=RENDER_STORE_PRECOMPILED_TARGET={target}");
}
