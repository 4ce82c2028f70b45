//! The controller-side rules of CONTRACT.md §7 and §8, with injected failures.

use super::support::*;
use render_store::controller::{
    Applier, Controller, Finalization, PinDecision, Reason, ReleaseRefs, SyncError, SyncOutcome,
    SyncRequest, history_count,
};
use render_store::{BoxError, Bucket, BucketCall, RecordingBucket, Release, RenderStore};
use std::sync::Arc;

/// An applier that records what it was asked to apply and fails on demand.
#[derive(Default)]
struct FakeApplier {
    dry_runs: usize,
    applied: Vec<Vec<Vec<u8>>>,
    fail_dry_run: bool,
    fail_apply: bool,
}

#[async_trait::async_trait]
impl Applier for FakeApplier {
    async fn dry_run(&mut self, _objects: &[Vec<u8>]) -> Result<(), BoxError> {
        self.dry_runs += 1;
        if self.fail_dry_run {
            return Err("admission webhook denied the render".into());
        }
        Ok(())
    }
    async fn apply(&mut self, objects: &[Vec<u8>]) -> Result<(), BoxError> {
        if self.fail_apply {
            return Err("post-sync hook failed".into());
        }
        self.applied.push(objects.to_vec());
        Ok(())
    }
}

fn request(n: u32, keep_history: Option<i64>, refs: ReleaseRefs) -> SyncRequest {
    SyncRequest {
        objects: render(n),
        refs,
        keep_history,
        summary: format!("v{n}"),
        synced_at: time(1_767_225_600 + n as i64),
    }
}

/// A controller over a mem:// bucket that fails the calls `fail` picks, with the calls
/// that reached the bucket recorded.
fn controller(
    fail: impl Fn(&BucketCall) -> bool + Send + Sync + 'static,
) -> (Controller, Arc<RecordingBucket>, Arc<dyn Bucket>) {
    let mem = bucket_from_url("mem://");
    let recorder = Arc::new(RecordingBucket::new(FaultyBucket::new(mem.clone(), fail)));
    let store =
        RenderStore::new(runtime(), recorder.clone()).with_gc_grace(std::time::Duration::ZERO);
    (Controller::new(Some(store)).unwrap(), recorder, mem)
}

fn no_faults(_: &BucketCall) -> bool {
    false
}

fn is_history_put(c: &BucketCall) -> bool {
    matches!(c, BucketCall::Put(k) if k.contains("/history/"))
}

fn app() -> Release {
    release("app")
}

/// Sync render `n` of `app` with no Release references.
async fn sync(
    c: &Controller,
    n: u32,
    keep_history: Option<i64>,
    applier: &mut FakeApplier,
) -> Result<SyncOutcome, SyncError> {
    c.sync(
        &app(),
        &request(n, keep_history, ReleaseRefs::default()),
        applier,
    )
    .await
}

#[tokio::test]
async fn a_full_sync_persists_applies_records_and_collects() {
    let (c, rec, mem) = controller(no_faults);
    let mut applier = FakeApplier::default();
    let out = sync(&c, 1, None, &mut applier).await.unwrap();
    assert_eq!(applier.applied, [render(1)]);
    assert!(out.recorded);
    assert!(out.gc.is_some());
    let calls = rec.take_calls();
    let put_blob = calls
        .iter()
        .position(|c| matches!(c, BucketCall::Put(k) if k.contains("/renders/")))
        .unwrap();
    let put_entry = calls.iter().position(is_history_put).unwrap();
    assert!(
        put_blob < put_entry,
        "persist comes before the history: {calls:?}"
    );
    assert!(
        mem.exists(&format!("ns/app/renders/{}", out.render_ref))
            .await
            .unwrap()
            .is_some()
    );
}

