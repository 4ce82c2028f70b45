//! YAML streams through the component: every Go vector of
//! tests/vectors/yaml-render-ref.json and the real streams give, through the library
//! ([`Runtime::yaml_render_ref`] and [`Runtime::yaml_objects`]), what the guest gives
//! natively and what Go gives (success or failure, the failing document's index, the
//! renderRef); and the CLI reads YAML from files and standard input.

use crate::cli::Cli;
use render_store::{Error, Limits, Runtime, YamlStage};
use std::io::Write;
use std::process::{Command, Stdio};

fn repo_file(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

/// `Ok(renderRef)` or `Err(document index)`.
async fn render_ref(rt: &Runtime, stream: &[u8]) -> Result<String, u32> {
    match rt.yaml_render_ref(stream).await {
        Ok(r) => Ok(r),
        Err(Error::InvalidYaml { document, .. }) => Err(document),
        Err(other) => panic!("unexpected {other}"),
    }
}

#[tokio::test]
async fn go_vectors_and_real_streams_through_the_component() {
    use base64::Engine as _;
    let rt = Runtime::new(Limits::default()).unwrap();
    let text = std::fs::read_to_string(repo_file("tests/vectors/yaml-render-ref.json")).unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for case in cases.as_array().unwrap() {
        let stream = match case.get("yaml") {
            Some(y) => y.as_str().unwrap().as_bytes().to_vec(),
            None => base64::engine::general_purpose::STANDARD
                .decode(case["yaml_b64"].as_str().unwrap())
                .unwrap(),
        };
        let got = render_ref(&rt, &stream).await;
        let native = render_store_guest::yaml_render_ref(&stream).map_err(|e| e.document);
        assert_eq!(got, native, "{}", case["name"]);
        let outcomes = case
            .get("outcomes")
            .and_then(|o| o.as_array().cloned())
            .unwrap_or_else(|| vec![case.clone()]);
        let matches = outcomes
            .iter()
            .any(|o| match (&got, o.get("error_document_index")) {
                (Err(d), Some(want)) => u64::from(*d) == want.as_u64().unwrap(),
                (Ok(r), None) => o["renderRef"].as_str() == Some(r.as_str()),
                _ => false,
            });
        assert!(matches, "{}: {got:?}", case["name"]);
        checked += 1;
    }
    assert_eq!(checked, 291);

    for (path, want) in real_streams() {
        let stream = std::fs::read(repo_file(&path)).unwrap();
        assert_eq!(
            render_ref(&rt, &stream).await.as_deref(),
            Ok(want.as_str()),
            "{path}"
        );
        let objects = rt.yaml_objects(&stream).await.unwrap();
        assert_eq!(rt.render_ref(&objects).await.unwrap(), want, "{path}");
    }
}

/// Each real stream's path and the renderRef Go computed for it.
fn real_streams() -> Vec<(String, String)> {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_file("tests/real-renders/expected.json")).unwrap(),
    )
    .unwrap();
    expected["renders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!("tests/real-renders/{}", r["yaml"].as_str().unwrap()),
                r["renderRef"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn bad_yaml_names_its_document_line_column_and_stage() {
    let rt = Runtime::new(Limits::default()).unwrap();
    // Two `---` in a row make no empty document (apimachinery's reader returns a
    // document only when it has bytes): `kind: B` is document 1, as `null` is 2 below.
    let stream = b"kind: A\n---\n---\nkind: B\n  bad: indent\n";
    match rt.yaml_objects(stream).await {
        Err(Error::InvalidYaml {
            document,
            line,
            stage,
            ..
        }) => {
            assert_eq!((document, line, stage), (1, 5, YamlStage::Yaml));
        }
        other => panic!("{other:?}"),
    }
    match rt
        .yaml_objects(b"kind: A\n---\nnull\n---\n- a\n- b\n")
        .await
    {
        Err(Error::InvalidYaml {
            stage, document, ..
        }) => {
            assert_eq!((stage, document), (YamlStage::Object, 2))
        }
        other => panic!("{other:?}"),
    }
}

/// Runs the CLI with `stdin` as its standard input.
pub(super) fn run_with_stdin(cli: &Cli, args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(args)
        .env("RENDER_STORE_URL", &cli.url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_cli_gives_real_streams_the_controllers_render_ref_from_files_and_stdin() {
    let cli = Cli::file_store();
    for (path, want) in real_streams() {
        let file = repo_file(&path);
        let file = file.to_str().unwrap();
        assert_eq!(cli.ok(&["ref", file]).trim(), want, "{path}");
        assert_eq!(cli.ok(&["ref", "--format", "yaml", file]).trim(), want);
        let stream = std::fs::read(file).unwrap();
        let from_stdin = stdout_ok(run_with_stdin(&cli, &["ref", "-"], &stream));
        assert_eq!(from_stdin.trim(), want, "{path}");
        // No FILE at all reads standard input too.
        let implicit = stdout_ok(run_with_stdin(&cli, &["ref"], &stream));
        assert_eq!(implicit.trim(), want, "{path}");
    }
}

#[test]
fn helm_template_output_put_from_stdin_stores_the_json_objects_blob() {
    let cli = Cli::file_store();
    let helm = "---\n# Source: app/templates/sa.yaml\napiVersion: v1\nkind: ServiceAccount\n\
                metadata:\n  name: app\n---\n# Source: app/templates/empty.yaml\n---\n\
                # Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n\
                \x20 name: app\ndata:\n  enabled: \"on\"\n  mode: '0777'\n  script: |\n    echo hi\n";
    let a = cli.object(
        "a.json",
        r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"app"}}"#,
    );
    let b = cli.object(
        "b.json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"enabled":"on","mode":"0777","script":"echo hi\n"}}"#,
    );
    let from_yaml = stdout_ok(run_with_stdin(
        &cli,
        &["put", "ns/yaml", "-"],
        helm.as_bytes(),
    ));
    let from_json = cli.ok(&["put", "ns/json", &a, &b]);
    assert_eq!(from_yaml, from_json);
    let blob = |release: &str| {
        std::fs::read(
            cli.store_dir()
                .join(format!("ns/{release}/renders/{}", from_json.trim())),
        )
        .unwrap()
    };
    assert_eq!(blob("yaml"), blob("json"));
    // A JSON file and a YAML file give their objects in order, as one render.
    let sa_yaml = cli.object(
        "sa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n",
    );
    assert_eq!(cli.ok(&["ref", &sa_yaml, &b]), from_json);
    // An empty input is the empty render, when asked for (operator.rs: refused otherwise).
    let empty = stdout_ok(run_with_stdin(&cli, &["ref", "--allow-empty"], b""));
    assert_eq!(
        empty,
        cli.ok(&[
            "ref",
            "--allow-empty",
            "--format",
            "yaml",
            &cli.object("e.yaml", "")
        ])
    );
}

#[test]
fn bad_yaml_writes_nothing_and_says_where() {
    let cli = Cli::file_store();
    let stream = b"kind: A\n---\nkind: B\n  bad: indent\n";
    let out = run_with_stdin(&cli, &["put", "ns/app", "-"], stream);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("standard input") && err.contains("document 1 (line 4, column"),
        "{err}"
    );
    assert!(
        !cli.store_dir().join("ns").exists(),
        "something was written"
    );
    let twice = cli.fails(&["ref", "-", "-"]);
    assert!(twice.contains("once"), "{twice}");
}

#[test]
fn a_preview_diff_compares_a_local_stream_and_writes_nothing() {
    let cli = Cli::file_store();
    let v1 = cli.object(
        "v1.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  image: app:v1\n",
    );
    let r1 = cli.ok(&["put", "ns/app", &v1]).trim().to_string();
    cli.ok(&[
        "record",
        "ns/app",
        &r1,
        "--synced-at",
        "2026-01-01T00:00:00Z",
    ]);
    let before = crate::support::snapshot(&cli.store_dir());

    // The same render: exit 0, nothing changed.
    let same = cli.run(&["diff", "ns/app", "--local", &v1]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    assert!(String::from_utf8_lossy(&same.stdout).contains("0 changed, 1 unchanged"));

    // A new image from standard input: exit 1, the change in YAML, old line first.
    let v2 = "# Source: app/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n\
              data:\n  image: app:v9\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: app\n";
    let out = run_with_stdin(&cli, &["diff", "ns/app", "--local", "-"], v2.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (old, new) = (text.find("-  image: app:v1"), text.find("+  image: app:v9"));
    assert!(matches!((old, new), (Some(o), Some(n)) if o < n), "{text}");
    assert!(text.contains("added    v1 Service app"), "{text}");

    // Against a given render, and errors exit 2.
    let against = cli.run(&["diff", "ns/app", "--local", &v1, "--against", &r1]);
    assert_eq!(against.status.code(), Some(0));
    let bad = cli.object("bad.yaml", "kind: A\n  bad: indent\n");
    let failed = cli.run(&["diff", "ns/app", "--local", &bad]);
    assert_eq!(failed.status.code(), Some(2));
    let unknown = cli.run(&["diff", "ns/other", "--local", &v1]);
    assert_eq!(unknown.status.code(), Some(2));

    assert_eq!(
        crate::support::snapshot(&cli.store_dir()),
        before,
        "the preview wrote to the store"
    );
}
