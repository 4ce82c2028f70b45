//! What reads cost as the store grows, counted: every bucket call of a fleet page, a
//! diff, `verify`, a history read past a corrupt entry and a release check, recorded at
//! two sizes of the store and asserted equal where the cost must not grow (and linear
//! where it must). Counts are exact; times are the bench's (`--bench scale`), never
//! asserted.

use super::http::Server;
use super::support::{bucket_from_url, runtime};
use render_store::{Bucket, BucketCall, Observer, RecordingBucket, Release, RenderStore, SyncTime};
use render_store_guest::{ReleasePrefix, entry_body, render_ref_of_canonical};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The keys of a release with `entries` history entries, each naming a small render of
/// its own, one a minute, summaries `sync N`.
fn release_keys(release: &Release, entries: usize) -> Vec<(String, Vec<u8>)> {
    let prefix = ReleasePrefix::new(release).unwrap();
    let mut keys = Vec::new();
    for i in 0..entries {
        let canonical = format!(
            "{{\"apiVersion\":\"v1\",\"data\":{{\"i\":\"{i}\"}},\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"{}\"}}}}\n",
            release.name
        );
        let r = render_ref_of_canonical(canonical.as_bytes());
        let at = SyncTime {
            seconds: 1_767_225_600 + 60 * i as i64,
            nanoseconds: 0,
        };
        keys.push((prefix.render_key(&r).unwrap(), canonical.into_bytes()));
        let body = entry_body(&r, at, &format!("sync {i}")).unwrap();
        keys.push((prefix.history_key(at, &r).unwrap(), body));
    }
    keys
}

async fn fill(bucket: &Arc<dyn Bucket>, keys: Vec<(String, Vec<u8>)>) {
    for (key, value) in keys {
        bucket.put(&key, value).await.unwrap();
    }
}

/// A mem:// store holding `releases` releases spread over three namespaces, one entry
/// each, and `entries` entries of `big/app`; with a recorder of every call.
async fn store_of(releases: usize, entries: usize) -> (RenderStore, Arc<RecordingBucket>) {
    let bucket = bucket_from_url("mem://");
    for i in 0..releases {
        let release = Release::new(format!("team-{}", i % 3), format!("app-{i:05}"));
        fill(&bucket, release_keys(&release, 1)).await;
    }
    if entries > 0 {
        fill(&bucket, release_keys(&Release::new("big", "app"), entries)).await;
    }
    let recorder = Arc::new(RecordingBucket::new(bucket));
    (RenderStore::new(runtime(), recorder.clone()), recorder)
}

/// The calls recorded, counted by kind: `list`, `list-delimited`, `get`, `exists`,
/// `put`, `delete`.
fn counted(calls: &[BucketCall]) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for call in calls {
        let kind = match call {
            BucketCall::Get(_) => "get",
            BucketCall::Put(_) => "put",
            BucketCall::Exists(_) => "exists",
            BucketCall::List(_) => "list",
            BucketCall::ListDelimited(_) => "list-delimited",
            BucketCall::Delete(_) | BucketCall::DeleteMany(_) => "delete",
        };
        *counts.entry(kind).or_insert(0) += 1;
    }
    counts
}

