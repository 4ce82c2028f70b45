//! The C program of tests/c/ built against the committed header with the system's gcc,
//! linked against the library cargo built for this test (the shared library, and the
//! static one), and run: it stores, records, runs GC and reads back, on a bucket of C
//! callbacks and on a `file://` store. The header also compiles as C++.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder cargo put the library in for this test: beside the test executable
/// (`<target>/<profile>/deps/`; the crate is also an rlib, so `cargo test` builds its
/// shared and static forms there), or the profile's folder after a `cargo build`.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let profile = deps.parent().unwrap().to_path_buf();
    [deps, profile]
        .into_iter()
        .find(|dir| dir.join("librender_store_capi.so").exists())
        .unwrap_or_else(|| panic!("no librender_store_capi.so beside {}", exe.display()))
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn gcc(args: &[&str]) {
    let out = Command::new("gcc").args(args).output().expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run(program: &Path) {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("store");
    let out = Command::new(program)
        .arg(&folder)
        .env("RENDER_STORE_CACHE_DIR", work.path().join("cache"))
        .output()
        .expect("the C program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} failed:\n{stdout}\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("C bucket: stored, recorded, collected and read back"),
        "{stdout}"
    );
    assert!(stdout.contains("file:// store: stored"), "{stdout}");
    assert!(stdout.ends_with("the C program passed\n"), "{stdout}");
    // The release's folder is gone with its keys; the store's root stays.
    assert!(folder.is_dir());
}

#[test]
fn the_c_program_runs_on_the_shared_library() {
    let lib = library_dir();
    let out = tempfile::tempdir().unwrap();
    let program = out.path().join("store_test");
    let include = crate_dir().join("include");
    let source = crate_dir().join("tests/c/store_test.c");
    gcc(&[
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Wpedantic",
        "-Werror",
        "-D_POSIX_C_SOURCE=200809L",
        "-I",
        include.to_str().unwrap(),
        source.to_str().unwrap(),
        "-L",
        lib.to_str().unwrap(),
        "-lrender_store_capi",
        &format!("-Wl,-rpath,{}", lib.display()),
        "-lpthread",
        "-o",
        program.to_str().unwrap(),
    ]);
    run(&program);
}

#[test]
fn the_c_program_runs_linked_statically() {
    let lib = library_dir();
    let out = tempfile::tempdir().unwrap();
    let program = out.path().join("store_test_static");
    let include = crate_dir().join("include");
    let source = crate_dir().join("tests/c/store_test.c");
    let archive = lib.join("librender_store_capi.a");
    gcc(&[
        "-std=c11",
        "-D_POSIX_C_SOURCE=200809L",
        "-I",
        include.to_str().unwrap(),
        source.to_str().unwrap(),
        archive.to_str().unwrap(),
        "-Wl,--gc-sections",
        "-lpthread",
        "-ldl",
        "-lm",
        "-lgcc_s",
        "-o",
        program.to_str().unwrap(),
    ]);
    run(&program);
}

#[test]
fn the_header_compiles_as_cpp() {
    let include = crate_dir().join("include/render_store.h");
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-Wall",
            "-Werror",
            "-fsyntax-only",
            "-x",
            "c++",
        ])
        .arg(&include)
        .output();
    match out {
        Ok(out) => assert!(
            out.status.success(),
            "g++ rejects the header:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("g++ cannot run ({e}); it is part of the C toolchain this test needs"),
    }
}
