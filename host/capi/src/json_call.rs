//! What every generated `rs_call_*` entry point does (`calls.rs`): read the arguments'
//! JSON, call the export through the Rust library, write the answer's JSON.

use crate::args::{bytes, out_buf};
use crate::call::block_on;
use crate::error::{guard, rs_error};
use crate::options::{rs_options, runtime_of};
use crate::store::rs_store;
use crate::value::rs_buf;
use serde_json::Value;

/// The arguments' JSON: an empty text is no arguments.
fn arguments(text: &[u8]) -> crate::error::Result<Value> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(text)
        .map_err(|e| rs_error::input(format!("the arguments are not JSON: {e}")))
}

/// A `logic` or `trace` function, with the runtime of `options`.
///
/// # Safety
///
/// The header's rules for the generated entry points.
pub(crate) unsafe fn runtime(
    options: *const rs_options,
    function: &str,
    args: *const u8,
    args_len: usize,
    result: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, text, rt) = unsafe {
            (
                out_buf(result, "result")?,
                bytes(args, args_len, "args")?,
                runtime_of(options)?,
            )
        };
        let args = arguments(text)?;
        let answer = block_on(rt.call_json(function, &args))??;
        out.set_text(answer.to_string());
        Ok(())
    })
}

/// A `store` function, on `store`.
///
/// # Safety
///
/// The header's rules for the generated entry points.
pub(crate) unsafe fn store(
    store: *const rs_store,
    function: &str,
    args: *const u8,
    args_len: usize,
    result: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, text, store) = unsafe {
            (
                out_buf(result, "result")?,
                bytes(args, args_len, "args")?,
                crate::store::get(store)?,
            )
        };
        let args = arguments(text)?;
        let answer = block_on(store.inner().call_json(function, &args))??;
        out.set_text(answer.to_string());
        Ok(())
    })
}
