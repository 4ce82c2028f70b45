//! delete-release of a release of 2,000 keys on the S3 emulator, side by side with what
//! object_store alone needs for the same work: one `list` of the prefix and one
//! `delete_stream` of its keys (DeleteObjects, 1,000 keys a request).
//!
//! `cargo bench -p render-store-cli --bench batch_delete`, with the emulator's
//! environment loaded (`tests/emulators/start.sh`, then `. $DIR/env.sh`): it reads
//! `RENDER_STORE_TEST_S3_URL` and the AWS variables, and says "not available" without
//! them. Each round fills two fresh prefixes with the same 2,000 keys and times one
//! run of each, alternating which goes first; it prints the median of each, the ratio
//! and the target (at most 1.5×). `RENDER_STORE_BENCH_ROUNDS` sets the rounds (default 7).

use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use render_store::{Release, RenderStore, Runtime, open_bucket};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEYS: usize = 2_000;
const TARGET: f64 = 1.5;

/// The emulator's S3 store as object_store sees it, built from the same URL the render
/// store opens: bucket, region, endpoint and path style from the URL, credentials from
/// the environment.
fn direct_store(url: &str) -> Result<Arc<dyn ObjectStore>, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    let bucket = parsed.host_str().ok_or("the S3 URL names no bucket")?;
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
    for (name, value) in parsed.query_pairs() {
        builder = match name.as_ref() {
            "region" => builder.with_region(value.as_ref()),
            "endpoint" => builder
                .with_endpoint(value.as_ref())
                .with_allow_http(value.starts_with("http://")),
            "use_path_style" => builder.with_virtual_hosted_style_request(value != "true"),
            _ => builder,
        };
    }
    Ok(Arc::new(builder.build().map_err(|e| e.to_string())?))
}

/// Puts the 2,000 keys of a release under `prefix`, many at a time (the fill is not
/// what is measured).
async fn fill(store: &Arc<dyn ObjectStore>, prefix: &str) {
    futures::stream::iter(0..KEYS)
        .map(|i| {
            let store = store.clone();
            // A release's shape: a few history entries, the rest render blobs.
            let key = if i < 10 {
                format!("{prefix}history/20260101T0000{i:02}.000000000Z-sha256:{i:064x}")
            } else {
                format!("{prefix}renders/sha256:{i:064x}")
            };
            async move {
                store
                    .put(&Path::from(key), b"{}\n".to_vec().into())
                    .await
                    .expect("the emulator takes the put");
            }
        })
        .buffer_unordered(64)
        .collect::<Vec<()>>()
        .await;
}

/// object_store alone: list the prefix, then delete every key listed.
async fn direct(store: &Arc<dyn ObjectStore>, prefix: &str) -> usize {
    let listed: Vec<_> = store
        .list(Some(&Path::from(prefix.trim_end_matches('/'))))
        .try_collect()
        .await
        .expect("the emulator lists");
    let paths = futures::stream::iter(listed.into_iter().map(|m| Ok(m.location))).boxed();
    let deleted: Vec<Path> = store
        .delete_stream(paths)
        .try_collect()
        .await
        .expect("the emulator deletes");
    deleted.len()
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let Ok(url) = std::env::var("RENDER_STORE_TEST_S3_URL") else {
        println!(
            "batch delete on S3: not available (RENDER_STORE_TEST_S3_URL is not set; \
             start the emulators with tests/emulators/start.sh and load their env.sh)"
        );
        return;
    };
    let rounds: usize = std::env::var("RENDER_STORE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
        .max(1);
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    rt.block_on(async {
        let direct_store = match direct_store(&url) {
            Ok(s) => s,
            Err(e) => {
                println!("batch delete on S3: not available ({e})");
                return;
            }
        };
        let bucket = match open_bucket(&url) {
            Ok(Some(b)) => b,
            Ok(None) => unreachable!("the URL is not empty"),
            Err(e) => {
                println!("batch delete on S3: not available ({e})");
                return;
            }
        };
        let store = RenderStore::new(Runtime::shared().expect("the component compiles"), bucket);
        let run = std::process::id();
        // One release as a warm-up: the component's first instance, the connection pool.
        let warm = Release::new("bench", format!("warm-{run}"));
        fill(&direct_store, &format!("bench/warm-{run}/")).await;
        store.delete_release(&warm).await.expect("delete-release");

        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let name = format!("r{round}-{run}");
            let release = Release::new("bench", &name);
            let mine = format!("bench/{name}/");
            let other = format!("bench/{name}-direct/");
            fill(&direct_store, &mine).await;
            fill(&direct_store, &other).await;
            let time_ours = async {
                let t = Instant::now();
                let n = store
                    .delete_release(&release)
                    .await
                    .expect("delete-release");
                assert_eq!(n as usize, KEYS);
                t.elapsed()
            };
            let time_theirs = async {
                let t = Instant::now();
                assert_eq!(direct(&direct_store, &other).await, KEYS);
                t.elapsed()
            };
            // Alternate which goes first, so neither always meets a cold or warm server.
            if round % 2 == 0 {
                ours.push(time_ours.await);
                theirs.push(time_theirs.await);
            } else {
                theirs.push(time_theirs.await);
                ours.push(time_ours.await);
            }
        }
        let (a, b) = (median(ours.clone()), median(theirs.clone()));
        let ratio = a.as_secs_f64() / b.as_secs_f64();
        println!(
            "batch delete on the S3 emulator: a release of {KEYS} keys, median of {rounds} rounds"
        );
        println!(
            "  delete-release (component, list + delete-many):   {}   (runs {})",
            ms(a),
            ours.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", ")
        );
        println!(
            "  object_store list + delete_stream, directly:      {}   (runs {})",
            ms(b),
            theirs.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", ")
        );
        println!(
            "  ratio: {ratio:.2}x (target: at most {TARGET}x) {}",
            if ratio <= TARGET { "met" } else { "NOT met" }
        );
    });
}
