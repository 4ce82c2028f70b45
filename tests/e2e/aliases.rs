//! YAML aliases that expand a document past ten times its own size (plus 1 MiB), or past
//! the call's memory cap, are refused before they are copied out, with an error that
//! says so (go-yaml's own limit counts decodes, not bytes); what fits is converted as Go
//! converts it.

use render_store::{Error, Limits, Observer, RenderStore, Runtime};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A stream that anchors one scalar of `scalar_bytes` and names it `aliases` times.
fn amplifying(scalar_bytes: usize, aliases: usize) -> Vec<u8> {
    let mut yaml = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\nanchor: &a \"{}\"\ndata:\n",
        "x".repeat(scalar_bytes)
    );
    for i in 0..aliases {
        yaml.push_str(&format!("  k{i}: *a\n"));
    }
    yaml.into_bytes()
}

fn runtime(cap_mib: usize) -> Arc<Runtime> {
    Arc::new(
        Runtime::new(Limits {
            memory_bytes: cap_mib << 20,
            concurrent_calls: 4,
            ..Limits::default()
        })
        .unwrap(),
    )
}

#[tokio::test]
async fn aliases_expanding_a_document_tenfold_are_refused_before_they_are_copied() {
    // The default cap (1 GiB): the budget relative to the document refuses the bomb long
    // before the cap would.
    let rt = runtime(Limits::DEFAULT_MEMORY_BYTES >> 20);
    // 534 KB of YAML naming a 512 KiB scalar 900 times: about 460 MB of JSON.
    let stream = amplifying(512 << 10, 900);
    assert!(stream.len() < 600_000);
    match rt.yaml_canonical(&stream).await {
        Err(Error::InvalidYaml {
            document, message, ..
        }) => {
            assert_eq!(document, 0);
            assert!(
                message.contains("aliases expand") && message.contains("10 times its own"),
                "{message}"
            );
        }
        other => panic!(
            "expected the aliases to be refused, got {:?}",
            other.map(|c| c.len())
        ),
    }
    // Refused before the copies were made: the call's memory stayed far below them.
    assert!(
        rt.peak_memory_bytes() < 64 << 20,
        "the call grew to {} bytes",
        rt.peak_memory_bytes()
    );
    // The next call on the same runtime is unaffected, and a stream whose aliases stay
    // within the budget is converted, every alias copied out.
    let fits = amplifying(64 << 10, 12);
    let canonical = rt.yaml_canonical(&fits).await.unwrap();
    assert!(canonical.len() > 12 * (64 << 10), "{}", canonical.len());
    // Just past the budget: ten times the document and 1 MiB more.
    let past = amplifying(64 << 10, 40);
    assert!(matches!(
        rt.yaml_canonical(&past).await,
        Err(Error::InvalidYaml { .. })
    ));
}

#[tokio::test]
async fn aliases_within_the_budget_but_past_the_memory_cap_are_refused_too() {
    // A small cap: 8 MiB of aliases of a 1 MiB document fit the budget, not the cap.
    let rt = runtime(8);
    let stream = amplifying(1 << 20, 8);
    match rt.yaml_canonical(&stream).await {
        Err(Error::InvalidYaml { message, .. }) => {
            assert!(message.contains("memory cap"), "{message}")
        }
        Err(Error::MemoryCap { .. }) => {}
        other => panic!("expected a refusal, got {:?}", other.map(|c| c.len())),
    }
}

#[tokio::test]
async fn the_server_refuses_an_alias_bomb_within_its_cap_and_keeps_answering() {
    // The server's defaults: the budget, not the cap, refuses the bombs.
    let rt = runtime(Limits::DEFAULT_MEMORY_BYTES >> 20);
    let dir = tempfile::tempdir().unwrap();
    let bucket = render_store::open_bucket(&format!("file://{}", dir.path().display()))
        .unwrap()
        .unwrap();
    let store = RenderStore::new(rt.clone(), bucket);
    let release = render_store::Release::new("ns", "app");
    let r = store
        .put_render(
            &release,
            &[br#"{"kind":"ConfigMap","metadata":{"name":"big"}}"#.to_vec()],
        )
        .await
        .unwrap();
    store
        .record_history(
            &release,
            &render_store::NewEntry {
                render_ref: r,
                synced_at: render_store::SyncTime::now(),
                summary: String::new(),
            },
        )
        .await
        .unwrap();
    let observer = Arc::new(Observer::new(Some(store)).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = render_store_cli::serve::router(observer);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::new();
    let bombs: Vec<_> = (0..4)
        .map(|_| {
            client
                .post(format!("{base}/diff?namespace=ns&name=app"))
                .header("content-type", "application/yaml")
                .body(amplifying(512 << 10, 900))
                .send()
        })
        .collect();
    let bombs = tokio::spawn(futures::future::join_all(bombs));
    let started = Instant::now();
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(started.elapsed() < Duration::from_secs(5));
    for answer in bombs.await.unwrap() {
        let answer = answer.unwrap();
        assert_eq!(answer.status(), 400);
        let body = answer.text().await.unwrap();
        assert!(body.contains("aliases expand"), "{body}");
    }
    assert!(
        rt.peak_memory_bytes() < 64 << 20,
        "{}",
        rt.peak_memory_bytes()
    );
}
