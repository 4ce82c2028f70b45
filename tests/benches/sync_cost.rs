//! What authenticated history entries cost a sync (CONTRACT.md §14), beside a plaintext
//! store's: the controller's persist, record and GC (`put-render`, `record-history`,
//! `gc --keep 10`) of a new render, on `mem://` and `file://`, each through the Rust
//! library and its sandbox as a controller runs them. Three stores take turns, sync by
//! sync, so that load on a shared machine falls on all of them: plaintext, a keyring
//! (entries carry a MAC, nothing more is read), and a keyring with encryption required
//! (record reads the entries naming its render, GC the bodies it counts). Each line
//! prints the bucket calls a sync made (exact) and the median time of a sync, with its
//! ratio to the plaintext store's.
//!
//! `cargo bench -p render-store-tests --bench sync_cost`.

use render_store::{
    Bucket, BucketCall, Keyring, NewEntry, RecordingBucket, Release, RenderStore, Runtime, SyncTime,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SYNCS: usize = 200;
const KEEP: i64 = 10;

struct Mode {
    name: &'static str,
    store: RenderStore,
    recorder: Arc<RecordingBucket>,
    times: Vec<Duration>,
    calls: usize,
}

fn render(i: usize) -> Vec<Vec<u8>> {
    vec![
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web","namespace":"prod"}},"spec":{{"replicas":{i},"template":{{"spec":{{"containers":[{{"name":"web","image":"nginx:1.{i}"}}]}}}}}}}}"#
        )
        .into_bytes(),
        format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","namespace":"prod"}},"stringData":{{"password":"p{i}"}}}}"#
        )
        .into_bytes(),
    ]
}

/// One controller sync of render `i`: persist, record, GC.
async fn sync(store: &RenderStore, release: &Release, i: usize) {
    let r = store.put_render(release, &render(i)).await.unwrap();
    let entry = NewEntry {
        render_ref: r,
        synced_at: SyncTime {
            seconds: 1_767_225_600 + 60 * i as i64,
            nanoseconds: 0,
        },
        summary: format!("sync {i}"),
    };
    assert!(store.record_history(release, &entry).await.unwrap());
    store.gc(release, KEEP, &[], false).await.unwrap();
}

async fn modes(runtime: &Arc<Runtime>, url: &str, keyring: &Keyring) -> Vec<Mode> {
    let mut out = Vec::new();
    for (name, keys, required) in [
        ("plaintext", false, false),
        ("keyring", true, false),
        ("keyring, required", true, true),
    ] {
        let bucket: Arc<dyn Bucket> =
            render_store::open_bucket(&url.replace("{}", name.replace(", ", "-").as_str()))
                .unwrap()
                .unwrap();
        let recorder = Arc::new(RecordingBucket::new(bucket));
        let mut store =
            RenderStore::new(runtime.clone(), recorder.clone()).with_gc_grace(Duration::ZERO);
        if keys {
            store = store
                .with_keyring(keyring.clone())
                .with_encryption_required(required)
                .unwrap();
        }
        out.push(Mode {
            name,
            store,
            recorder,
            times: Vec::new(),
            calls: 0,
        });
    }
    out
}

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

#[tokio::main]
async fn main() {
    let runtime = Runtime::shared().unwrap();
    let keyring = Keyring::parse(
        &runtime,
        b"k1 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let release = Release::new("prod", "app");
    println!(
        "a sync (put-render, record-history, gc --keep {KEEP}) of a new render, {SYNCS} syncs, \
         the stores taking turns; calls per sync once the history holds {KEEP} entries"
    );
    println!(
        "{:<9} {:<18} {:>14} {:>12} {:>8}",
        "store", "entries", "calls / sync", "median", "ratio"
    );
    let file = format!("file://{}/{{}}?create_dir=true", dir.path().display());
    for (label, url) in [("mem://", "mem://"), ("file://", file.as_str())] {
        let mut modes = modes(&runtime, url, &keyring).await;
        for i in 0..SYNCS {
            for mode in &mut modes {
                mode.recorder.take_calls();
                let start = Instant::now();
                sync(&mode.store, &release, i).await;
                mode.times.push(start.elapsed());
                let calls: Vec<BucketCall> = mode.recorder.take_calls();
                if i == SYNCS - 1 {
                    mode.calls = calls.len();
                }
            }
        }
        let base = median(modes[0].times.clone());
        for mode in &modes {
            let m = median(mode.times.clone());
            println!(
                "{:<9} {:<18} {:>14} {:>10.2}ms {:>7.2}x",
                label,
                mode.name,
                mode.calls,
                m.as_secs_f64() * 1e3,
                m.as_secs_f64() / base.as_secs_f64()
            );
        }
    }
}
