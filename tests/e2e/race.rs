//! GC racing a writer (CONTRACT.md §13), as separate CLI processes: a writer that
//! puts a render, applies it for a while and records it, beside a loop of
//! `gc --keep 3`. Without a grace period a GC that lists the history between the put
//! and the record deletes the blob the next entry needs; with one, every entry's blob
//! survives.

use super::support::cloud_urls;
use render_store::{Release, RenderStore};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn cli(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .arg("--render-store-url")
        .arg(url)
        .args(args)
        .output()
        .expect("the CLI runs")
}

fn ok(url: &str, args: &[&str]) -> String {
    let out = cli(url, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `syncs` syncs of `release` beside a GC loop with `grace`; returns the history
/// entries left at the end, those whose render blob is gone, and how many records were
/// refused because GC had taken the render's blob before it.
async fn race(
    url: &str,
    release: &Release,
    grace: &str,
    syncs: usize,
) -> (usize, Vec<String>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let name = release.to_string();
    let done = Arc::new(AtomicBool::new(false));

    let gc_loop = {
        let (url, name, grace, done) = (
            url.to_string(),
            name.clone(),
            grace.to_string(),
            done.clone(),
        );
        std::thread::spawn(move || {
            let mut runs = 0;
            while !done.load(Ordering::SeqCst) {
                let out = cli(&url, &["gc", &name, "--keep", "3", "--grace", &grace]);
                // Before the writer's first put the release does not exist yet.
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.success() || err.contains("no release"),
                    "gc: {err}"
                );
                runs += 1;
            }
            runs
        })
    };

    let writer = {
        let (url, name, path) = (url.to_string(), name.clone(), dir.path().to_path_buf());
        std::thread::spawn(move || {
            let mut refused = 0;
            for i in 0..syncs {
                let file = write_object(&path, i);
                let render_ref = ok(&url, &["put", &name, &file]).trim().to_string();
                // The apply between persist and record (hooks, waves) takes a while.
                std::thread::sleep(Duration::from_millis(40));
                let out = cli(
                    &url,
                    &[
                        "record",
                        &name,
                        &render_ref,
                        "--summary",
                        &format!("sync {i}"),
                    ],
                );
                // `record` refuses a render whose blob GC already took.
                let stderr = String::from_utf8_lossy(&out.stderr);
                if !out.status.success() {
                    assert!(stderr.contains("is not stored"), "record: {stderr}");
                    refused += 1;
                }
            }
            refused
        })
    };
    let refused = writer.join().expect("the writer finished");
    done.store(true, Ordering::SeqCst);
    let gc_runs = gc_loop.join().expect("the GC loop finished");
    assert!(gc_runs > 0);

    let store = RenderStore::open(url).unwrap().unwrap();
    let history = store.list_history(release).await.unwrap();
    let mut missing = Vec::new();
    for entry in &history {
        match store.get_render(release, &entry.render_ref).await {
            Ok(_) => {}
            Err(render_store::Error::NotFound(_)) => missing.push(entry.key.clone()),
            Err(e) => panic!("{}: {e}", entry.key),
        }
    }
    eprintln!(
        "{url} grace {grace}: {syncs} syncs beside {gc_runs} GCs; {} entries left, {} without \
         their render, {refused} records refused for a deleted render",
        history.len(),
        missing.len()
    );
    (history.len(), missing, refused)
}

fn write_object(dir: &Path, i: usize) -> String {
    let path = dir.join(format!("{i}.json"));
    std::fs::write(
        &path,
        format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c"}},"data":{{"sync":"{i}"}}}}"#),
    )
    .unwrap();
    path.display().to_string()
}

fn unique_release(grace: &str) -> Release {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    Release::new(
        "race",
        format!("grace-{grace}-{}-{nanos}", std::process::id()),
    )
}

/// Both halves on one store: the loss without a grace period (so the test can fail),
/// none with the default one.
async fn with_and_without_grace(url: &str) {
    let (left, missing, refused) = race(url, &unique_release("0"), "0", 60).await;
    assert!(left > 0 || refused > 0);
    assert!(
        !missing.is_empty() || refused > 0,
        "without a grace period the race should lose blobs on {url}"
    );
    let (left, missing, refused) = race(url, &unique_release("10m"), "10m", 200).await;
    assert!(left >= 3);
    assert_eq!(missing, Vec::<String>::new(), "{url}");
    assert_eq!(refused, 0, "{url}");
}

#[tokio::test(flavor = "multi_thread")]
async fn gc_racing_a_writer_loses_nothing_within_the_grace_period_on_file() {
    let dir = tempfile::tempdir().unwrap();
    with_and_without_grace(&format!("file://{}", dir.path().display())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gc_racing_a_writer_loses_nothing_within_the_grace_period_on_s3() {
    for (name, url) in cloud_urls() {
        if name == "s3" {
            with_and_without_grace(&url).await;
        }
    }
}
