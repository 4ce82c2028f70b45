//! The sandbox's bounds: a call over its memory cap or CPU budget fails alone, with an
//! error naming the bound, and the next call on the same host works; a guest that never
//! returns is stopped.

use crate::support::{Recorded, bucket_from_url, release, render};
use render_store::{Error, Limits, RenderStore, Runtime};
use std::process::Command;
use std::sync::Arc;

/// A component of the render-store world whose every function, `cabi_realloc`
/// included, loops forever: wit-component's dummy module for the world (each body
/// `unreachable`), with each body turned into an endless loop.
fn looping_component() -> Vec<u8> {
    let wit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../wit/render-store.wit"
    ))
    .unwrap();
    crate::support::dummy_component(&wit, |text| {
        assert!(text.contains("unreachable"), "{text}");
        text.replace("unreachable", "loop br 0 end unreachable")
    })
}

fn stopped_by_cpu_budget<T: std::fmt::Debug>(result: render_store::Result<T>) {
    match result {
        Err(Error::Fuel { budget }) => assert_eq!(budget, 20_000_000),
        other => panic!("expected the CPU bound to stop the call, got {other:?}"),
    }
}

#[tokio::test]
async fn a_guest_that_never_returns_is_stopped_by_the_cpu_bound() {
    let limits = Limits {
        fuel: 20_000_000,
        ..Limits::default()
    };
    let looping = Arc::new(Runtime::with_component(&looping_component(), limits).unwrap());
    stopped_by_cpu_budget(looping.render_ref(&render(1)).await);
    // The same host goes on: the next call is stopped the same way, not hung.
    stopped_by_cpu_budget(looping.sha256_hex(b"x").await);

    // A store operation is stopped before any bucket call.
    let recorded = Recorded::new(bucket_from_url("mem://"));
    let store = RenderStore::new(looping.clone(), recorded.recorder.clone());
    stopped_by_cpu_budget(store.put_render(&release("app"), &render(1)).await);
    assert_eq!(recorded.calls(), []);

    // The real component under the same limits works.
    let real = Runtime::new(limits).unwrap();
    assert!(
        real.render_ref(&render(1))
            .await
            .unwrap()
            .starts_with("sha256:")
    );
}

#[tokio::test]
async fn the_memory_cap_fails_one_store_call_and_writes_nothing() {
    let rt = Arc::new(
        Runtime::new(Limits {
            memory_bytes: 8 << 20,
            ..Limits::default()
        })
        .unwrap(),
    );
    let recorded = Recorded::new(bucket_from_url("mem://"));
    let store = RenderStore::new(rt.clone(), recorded.recorder.clone());
    let big = vec![format!(r#"{{"data":"{}"}}"#, "y".repeat(6 << 20)).into_bytes()];
    match store.put_render(&release("app"), &big).await {
        Err(Error::MemoryCap { wanted, cap }) => {
            assert!(cap == 8_388_608 && wanted > cap, "{wanted} {cap}")
        }
        other => panic!("expected the memory cap, got {other:?}"),
    }
    assert_eq!(recorded.calls(), []);
    store.put_render(&release("app"), &render(2)).await.unwrap();
    assert_eq!(recorded.calls().len(), 2);
    assert!(rt.peak_memory_bytes() <= 8 << 20);
}

#[test]
fn the_cli_takes_its_bounds_from_flags_and_names_them_when_hit() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    std::fs::write(&big, format!(r#"{{"data":"{}"}}"#, "z".repeat(6 << 20))).unwrap();
    let small = dir.path().join("small.json");
    std::fs::write(&small, r#"{"kind":"ConfigMap"}"#).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
            // Ad-hoc objects without Kubernetes names: this topic is not that rule.
            .env("RENDER_STORE_VALIDATE", "false")
            .args(args)
            .env_remove("RENDER_STORE_MEMORY_CAP_MIB")
            .env_remove("RENDER_STORE_FUEL")
            .output()
            .unwrap()
    };
    let (big, small) = (big.to_str().unwrap(), small.to_str().unwrap());

    let out = run(&["--memory-cap-mib", "4", "ref", big]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("memory cap") && err.contains("4194304"),
        "{err}"
    );
    // The flag that raises it, not the library's setting.
    assert!(
        err.contains("raise --memory-cap-mib") && !err.contains("Limits::"),
        "{err}"
    );
    assert!(
        run(&["--memory-cap-mib", "4", "ref", small])
            .status
            .success()
    );
    assert!(
        run(&["ref", big]).status.success(),
        "the default cap admits 6 MiB"
    );

    let out = run(&["--fuel", "1000000", "ref", big]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("CPU budget of 1000000"),
        "{err}"
    );

    for bad in [["--memory-cap-mib", "0"], ["--fuel", "lots"]] {
        let out = run(&[bad[0], bad[1], "ref", small]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains(bad[0].trim_start_matches('-')));
    }
}

#[test]
fn max_concurrent_calls_takes_a_count_of_places() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.json");
    std::fs::write(&small, r#"{"kind":"ConfigMap"}"#).unwrap();
    let small = small.to_str().unwrap();
    let run = |args: &[&str], env: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"));
        // Ad-hoc objects without Kubernetes names: this topic is not that rule.
        c.env("RENDER_STORE_VALIDATE", "false");
        c.args(args).env_remove("RENDER_STORE_MAX_CONCURRENT_CALLS");
        if let Some(v) = env {
            c.env("RENDER_STORE_MAX_CONCURRENT_CALLS", v);
        }
        c.output().unwrap()
    };
    for bad in ["0", "-1", "two", "1.5", " ", "99999999"] {
        let flag = format!("--max-concurrent-calls={bad}");
        let out = run(&[&flag, "ref", small], None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("max-concurrent-calls"),
            "{bad:?}: {err}"
        );
        let out = run(&["ref", small], Some(bad));
        assert!(
            !out.status.success(),
            "RENDER_STORE_MAX_CONCURRENT_CALLS={bad:?}"
        );
    }
    for good in ["1", "3"] {
        let out = run(&["ref", small, "--max-concurrent-calls", good], None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("sha256:"));
        assert!(run(&["ref", small], Some(good)).status.success());
    }
}

/// A ConfigMap of `bytes` bytes of canonical JSON (give or take a few), in values of
/// 64 KiB.
fn config_map(name: &str, bytes: usize) -> Vec<u8> {
    let value = "v".repeat(64 << 10);
    let entries: Vec<String> = (0..bytes / (value.len() + 16))
        .map(|i| format!(r#""k{i:07}":"{value}""#))
        .collect();
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{{}}}}}"#,
        entries.join(",")
    )
    .into_bytes()
}