/// The sync keeps the release index (CONTRACT.md §3) after its record and its GC: it
/// names the renders the history names, no more, and a failed index write fails no
/// sync.
#[tokio::test]
async fn a_sync_indexes_its_render_and_its_gc_prunes_the_index() {
    let (c, _, mem) = controller(no_faults);
    let rt = runtime();
    let mut applier = FakeApplier::default();
    let mut refs = Vec::new();
    for n in 1..=3 {
        refs.push(sync(&c, n, Some(2), &mut applier).await.unwrap().render_ref);
    }
    let store = RenderStore::new(rt, mem.clone());
    let indexed: Vec<String> = store
        .render_objects(&app(), &refs[1..])
        .await
        .unwrap()
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(indexed, refs[1..]);
    let index = mem.get("ns/app/index/v1", u64::MAX).await.unwrap();
    let index: serde_json::Value = serde_json::from_slice(&index).unwrap();
    let names: Vec<&String> = index["renders"].as_object().unwrap().keys().collect();
    let mut want: Vec<&String> = refs[1..].iter().collect();
    want.sort();
    assert_eq!(
        names, want,
        "GC kept two entries; the index names their renders alone"
    );

    let (c, _, mem) =
        controller(|call| matches!(call, BucketCall::Put(k) if k.ends_with("/index/v1")));
    let out = sync(&c, 1, None, &mut applier).await.unwrap();
    assert!(out.recorded, "the sync succeeded without its index");
    assert!(mem.get("ns/app/index/v1", u64::MAX).await.is_err());
}

#[tokio::test]
async fn a_failed_dry_run_stores_nothing() {
    let (c, rec, _) = controller(no_faults);
    let mut applier = FakeApplier {
        fail_dry_run: true,
        ..Default::default()
    };
    let err = sync(&c, 1, None, &mut applier).await.unwrap_err();
    assert_eq!(err.reason, Reason::DryRunFailed);
    assert_eq!(rec.take_calls(), []);
    assert!(applier.applied.is_empty());
}

