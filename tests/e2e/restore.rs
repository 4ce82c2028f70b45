//! A restore round-trips: what `get` writes, in every form that holds the values (`get`,
//! `get -o json`, `get -o yaml --show-secrets`, the pages' download), `put` takes back
//! under the same renderRef; a masked view (`get -o yaml`, a page's object) is refused
//! by `put` and by the preview, and nothing is stored. And what kubectl applies is
//! taken: Lists of every kind, `generateName`.

use super::cli::Cli;
use render_store::{Observer, RenderStore};
use std::io::Write;
use std::sync::Arc;

/// A render with what a restore must carry exactly: Secrets (one in a typed list inside
/// a List, one with its last-applied copy), values YAML reads as other types, a
/// multi-line script, unicode and a large integer.
fn objects() -> Vec<String> {
    let applied = serde_json::to_string(
        r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"hunter2"}}"#,
    )
    .unwrap();
    vec![
        format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","namespace":"prod","annotations":{{"kubectl.kubernetes.io/last-applied-configuration":{applied}}}}},"data":{{"password":"aHVudGVyMg=="}},"stringData":{{"token":"s3cr3t: yes"}}}}"#
        ),
        r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"SecretList","items":[{"metadata":{"name":"listed"},"data":{"k":"bGlzdGVk"}}]}]}"#.to_string(),
        r##"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"prod"},"data":{"on":"yes","octal":"0777","float":"1e3","empty":"","script":"#!/bin/sh\nset -e\n  echo  'hi'\n","unicode":"naïve ☃\u2028","big":"9007199254740993"},"binaryData":{"b":"AAE="}}"##.to_string(),
        r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"migrate-","namespace":"prod"},"spec":{"backoffLimit":9007199254740993,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"m","image":"busybox:1.36","args":["-c","exit 0"]}]}}}}"#.to_string(),
    ]
}

/// The store with the render put and recorded under `prod/app`; its renderRef.
fn stored() -> (Cli, String) {
    let cli = Cli::validating();
    let paths: Vec<String> = objects()
        .iter()
        .enumerate()
        .map(|(i, o)| cli.object(&format!("{i}.json"), o))
        .collect();
    let mut args = vec!["put", "prod/app"];
    args.extend(paths.iter().map(String::as_str));
    let render_ref = cli.ok(&args).trim().to_string();
    cli.ok(&["record", "prod/app", &render_ref, "--summary", "v1"]);
    (cli, render_ref)
}

