//! Secret values stay out of every view made for people: the CLI's
//! `diff` and `diff --local` (text and `--json`), and the observer's render and diff
//! pages and JSON diffs, unless the user asked with `--show-secrets`; `get` writes the
//! blob as stored.

use super::cli::Cli;
use render_store::{Observer, RenderStore, SecretValues};
use std::sync::Arc;

/// Every form a value of the test Secrets takes: base64 and plain text.
const VALUES: [&str; 8] = [
    "aHVudGVyMg==",
    "hunter2",
    "czNjcjN0IQ==",
    "s3cr3t!",
    "b2xkLXRva2Vu",
    "bmV3LXRva2Vu",
    "bGlzdGVkLW9sZA==",
    "bGlzdGVkLW5ldw==",
];

/// A Secret whose password changes, whose user does not, with a stringData value, and
/// a ConfigMap beside it.
fn secret(password: &str, token: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","namespace":"prod"}},"data":{{"password":"{password}","user":"YWRtaW4="}},"stringData":{{"token":"{token}"}}}}"#
    )
}

fn config(n: u32) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c","namespace":"prod"}},"data":{{"n":"{n}"}}}}"#
    )
}

/// A Secret changed only in its last-applied annotation, which holds the whole Secret.
fn applied_secret(password: &str) -> String {
    let applied = format!(
        r#"{{"apiVersion":"v1","data":{{"password":"{password}"}},"kind":"Secret","metadata":{{"name":"applied","namespace":"prod"}}}}"#
    );
    let quoted = serde_json::to_string(&applied).unwrap();
    format!(
        r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"applied","namespace":"prod","annotations":{{"kubectl.kubernetes.io/last-applied-configuration":{quoted}}}}},"data":{{"password":"c2FtZQ=="}}}}"#
    )
}

/// Secrets as kubectl sees them in lists: a `SecretList` whose items name no kind (as
/// the API server answers), inside a `List`.
fn listed_secret(password: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"v1","kind":"SecretList","items":[{{"metadata":{{"name":"listed","namespace":"prod"}},"data":{{"password":"{password}"}}}}]}}]}}"#
    )
}

/// The CLI's store with two renders of `prod/db`: returns it and (old, new) refs.
fn store_with_two_renders() -> (Cli, String, String) {
    let cli = Cli::file_store();
    let files = |side: &str, objects: [String; 4]| -> Vec<String> {
        objects
            .iter()
            .enumerate()
            .map(|(i, o)| cli.object(&format!("{side}{i}.json"), o))
            .collect()
    };
    let old = files(
        "old",
        [
            secret("aHVudGVyMg==", "old-token"),
            config(1),
            applied_secret("b2xkLXRva2Vu"),
            listed_secret("bGlzdGVkLW9sZA=="),
        ],
    );
    let new = files(
        "new",
        [
            secret("czNjcjN0IQ==", "s3cr3t!"),
            config(2),
            applied_secret("bmV3LXRva2Vu"),
            listed_secret("bGlzdGVkLW5ldw=="),
        ],
    );
    let put = |paths: &[String]| {
        let mut args = vec!["put", "prod/db"];
        args.extend(paths.iter().map(String::as_str));
        cli.ok(&args).trim().to_string()
    };
    let old_ref = put(&old);
    let new_ref = put(&new);
    cli.ok(&["record", "prod/db", &old_ref, "--summary", "old"]);
    (cli, old_ref, new_ref)
}

/// `text` shows none of the values, and says which changed.
fn masked(what: &str, text: &str) {
    for value in VALUES.iter().chain(&["old-token", "YWRtaW4="]) {
        assert!(!text.contains(value), "{what} shows {value:?}:\n{text}");
    }
    assert!(
        text.contains("*** (before)") && text.contains("*** (after)"),
        "{what}:\n{text}"
    );
}

