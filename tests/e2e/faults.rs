//! A fault at every bucket call of every writing operation: after the failure and after
//! a retry, the store keeps its invariants, and the retry leaves the state an
//! uninterrupted run leaves.

use super::support::*;
use render_store::{Bucket, BucketError, NewEntry, ObjectMeta, Release, RenderStore};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// The call fails and does nothing.
    Before,
    /// A write or delete happens, then the call reports a failure.
    After,
}

/// Fails the k-th call (from 1) and passes every other one on.
struct KthCallFails {
    inner: Arc<dyn Bucket>,
    k: usize,
    fault: Fault,
    calls: AtomicUsize,
}

impl KthCallFails {
    fn hit(&self) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.k
    }
}

fn injected() -> BucketError {
    BucketError::Backend {
        call: "injected",
        key: String::new(),
        source: Box::new(std::io::Error::other("injected fault")),
    }
}

#[async_trait::async_trait]
impl Bucket for KthCallFails {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        if self.hit() {
            return Err(injected());
        }
        self.inner.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        if self.hit() {
            if self.fault == Fault::After {
                self.inner.put(key, value).await?;
            }
            return Err(injected());
        }
        self.inner.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        if self.hit() {
            return Err(injected());
        }
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        if self.hit() {
            return Err(injected());
        }
        self.inner.list(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        if self.hit() {
            if self.fault == Fault::After {
                self.inner.delete(key).await?;
            }
            return Err(injected());
        }
        self.inner.delete(key).await
    }
}

const T0: i64 = 1_767_225_600;

/// Two releases with six and two syncs, an unrecorded blob (lastAttempted) and a
/// foreign file; returns the bucket and the protected refs.
async fn populated() -> (Arc<dyn Bucket>, Vec<String>) {
    let bucket = bucket_from_url("mem://");
    let store =
        RenderStore::new(runtime(), bucket.clone()).with_gc_grace(std::time::Duration::ZERO);
    let mut refs = Vec::new();
    for (name, n) in [("app", 6), ("other", 2)] {
        for i in 0..n {
            let r = store.put_render(&release(name), &render(i)).await.unwrap();
            let entry = NewEntry {
                render_ref: r.clone(),
                synced_at: time(T0 + i as i64),
                summary: format!("v{i}"),
            };
            store.record_history(&release(name), &entry).await.unwrap();
            if name == "app" {
                refs.push(r);
            }
        }
    }
    let attempted = store
        .put_render(&release("app"), &render(50))
        .await
        .unwrap();
    bucket
        .put("ns/app/renders/upload.tmp", b"partial".to_vec())
        .await
        .unwrap();
    let protected = vec![attempted, refs[0].clone()];
    (bucket, protected)
}

async fn snapshot(bucket: &Arc<dyn Bucket>) -> BTreeMap<String, Vec<u8>> {
    let mut all = BTreeMap::new();
    for key in keys(bucket.list("").await.unwrap()) {
        let value = bucket.get(&key, u64::MAX).await.unwrap();
        all.insert(key, value);
    }
    all
}

