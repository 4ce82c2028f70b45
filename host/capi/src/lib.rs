//! The C ABI of the render-store host library (`render-store`, with every URL scheme):
//! the store operations, the logic functions, the controller rules and traces, for any
//! language that can call C. Go (`host/go`, cgo) and Python (ctypes or cffi) are its
//! first callers.
//!
//! It follows wasmtime's C API: opaque handles, explicit ownership, errors as values.
//! It converts values and decides nothing (CONTRACT.md §1): every decision is the Rust
//! library's, or the component's inside it. `include/render_store.h` is generated from
//! this crate by cbindgen, so the doc comments here are the header's comments; a test
//! fails when the committed header and the code disagree.
//!
//! Every entry point catches panics (`error::guard`) and runs its call to completion on
//! one tokio runtime this library owns (`call`), blocking the calling thread; bucket
//! callbacks run on that same thread, on its own stack (`bucket`).

// The names are the C names the header declares (`rs_store`, `rs_buf`, ...).
#![allow(non_camel_case_types)]
#![warn(missing_docs)]
// Every exported function takes raw pointers from C and checks them itself; the
// `# Safety` section each would carry is the header's comment on ownership.
#![allow(clippy::missing_safety_doc)]

// In the order the header declares them (cbindgen keeps the order it reads).
mod bucket;
mod calls;
mod controller;
mod error;
mod fleet;
mod logic;
mod options;
mod store;
mod store_bucket;
mod trace;
mod value;

mod args;
mod call;
mod json;
mod json_call;

#[cfg(test)]
mod tests;

pub use bucket::*;
pub use calls::*;
pub use controller::*;
pub use error::*;
pub use logic::*;
pub use options::*;
pub use store::*;
pub use store_bucket::*;
pub use trace::*;
pub use value::*;

/// The version of this C ABI. It changes when a function, type or constant of the
/// header changes in a way a caller built against the previous header would notice;
/// adding a function or a field at the end of a sized struct does not change it.
pub const RS_ABI_VERSION: u32 = 3;

/// The C ABI's version, [`RS_ABI_VERSION`] of the library actually loaded: a caller
/// compares it with the `RS_ABI_VERSION` of the header it was built with.
#[unsafe(no_mangle)]
pub extern "C" fn rs_abi_version() -> u32 {
    RS_ABI_VERSION
}
