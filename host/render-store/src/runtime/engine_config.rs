//! The engine settings that decide the compiled code, written once for the two places
//! that compile the component: the runtime (`runtime/mod.rs`), and `build.rs`, which
//! includes this file to precompile it with the `precompiled` feature. wasmtime refuses
//! to load code compiled under other settings, so both must use these.

/// The memory reservation of the default memory cap (1 GiB): the one the precompiled
/// code is compiled for (a call with another cap compiles, or reads the cache).
// build.rs, which includes this file, is its user; the library only checks it in a test.
#[cfg_attr(not(test), allow(dead_code))]
pub const DEFAULT_MEMORY_RESERVATION: u64 = 1 << 30;

/// The x86-64 features precompiled code may use: x86-64-v2 (SSE3 to SSE4.2, POPCNT),
/// which every x86-64 server of the last fifteen years has. Code compiled at start uses
/// every feature of the machine instead; precompiled code must run on whichever
/// machine the binary is copied to, and wasmtime checks these at start.
pub const PORTABLE_X86_64_FLAGS: &[&str] = &[
    "has_sse3",
    "has_ssse3",
    "has_sse41",
    "has_sse42",
    "has_popcnt",
];

/// Sets what the compiled code depends on: fuel metering and the memory reservation
/// (below 4 GiB the code checks bounds itself, so the reservation changes the code).
pub fn compile_settings(config: &mut wasmtime::Config, memory_reservation: u64) {
    config.consume_fuel(true);
    config.memory_reservation(memory_reservation);
    config.memory_reservation_for_growth(0);
}

/// Compiles for `triple` with [`PORTABLE_X86_64_FLAGS`] (other architectures: their
/// baseline) rather than for the features of the machine compiling.
pub fn portable_target(config: &mut wasmtime::Config, triple: &str) -> wasmtime::Result<()> {
    config.target(triple)?;
    if triple.starts_with("x86_64") {
        for flag in PORTABLE_X86_64_FLAGS {
            // SAFETY: the flags are x86-64 ISA extensions; wasmtime checks, when the
            // engine is made, that this machine has each one before code runs.
            unsafe {
                config.cranelift_flag_enable(flag);
            }
        }
    }
    Ok(())
}
