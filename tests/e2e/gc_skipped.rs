//! GC over history it cannot count (issue 44, CONTRACT.md §5): entries planted with a
//! far-future time and no render, and an entry from a replica whose clock runs ahead,
//! never push real entries out. The CLI on a file:// store, as an operator meets it.

use crate::cli::Cli;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

/// `n` renders put and recorded by the CLI, an hour apart, the newest `hours_ago`
/// hours before now, in order; their renderRefs.
fn synced(cli: &Cli, n: usize, hours_ago: i64) -> Vec<String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    (0..n)
        .map(|i| {
            let file = cli.object(
                &format!("r{i}.json"),
                &format!(r#"{{"kind":"ConfigMap","n":{i}}}"#),
            );
            let r = cli.ok(&["put", "ns/app", &file]).trim().to_string();
            let at = now - 3_600 * (hours_ago + (n - 1 - i) as i64);
            cli.ok(&["record", "ns/app", &r, "--synced-at", &rfc3339(at)]);
            r
        })
        .collect()
}

fn rfc3339(seconds: i64) -> String {
    render_store_guest::format_synced_at(render_store_guest::SyncTime {
        seconds,
        nanoseconds: 0,
    })
    .unwrap()
}

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// The report's scenario: four real entries (the newest just recorded), ten planted
/// `99991231T235950…` entries whose renders do not exist, `gc --keep 4 --grace 0
/// --protect <current>`. Before the rule, all four real entries and three renders were
/// deleted and the ten planted entries kept.
#[test]
fn planted_future_entries_do_not_make_gc_delete_real_history() {
    let cli = Cli::file_store();
    let refs = synced(&cli, 4, 0);
    let history = cli.store_dir().join("ns/app/history");
    let renders = cli.store_dir().join("ns/app/renders");
    let real_entries = files(&history);
    let real_renders = files(&renders);
    assert_eq!((real_entries.len(), real_renders.len()), (4, 4));
    let mut planted = Vec::new();
    for n in 0..10 {
        let r = format!("sha256:{:064x}", 0xbad0_0000_u64 + n);
        let name = format!("99991231T235950.000000000Z-{r}");
        let path = history.join(&name);
        std::fs::write(&path, b"{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        planted.push(name);
    }

    // The dry run says what the run does, in JSON too.
    let dry: Value = serde_json::from_str(&cli.ok(&[
        "gc",
        "ns/app",
        "--keep",
        "4",
        "--grace",
        "0",
        "--protect",
        &refs[3],
        "--dry-run",
        "-o",
        "json",
    ]))
    .unwrap();
    let keys = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().rsplit('/').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&dry["futureHistory"]), planted);
    let mut every_entry = real_entries.clone();
    every_entry.extend(planted.iter().cloned());
    assert_eq!(keys(&dry["keepHistory"]), every_entry, "all are kept");
    assert!(keys(&dry["deleteHistory"]).is_empty() && keys(&dry["deleteRenders"]).is_empty());
    assert_eq!(dry["dryRun"], true);

    let out = cli.run(&[
        "gc",
        "ns/app",
        "--keep",
        "4",
        "--grace",
        "0",
        "--protect",
        &refs[3],
    ]);
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(out.status.success(), "{stderr}");
    // Every real entry and render is still there; so are the planted entries, which
    // GC reports rather than deletes.
    assert_eq!(files(&history), every_entry);
    assert_eq!(files(&renders), real_renders);
    for name in &planted {
        assert!(
            stdout.contains(&format!(
                "kept, not counted (dated more than 5 minutes after now) ns/app/history/{name}"
            )),
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("deleted 0 history entries and 0 renders; kept 14 entries (10 not counted) and 4 renders"),
        "{stdout}"
    );
    assert!(
        stderr.contains("10 history entries of ns/app are dated more than 5 minutes after now")
            && stderr.contains("check the clock")
            && stderr.contains("remove it by hand"),
        "{stderr}"
    );
    // The history still shows the real entries, the one just recorded among them.
    let shown = cli.ok(&["history", "ns/app", "-o", "wide"]);
    assert!(refs.iter().all(|r| shown.contains(r.as_str())), "{shown}");
}

