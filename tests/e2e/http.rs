//! The observer's HTTP endpoints, with a real client against a server on 127.0.0.1.

use super::support::*;
use render_store::{NewEntry, Observer, RenderStore};
use std::sync::Arc;

struct Server {
    base: String,
    client: reqwest::Client,
}

impl Server {
    async fn start(store: Option<RenderStore>) -> Server {
        let observer = Arc::new(Observer::new(store).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(render_store::serve::serve(listener, observer));
        Server {
            base,
            client: reqwest::Client::new(),
        }
    }

    async fn get(&self, path: &str) -> (u16, String) {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }
}

/// A file:// store with two recorded renders; returns the folder, the store and refs.
async fn populated() -> (tempfile::TempDir, RenderStore, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let store = RenderStore::open(&format!("file://{}", dir.path().display()))
        .unwrap()
        .unwrap();
    let app = release("app");
    let mut refs = Vec::new();
    for n in [1, 2] {
        let mut objects = render(n);
        objects[1] = format!(r#"{{"kind":"Service","apiVersion":"v1","metadata":{{"name":"s"}},"spec":{{"port":{n}}}}}"#).into_bytes();
        let r = store.put_render(&app, &objects).await.unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: time(1_767_225_600 + n as i64),
            summary: format!("v{n}"),
        };
        store.record_history(&app, &entry).await.unwrap();
        refs.push(r);
    }
    (dir, store, refs)
}

#[tokio::test]
async fn history_renders_and_health_on_a_file_store() {
    let (dir, store, refs) = populated().await;
    let s = Server::start(Some(store)).await;
    assert_eq!(s.get("/healthz").await, (200, "ok\n".to_string()));

    let (status, body) = s.get("/history?namespace=ns&name=app").await;
    assert_eq!(status, 200, "{body}");
    let history: serde_json::Value = serde_json::from_str(&body).unwrap();
    let got: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["renderRef"].as_str().unwrap())
        .collect();
    assert_eq!(got, [refs[0].as_str(), refs[1].as_str()]);
    assert_eq!(history[0]["syncedAt"], "2026-01-01T00:00:01Z");
    assert_eq!(history[1]["summary"], "v2");

    let (status, body) = s.get(&format!("/renders/ns/app/{}", refs[0])).await;
    assert_eq!(status, 200);
    assert_eq!(
        body.as_bytes(),
        std::fs::read(dir.path().join("ns/app/renders").join(&refs[0])).unwrap()
    );

    let absent = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    assert_eq!(s.get(&format!("/renders/ns/app/{absent}")).await.0, 404);
    let (status, body) = s.get("/renders/ns/app/sha256:nothex").await;
    assert_eq!(status, 400);
    assert!(body.contains("renderRef"), "{body}");

    // A corrupt blob is a 500 with a message, never its content.
    let file = dir.path().join("ns/app/renders").join(&refs[1]);
    std::fs::write(&file, b"{\"secret\":\"tampered\"}\n").unwrap();
    let (status, body) = s.get(&format!("/renders/ns/app/{}", refs[1])).await;
    assert_eq!(status, 500);
    assert!(
        body.contains("corrupt") && !body.contains("tampered"),
        "{body}"
    );
}

#[tokio::test]
async fn bad_query_parameters_are_400_naming_the_parameter() {
    let (_dir, store, refs) = populated().await;
    let s = Server::start(Some(store)).await;
    for (path, needle) in [
        ("/history?namespace=ns".to_string(), "\\\"name\\\""),
        ("/history?name=app".to_string(), "\\\"namespace\\\""),
        (
            "/history?namespace=ns&name=app&color=red".to_string(),
            "\\\"color\\\"",
        ),
        ("/history?namespace=NS&name=app".to_string(), "namespace"),
        ("/diff?namespace=ns&name=app".to_string(), "\\\"render\\\""),
        (
            format!(
                "/diff?namespace=ns&name=app&render={}&against=md5:x",
                refs[0]
            ),
            "renderRef",
        ),
    ] {
        let (status, body) = s.get(&path).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.contains(needle), "{path}: {body} should name {needle}");
    }
}

#[tokio::test]
async fn diff_endpoint() {
    let (_dir, store, refs) = populated().await;
    let s = Server::start(Some(store)).await;
    let (status, body) = s
        .get(&format!("/diff?namespace=ns&name=app&render={}", refs[0]))
        .await;
    assert_eq!(status, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["added"][0]["name"], "c1", "{d}");
    assert_eq!(d["removed"][0]["name"], "c2");
    assert_eq!(d["changed"][0]["kind"], "Service");
    let lines: Vec<&str> = d["changed"][0]["diff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines.contains(&"-    \"port\": 2") && lines.contains(&"+    \"port\": 1"),
        "{lines:?}"
    );

    let (status, body) = s
        .get(&format!(
            "/diff?namespace=ns&name=app&render={}&against={}",
            refs[1], refs[0]
        ))
        .await;
    assert_eq!(status, 200);
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["added"][0]["name"], "c2");
    let absent = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    assert_eq!(
        s.get(&format!("/diff?namespace=ns&name=app&render={absent}"))
            .await
            .0,
        404
    );
    assert_eq!(
        s.get(&format!("/diff?namespace=ns&name=other&render={}", refs[0]))
            .await
            .0,
        404,
        "no history to diff against"
    );
}

#[tokio::test]
async fn without_a_store_history_is_503_and_diff_an_error() {
    let s = Server::start(None).await;
    assert_eq!(s.get("/healthz").await.0, 200);
    let (status, body) = s.get("/history?namespace=ns&name=app").await;
    assert_eq!(status, 503);
    assert!(body.contains("no render store"), "{body}");
    let r = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let (status, body) = s
        .get(&format!("/diff?namespace=ns&name=app&render={r}"))
        .await;
    assert_eq!(status, 503);
    assert!(body.contains("error"), "{body}");
}
