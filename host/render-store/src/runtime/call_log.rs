//! The call log: the bucket calls of one operation as the component was given them, at
//! the WIT boundary. Only the host sees them; a trace is written from them
//! (the `trace` module). It sits below the sandbox that fills it.

use std::sync::Mutex;

/// One recorded bucket call: the WIT `trace.recorded-call`.
pub use super::wit_trace::RecordedCall;

/// Where a store records the bucket calls of its operations, as the component was given
/// them (see `RenderStore::with_call_log`).
#[derive(Debug, Default)]
pub struct CallLog(Mutex<Vec<RecordedCall>>);

impl CallLog {
    /// Appends a call.
    pub fn push(&self, call: RecordedCall) {
        self.0.lock().expect("not poisoned").push(call);
    }

    /// The calls recorded so far, emptying the log.
    pub fn take(&self) -> Vec<RecordedCall> {
        std::mem::take(&mut *self.0.lock().expect("not poisoned"))
    }
}