/// A replica whose clock ran an hour ahead recorded one entry; two later syncs by a
/// correct clock come after it. `--keep 2` keeps those two and the skewed entry with its
/// render, and deletes only the oldest real entry.
#[test]
fn a_skewed_replica_s_entry_is_left_alone_and_later_syncs_count() {
    let cli = Cli::file_store();
    let refs = synced(&cli, 2, 3);
    let file = cli.object("skewed.json", r#"{"kind":"ConfigMap","skewed":true}"#);
    let skewed = cli.ok(&["put", "ns/app", &file]).trim().to_string();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    cli.ok(&[
        "record",
        "ns/app",
        &skewed,
        "--synced-at",
        &rfc3339(now + 3_600),
    ]);
    let later = cli.object("later.json", r#"{"kind":"ConfigMap","later":true}"#);
    let later = cli.ok(&["put", "ns/app", &later]).trim().to_string();
    cli.ok(&[
        "record",
        "ns/app",
        &later,
        "--synced-at",
        &rfc3339(now - 60),
    ]);

    let plan: Value = serde_json::from_str(
        &cli.ok(&["gc", "ns/app", "--keep", "2", "--grace", "0", "-o", "json"]),
    )
    .unwrap();
    let ends = |v: &Value, r: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .any(|k| k.as_str().unwrap().ends_with(r))
    };
    assert_eq!(plan["futureHistory"].as_array().unwrap().len(), 1);
    assert!(ends(&plan["futureHistory"], &skewed));
    assert_eq!(plan["deleteHistory"].as_array().unwrap().len(), 1);
    assert!(ends(&plan["deleteHistory"], &refs[0]));
    assert!(ends(&plan["keepHistory"], &refs[1]) && ends(&plan["keepHistory"], &later));
    assert!(ends(&plan["keepRenders"], &skewed));
    let renders = files(&cli.store_dir().join("ns/app/renders"));
    assert!(renders.contains(&skewed) && !renders.contains(&refs[0]));
}

/// The history page marks each entry as GC's dry run decides it: the planted and the
/// dangling entries are kept, uncounted, and say why.
#[tokio::test]
async fn the_history_page_says_why_gc_does_not_count_an_entry() {
    use crate::support::{bucket_from_url, release, render, runtime, time};
    use render_store::{NewEntry, RenderStore};
    let bucket = bucket_from_url("mem://");
    let store = RenderStore::new(runtime(), bucket.clone());
    let app = release("app");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let real = store.put_render(&app, &render(1)).await.unwrap();
    let entry = |r: &str, at: i64| NewEntry {
        render_ref: r.to_string(),
        synced_at: time(at),
        summary: "s".into(),
    };
    store
        .record_history(&app, &entry(&real, now - 60))
        .await
        .unwrap();
    let missing = format!("sha256:{}", "d".repeat(64));
    store
        .record_history(&app, &entry(&missing, now - 30))
        .await
        .unwrap();
    let planted = format!("sha256:{}", "f".repeat(64));
    bucket
        .put(
            &format!("ns/app/history/99991231T235950.000000000Z-{planted}"),
            b"{}".to_vec(),
        )
        .await
        .unwrap();
    let server = crate::http::Server::start(Some(store)).await;
    let (status, page) = server.get("/ui/ns/app").await;
    assert_eq!(status, 200, "{page}");
    for why in [
        "GC keeps this entry but does not count it: dated more than 5 minutes after now",
        "GC keeps this entry but does not count it: its render is not stored",
        "GC keeps this entry: one of the newest 10; its render is kept",
    ] {
        assert!(page.contains(why), "{why}:\n{page}");
    }
}