#[tokio::test]
async fn a_failed_persist_applies_nothing_and_is_deploy_failed() {
    for fail in [
        (|c: &BucketCall| matches!(c, BucketCall::Put(_))) as fn(&BucketCall) -> bool,
        |c: &BucketCall| matches!(c, BucketCall::Exists(_)),
    ] {
        let (c, rec, mem) = controller(fail);
        let mut applier = FakeApplier::default();
        let err = sync(&c, 1, None, &mut applier).await.unwrap_err();
        assert_eq!(err.reason, Reason::DeployFailed, "{err}");
        assert!(applier.applied.is_empty(), "nothing is applied");
        assert!(
            !rec.take_calls()
                .iter()
                .any(|c| matches!(c, BucketCall::List(_))),
            "no history, no GC"
        );
        assert!(mem.list("").await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_failed_apply_records_no_history_and_runs_no_gc() {
    let (c, rec, mem) = controller(no_faults);
    let mut applier = FakeApplier {
        fail_apply: true,
        ..Default::default()
    };
    let err = sync(&c, 1, Some(1), &mut applier).await.unwrap_err();
    assert_eq!(err.reason, Reason::ApplyFailed);
    let calls = rec.take_calls();
    assert_eq!(calls.len(), 2, "exists and put of the blob only: {calls:?}");
    assert_eq!(mem.list("ns/app/history/").await.unwrap().len(), 0);
}

#[tokio::test]
async fn a_failed_record_history_does_not_fail_the_sync() {
    let (c, _rec, mem) = controller(is_history_put);
    let mut applier = FakeApplier::default();
    let out = sync(&c, 1, None, &mut applier).await.unwrap();
    assert!(!out.recorded);
    assert_eq!(applier.applied.len(), 1);
    assert!(out.gc.is_some(), "GC still runs");
    // The blob stays: the sync applied it and protects it.
    assert_eq!(mem.list("ns/app/renders/").await.unwrap().len(), 1);
    assert!(
        mem.list("ns/app/history/").await.unwrap().is_empty(),
        "the history has a gap"
    );
}

#[tokio::test]
async fn a_failed_gc_does_not_fail_the_sync() {
    let (c, _rec, _) = controller(|c| matches!(c, BucketCall::Delete(_)));
    let mut applier = FakeApplier::default();
    for n in 0..3 {
        let out = sync(&c, n, Some(1), &mut applier).await.unwrap();
        assert!(out.recorded);
        if n > 0 {
            assert!(out.gc.is_none(), "GC failed and was logged");
        }
    }
    assert_eq!(applier.applied.len(), 3);
}

#[tokio::test]
async fn keep_history_unset_keeps_ten_and_zero_keeps_everything() {
    let (c, _, mem) = controller(no_faults);
    let mut applier = FakeApplier::default();
    for n in 0..12 {
        sync(&c, n, None, &mut applier).await.unwrap();
    }
    assert_eq!(mem.list("ns/app/history/").await.unwrap().len(), 10);
    assert_eq!(mem.list("ns/app/renders/").await.unwrap().len(), 10);

    let (c, rec, mem) = controller(no_faults);
    for n in 0..12 {
        let out = sync(&c, n, Some(0), &mut applier).await.unwrap();
        assert!(out.gc.is_none());
    }
    assert!(
        !rec.take_calls()
            .iter()
            .any(|c| matches!(c, BucketCall::Delete(_) | BucketCall::DeleteMany(_)))
    );
    assert_eq!(mem.list("ns/app/history/").await.unwrap().len(), 12);
}

#[tokio::test]
async fn gc_protects_every_reference_of_the_release() {
    let (c, _, mem) = controller(no_faults);
    let store = c.store().unwrap().clone();
    let mut applier = FakeApplier::default();
    let mut refs = Vec::new();
    // GC off while the history builds up.
    for n in 0..4 {
        refs.push(sync(&c, n, Some(0), &mut applier).await.unwrap().render_ref);
    }
    // A blob stored at a gate: no history entry.
    let attempted = store.put_render(&app(), &render(50)).await.unwrap();
    let pinned = store.put_render(&app(), &render(51)).await.unwrap();
    // The old renders are protected only by the Release's references.
    let release_refs = ReleaseRefs {
        last_successful: Some(refs[3].clone()),
        last_attempted: Some(attempted.clone()),
        pin: Some(pinned.clone()),
        last_healthy: Some(refs[0].clone()),
    };
    let out = c
        .sync(&app(), &request(9, Some(1), release_refs), &mut applier)
        .await
        .unwrap();
    let left = crate::support::keys(mem.list("ns/app/renders/").await.unwrap());
    for r in [&refs[0], &refs[3], &attempted, &pinned, &out.render_ref] {
        assert!(
            left.contains(&format!("ns/app/renders/{r}")),
            "{r} was deleted"
        );
    }
    for r in [&refs[1], &refs[2]] {
        assert!(
            !left.contains(&format!("ns/app/renders/{r}")),
            "{r} survived"
        );
    }
}

#[tokio::test]
async fn without_a_store_every_rule_has_an_answer() {
    let c = Controller::new(None).unwrap();
    let mut applier = FakeApplier::default();
    let out = sync(&c, 1, None, &mut applier).await.unwrap();
    assert_eq!(
        out.render_ref,
        runtime().render_ref(&render(1)).await.unwrap()
    );
    assert!(!out.recorded && out.gc.is_none());
    assert_eq!(applier.applied.len(), 1);
    assert_eq!(history_count(c.store(), None), 0);
    assert_eq!(history_count(c.store(), Some(5)), 0);

    assert_eq!(
        c.check_pin(None, &out.render_ref).unwrap(),
        PinDecision::ApplyCurrent
    );
    assert_eq!(
        c.check_pin(Some(&out.render_ref), &out.render_ref).unwrap(),
        PinDecision::ApplyCurrent
    );
    let other = runtime().render_ref(&render(2)).await.unwrap();
    assert_eq!(
        c.check_pin(Some(&other), &out.render_ref)
            .unwrap_err()
            .reason,
        Reason::Pinned
    );

    let refs = ReleaseRefs {
        last_healthy: Some(other),
        ..Default::default()
    };
    assert_eq!(
        c.apply_last_healthy(&app(), &refs, &mut applier)
            .await
            .unwrap(),
        None
    );
    assert_eq!(applier.applied.len(), 1, "no apply without a store");
    assert!(matches!(
        c.finalize(&app()).await,
        Finalization::Done { deleted: 0 }
    ));
}

#[tokio::test]
async fn a_pin_to_another_render_reads_it_from_the_store() {
    let (c, _, _) = controller(no_faults);
    let current = runtime().render_ref(&render(1)).await.unwrap();
    let other = runtime().render_ref(&render(2)).await.unwrap();
    assert_eq!(
        c.check_pin(Some(&other), &current).unwrap(),
        PinDecision::ApplyPinned(other)
    );
}

#[tokio::test]
async fn a_rollback_applies_the_last_healthy_render_and_records_nothing() {
    let (c, rec, mem) = controller(no_faults);
    let mut applier = FakeApplier::default();
    let healthy = sync(&c, 1, Some(5), &mut applier).await.unwrap().render_ref;
    sync(&c, 2, Some(5), &mut applier).await.unwrap();
    rec.take_calls();
    let history_before = mem.list("ns/app/history/").await.unwrap();

    let refs = ReleaseRefs {
        last_healthy: Some(healthy.clone()),
        ..Default::default()
    };
    let rolled = c
        .apply_last_healthy(&app(), &refs, &mut applier)
        .await
        .unwrap();
    assert_eq!(rolled, Some(healthy.clone()));
    // The objects applied are those of render 1, as canonicalized.
    let want: Vec<Vec<u8>> = runtime()
        .canonical(&render(1))
        .await
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    assert_eq!(applier.applied.last().unwrap(), &want);
    assert_eq!(
        rec.take_calls(),
        [get(&format!("ns/app/renders/{healthy}"))],
        "no history, no GC"
    );
    assert_eq!(mem.list("ns/app/history/").await.unwrap(), history_before);

    // A missing rollback target is an error, and nothing is applied.
    mem.delete(&format!("ns/app/renders/{healthy}"))
        .await
        .unwrap();
    let applied = applier.applied.len();
    let err = c
        .apply_last_healthy(&app(), &refs, &mut applier)
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::RollbackFailed);
    assert_eq!(applier.applied.len(), applied);
}

#[tokio::test]
async fn finalization_retries_until_everything_is_deleted() {
    let failing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let f = failing.clone();
    let (c, _, mem) = controller(move |call| {
        f.load(std::sync::atomic::Ordering::SeqCst)
            && matches!(call, BucketCall::Delete(k) if k.contains("/history/"))
    });
    let mut applier = FakeApplier::default();
    for n in 0..3 {
        sync(&c, n, None, &mut applier).await.unwrap();
    }
    c.store()
        .unwrap()
        .put_render(&release("app2"), &render(1))
        .await
        .unwrap();
    assert!(
        matches!(c.finalize(&app()).await, Finalization::Retry(_)),
        "the finalizer stays"
    );
    assert!(!mem.list("ns/app/").await.unwrap().is_empty());

    failing.store(false, std::sync::atomic::Ordering::SeqCst);
    match c.finalize(&app()).await {
        Finalization::Done { deleted } => assert!(deleted > 0),
        Finalization::Retry(e) => panic!("{e}"),
    }
    assert!(mem.list("ns/app/").await.unwrap().is_empty());
    assert!(
        matches!(c.finalize(&app()).await, Finalization::Done { deleted: 0 }),
        "a second run is a no-op"
    );
    assert_eq!(
        mem.list("ns/app2/").await.unwrap().len(),
        1,
        "another release is untouched"
    );
}
