//! The server-wide budget for render work in flight: every request that reads renders
//! (a render's bytes or page, a diff, a diff page, a preview, the fleet pages' releases
//! one by one) reserves what it will hold before it reads them, and waits for room, or is answered 503 with `Retry-After`,
//! when other requests hold the budget. So concurrent large requests queue instead of
//! taking the server's memory together: `--max-concurrent-requests` bounds how many
//! requests run, this bounds what they hold.
//!
//! A request's weight is twice the stored size of the renders it reads, each learned
//! from a metadata request (`exists`) first: the largest views hold a render about
//! twice (its bytes in the sandbox, and a copy while they cross into it, or the view
//! made from them; BENCHMARKS.md, scale). A request heavier than the whole budget
//! waits until it can run alone.

use super::App;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use render_store::Release;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a request waits for room in the budget before it is answered 503.
pub(crate) const WAIT: Duration = Duration::from_secs(10);

/// What a client answered 503 is told to wait before asking again, in seconds.
pub(crate) const RETRY_AFTER_SECONDS: u64 = 5;

/// The budget's unit: reservations are counted in KiB, so a semaphore's permits cover
/// terabytes.
const UNIT: u64 = 1024;

/// Render bytes the server's requests may hold at once.
#[derive(Debug)]
pub(crate) struct RenderBudget {
    units: Arc<Semaphore>,
    total: u32,
    wait: Duration,
}

/// Room held in the budget until dropped (with the response, or when the request ends).
pub(crate) type Reservation = OwnedSemaphorePermit;

impl RenderBudget {
    /// A budget of `bytes` (at least one unit).
    pub(crate) fn new(bytes: usize) -> RenderBudget {
        let total = u32::try_from((bytes as u64).div_ceil(UNIT).max(1)).unwrap_or(u32::MAX);
        RenderBudget {
            units: Arc::new(Semaphore::new(total as usize)),
            total,
            wait: WAIT,
        }
    }

    /// Room for `bytes` (the whole budget when it is more), waiting up to [`WAIT`].
    pub(crate) async fn reserve(&self, bytes: u64) -> Result<Reservation, Busy> {
        let units = u32::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .clamp(1, self.total);
        match tokio::time::timeout(self.wait, self.units.clone().acquire_many_owned(units)).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(Busy { bytes }),
        }
    }
}

/// The room one fleet page (`/changes`, `/images`) reads its releases in, from the
/// same budget as a diff's renders and weighed as they are (twice the stored size of
/// what a release's reading holds), so fleet pages and diff pages, or two fleet pages,
/// queue for the memory rather than take it together.
///
/// One difference: a page reads a few releases at once, and the room its own releases
/// hold comes free as each is read. A release waiting behind its own page's releases is
/// not waiting on a busy server, so a wait ends in [`Busy`] only when, for a whole
/// [`WAIT`], the page held no room and was given none: when other requests held it.
pub(crate) struct FleetReads<'a> {
    budget: &'a RenderBudget,
    page: Arc<PageRoom>,
}

/// What a fleet page's releases hold of the budget.
#[derive(Default)]
struct PageRoom {
    /// How many of the page's releases hold room now.
    holding: AtomicUsize,
    /// How many times one of them was given room or gave it back: a wait that saw it
    /// change waited on the page's own releases, not on others alone.
    moves: AtomicUsize,
}

/// Room one release of a fleet page holds while it is read.
pub(crate) struct FleetHeld {
    _room: Reservation,
    page: Arc<PageRoom>,
}

impl Drop for FleetHeld {
    fn drop(&mut self) {
        self.page.holding.fetch_sub(1, Ordering::SeqCst);
        self.page.moves.fetch_add(1, Ordering::SeqCst);
    }
}

impl RenderBudget {
    /// The room of one fleet page.
    pub(crate) fn fleet(&self) -> FleetReads<'_> {
        FleetReads {
            budget: self,
            page: Arc::default(),
        }
    }
}

impl render_store::fleet::ReadBudget for FleetReads<'_> {
    type Held = FleetHeld;
    type Busy = Busy;

    async fn reserve(&self, _release: &Release, bytes: u64) -> Result<FleetHeld, Busy> {
        let bytes = bytes.saturating_mul(2);
        let page = &self.page;
        loop {
            let moves = page.moves.load(Ordering::SeqCst);
            match self.budget.reserve(bytes).await {
                Ok(room) => {
                    page.holding.fetch_add(1, Ordering::SeqCst);
                    page.moves.fetch_add(1, Ordering::SeqCst);
                    return Ok(FleetHeld {
                        _room: room,
                        page: page.clone(),
                    });
                }
                Err(busy) => {
                    let own = page.holding.load(Ordering::SeqCst) > 0
                        || page.moves.load(Ordering::SeqCst) != moves;
                    if !own {
                        return Err(busy);
                    }
                }
            }
        }
    }
}

