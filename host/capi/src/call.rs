//! How a C call runs: to completion, on the calling thread, on one tokio runtime this
//! library makes on first use and keeps for the life of the process (its worker threads
//! serve the cloud backends' I/O and the `file://` store's blocking tasks; the guest
//! itself runs on the caller's thread).
//!
//! Bucket callbacks run on the calling thread too, but outside the component's call:
//! wasmtime runs the guest, and so the host functions it imports, on a fiber stack of
//! its own, and a Go or Python callback must not run there (Go's cgo and Python's
//! recursion checks both expect the thread's own stack). So a bucket call made inside
//! the fiber becomes a job sent to the loop that drives the call ([`block_on`]), which
//! runs it between two polls of the call, on the thread's stack, and hands the answer
//! back.

use crate::error::{Result, rs_error};
use std::cell::RefCell;
use std::future::Future;
use std::sync::OnceLock;
use tokio::sync::{mpsc, oneshot};

/// A bucket callback to run on the calling thread's own stack.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// Where the call this thread is driving takes its jobs; `None` when the thread is
    /// not inside a call.
    static JOBS: RefCell<Option<mpsc::UnboundedSender<Job>>> = const { RefCell::new(None) };
}

/// The runtime every call runs on.
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("render-store-io")
                .build()
                .map_err(|e| format!("cannot start its async runtime: {e}"))
        })
        .as_ref()
        .map_err(|e| rs_error::runtime(e.clone()))
}

/// Clears the thread's job queue when the call ends, also when it unwinds.
struct InCall;

impl Drop for InCall {
    fn drop(&mut self) {
        JOBS.with(|j| *j.borrow_mut() = None);
    }
}

/// Runs `call` to completion on this thread, serving its bucket callbacks here.
///
/// A call from inside one of this thread's bucket callbacks is refused: the outer call
/// holds one of the runtime's instance slots while it waits for the callback, so calls
/// nested that way could wait on each other for ever once the slots run out.
pub(crate) fn block_on<F: Future>(call: F) -> Result<F::Output> {
    if JOBS.with(|j| j.borrow().is_some()) {
        return Err(rs_error::argument(
            "a render-store call was made from inside a bucket callback of another call on \
             the same thread; a callback must answer from its bucket alone",
        ));
    }
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(rs_error::argument(
            "a render-store call was made from a thread that runs an async runtime; the C \
             ABI blocks the calling thread, so call it from a thread of its own",
        ));
    }
    let rt = runtime()?;
    let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
    JOBS.with(|j| *j.borrow_mut() = Some(jobs));
    let _in_call = InCall;
    Ok(rt.block_on(async move {
        let mut call = std::pin::pin!(call);
        loop {
            tokio::select! {
                biased;
                output = &mut call => break output,
                Some(job) = queue.recv() => job(),
            }
        }
    }))
}

/// Runs `callback` on the stack of the thread driving this call and returns what it
/// returned; `None` if it never ran to its end (it panicked on a blocking thread).
///
/// The thread is the one whose [`block_on`] polls this future, which is where the
/// thread-local queue is read. A future polled elsewhere (no call on its thread) has no
/// such loop: its callback runs on one of the runtime's blocking threads instead.
pub(crate) async fn on_calling_thread<T: Send + 'static>(
    callback: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (answer, answered) = oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = answer.send(callback());
    });
    let jobs = JOBS.with(|j| j.borrow().clone());
    let unserved = match jobs {
        Some(jobs) => jobs.send(job).err().map(|e| e.0),
        None => Some(job),
    };
    if let Some(job) = unserved {
        tokio::task::spawn_blocking(job);
    }
    answered.await.ok()
}
