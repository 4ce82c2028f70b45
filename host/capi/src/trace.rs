//! Replaying traces. Recording is the `trace` argument of each traceable store
//! operation.

use crate::args::{opt_buf, out, text};
use crate::call::block_on;
use crate::error::{guard, rs_error};
use crate::options::{rs_options, runtime_of};
use crate::store::rs_keyring;
use crate::value::rs_buf;
use std::ffi::c_char;

/// Replays a trace (TRACES.md; `trace_len` bytes of its text) in the component against
/// its recorded answers alone, with the limits of `options` (NULL: the defaults) and
/// `keyring` (NULL: none), which must be the keyring the trace was recorded with (a
/// trace of an encrypted store names its key ids; another keyring is `RS_ERROR_TRACE`
/// at line 1).
/// `*matches` says whether every call and the result match; `*text` (NULL: not wanted)
/// receives the report for people, what `render-store replay` prints, and `*json` (NULL:
/// not wanted) the report as JSON, what `render-store replay --json` prints. A trace
/// that does not follow the format is `RS_ERROR_TRACE` with its line; a replay the
/// sandbox stopped is the stopping error (`RS_ERROR_FUEL`, …). Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_replay(
    options: *const rs_options,
    trace: *const c_char,
    trace_len: usize,
    keyring: *const rs_keyring,
    matches: *mut bool,
    text: *mut rs_buf,
    json: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (text_out, json_out, matches, trace, keyring, rt) = unsafe {
            (
                opt_buf(text),
                opt_buf(json),
                out(matches, "matches")?,
                self::text(trace, trace_len, "trace")?,
                rs_keyring::get(keyring),
                runtime_of(options)?,
            )
        };
        let report = block_on(rt.replay(trace, &keyring))??;
        *matches = report.matches;
        if let Some(b) = text_out {
            b.set_text(report.text);
        }
        if let Some(b) = json_out {
            b.set_text(report.json);
        }
        Ok(())
    })
}