/// The budget stayed full for [`WAIT`]: the request was not started.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Busy {
    bytes: u64,
}

impl Busy {
    /// What the client is told.
    pub(crate) fn message(&self) -> String {
        format!(
            "the server is busy with other renders: this request needs room for {} bytes \
             of render work and none came free within {} s (serve \
             --max-render-bytes-in-flight); try again in {RETRY_AFTER_SECONDS} s",
            self.bytes,
            WAIT.as_secs()
        )
    }

    /// `response` (a 503 made by the caller, JSON or a page) with `Retry-After`.
    pub(crate) fn with_retry_after(mut response: Response) -> Response {
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        response
    }
}

/// `response`, its body holding `reservation` until it is dropped: when the answer has
/// been sent, or the connection closed. An answer not yet read is render memory the
/// server still holds.
pub(crate) fn held_until_sent(response: Response, reservation: Reservation) -> Response {
    response.map(|inner| {
        axum::body::Body::new(HeldBody {
            inner,
            _reservation: reservation,
        })
    })
}

/// A body that holds a reservation as long as it lives.
struct HeldBody {
    inner: axum::body::Body,
    _reservation: Reservation,
}

impl http_body::Body for HeldBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Reserves room for reading the renders `refs` of `release` (whole renderRefs),
/// twice their stored sizes plus `extra` bytes (a preview's body): one `exists` each.
/// A render that is not stored weighs nothing (its read will say so); a failed
/// `exists` counts as the largest render the store takes, so a store that answers
/// badly is never a reason to let a request through unweighed.
pub(crate) async fn reserve_renders(
    app: &App,
    release: &Release,
    refs: &[&str],
    extra: u64,
) -> Result<Reservation, Busy> {
    let mut bytes = extra;
    if let Some(store) = app.observer.store() {
        for r in refs {
            let size = match store.runtime().render_key(release, r).await {
                Ok(key) => match store.bucket().exists(&key).await {
                    Ok(size) => size.unwrap_or(0),
                    Err(_) => render_store::MAX_RENDER_BYTES as u64,
                },
                // Not a renderRef: the read refuses it before any bucket call.
                Err(_) => 0,
            };
            bytes = bytes.saturating_add(size.saturating_mul(2));
        }
    }
    app.renders.reserve(bytes).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn room_is_held_until_dropped_and_the_heaviest_runs_alone() {
        let budget = RenderBudget {
            wait: Duration::from_millis(50),
            ..RenderBudget::new(10 * 1024)
        };
        let a = budget.reserve(6 * 1024).await.unwrap();
        let b = budget.reserve(4 * 1024).await.unwrap();
        // Full: a third waits, then gives up.
        let busy = budget.reserve(1).await.unwrap_err();
        assert!(busy.message().contains("try again"), "{}", busy.message());
        drop((a, b));
        // More than the whole budget: it waits for all of it, then runs alone.
        let all = budget.reserve(1 << 40).await.unwrap();
        assert_eq!(all.num_permits(), 10);
    }

    #[tokio::test]
    async fn a_fleet_page_waits_behind_its_own_releases_not_behind_others() {
        use render_store::fleet::ReadBudget;
        let budget = RenderBudget {
            wait: Duration::from_millis(50),
            ..RenderBudget::new(10 * 1024)
        };
        let release = Release::new("ns", "app");
        let page = budget.fleet();
        // Each release weighs the whole budget: the second waits for the first.
        let first = page.reserve(&release, 5 * 1024).await.unwrap();
        let second = page.reserve(&release, 5 * 1024);
        let give_back = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            drop(first);
        };
        let (second, ()) = tokio::join!(second, give_back);
        // Longer than a wait, and still given room: it waited on its own page.
        let second = second.unwrap();
        // Another page, holding nothing while the budget is taken, is busy.
        let other = budget.fleet();
        assert!(other.reserve(&release, 1).await.is_err());
        drop(second);
        assert!(other.reserve(&release, 1).await.is_ok());
    }
}