/// One documented largest render (64 MiB of canonical bytes): a render just under it is
/// stored, shown a page at a time and downloaded whole; one over it is refused at the
/// door, by the library and the CLI alike, and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_largest_render_is_shown_and_downloaded_and_a_larger_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let store = RenderStore::open(&url).unwrap().unwrap();
    let app = release("big");
    let near: Vec<Vec<u8>> = (0..6)
        .map(|i| config_map(&format!("c{i}"), 10 << 20))
        .collect();
    let render_ref = store.put_render(&app, &near).await.unwrap();
    // Two renders of three objects, each larger than a page, one value changed in each:
    // the diff page is paged the same way (what it pages is the size of the changes).
    let before: Vec<Vec<u8>> = (0..3)
        .map(|i| config_map(&format!("d{i}"), 5 << 20))
        .collect();
    let after: Vec<Vec<u8>> = before
        .iter()
        .map(|o| {
            String::from_utf8_lossy(o)
                .replacen("\"vvv", "\"www", 1)
                .into_bytes()
        })
        .collect();
    let diffed = release("diffed");
    let before_ref = store.put_render(&diffed, &before).await.unwrap();
    let after_ref = store.put_render(&diffed, &after).await.unwrap();
    drop((before, after));
    let over: Vec<Vec<u8>> = (0..7)
        .map(|i| config_map(&format!("c{i}"), 10 << 20))
        .collect();
    match store.put_render(&release("over"), &over).await {
        Err(Error::InvalidInput(m)) => assert!(
            m.contains(&render_store::MAX_RENDER_BYTES.to_string()) && m.contains("largest"),
            "{m}"
        ),
        other => panic!("a render over the largest size: {other:?}"),
    }
    assert!(!dir.path().join("ns/over").exists(), "something was stored");
    // The CLI says the same, from a file.
    let file = dir.path().join("over.json");
    let mut stream = Vec::new();
    for object in &over {
        stream.extend_from_slice(object);
        stream.push(b'\n');
    }
    std::fs::write(&file, &stream).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(["--render-store-url", &url, "put", "ns/over"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("67108864 bytes (64 MiB)"),
        "{err}"
    );
    drop(stream);
    drop(over);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let observer = Arc::new(render_store::Observer::new(Some(store)).unwrap());
    tokio::spawn(render_store_cli::serve::serve(listener, observer));
    let get = |path: String| async move {
        let response = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
        (response.status().as_u16(), response.bytes().await.unwrap())
    };
    let (status, raw) = get(format!("/renders/ns/big/{render_ref}")).await;
    assert_eq!(status, 200);
    assert_eq!(
        render_store_guest::render_ref_of_canonical(&raw),
        render_ref,
        "the download is the render whole"
    );
    let page = |n: usize| get(format!("/ui/ns/big/renders/{render_ref}?page={n}"));
    let mut shown = 0;
    for n in 1..=6 {
        let (status, body) = page(n).await;
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 200, "page {n}");
        assert!(body.len() < 32 << 20, "page {n} is {} bytes", body.len());
        assert!(body.contains(&format!("of 6 (page {n} of 6)")), "page {n}");
        shown += body.matches("<details class=\"object\"").count();
    }
    assert_eq!(shown, 6, "every object on one page or another");
    assert_eq!(page(7).await.0, 404);
    // The diff page of the other two, a page at a time too.
    let mut changed_shown = 0;
    for n in 1..=3 {
        let (status, body) = get(format!(
            "/ui/ns/diffed/diff?from={before_ref}&to={after_ref}&page={n}"
        ))
        .await;
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 200, "diff page {n}");
        assert!(
            body.len() < 32 << 20,
            "diff page {n} is {} bytes",
            body.len()
        );
        assert!(body.contains(&format!("(page {n} of 3)")), "diff page {n}");
        changed_shown += body.matches("changed-object\"").count();
    }
    assert_eq!(
        changed_shown, 3,
        "every changed object on one page or another"
    );
}
