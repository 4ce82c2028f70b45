//! Deadlines and cancellation of store calls (CONTRACT.md §15).
//!
//! A caller's patience reaches the bucket request in flight: a call past its deadline,
//! or whose [`CancelToken`] is cancelled, is dropped where it waits, and dropping it
//! drops the component's call (wasmtime unwinds the guest's fiber) and with it the
//! bucket request the guest was waiting on (for a cloud backend, its HTTP request and
//! connection). A dropped future cancels the same way: these are for callers that
//! cannot drop (the C ABI, a controller's context) or want the error to say why.
//!
//! A call cut so leaves the store as a crash at that moment would: a blob or entry is
//! written whole or not at all (atomic puts), GC deletes entries before the blobs they
//! name, and a second run ends where an uninterrupted one would.

use crate::error::{Error, Result};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Cancels the calls of every store it was given to ([`crate::RenderStore::with_cancel`]),
/// from any thread: those in flight end at once with [`Error::Cancelled`], later ones
/// before their first bucket call. Clones share one state; cancelling is for good.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelState>,
}

#[derive(Default)]
struct CancelState {
    cancelled: AtomicBool,
    notify: Notify,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every call that waits on this token, now and later. Cheap, never
    /// blocks, and may be called from any thread, any number of times.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check, so a cancel between the two is not missed.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// When a store's calls must end: what [`crate::RenderStore::with_deadline`],
/// [`crate::RenderStore::with_timeout`] and [`crate::RenderStore::with_cancel`] set.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bounds {
    /// Every call ends by this instant.
    pub deadline: Option<Instant>,
    /// Each call ends this long after it starts.
    pub timeout: Option<Duration>,
    /// Every call ends when this is cancelled.
    pub cancel: Option<CancelToken>,
}

impl Bounds {
    /// Runs `call` within the bounds: its output, or [`Error::DeadlineExceeded`] /
    /// [`Error::Cancelled`] when it was cut (dropped). A call whose bounds have already
    /// passed is not started. Without bounds, `call` runs as it is.
    pub async fn run<F: Future>(&self, call: F) -> Result<F::Output> {
        if self.deadline.is_none() && self.timeout.is_none() && self.cancel.is_none() {
            return Ok(call.await);
        }
        let start = Instant::now();
        let end = match (
            self.deadline,
            self.timeout.and_then(|t| start.checked_add(t)),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let cut = |now: Instant| Error::DeadlineExceeded {
            after: now.saturating_duration_since(start),
        };
        if self.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            return Err(Error::Cancelled);
        }
        if end.is_some_and(|end| end <= start) {
            return Err(cut(start));
        }
        let cancelled = async {
            match &self.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let expired = async {
            match end {
                Some(end) => tokio::time::sleep_until(end.into()).await,
                None => std::future::pending().await,
            }
        };
        // The call first: one that finished at the last moment keeps its answer.
        tokio::select! {
            biased;
            output = call => Ok(output),
            () = cancelled => Err(Error::Cancelled),
            () = expired => Err(cut(Instant::now())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_ends_at_its_deadline_and_one_past_it_never_starts() {
        let bounds = Bounds {
            timeout: Some(Duration::from_millis(50)),
            ..Bounds::default()
        };
        let start = Instant::now();
        let cut = bounds.run(std::future::pending::<()>()).await;
        let took = start.elapsed();
        assert!(
            matches!(cut, Err(Error::DeadlineExceeded { after }) if after >= Duration::from_millis(50)),
            "{cut:?}"
        );
        assert!(took < Duration::from_millis(150), "{took:?}");
        assert_eq!(bounds.run(async { 7 }).await.unwrap(), 7);

        let past = Bounds {
            deadline: Some(Instant::now()),
            ..Bounds::default()
        };
        let started = std::cell::Cell::new(false);
        let result = past.run(async { started.set(true) }).await;
        assert!(matches!(result, Err(Error::DeadlineExceeded { .. })));
        assert!(!started.get(), "a call past its deadline is not started");
    }

    #[tokio::test]
    async fn a_cancel_from_another_thread_ends_the_call() {
        let token = CancelToken::new();
        let bounds = Bounds {
            cancel: Some(token.clone()),
            ..Bounds::default()
        };
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            token.cancel();
        });
        let result = bounds.run(std::future::pending::<()>()).await;
        assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
        canceller.join().unwrap();
        // Cancelled for good: the next call does not start.
        assert!(matches!(bounds.run(async {}).await, Err(Error::Cancelled)));
    }
}
