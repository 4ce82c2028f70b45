//! One connection: whether its client showed the token (the bound on connections that
//! did not), the write deadline an answer sets, and the answer's body, which holds its
//! request's place until the client has taken it.

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;

/// A connection's handle, which its requests carry: the answer being sent sets the
/// time by which the client must have taken it.
#[derive(Clone)]
pub(super) struct Connection {
    pub(super) write_deadline: Arc<watch::Sender<Option<Instant>>>,
    pub(super) admitted: Arc<Admitted>,
}

/// One open connection, as [`Admission`] sees it.
#[derive(Default)]
pub(super) struct Admitted {
    /// Told when the connection is to be closed to make room.
    close: Notify,
    /// Its place among the connections whose client showed the token, once it did.
    trusted: tokio::sync::OnceCell<OwnedSemaphorePermit>,
}

/// Every connection is accepted, and counts as *unauthenticated* until one of its
/// requests shows the token (or a session's cookie): the connections of clients that
/// show nothing (idle ones, `/healthz` probes, those answered 401) are at most
/// `max_unauthenticated`, and a new one closes the oldest of them past that. A
/// connection that showed the token then takes one of `max_trusted` places, waiting
/// for one if need be, and keeps it until it closes. So any number of connections that
/// show nothing never keeps a client with the token, or a probe, from being answered.
pub(super) struct Admission {
    unauthenticated: Mutex<VecDeque<Arc<Admitted>>>,
    max_unauthenticated: usize,
    trusted: Arc<Semaphore>,
}

impl Admission {
    pub(super) fn new(max_trusted: usize, max_unauthenticated: usize) -> Admission {
        Admission {
            unauthenticated: Mutex::new(VecDeque::new()),
            max_unauthenticated,
            trusted: Arc::new(Semaphore::new(max_trusted)),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<Admitted>>> {
        self.unauthenticated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A new connection, among the unauthenticated ones; the oldest of those is told to
    /// close when there are too many.
    pub(super) fn admit(&self) -> Arc<Admitted> {
        let admitted = Arc::new(Admitted::default());
        let mut queue = self.queue();
        queue.push_back(admitted.clone());
        if queue.len() > self.max_unauthenticated
            && let Some(oldest) = queue.pop_front()
        {
            tracing::debug!("closed the oldest connection that showed no token, to make room");
            oldest.close.notify_one();
        }
        admitted
    }

    /// The connection's client showed the token: it leaves the unauthenticated ones at
    /// once and has a place among the trusted ones when this returns.
    pub(super) async fn trust(&self, admitted: &Arc<Admitted>) {
        if admitted.trusted.initialized() {
            return;
        }
        self.forget(admitted);
        let places = self.trusted.clone();
        // The semaphore is never closed, so the error case cannot happen.
        let _ = admitted
            .trusted
            .get_or_try_init(|| places.acquire_owned())
            .await;
    }

    /// The connection ended.
    pub(super) fn forget(&self, admitted: &Arc<Admitted>) {
        self.queue().retain(|a| !Arc::ptr_eq(a, admitted));
    }
}

/// Runs one connection until it ends, or closes it when its client has not taken an
/// answer by the write deadline, or when [`Admission`] needs its room. hyper itself has
/// no write timeout, and a response body is not even polled while the socket is full,
/// so the deadline is watched here, beside the connection.
pub(super) async fn run_connection<F>(
    connection: F,
    mut deadline: watch::Receiver<Option<Instant>>,
    admission: Arc<Admission>,
    admitted: Arc<Admitted>,
) where
    F: Future<Output = Result<(), hyper::Error>>,
{
    struct Forget(Arc<Admission>, Arc<Admitted>);
    impl Drop for Forget {
        fn drop(&mut self) {
            self.0.forget(&self.1);
        }
    }
    let _forget = Forget(admission, admitted.clone());
    tokio::pin!(connection);
    let mut watching = true;
    loop {
        let until = *deadline.borrow_and_update();
        tokio::select! {
            ended = &mut connection => {
                if let Err(e) = ended {
                    tracing::debug!("HTTP connection ended: {e}");
                }
                return;
            }
            () = admitted.close.notified() => return,
            changed = deadline.changed(), if watching => {
                // The sender goes with the connection's service: nothing more to watch.
                watching = changed.is_ok();
            }
            () = sleep_until_some(until), if until.is_some() => {
                tracing::warn!(
                    "closed a connection whose client did not read its answer within the \
                     write timeout (serve --write-timeout)"
                );
                return;
            }
        }
    }
}

pub(super) async fn sleep_until_some(until: Option<Instant>) {
    match until {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The pieces a response body hands hyper at a time: hyper asks for the next only
/// when it has written the previous, so a client that stops reading leaves the rest
/// with the body (and its place held) instead of in hyper's buffer.
const RESPONSE_CHUNK_BYTES: usize = 64 << 10;

/// What a request holds until its answer has been taken.
#[derive(Default)]
pub(super) struct Held {
    pub(super) place: Option<OwnedSemaphorePermit>,
    pub(super) body_place: Option<OwnedSemaphorePermit>,
}

/// A response body that hands its data over in pieces, starts the connection's write
/// deadline when hyper first asks for it, and holds the request's places until it is
/// dropped: when hyper has taken all of it, or the connection is closed.
pub(super) struct Sending {
    pub(super) inner: Body,
    /// The part of the inner body's last frame not handed over yet.
    pub(super) rest: Bytes,
    pub(super) _held: Held,
    pub(super) connection: Option<Connection>,
    pub(super) write_timeout: Duration,
    pub(super) started: bool,
}

impl http_body::Body for Sending {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if !this.started {
            this.started = true;
            if let Some(c) = &this.connection {
                c.write_deadline
                    .send_replace(Some(Instant::now() + this.write_timeout));
            }
        }
        if !this.rest.is_empty() {
            let n = this.rest.len().min(RESPONSE_CHUNK_BYTES);
            return Poll::Ready(Some(Ok(Frame::data(this.rest.split_to(n)))));
        }
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(mut data) => {
                    if data.len() > RESPONSE_CHUNK_BYTES {
                        this.rest = data.split_off(RESPONSE_CHUNK_BYTES);
                    }
                    Poll::Ready(Some(Ok(Frame::data(data))))
                }
                Err(frame) => Poll::Ready(Some(Ok(frame))),
            },
            other => Poll::Ready(other),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + rest);
        }
        hint.set_lower(inner.lower() + rest);
        hint
    }
}
