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

/// Reads the arguments, runs `call` on them and writes its answer: what every entry
/// point does around its own call.
///
/// # Safety
///
/// The header's rules for `args`, `args_len` and `result`.
unsafe fn answer<F>(
    args: *const u8,
    args_len: usize,
    result: *mut rs_buf,
    call: impl FnOnce(Value) -> crate::error::Result<F>,
) -> *mut rs_error
where
    F: std::future::Future<Output = render_store::Result<Value>>,
{
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, text) = unsafe { (out_buf(result, "result")?, bytes(args, args_len, "args")?) };
        let answer = block_on(call(arguments(text)?)?)??;
        out.set_text(answer.to_string());
        Ok(())
    })
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
    // SAFETY: the header's rules for every pointer argument.
    unsafe {
        answer(args, args_len, result, |args| {
            let rt = runtime_of(options)?;
            Ok(async move { rt.call_json(function, &args).await })
        })
    }
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
    // SAFETY: the header's rules for every pointer argument.
    unsafe {
        answer(args, args_len, result, |args| {
            let store = crate::store::get(store)?.inner().clone();
            Ok(async move { store.call_json(function, &args).await })
        })
    }
}