#[test]
fn cli_diffs_mask_secret_values_unless_asked() {
    let (cli, old_ref, new_ref) = store_with_two_renders();
    // Different renders: diff exits 1 (as diff(1)) and prints the diff.
    let diff = cli.differs(&["diff", "prod/db", &old_ref, &new_ref]);
    masked("diff", &diff);
    // The unchanged user is shown as unchanged.
    assert!(diff.contains(" user: '***'"), "{diff}");
    // The Secret changed only in its annotation is still a change.
    assert!(diff.contains("applied"), "{diff}");
    masked(
        "diff --json",
        &cli.differs(&["--json", "diff", "prod/db", &old_ref, &new_ref]),
    );
    masked(
        "diff --form json",
        &cli.differs(&["diff", "prod/db", &old_ref, &new_ref, "--form", "json"]),
    );
    let local = cli.object(
        "local.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: prod\n\
         data:\n  password: czNjcjN0IQ==\n  user: YWRtaW4=\nstringData:\n  token: s3cr3t!\n",
    );
    let out = cli.run(&["diff", "prod/db", "--local", &local]);
    assert_eq!(out.status.code(), Some(1), "the renders differ");
    masked("diff --local", &String::from_utf8(out.stdout).unwrap());

    let shown = cli.differs(&["--show-secrets", "diff", "prod/db", &old_ref, &new_ref]);
    for value in ["aHVudGVyMg==", "czNjcjN0IQ==", "s3cr3t!", "b2xkLXRva2Vu"] {
        assert!(
            shown.contains(value),
            "--show-secrets hides {value}:\n{shown}"
        );
    }
    // The list's Secret changed too, and says so without its value.
    assert!(diff.contains("listed"), "{diff}");
    // `get` is the blob as stored; `get -o yaml` is a view for people.
    let blob = cli.ok(&["get", "prod/db", &new_ref]);
    assert!(
        blob.contains("czNjcjN0IQ==") && blob.contains("bGlzdGVkLW5ldw=="),
        "{blob}"
    );
    let yaml = cli.ok(&["get", "prod/db", &new_ref, "-o", "yaml"]);
    for value in VALUES {
        assert!(
            !yaml.contains(value),
            "get -o yaml shows {value:?}:\n{yaml}"
        );
    }
    assert!(yaml.contains("password: '***'"), "{yaml}");
}

async fn serve(observer: Observer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = render_store_cli::serve::router(Arc::new(observer));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn get(url: String) -> String {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

#[tokio::test]
async fn the_observer_masks_secret_values_in_pages_and_json_diffs() {
    let (cli, old_ref, new_ref) = store_with_two_renders();
    let store = RenderStore::open(&cli.url).unwrap().unwrap();
    for secrets in [SecretValues::Masked, SecretValues::Shown] {
        let base = serve(
            Observer::new(Some(store.clone()))
                .unwrap()
                .with_secrets(secrets),
        )
        .await;
        let views = [
            (
                "render page",
                get(format!("{base}/ui/prod/db/renders/{new_ref}")).await,
            ),
            (
                "diff page",
                get(format!("{base}/ui/prod/db/diff?from={old_ref}&to={new_ref}")).await,
            ),
            (
                "history page",
                get(format!("{base}/ui/prod/db")).await,
            ),
            (
                "JSON diff",
                get(format!(
                    "{base}/diff?namespace=prod&name=db&render={new_ref}&against={old_ref}&output=json"
                ))
                .await,
            ),
            (
                "previewed diff",
                reqwest::Client::new()
                    .post(format!("{base}/diff?namespace=prod&name=db"))
                    .header("content-type", "application/yaml")
                    .body(
                        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: prod\n\
                         data:\n  password: czNjcjN0IQ==\n",
                    )
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap(),
            ),
        ];
        for (what, text) in views {
            // The text a reader sees: the pages mark the changed part of a line.
            let text = without_tags(&text);
            match secrets {
                SecretValues::Masked => {
                    for value in VALUES {
                        assert!(!text.contains(value), "{what} shows {value:?}:\n{text}");
                    }
                }
                SecretValues::Shown if what != "history page" => {
                    assert!(
                        text.contains("czNjcjN0IQ=="),
                        "{what} hides the value:\n{text}"
                    )
                }
                SecretValues::Shown => {}
            }
        }
        // The raw render is the blob, for people who hold the token.
        let raw = get(format!("{base}/renders/prod/db/{new_ref}")).await;
        assert!(raw.contains("czNjcjN0IQ=="));
    }
}

/// `html` without its tags.
fn without_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' if inside => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}
