//! What a writer of the bucket plants is never trusted (CONTRACT.md §14): the attacks
//! of a review as such a writer, each reproduced through the CLI on a `file://` store
//! (the writer edits the store's files, as anyone with put access to a bucket can), and
//! what the store now does about each.

use super::cli::Cli;
use super::encryption::keyring_file;
use serde_json::Value;
use std::path::PathBuf;

const BACKDOOR: &str = "evil.example.com/backdoor:1";

fn deployment(image: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web","namespace":"prod"}},"spec":{{"template":{{"spec":{{"containers":[{{"name":"web","image":"{image}"}}]}}}}}}}}"#
    )
}

const CLUSTER_ADMIN: &str = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"ops-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"ServiceAccount","name":"ops","namespace":"kube-system"}]}"#;

/// A store, its keyring file and the flags that give it.
struct Keyed {
    cli: Cli,
    keys: PathBuf,
}

impl Keyed {
    fn new() -> Keyed {
        let cli = Cli::file_store();
        let keys = keyring_file(cli.dir.path(), &["k1"]);
        Keyed { cli, keys }
    }

    fn args<'a>(&'a self, args: &[&'a str], required: bool) -> Vec<&'a str> {
        let mut all = args.to_vec();
        all.push("--encryption-keys");
        all.push(self.keys.to_str().unwrap());
        if required {
            all.push("--encryption-required");
        }
        all
    }

    fn ok(&self, args: &[&str], required: bool) -> String {
        self.cli.ok(&self.args(args, required))
    }

    fn run(&self, args: &[&str], required: bool) -> std::process::Output {
        self.cli.run(&self.args(args, required))
    }

    /// Puts and records a render of `object` in `release` at `day`; its renderRef.
    fn sync(&self, release: &str, object: &str, day: u32, summary: &str) -> String {
        let path = self
            .cli
            .object(&format!("{release}-{day}.json").replace('/', "-"), object);
        let r = self.ok(&["put", release, &path], false).trim().to_string();
        let at = format!("2025-01-{day:02}T00:00:00Z");
        self.ok(
            &[
                "record",
                release,
                &r,
                "--synced-at",
                &at,
                "--summary",
                summary,
            ],
            false,
        );
        r
    }

    fn file(&self, key: &str) -> PathBuf {
        self.cli.store_dir().join(key)
    }
}

/// The images `images '*' -o json` names.
fn images(out: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(out).unwrap();
    v["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["image"].as_str().unwrap().to_string())
        .collect()
}

/// The kinds of problem `verify -o json` reports, with their keys.
fn problems(out: &std::process::Output) -> Vec<(String, String)> {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().to_string(),
                p["key"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A plaintext index of the current format naming `image` for each of `refs`, and
/// claiming every render was read sealed.
fn forged_index(refs: &[&str], image: &str) -> String {
    let rows: Vec<String> = refs
        .iter()
        .map(|r| {
            format!(
                r#""{r}":[["apps/v1","Deployment","prod","web","{}",["{image}"]]]"#,
                "0".repeat(64)
            )
        })
        .collect();
    let sealed: Vec<String> = refs.iter().map(|r| format!("\"{r}\"")).collect();
    format!(
        r#"{{"renders":{{{}}},"sealed":[{}],"version":2}}"#,
        rows.join(","),
        sealed.join(",")
    )
}

#[test]
fn a_planted_plaintext_index_is_neither_resealed_nor_trusted_and_is_reported() {
    let store = Keyed::new();
    let a = store.sync("prod/app", &deployment("nginx:1.0"), 1, "v1");
    let b = store.sync("prod/app", &deployment("nginx:1.1"), 2, "v2");
    let index = store.file("prod/app/index/v1");
    std::fs::write(&index, forged_index(&[&a, &b], BACKDOOR)).unwrap();

    // With the keyring, images reads past a plaintext index, and verify reports it.
    let seen = images(&store.ok(&["images", "*", "-o", "json"], false));
    assert!(!seen.iter().any(|i| i.contains("backdoor")), "{seen:?}");
    assert!(seen.iter().any(|i| i.ends_with("nginx:1.1")), "{seen:?}");
    let verify = store.run(&["verify", "-o", "json"], true);
    assert_eq!(verify.status.code(), Some(1));
    assert!(
        problems(&verify).contains(&("index".into(), "prod/app/index/v1".into())),
        "{:?}",
        problems(&verify)
    );

    // Each of the keyring holder's routine commands that writes the index rebuilds it
    // from the renders instead of sealing what it found.
    let path = store.cli.object("new.json", &deployment("nginx:1.2"));
    let c = store
        .ok(&["put", "prod/app", &path], false)
        .trim()
        .to_string();
    let routine: [&[&str]; 4] = [
        &[
            "record",
            "prod/app",
            &c,
            "--synced-at",
            "2025-01-03T00:00:00Z",
        ],
        &["gc", "prod/app", "--keep", "2", "--grace", "0"],
        &["reindex", "prod/app"],
        &["rekey", "--all"],
    ];
    for command in routine {
        std::fs::write(&index, forged_index(&[&a, &b, &c], BACKDOOR)).unwrap();
        store.ok(command, false);
        let stored = std::fs::read(&index).unwrap();
        assert!(
            stored.starts_with(b"render-store-encrypted v2 k1 "),
            "{command:?} left the index unsealed"
        );
        let strict = images(&store.ok(&["images", "*", "-o", "json"], true));
        assert!(
            !strict.iter().any(|i| i.contains("backdoor"))
                && strict.iter().any(|i| i.ends_with("nginx:1.2")),
            "after {command:?}: {strict:?}"
        );
        let export = store.ok(&["export", "-o", "ndjson"], true);
        assert!(!export.contains("backdoor"), "after {command:?}: {export}");
        let verify = store.run(&["verify", "-o", "json"], true);
        assert!(
            verify.status.success(),
            "after {command:?}: {:?}",
            problems(&verify)
        );
    }
}

#[test]
fn a_render_copied_from_another_release_does_not_open_and_a_planted_entry_has_no_place() {
    let store = Keyed::new();
    store.sync("prod/app", &deployment("nginx:1.0"), 1, "v1");
    let genuine = store.sync("prod/app", &deployment("nginx:1.1"), 2, "v2");
    let admin = store.sync("kube-system/ops", CLUSTER_ADMIN, 3, "ops");
    // The writer copies the sealed blob and plants a newer entry naming it.
    std::fs::copy(
        store.file(&format!("kube-system/ops/renders/{admin}")),
        store.file(&format!("prod/app/renders/{admin}")),
    )
    .unwrap();
    let planted = format!("prod/app/history/20250104T000000.000000000Z-{admin}");
    std::fs::write(
        store.file(&planted),
        format!(r#"{{"renderRef":"{admin}","syncedAt":"2025-01-04T00:00:00Z","summary":"v4 bump nginx"}}"#),
    )
    .unwrap();

    // The copied blob does not open in prod/app: it was sealed for kube-system/ops.
    let moved = store.run(&["get", "prod/app", &admin], false);
    assert!(!moved.status.success());
    assert!(
        String::from_utf8_lossy(&moved.stderr).contains("another release"),
        "{}",
        String::from_utf8_lossy(&moved.stderr)
    );
    // Under the rule the planted entry has no @N: @0 is the newest genuine entry.
    let history = store.ok(&["history", "prod/app"], true);
    let planted_row = history
        .lines()
        .find(|l| l.contains("v4 bump nginx"))
        .unwrap();
    assert!(
        planted_row.starts_with('-') && planted_row.contains(" NO "),
        "{history}"
    );
    let at0 = store.ok(&["get", "prod/app", "@0"], true);
    assert!(
        at0.contains("nginx:1.1") && !at0.contains("cluster-admin"),
        "{at0}"
    );
    let diff = store.run(&["diff", "prod/app", "@1", "@0"], true);
    assert!(
        !String::from_utf8_lossy(&diff.stdout).contains("cluster-admin"),
        "{}",
        String::from_utf8_lossy(&diff.stdout)
    );
    // Without the keyring's rule it is still marked for people.
    let lax = store.cli.ok(&["history", "prod/app"]);
    assert!(lax.contains("v4 bump nginx"));
    // verify names both, and images and changes never say prod/app ran the binding.
    let verify = store.run(&["verify", "prod/app", "-o", "json"], true);
    let found = problems(&verify);
    assert!(
        found.contains(&("unauthenticated".into(), planted.clone())),
        "{found:?}"
    );
    assert!(
        found.contains(&("corrupt".into(), format!("prod/app/renders/{admin}"))),
        "{found:?}"
    );
    // images reads only authenticated entries: the planted one adds no interval and
    // its render, which does not open here, is never read.
    let strict = images(&store.ok(&["images", "*", "-o", "json"], true));
    assert_eq!(
        strict,
        ["docker.io/library/nginx:1.0", "docker.io/library/nginx:1.1"]
    );
    let _ = genuine;
}

#[test]
fn an_entry_body_that_disagrees_with_its_key_is_reported_on_any_store() {
    let cli = Cli::file_store();
    let path = cli.object("d.json", &deployment("nginx:1.0"));
    let r = cli.ok(&["put", "prod/app", &path]).trim().to_string();
    cli.ok(&[
        "record",
        "prod/app",
        &r,
        "--synced-at",
        "2025-01-01T00:00:00Z",
    ]);
    let key = format!("prod/app/history/20250101T000000.000000000Z-{r}");
    let other = format!("sha256:{}", "e".repeat(64));
    std::fs::write(
        cli.store_dir().join(&key),
        format!(r#"{{"renderRef":"{other}","syncedAt":"2030-01-01T00:00:00Z","summary":"later"}}"#),
    )
    .unwrap();
    let out = cli.run(&["verify", "prod/app", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["problems"][0];
    assert_eq!(p["kind"], "unauthenticated", "{v}");
    assert_eq!(p["key"], key.as_str());
    assert!(p["message"].as_str().unwrap().contains(&other), "{v}");
    assert!(p["fix"].as_str().unwrap().contains("delete-entry"), "{v}");
}

#[test]
fn a_planted_entry_naming_a_genuine_render_does_not_keep_the_real_sync_out() {
    let store = Keyed::new();
    let path = store.cli.object("d.json", &deployment("nginx:1.0"));
    let r = store
        .ok(&["put", "prod/app", &path], true)
        .trim()
        .to_string();
    // The writer records the render first, without the keyring.
    store.cli.ok(&[
        "record",
        "prod/app",
        &r,
        "--synced-at",
        "2025-01-01T00:00:00Z",
    ]);
    let added = store.run(
        &[
            "record",
            "prod/app",
            &r,
            "--synced-at",
            "2025-01-02T00:00:00Z",
        ],
        true,
    );
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let history = store.ok(&["history", "prod/app"], false);
    assert_eq!(
        history.lines().filter(|l| l.contains("2025-01-")).count(),
        2,
        "{history}"
    );
    // The entry the keyring holder recorded is @0, the planted one has no place.
    let at0 = store.ok(&["history", "prod/app"], true);
    let row = at0.lines().find(|l| l.starts_with("@0")).unwrap();
    assert!(row.contains("2025-01-02"), "{at0}");
    // Recording again adds nothing now: an authenticated entry records the render.
    store.ok(
        &[
            "record",
            "prod/app",
            &r,
            "--synced-at",
            "2025-01-03T00:00:00Z",
        ],
        true,
    );
    let again = store.ok(&["history", "prod/app"], true);
    assert_eq!(
        again.lines().filter(|l| l.contains("2025-01-")).count(),
        2,
        "{again}"
    );
    // Vouching after verify authenticates the older entry.
    let vouched = store.ok(&["authenticate", "prod/app"], false);
    assert!(
        vouched.starts_with("1 history entry authenticated"),
        "{vouched}"
    );
    assert!(store.run(&["verify", "prod/app"], true).status.success());
}

#[test]
fn an_edited_plaintext_index_is_reported_and_reindex_force_repairs_it() {
    let cli = Cli::file_store();
    for (day, tag) in [(1, "1.0"), (2, "1.1")] {
        let path = cli.object(&format!("{tag}.json"), &deployment(&format!("nginx:{tag}")));
        let r = cli.ok(&["put", "prod/app", &path]).trim().to_string();
        let at = format!("2025-01-0{day}T00:00:00Z");
        cli.ok(&["record", "prod/app", &r, "--synced-at", &at]);
    }
    let index = cli.store_dir().join("prod/app/index/v1");
    let text = std::fs::read_to_string(&index).unwrap();
    std::fs::write(
        &index,
        text.replace("docker.io/library/nginx", "docker.io/library/busybox"),
    )
    .unwrap();
    let verify = cli.run(&["verify", "prod/app", "-o", "json"]);
    assert_eq!(verify.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(v["problems"][0]["kind"], "index", "{v}");
    assert!(
        v["problems"][0]["fix"]
            .as_str()
            .unwrap()
            .contains("reindex --force")
    );
    cli.ok(&["reindex", "--force", "prod/app"]);
    assert!(cli.run(&["verify", "prod/app"]).status.success());
    let seen = images(&cli.ok(&["images", "nginx", "-o", "json"]));
    assert_eq!(seen.len(), 2, "{seen:?}");
}

#[test]
fn an_oversized_index_is_read_past_reported_and_replaced_and_its_attrs_are_not_foreign() {
    let cli = Cli::file_store();
    let path = cli.object("d.json", &deployment("nginx:1.0"));
    let r = cli.ok(&["put", "prod/app", &path]).trim().to_string();
    cli.ok(&["record", "prod/app", &r]);
    let index = cli.store_dir().join("prod/app/index/v1");
    // gocloud's fileblob keeps a sidecar beside each key it writes.
    std::fs::write(cli.store_dir().join("prod/app/index/v1.attrs"), b"{}").unwrap();
    assert!(cli.run(&["verify", "prod/app"]).status.success());
    std::fs::write(&index, vec![b' '; (64 << 20) + 1]).unwrap();
    let seen = images(&cli.ok(&["images", "nginx", "-o", "json"]));
    assert_eq!(seen, ["docker.io/library/nginx:1.0"]);
    let verify = cli.run(&["verify", "prod/app", "-o", "json"]);
    let v: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(v["problems"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["problems"][0]["kind"], "index", "{v}");
    cli.ok(&["reindex", "prod/app"]);
    assert!(std::fs::metadata(&index).unwrap().len() < 4096);
    assert!(cli.run(&["verify", "prod/app"]).status.success());
}

#[tokio::test]
async fn the_server_marks_an_unauthenticated_entry_in_its_json_and_its_history_page() {
    let store = Keyed::new();
    let r = store.sync("prod/app", &deployment("nginx:1.0"), 1, "genuine");
    let planted = format!("prod/app/history/20250102T000000.000000000Z-{r}");
    std::fs::write(
        store.file(&planted),
        format!(r#"{{"renderRef":"{r}","syncedAt":"2025-01-02T00:00:00Z","summary":"planted"}}"#),
    )
    .unwrap();
    let keys = store.keys.to_str().unwrap();
    let served = super::support::serve_cli(
        &store.cli.url,
        &["--encryption-keys", keys, "--encryption-required"],
    );
    let base = format!("http://{}", served.addr);
    let client = reqwest::Client::new();
    let get = |path: String| {
        let client = client.clone();
        let token = served.token();
        async move {
            client
                .get(path)
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    };
    let json = get(format!("{base}/history?namespace=prod&name=app")).await;
    let history: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(history[0]["trust"]["authenticated"], "k1", "{history}");
    assert!(
        history[1]["trust"]["unauthenticated"]
            .as_str()
            .unwrap()
            .contains("no MAC"),
        "{history}"
    );
    let page = get(format!("{base}/ui/prod/app")).await;
    assert!(page.contains("badge unauthenticated"), "{page}");
    assert!(page.contains("no @N"), "{page}");
    assert!(page.contains("@0"), "{page}");
}
