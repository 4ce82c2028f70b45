//! The render store on the S3 emulator, where each request is a round trip.
//!
//! 1. delete-release of a release of 2,000 keys, side by side with what object_store
//!    alone needs for the same work: one `list` of the prefix and one `delete_stream` of
//!    its keys (DeleteObjects, 1,000 keys a request). Each round fills two fresh
//!    prefixes with the same 2,000 keys and times one run of each, alternating which
//!    goes first; it prints the median of each, the ratio and the target (at most 1.5×).
//! 2. The history of a release with 1,000 entries: the whole listing (one read per
//!    entry) beside one page of 20 entries, the newest and one further back (one listing
//!    and 20 reads each), and one `list` of the history alone as the floor of a page.
//!
//! `cargo bench -p render-store-tests --bench s3_emulator`, with the emulator's
//! environment loaded (`tests/emulators/start.sh`, then `. $DIR/env.sh`): it reads
//! `RENDER_STORE_TEST_S3_URL` and the AWS variables, and says "not available" without
//! them. `RENDER_STORE_BENCH_ROUNDS` sets the rounds (default 7).

use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use render_store::{Release, RenderStore, Runtime, open_bucket};
use render_store_guest::{ReleasePrefix, SyncTime, entry_body};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEYS: usize = 2_000;
const TARGET: f64 = 1.5;
const ENTRIES: usize = 1_000;
const PAGE: u32 = 20;

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

/// Puts `ENTRIES` history entries of `release`, one a minute, each recording its own
/// render, with the bodies the component writes (the fill is not what is measured).
async fn fill_history(store: &Arc<dyn ObjectStore>, release: &Release) {
    let prefix = ReleasePrefix::new(&render_store_guest::Release::new(
        release.namespace.clone(),
        release.name.clone(),
    ))
    .expect("a valid release");
    futures::stream::iter(0..ENTRIES)
        .map(|i| {
            let store = store.clone();
            let at = SyncTime {
                seconds: 1_767_225_600 + 60 * i as i64,
                nanoseconds: 0,
            };
            let render_ref = format!("sha256:{i:064x}");
            let key = prefix.history_key(at, &render_ref).expect("a history key");
            let body = entry_body(&render_ref, at, &format!("sync {i}")).expect("a body");
            async move {
                store
                    .put(&Path::from(key), body.into())
                    .await
                    .expect("the emulator takes the put");
            }
        })
        .buffer_unordered(64)
        .collect::<Vec<()>>()
        .await;
}

/// The median of `rounds` runs of `f`.
async fn time_median<F, Fut>(rounds: usize, mut f: F) -> (Duration, Vec<Duration>)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut runs = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        f().await;
        runs.push(t.elapsed());
    }
    (median(runs.clone()), runs)
}

/// Part 2: history pages against the whole listing.
async fn history_pages(store: &RenderStore, direct_store: &Arc<dyn ObjectStore>, rounds: usize) {
    let release = Release::new("bench", format!("history-{}", std::process::id()));
    fill_history(direct_store, &release).await;
    let (all, _) = time_median(rounds, || async {
        let entries = store.list_history(&release).await.expect("list-history");
        assert_eq!(entries.len(), ENTRIES);
    })
    .await;
    let (newest, _) = time_median(rounds, || async {
        let page = store
            .list_history_page(&release, PAGE, None)
            .await
            .expect("list-history-page");
        assert_eq!(page.entries.len(), PAGE as usize);
    })
    .await;
    // A page half-way back: its cursor is the key of the entry just newer than it.
    let middle = store
        .list_history(&release)
        .await
        .expect("list-history")
        .swap_remove(ENTRIES / 2)
        .key;
    let (further, _) = time_median(rounds, || async {
        let page = store
            .list_history_page(&release, PAGE, Some(&middle))
            .await
            .expect("list-history-page");
        assert_eq!(page.entries.len(), PAGE as usize);
    })
    .await;
    let history = format!("bench/{}/history", release.name);
    let (listing, _) = time_median(rounds, || async {
        let listed: Vec<_> = direct_store
            .list(Some(&Path::from(history.as_str())))
            .try_collect()
            .await
            .expect("the emulator lists");
        assert_eq!(listed.len(), ENTRIES);
    })
    .await;
    store
        .delete_release(&release)
        .await
        .expect("delete-release");
    println!(
        "\nhistory on the S3 emulator: a release of {ENTRIES} entries, median of {rounds} runs"
    );
    let rows = [
        ("list-history, every entry".to_string(), all),
        (format!("list-history-page, the newest {PAGE}"), newest),
        (
            format!("list-history-page, {PAGE} from half-way back"),
            further,
        ),
        (
            "object_store list of the history alone".to_string(),
            listing,
        ),
    ];
    for (what, took) in rows {
        println!("  {what:<48}{}", ms(took));
    }
    println!(
        "  a page takes {:.1}% of the whole listing's time",
        100.0 * newest.as_secs_f64() / all.as_secs_f64()
    );
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
            "the S3 emulator bench: not available (RENDER_STORE_TEST_S3_URL is not set; \
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
                println!("the S3 emulator bench: not available ({e})");
                return;
            }
        };
        let bucket = match open_bucket(&url) {
            Ok(Some(b)) => b,
            Ok(None) => unreachable!("the URL is not empty"),
            Err(e) => {
                println!("the S3 emulator bench: not available ({e})");
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
        history_pages(&store, &direct_store, rounds).await;
    });
}