/// `put RELEASE -` with `input` on standard input: its status, output and error.
fn put_stdin(cli: &Cli, release: &str, input: &[u8]) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(["put", release, "-"])
        .env("RENDER_STORE_URL", &cli.url)
        .env("RENDER_STORE_VALIDATE", "true")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn every_get_form_that_holds_the_values_goes_back_under_the_same_ref() {
    let (cli, render_ref) = stored();
    let mut forms: Vec<(&str, Vec<u8>)> = vec![
        ("get", cli.ok(&["get", "prod/app", "@0"]).into_bytes()),
        (
            "get -o json",
            cli.ok(&["get", "prod/app", "@0", "-o", "json"])
                .into_bytes(),
        ),
        (
            "get -o yaml --show-secrets",
            cli.ok(&["--show-secrets", "get", "prod/app", "@0", "-o", "yaml"])
                .into_bytes(),
        ),
    ];
    // The canonical bytes over HTTP: the pages' download link on a server that shows
    // Secrets (on one that masks them, the link gives the masked YAML, as `get -o yaml`).
    let store = RenderStore::open(&cli.url).unwrap().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = render_store_cli::serve::router(Arc::new(Observer::new(Some(store)).unwrap()));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let download = reqwest::get(format!("http://{addr}/renders/prod/app/{render_ref}"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    forms.push(("the page's download", download.to_vec()));
    for (i, (form, bytes)) in forms.iter().enumerate() {
        let release = format!("prod/restored-{i}");
        let out = put_stdin(&cli, &release, bytes);
        assert!(
            out.status.success(),
            "{form}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            render_ref,
            "{form} came back as another render"
        );
    }
}

#[test]
fn json_lines_asked_to_be_read_as_yaml_are_refused_not_cut_short() {
    let (cli, _) = stored();
    let lines = cli.object("lines.jsonl", &cli.ok(&["get", "prod/app", "@0"]));
    let err = cli.fails(&["put", "prod/other", "--format", "yaml", &lines]);
    assert!(
        err.contains("stream of JSON objects") && err.contains("--format json"),
        "{err}"
    );
    assert!(!cli.store_dir().join("prod/other").exists());
    // One JSON object is YAML too: taken as it always was.
    let one = cli.object("one.json", &objects()[2]);
    cli.ok(&["put", "prod/other", "--format", "yaml", &one]);
}

#[tokio::test]
async fn a_masked_view_is_refused_and_nothing_is_stored() {
    let (cli, _) = stored();
    let masked = cli.ok(&["get", "prod/app", "@0", "-o", "yaml"]);
    assert!(masked.contains("'***'"), "{masked}");
    let out = put_stdin(&cli, "prod/restored", masked.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a masked view was stored");
    assert!(
        err.contains("masked") && err.contains("Secret prod/db") && err.contains("--show-secrets"),
        "{err}"
    );
    assert!(
        !cli.store_dir().join("prod/restored").exists(),
        "something was stored for the refused render"
    );
    // A Secret of a list, masked, is refused the same way.
    let listed_only: String = masked
        .split("---\n")
        .filter(|doc| doc.contains("kind: List"))
        .map(|doc| format!("---\n{doc}"))
        .collect();
    let err =
        String::from_utf8_lossy(&put_stdin(&cli, "prod/restored", listed_only.as_bytes()).stderr)
            .into_owned();
    assert!(err.contains("masked") && err.contains("listed"), "{err}");
    // The preview refuses it too: a masked render compared with the stored one would
    // show every value as changed.
    let store = RenderStore::open(&cli.url).unwrap().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = render_store_cli::serve::router(Arc::new(Observer::new(Some(store)).unwrap()));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/diff?namespace=prod&name=app"))
        .header("content-type", "application/yaml")
        .body(masked)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body = response.text().await.unwrap();
    assert!(body.contains("masked"), "{body}");
}

#[test]
fn what_kubectl_applies_is_taken_with_gos_render_ref() {
    let cli = Cli::validating();
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/real-renders/expected.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let kube_prometheus = expected["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "kube-prometheus-dashboards")
        .unwrap();
    let path = format!(
        "{}/real-renders/{}",
        env!("CARGO_MANIFEST_DIR"),
        kube_prometheus["yaml"].as_str().unwrap()
    );
    let stored = cli.ok(&["put", "monitoring/grafana", &path]);
    assert_eq!(
        stored.trim(),
        kube_prometheus["renderRef"].as_str().unwrap()
    );
    // An item of a List without its names is refused, naming it.
    let bad = cli.object(
        "bad.yaml",
        "apiVersion: v1\nkind: ConfigMapList\nitems:\n- metadata:\n    name: a\n- data: {}\n",
    );
    let err = cli.fails(&["put", "monitoring/grafana", &bad]);
    assert!(
        err.contains("object 1 of") && err.contains("item 2 of it has no metadata.name"),
        "{err}"
    );
}

#[test]
fn the_inputs_of_a_render_are_bounded_together() {
    let cli = Cli::file_store();
    // A small object and 5 MiB of line breaks after it: each file alone is well within
    // an 8 MiB cap, the two together are not.
    let object = format!(
        "{}{}",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#,
        "\n".repeat(5 << 20)
    );
    let one = cli.object("one.json", &object);
    let two = cli.object("two.json", &object);
    let cap = ["--memory-cap-mib", "8"];
    let mut args = cap.to_vec();
    args.extend(["ref", &one]);
    cli.ok(&args);
    let mut args = cap.to_vec();
    args.extend(["ref", &one, &two]);
    let err = cli.fails(&args);
    assert!(
        err.contains("in all") && err.contains("--memory-cap-mib"),
        "{err}"
    );
}