/// The invariants: every entry's blob and every protected blob exists, no blob changed,
/// and nothing outside the release was touched.
fn check_invariants(
    state: &BTreeMap<String, Vec<u8>>,
    before: &BTreeMap<String, Vec<u8>>,
    protected: &[String],
    case: &str,
) {
    let outside = |m: &BTreeMap<String, Vec<u8>>| {
        m.iter()
            .filter(|(k, _)| !k.starts_with("ns/app/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        outside(state),
        outside(before),
        "{case}: keys outside the release changed"
    );
    for (key, value) in state {
        if let Some(r) = key.strip_prefix("ns/app/renders/sha256:") {
            assert_eq!(
                format!("{:x}", Sha256::digest(value)),
                r,
                "{case}: {key} changed"
            );
        }
        if let Some(entry) = key.strip_prefix("ns/app/history/") {
            let r = entry.split_once('-').unwrap().1;
            assert!(
                state.contains_key(&format!("ns/app/renders/{r}")),
                "{case}: {key} lost its blob"
            );
        }
    }
    for r in protected {
        assert!(
            state.contains_key(&format!("ns/app/renders/{r}")),
            "{case}: protected {r} lost"
        );
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    PutRender,
    RecordHistory,
    Gc,
    DeleteRelease,
}

async fn run(op: Op, store: &RenderStore, protected: &[String]) -> render_store::Result<()> {
    let app: Release = release("app");
    match op {
        Op::PutRender => store.put_render(&app, &render(99)).await.map(drop),
        Op::RecordHistory => {
            let r = runtime().render_ref(&render(99)).await?;
            let entry = NewEntry {
                render_ref: r,
                synced_at: time(T0 + 99),
                summary: "v99".into(),
            };
            store.record_history(&app, &entry).await.map(drop)
        }
        Op::Gc => store.gc(&app, 2, protected, false).await.map(drop),
        Op::DeleteRelease => store.delete_release(&app).await.map(drop),
    }
}

/// The populated store an operation starts from: record-history records a render
/// whose blob is already stored, as a sync does.
async fn starting_state(op: Op) -> (Arc<dyn Bucket>, Vec<String>) {
    let (bucket, protected) = populated().await;
    if matches!(op, Op::RecordHistory) {
        let store =
            RenderStore::new(runtime(), bucket.clone()).with_gc_grace(std::time::Duration::ZERO);
        store
            .put_render(&release("app"), &render(99))
            .await
            .unwrap();
    }
    (bucket, protected)
}

#[tokio::test]
async fn a_fault_at_every_call_keeps_the_invariants_and_a_retry_completes() {
    let mut cases = 0;
    for op in [Op::PutRender, Op::RecordHistory, Op::Gc, Op::DeleteRelease] {
        // The state an uninterrupted run leaves, and how many calls it makes.
        let (bucket, protected) = starting_state(op).await;
        let counter = Arc::new(KthCallFails {
            inner: bucket.clone(),
            k: 0,
            fault: Fault::Before,
            calls: AtomicUsize::new(0),
        });
        run(
            op,
            &RenderStore::new(runtime(), counter.clone()).with_gc_grace(std::time::Duration::ZERO),
            &protected,
        )
        .await
        .unwrap();
        let calls = counter.calls.load(Ordering::SeqCst);
        let want = snapshot(&bucket).await;
        assert!(calls >= 1);

        for k in 1..=calls {
            for fault in [Fault::Before, Fault::After] {
                let case = format!("{op:?} failing call {k} of {calls} ({fault:?})");
                let (bucket, protected) = starting_state(op).await;
                let before = snapshot(&bucket).await;
                let faulty = Arc::new(KthCallFails {
                    inner: bucket.clone(),
                    k,
                    fault,
                    calls: AtomicUsize::new(0),
                });
                let result = run(
                    op,
                    &RenderStore::new(runtime(), faulty).with_gc_grace(std::time::Duration::ZERO),
                    &protected,
                )
                .await;
                assert!(result.is_err(), "{case}: the fault was not reported");
                let check_protected = if matches!(op, Op::DeleteRelease) {
                    &[][..]
                } else {
                    &protected[..]
                };
                check_invariants(&snapshot(&bucket).await, &before, check_protected, &case);

                run(
                    op,
                    &RenderStore::new(runtime(), bucket.clone())
                        .with_gc_grace(std::time::Duration::ZERO),
                    &protected,
                )
                .await
                .unwrap_or_else(|e| panic!("{case}: the retry failed: {e}"));
                let after = snapshot(&bucket).await;
                check_invariants(&after, &before, check_protected, &case);
                assert_eq!(after, want, "{case}: the retry left another state");
                cases += 1;
            }
        }
    }
    eprintln!("fault injection: {cases} (operation, call, fault) cases");
    assert!(cases >= 40, "only {cases} cases ran");
}

/// Hangs at the k-th call (from 1), before the call or after a write or delete it makes,
/// until the call is dropped: a bucket request that never answers, which the store's
/// deadline cuts.
struct KthCallHangs {
    inner: Arc<dyn Bucket>,
    k: usize,
    fault: Fault,
    calls: AtomicUsize,
}

impl KthCallHangs {
    /// Counts a call; whether it is the k-th.
    fn hit(&self) -> bool {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.k
    }
}

/// Never answers.
async fn hang() {
    std::future::pending::<()>().await
}

#[async_trait::async_trait]
impl Bucket for KthCallHangs {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        if self.hit() {
            hang().await;
        }
        self.inner.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        if self.hit() {
            if self.fault == Fault::After {
                self.inner.put(key, value.clone()).await?;
            }
            hang().await;
        }
        self.inner.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        if self.hit() {
            hang().await;
        }
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        if self.hit() {
            hang().await;
        }
        self.inner.list(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        if self.hit() {
            if self.fault == Fault::After {
                self.inner.delete(key).await?;
            }
            hang().await;
        }
        self.inner.delete(key).await
    }
}

/// A deadline that cuts an operation at every bucket call, before the call or after
/// its write: the cut is reported as the deadline, the store keeps its invariants (a
/// cut is a crash at that moment: nothing half-written), and a retry ends where an
/// uninterrupted run does (CONTRACT.md §15).
#[tokio::test]
async fn a_deadline_at_every_call_keeps_the_invariants_and_a_retry_completes() {
    let mut cases = 0;
    let deadline = std::time::Duration::from_millis(40);
    for op in [Op::PutRender, Op::RecordHistory, Op::Gc, Op::DeleteRelease] {
        let (bucket, protected) = starting_state(op).await;
        let counter = Arc::new(KthCallFails {
            inner: bucket.clone(),
            k: 0,
            fault: Fault::Before,
            calls: AtomicUsize::new(0),
        });
        run(
            op,
            &RenderStore::new(runtime(), counter.clone()).with_gc_grace(std::time::Duration::ZERO),
            &protected,
        )
        .await
        .unwrap();
        let calls = counter.calls.load(Ordering::SeqCst);
        let want = snapshot(&bucket).await;
        for k in 1..=calls {
            for fault in [Fault::Before, Fault::After] {
                let case = format!("{op:?} cut at call {k} of {calls} ({fault:?})");
                let (bucket, protected) = starting_state(op).await;
                let before = snapshot(&bucket).await;
                let hanging = Arc::new(KthCallHangs {
                    inner: bucket.clone(),
                    k,
                    fault,
                    calls: AtomicUsize::new(0),
                });
                let store = RenderStore::new(runtime(), hanging)
                    .with_gc_grace(std::time::Duration::ZERO)
                    .with_timeout(deadline);
                let started = std::time::Instant::now();
                let result = run(op, &store, &protected).await;
                assert!(
                    matches!(result, Err(render_store::Error::DeadlineExceeded { .. })),
                    "{case}: {result:?}"
                );
                assert!(
                    started.elapsed() < deadline * 5,
                    "{case}: {:?}",
                    started.elapsed()
                );
                let check_protected = if matches!(op, Op::DeleteRelease) {
                    &[][..]
                } else {
                    &protected[..]
                };
                check_invariants(&snapshot(&bucket).await, &before, check_protected, &case);
                run(
                    op,
                    &RenderStore::new(runtime(), bucket.clone())
                        .with_gc_grace(std::time::Duration::ZERO),
                    &protected,
                )
                .await
                .unwrap_or_else(|e| panic!("{case}: the retry failed: {e}"));
                let after = snapshot(&bucket).await;
                check_invariants(&after, &before, check_protected, &case);
                assert_eq!(after, want, "{case}: the retry left another state");
                cases += 1;
            }
        }
    }
    eprintln!("deadline cuts: {cases} (operation, call, where) cases");
    assert!(cases >= 40, "only {cases} cases ran");
}