fn counts(pairs: &[(&'static str, usize)]) -> BTreeMap<&'static str, usize> {
    pairs.iter().copied().collect()
}

/// A fleet page costs one delimiter listing of the root and one of each namespace, then
/// one history listing and one read per release shown: the same for 30 releases as for
/// 600, where it was one listing per release of the store.
#[tokio::test]
async fn a_fleet_page_costs_its_length_not_the_fleets() {
    let mut seen = Vec::new();
    for fleet in [30, 600] {
        let (store, recorder) = store_of(fleet, 0).await;
        let observer = Observer::new(Some(store.clone())).unwrap();
        recorder.take_calls();
        let page = observer.releases_page(None, None, 10).await.unwrap();
        assert_eq!(page.releases.len(), 10);
        assert!(page.next_after.is_some() && page.unlisted.is_empty());
        let calls = counted(&recorder.take_calls());
        assert_eq!(
            calls,
            counts(&[("list-delimited", 4), ("list", 10), ("get", 10)]),
            "{fleet} releases"
        );
        // Every release's name, without its history: the root and the namespaces.
        let all = render_store::fleet::all_releases(&store, None)
            .await
            .unwrap();
        assert_eq!(all.releases.len(), fleet);
        assert_eq!(
            counted(&recorder.take_calls()),
            counts(&[("list-delimited", 4)]),
            "{fleet} releases"
        );
        // The same through the server: the JSON and the web page.
        let server = Server::start(Some(store)).await;
        let (status, _) = server.get("/releases?limit=10").await;
        assert_eq!(status, 200);
        let json = counted(&recorder.take_calls());
        let (status, _) = server.get("/?limit=10").await;
        assert_eq!(status, 200);
        let page = counted(&recorder.take_calls());
        assert_eq!((&json, &page), (&calls, &calls), "{fleet} releases");
        seen.push(calls);
    }
    assert_eq!(seen[0], seen[1]);
}

/// A diff reads its two renders and the entries that label them; its names and its
/// default side come from one listing of the history: 20 entries or 600, the same calls.
#[tokio::test]
async fn a_diff_reads_what_it_shows_however_long_the_history() {
    for entries in [20, 600] {
        let (store, recorder) = store_of(0, entries).await;
        let server = Server::start(Some(store)).await;
        recorder.take_calls();
        // The page: `from` by position, `to` the newest, both labelled.
        let (status, page) = server.get("/ui/big/app/diff?from=@1").await;
        assert_eq!(status, 200, "{page}");
        let want = format!("sync {}", entries - 2);
        assert!(page.contains(&want), "{page}");
        // Each render is weighed (a metadata request) before it is read, for the
        // server's render budget.
        assert_eq!(
            counted(&recorder.take_calls()),
            counts(&[("list", 1), ("exists", 2), ("get", 4)]),
            "{entries} entries"
        );
        // The JSON: `render` by position, `against` the newest (from the keys alone).
        let (status, _) = server.get("/diff?namespace=big&name=app&render=@1").await;
        assert_eq!(status, 200);
        assert_eq!(
            counted(&recorder.take_calls()),
            counts(&[("list", 2), ("exists", 2), ("get", 2)]),
            "{entries} entries"
        );
        // A page of the history: one listing and a read per entry shown, a listing of the
        // renders for their sizes, GC's dry-run plan (two listings).
        let (status, _) = server.get("/ui/big/app?limit=5").await;
        assert_eq!(status, 200);
        assert_eq!(
            counted(&recorder.take_calls()),
            counts(&[("list", 4), ("get", 6)]),
            "{entries} entries"
        );
    }
}

/// `verify` of one release reads each blob and each entry once: linear in the release,
/// where reading each entry through a page of one listed the whole history again.
#[tokio::test]
async fn verify_reads_each_key_once() {
    for entries in [20, 300] {
        let (store, recorder) = store_of(5, entries).await;
        recorder.take_calls();
        let report =
            render_store_cli::commands::verify::verify(&store, Some(&Release::new("big", "app")))
                .await
                .unwrap();
        assert_eq!((report.renders, report.entries), (entries, entries));
        assert!(report.problems.is_empty());
        assert_eq!(
            counted(&recorder.take_calls()),
            counts(&[("list", 1), ("get", 2 * entries)]),
            "{entries} entries"
        );
        // The whole store: found with delimiter listings, then each release as above.
        let report = render_store_cli::commands::verify::verify(&store, None)
            .await
            .unwrap();
        assert_eq!(report.releases, 6);
        assert_eq!(
            counted(&recorder.take_calls()),
            // The root, the four namespaces (team-0..2, big); each release's listing
            // and its two keys per entry.
            counts(&[
                ("list-delimited", 5),
                ("list", 6),
                ("get", 2 * entries + 10)
            ]),
            "{entries} entries"
        );
    }
}

/// `history` past a corrupt entry reads each entry once, after one listing.
#[tokio::test]
async fn a_history_with_a_corrupt_entry_is_read_in_linear_calls() {
    for entries in [20, 300] {
        let (store, recorder) = store_of(0, entries).await;
        let release = Release::new("big", "app");
        let keys: Vec<String> = store
            .bucket()
            .list("big/app/history/")
            .await
            .unwrap()
            .into_iter()
            .map(|o| o.key)
            .collect();
        store
            .bucket()
            .put(&keys[3], b"not json".to_vec())
            .await
            .unwrap();
        recorder.take_calls();
        let read = render_store_cli::commands::verify::history_entry_by_entry(&store, &release)
            .await
            .unwrap();
        assert_eq!(read.len(), entries);
        assert_eq!(read.iter().filter(|(_, r)| r.is_err()).count(), 1);
        assert_eq!(
            counted(&recorder.take_calls()),
            counts(&[("list", 1), ("get", entries)]),
            "{entries} entries"
        );
    }
}

/// The release check is one bounded call, whatever the release holds; `@N` is read
/// from the history's keys, no entry read.
#[tokio::test]
async fn a_release_check_and_a_position_cost_one_call_each() {
    for entries in [20, 600] {
        let (store, recorder) = store_of(0, entries).await;
        let release = Release::new("big", "app");
        recorder.take_calls();
        render_store_cli::names::require_release(&store, &release)
            .await
            .unwrap();
        assert_eq!(
            recorder.take_calls(),
            [BucketCall::ListDelimited("big/app/".into())]
        );
        let missing =
            render_store_cli::names::require_release(&store, &Release::new("big", "nope"))
                .await
                .unwrap_err();
        assert!(
            missing.to_string().contains("no release big/nope"),
            "{missing}"
        );
        recorder.take_calls();
        let r = render_store_cli::names::resolve_ref(&store, &release, "@5")
            .await
            .unwrap();
        assert!(r.starts_with("sha256:"));
        assert_eq!(
            recorder.take_calls(),
            [BucketCall::List("big/app/history/".into())]
        );
    }
}

/// What a sync costs does not depend on the rest of the store: put-render 2 calls,
/// record-history 2, a GC dry run 2, with 3,000 other releases beside it.
#[tokio::test]
async fn three_thousand_releases_change_nothing_for_one_release() {
    let (store, recorder) = store_of(3_000, 0).await;
    let release = Release::new("team-0", "new-app");
    let objects =
        vec![br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#.to_vec()];
    recorder.take_calls();
    let r = store.put_render(&release, &objects).await.unwrap();
    assert_eq!(
        counted(&recorder.take_calls()),
        counts(&[("exists", 1), ("put", 1)])
    );
    let entry = render_store::NewEntry {
        render_ref: r.clone(),
        synced_at: SyncTime::now(),
        summary: "v1".into(),
    };
    assert!(store.record_history(&release, &entry).await.unwrap());
    assert_eq!(
        counted(&recorder.take_calls()),
        counts(&[("list", 1), ("put", 1)])
    );
    let plan = store.gc(&release, 10, &[r], true).await.unwrap();
    assert_eq!(plan.keep_history.len(), 1);
    assert_eq!(counted(&recorder.take_calls()), counts(&[("list", 2)]));
}

#[path = "../support/counting_proxy.rs"]
mod counting_proxy;
use counting_proxy::CountingProxy;

/// The CLI as users run it, on the S3 emulator, its requests counted: what each command
/// costs is the same for a release of 30 entries as for one of 300, `gc --keep 0` (GC
/// off) makes no request, a history page no release check. Needs the emulators' S3 URL
/// (`RENDER_STORE_TEST_S3_URL`); left out without it, unless they are required.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_costs_the_same_requests_for_a_short_and_a_long_history() {
    let Some(url) = std::env::var("RENDER_STORE_TEST_S3_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        assert!(
            !super::support::emulators_required(),
            "RENDER_STORE_REQUIRE_EMULATORS=1 but RENDER_STORE_TEST_S3_URL is not set"
        );
        eprintln!("the S3 emulator is not configured: left out");
        return;
    };
    let parsed = url::Url::parse(&url).unwrap();
    let endpoint = parsed
        .query_pairs()
        .find(|(k, _)| k == "endpoint")
        .map(|(_, v)| v.into_owned())
        .expect("the emulator's URL names its endpoint");
    let proxy = CountingProxy::start(endpoint.clone()).await;
    let mut seen: Vec<Vec<(&str, u64)>> = Vec::new();
    for entries in [30, 300] {
        // A bucket of its own, so that no other test's keys are listed.
        let name = format!("counts-{entries}-{}", std::process::id());
        let made = reqwest::Client::new()
            .put(format!("{endpoint}/{name}"))
            .send()
            .await
            .unwrap();
        assert!(made.status().is_success(), "creating the bucket {name}");
        let with = |endpoint: &str| {
            let mut u = parsed.clone();
            u.set_host(Some(&name)).unwrap();
            let pairs: Vec<(String, String)> = parsed
                .query_pairs()
                .map(|(k, v)| {
                    let v = if k == "endpoint" {
                        endpoint.to_string()
                    } else {
                        v.into_owned()
                    };
                    (k.into_owned(), v)
                })
                .collect();
            u.query_pairs_mut().clear().extend_pairs(pairs);
            u.to_string()
        };
        let direct = bucket_from_url(&with(&endpoint));
        fill(&direct, release_keys(&Release::new("big", "app"), entries)).await;
        // The release index, built once as `reindex` builds it (not counted: it reads
        // every render, once).
        let direct_url = with(&endpoint);
        let reindexed = tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
                .args(["reindex", "big/app"])
                .env("RENDER_STORE_URL", &direct_url)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        assert!(
            reindexed.status.success(),
            "{}",
            String::from_utf8_lossy(&reindexed.stderr)
        );
        let cli_url = with(&format!("http://{}", proxy.addr));
        let mut costs = Vec::new();
        let mut before = proxy.requests();
        for (what, args) in [
            ("gc --keep 0", &["gc", "big/app", "--keep", "0"][..]),
            ("history --limit 5", &["history", "big/app", "--limit", "5"]),
            ("get @0", &["get", "big/app", "@0"]),
            ("diff (text)", &["diff", "big/app"]),
            (
                "diff -o json",
                &["diff", "big/app", "@1", "@0", "-o", "json"],
            ),
            ("releases", &["releases"]),
            ("images nginx", &["images", "nginx"]),
        ] {
            let (args, url) = (
                args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                cli_url.clone(),
            );
            // The proxy runs on this runtime: the process is waited for off it.
            let out = tokio::task::spawn_blocking(move || {
                std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
                    .args(&args)
                    .env("RENDER_STORE_URL", &url)
                    .output()
                    .unwrap()
            })
            .await
            .unwrap();
            // diff exits 1 when the renders differ, as diff(1).
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let after = proxy.requests();
            costs.push((what, after - before));
            before = after;
        }
        seen.push(costs);
    }
    assert_eq!(seen[0], seen[1], "30 entries, then 300");
    assert_eq!(
        seen[0],
        [
            ("gc --keep 0", 0),
            // One listing and a read of each entry shown: its entries show the release.
            ("history --limit 5", 6),
            // The release check, the listing that resolves @0, the read.
            ("get @0", 3),
            // The listing that resolves @1 and @0, the two renders, the two entries
            // that label them.
            ("diff (text)", 5),
            ("diff -o json", 3),
            // The root, the namespace, the release's history and its newest entry.
            ("releases", 4),
            // The root, the namespace, then the release's history and its index: two
            // requests a release, however long its history.
            ("images nginx", 4),
        ]
    );
}

/// `images` of a fleet costs the delimiter listings that find the releases, then for
/// each release one listing of its history and one read of its index: two requests a
/// release once the index names its renders, whatever the history's length. A release
/// not indexed yet (renders written by a controller that does not keep the index)
/// costs one read more for each distinct render, never a read per entry; `reindex`
/// brings it to two.
#[tokio::test]
async fn images_reads_two_objects_a_release_once_indexed() {
    let (store, recorder) = store_of(30, 40).await;
    recorder.take_calls();
    let before = render_store::fleet_images::images(&store, None, None, None, None)
        .await
        .unwrap();
    assert!(before.complete());
    // 31 releases: 30 of one entry, big/app of 40 entries of 40 renders; 3 namespaces
    // and big, each listed by a delimiter listing, and the root. No index yet: each
    // release's index is looked for, then its renders read.
    assert_eq!(
        counted(&recorder.take_calls()),
        counts(&[("list-delimited", 5), ("list", 31), ("get", 31 + 30 + 40)])
    );

    let done = render_store::fleet_index::reindex(&store, None, false)
        .await
        .unwrap();
    assert!(done.complete());
    assert_eq!(done.releases.len(), 31);
    assert!(done.releases.iter().all(|(_, r)| r.written));
    // Each release: its history, its (absent) index, its renders, one write.
    assert_eq!(
        counted(&recorder.take_calls()),
        counts(&[
            ("list-delimited", 5),
            ("list", 31),
            ("get", 31 + 30 + 40),
            ("put", 31)
        ])
    );

    let after = render_store::fleet_images::images(&store, None, None, None, None)
        .await
        .unwrap();
    assert_eq!(after, before, "the index answers what the renders did");
    assert_eq!(
        counted(&recorder.take_calls()),
        counts(&[("list-delimited", 5), ("list", 31), ("get", 31)])
    );
    // The same release asked alone: its history and its index, 40 renders or not.
    let big = Release::new("big", "app");
    store.release_images(&big, None, None, None).await.unwrap();
    assert_eq!(
        counted(&recorder.take_calls()),
        counts(&[("list", 1), ("get", 1)])
    );
    // A reindex with nothing to do writes nothing.
    let again = store.index_release(&big, true).await.unwrap();
    assert!(!again.written);
    assert_eq!(
        counted(&recorder.take_calls()),
        counts(&[("list", 1), ("get", 1)])
    );
}

/// The fleet's changes in a window cost the window, not the histories: the releases'
/// names, one listing of each history, then one read of each entry in the window and
/// one of each render it needs (its entries' and the one before the first), each render
/// once. 20 entries of `big/app` or 600, the same calls.
#[tokio::test]
async fn fleet_changes_read_each_render_of_the_window_once() {
    let at = |i: i64| SyncTime {
        seconds: 1_767_225_600 + 60 * i,
        nanoseconds: 0,
    };
    let mut seen = Vec::new();
    for entries in [20, 600] {
        let (store, recorder) = store_of(9, entries).await;
        recorder.take_calls();
        // Entries 10 to 14 of big/app; the other releases' one entry lies before.
        let found =
            render_store::fleet_changes::fleet_changes(&store, None, Some(at(10)), Some(at(15)))
                .await
                .unwrap();
        assert!(found.unlisted.is_empty());
        let places: Vec<usize> = found.entries.iter().map(|e| e.position).collect();
        let newest = entries - 1;
        assert_eq!(
            places,
            (10..15).rev().map(|i| newest - i).collect::<Vec<_>>(),
            "newest first"
        );
        // Each compared with the entry before it, the first with entry 9, outside.
        for e in &found.entries {
            assert_eq!(e.changes.changed.len(), 1, "{e:?}");
            assert!(e.previous_render_ref.is_some());
        }
        let calls = recorder.take_calls();
        let gets: Vec<&String> = calls
            .iter()
            .filter_map(|c| match c {
                BucketCall::Get(key) => Some(key),
                _ => None,
            })
            .collect();
        let mut distinct = gets.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), gets.len(), "a key read twice: {gets:?}");
        let counts_now = counted(&calls);
        // The root and 4 namespaces; 10 histories; 5 entries and 6 renders.
        assert_eq!(
            counts_now,
            counts(&[("list-delimited", 5), ("list", 10), ("get", 11)]),
            "{entries} entries"
        );
        seen.push(counts_now);
    }
    assert_eq!(seen[0], seen[1]);
}

