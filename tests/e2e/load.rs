//! Load: 1,000 releases, 10 syncs each (put, record, GC keeping 3), run concurrently on
//! file:// and mem://. The invariants hold and no release sees another's keys; the
//! figures (syncs per second, peak memory) are printed, not asserted.

use crate::support::bucket_from_url;
use render_store::{Bucket, Limits, NewEntry, Release, RenderStore, Runtime, SyncTime};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Instant;

const RELEASES: usize = 1_000;
const SYNCS: i64 = 10;
const KEEP: i64 = 3;

fn objects(release: &Release, sync: i64) -> Vec<Vec<u8>> {
    vec![
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{}","namespace":"{}"}},"data":{{"sync":"{sync}"}}}}"#,
            release.name, release.namespace
        )
        .into_bytes(),
    ]
}

async fn sync_release(store: RenderStore, release: Release) -> Vec<String> {
    let mut refs = Vec::new();
    for sync in 0..SYNCS {
        let render_ref = store
            .put_render(&release, &objects(&release, sync))
            .await
            .unwrap();
        let entry = NewEntry {
            render_ref: render_ref.clone(),
            synced_at: SyncTime {
                seconds: 1_700_000_000 + sync * 60,
                nanoseconds: 0,
            },
            summary: format!("sync {sync}"),
        };
        assert!(store.record_history(&release, &entry).await.unwrap());
        store.gc(&release, KEEP, &[], false).await.unwrap();
        refs.push(render_ref);
    }
    refs
}

/// Peak resident memory of this process (Linux), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

async fn load(name: &str, bucket: Arc<dyn Bucket>) {
    let runtime = Arc::new(Runtime::new(Limits::default()).unwrap());
    let store =
        RenderStore::new(runtime.clone(), bucket.clone()).with_gc_grace(std::time::Duration::ZERO);
    let releases: Vec<Release> = (0..RELEASES)
        .map(|i| Release::new(format!("team-{}", i % 10), format!("app-{i}")))
        .collect();
    let started = Instant::now();
    let tasks: Vec<_> = releases
        .iter()
        .map(|r| tokio::spawn(sync_release(store.clone(), r.clone())))
        .collect();
    let mut refs = Vec::new();
    for t in tasks {
        refs.push(t.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();

    let all = crate::support::keys(bucket.list("").await.unwrap());
    assert_eq!(all.len(), RELEASES * 2 * KEEP as usize, "{name}");
    for (release, refs) in releases.iter().zip(&refs) {
        let prefix = format!("{}/{}/", release.namespace, release.name);
        let keys: Vec<&String> = all.iter().filter(|k| k.starts_with(&prefix)).collect();
        let expected_refs = &refs[(SYNCS - KEEP) as usize..];
        let history = store.list_history(release).await.unwrap();
        assert_eq!(
            history.iter().map(|e| &e.render_ref).collect::<Vec<_>>(),
            expected_refs.iter().collect::<Vec<_>>(),
            "{name}: {release}"
        );
        for key in keys {
            if let Some(render_ref) = key.strip_prefix(&format!("{prefix}renders/")) {
                let blob = bucket.get(key, u64::MAX).await.unwrap();
                assert_eq!(
                    render_ref,
                    format!("sha256:{:x}", Sha256::digest(&blob)),
                    "{key}"
                );
                // The blob is this release's own render: nothing crossed over.
                let own = format!(
                    r#""name":"{}","namespace":"{}""#,
                    release.name, release.namespace
                );
                assert!(String::from_utf8_lossy(&blob).contains(&own), "{key}");
                assert!(
                    expected_refs.iter().any(|r| r == render_ref),
                    "{key} should be gone"
                );
            }
        }
    }
    let syncs = RELEASES as f64 * SYNCS as f64;
    println!(
        "load {name}: {RELEASES} releases x {SYNCS} syncs (put, record, gc keep {KEEP}) in {elapsed:.1} s: \
         {:.0} syncs/s, {:.0} component calls/s; peak guest memory of one call {:.1} MiB; \
         process peak RSS {} (shared with the tests running beside it)",
        syncs / elapsed,
        3.0 * syncs / elapsed,
        runtime.peak_memory_bytes() as f64 / (1 << 20) as f64,
        peak_rss_mib().map_or("unknown".to_string(), |m| format!("{m:.0} MiB")),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_releases_sync_concurrently_on_mem() {
    load("mem://", bucket_from_url("mem://")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_releases_sync_concurrently_on_file() {
    let dir = tempfile::tempdir().unwrap();
    load(
        "file://",
        bucket_from_url(&format!("file://{}", dir.path().display())),
    )
    .await;
}
