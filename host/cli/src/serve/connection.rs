//! One connection: the write deadline an answer sets, and the answer's body, which
//! holds its request's place until the client has taken it.

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::time::Instant;

/// A connection's handle, which its requests carry: the answer being sent sets the
/// time by which the client must have taken it.
#[derive(Clone)]
pub(super) struct Connection {
    pub(super) write_deadline: Arc<watch::Sender<Option<Instant>>>,
}

/// Runs one connection until it ends, or closes it when its client has not taken an
/// answer by the write deadline. hyper itself has no write timeout, and a response
/// body is not even polled while the socket is full, so the deadline is watched here,
/// beside the connection.
pub(super) async fn run_connection<F>(
    connection: F,
    mut deadline: watch::Receiver<Option<Instant>>,
    _place: OwnedSemaphorePermit,
) where
    F: Future<Output = Result<(), hyper::Error>>,
{
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