/// A budget that grants every reservation and remembers what each asked for.
#[derive(Default)]
struct Granted(std::sync::Mutex<Vec<(Release, u64)>>);

impl render_store::fleet::ReadBudget for Granted {
    type Held = ();
    type Busy = std::convert::Infallible;

    async fn reserve(&self, release: &Release, bytes: u64) -> Result<(), Self::Busy> {
        self.0.lock().unwrap().push((release.clone(), bytes));
        Ok(())
    }
}

/// A page of the fleet's changes reads its own rows and nothing else: the order comes
/// from the history listings (the times are in the keys), then only the page's entries
/// and the renders they compare are read, within room for the largest two of those
/// renders, asked of the budget once for the one release on the page.
#[tokio::test]
async fn a_page_of_the_fleets_changes_reads_only_its_rows() {
    use render_store::fleet_changes::{Page, fleet_changes_page};
    let (store, recorder) = store_of(9, 600).await;
    recorder.take_calls();
    let budget = Granted::default();
    let page = Page {
        skip: 50,
        limit: Some(50),
    };
    let found = fleet_changes_page(&store, None, None, None, page, &budget)
        .await
        .unwrap()
        .unwrap();
    assert!(found.complete());
    // 600 entries of big/app and one of each other release, all in the open window.
    assert_eq!(found.total, 609);
    // The second page: big/app's entries 549 down to 500, @50 to @99.
    let places: Vec<usize> = found.entries.iter().map(|e| e.position).collect();
    assert_eq!(places, (50..100).collect::<Vec<_>>());
    assert!(found.entries.iter().all(|e| e.release.name == "app"));
    let calls = recorder.take_calls();
    let renders_read = calls
        .iter()
        .filter(|c| matches!(c, BucketCall::Get(k) if k.contains("/renders/")))
        .count();
    assert_eq!(
        renders_read, 51,
        "each row's render and the one before the first"
    );
    // The root and 4 namespaces; 10 histories and big/app's renders, for their sizes;
    // 50 entries and 51 renders.
    assert_eq!(
        counted(&calls),
        counts(&[("list-delimited", 5), ("list", 11), ("get", 101)])
    );
    let canonical = |i: usize| {
        format!(
            "{{\"apiVersion\":\"v1\",\"data\":{{\"i\":\"{i}\"}},\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"app\"}}}}\n"
        )
        .len() as u64
    };
    let asked = budget.0.into_inner().unwrap();
    assert_eq!(
        asked,
        [(Release::new("big", "app"), canonical(549) + canonical(548))]
    );
    // The last page holds the oldest entries, each release's first against nothing.
    let last = Page {
        skip: 600,
        limit: Some(50),
    };
    let found = fleet_changes_page(&store, None, None, None, last, &Granted::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.entries.len(), 9);
    assert!(
        found
            .entries
            .iter()
            .all(|e| e.previous_render_ref.is_none())
    );
}
