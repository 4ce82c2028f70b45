//! The controller-side rules of CONTRACT.md §7–§8, as `render_store::controller` has
//! them. Pure: no component call, no bucket; any thread, several at once.

use crate::args::{opt_text, out, out_buf};
use crate::error::{guard, rs_error};
use crate::json;
use crate::store::rs_store;
use crate::value::rs_buf;
use render_store::controller::{self, ReleaseRefs};
use std::ffi::c_char;

/// The effective keepHistory of a Release whose keepHistory is `keep_history` when
/// `has_keep_history`, unset otherwise: `*keep` is the number of entries GC keeps (unset
/// gives the library's default, 10), or 0 when GC is off (a keepHistory of 0 or less).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_effective_keep_history(
    has_keep_history: bool,
    keep_history: i64,
    keep: *mut i64,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rule: `keep` valid for a write.
        let keep = unsafe { out(keep, "keep") }?;
        *keep = controller::effective_keep_history(has_keep_history.then_some(keep_history)).keep();
        Ok(())
    })
}

/// `resolvedRetentionPolicy.historyCount` for a Release with this keepHistory (as for
/// `rs_effective_keep_history`) and `store` (NULL: no render store, which gives 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_history_count(
    store: *const rs_store,
    has_keep_history: bool,
    keep_history: i64,
    count: *mut i64,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules: `store` NULL or a live store, `count` writable.
        let (store, count) = unsafe { (store.as_ref(), out(count, "count")?) };
        *count = controller::history_count(
            store.map(rs_store::inner),
            has_keep_history.then_some(keep_history),
        );
        Ok(())
    })
}

/// The renders GC must keep whatever the history says: the render this sync applied
/// and the Release's `status.lastSuccessful`, `status.lastAttempted`, `pin` and
/// `status.lastHealthy` renderRefs, each NULL when absent (empty ones are ignored
/// too). `*refs` is JSON text: an array of the distinct renderRefs, sorted — the
/// `protected` list of `rs_store_gc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_protected_refs(
    applied: *const c_char,
    applied_len: usize,
    last_successful: *const c_char,
    last_successful_len: usize,
    last_attempted: *const c_char,
    last_attempted_len: usize,
    pin: *const c_char,
    pin_len: usize,
    last_healthy: *const c_char,
    last_healthy_len: usize,
    refs: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, applied, release_refs) = unsafe {
            let owned = |p, n, what| opt_text(p, n, what).map(|t| t.map(String::from));
            (
                out_buf(refs, "refs")?,
                opt_text(applied, applied_len, "applied")?,
                ReleaseRefs {
                    last_successful: owned(
                        last_successful,
                        last_successful_len,
                        "last_successful",
                    )?,
                    last_attempted: owned(last_attempted, last_attempted_len, "last_attempted")?,
                    pin: owned(pin, pin_len, "pin")?,
                    last_healthy: owned(last_healthy, last_healthy_len, "last_healthy")?,
                },
            )
        };
        out.set_text(json::strings(&controller::protected_refs(
            applied,
            &release_refs,
        )));
        Ok(())
    })
}
