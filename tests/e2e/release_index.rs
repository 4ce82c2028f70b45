//! The release index (CONTRACT.md §3), through the CLI as users run it: `record` writes
//! it, `gc` and `delete-release` leave nothing of what they removed, `reindex` builds it
//! for renders stored without one (as a Go controller stores them), a query reads past
//! an index it cannot trust, and on an encrypted store no image or object name is
//! stored in plaintext anywhere.

use super::cli::Cli;
use super::encryption::keyring_file;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const IMAGE: &str = "registry.example/payments-ledger";
const OBJECT: &str = "ledger-frontend";

fn deployment(tag: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{OBJECT}"}},"spec":{{"template":{{"spec":{{"containers":[{{"name":"app","image":"{IMAGE}:{tag}"}}]}}}}}}}}"#
    )
}

/// Puts and records the render of `tag` with `extra` arguments (a keyring); returns its
/// renderRef.
fn sync(cli: &Cli, tag: &str, day: u32, extra: &[&str]) -> String {
    let path = cli.object(&format!("{tag}.json"), &deployment(tag));
    let mut put = vec!["put", "prod/ledger", &path];
    put.extend_from_slice(extra);
    let r = cli.ok(&put).trim().to_string();
    let at = format!("2026-11-{day:02}T00:00:00Z");
    let mut record = vec!["record", "prod/ledger", &r, "--synced-at", &at];
    record.extend_from_slice(extra);
    cli.ok(&record);
    r
}

fn index_file(cli: &Cli) -> PathBuf {
    cli.store_dir().join("prod/ledger/index/v1")
}

/// The renderRefs a plaintext index names.
fn indexed(cli: &Cli) -> BTreeSet<String> {
    let v: Value = serde_json::from_slice(&std::fs::read(index_file(cli)).unwrap()).unwrap();
    v["renders"].as_object().unwrap().keys().cloned().collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn tags(json: &str) -> BTreeSet<String> {
    let v: Value = serde_json::from_str(json).unwrap();
    v["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["image"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn record_indexes_gc_prunes_and_delete_release_leaves_nothing() {
    let cli = Cli::file_store();
    let r1 = sync(&cli, "1", 1, &[]);
    assert_eq!(indexed(&cli), [r1.clone()].into());
    let r2 = sync(&cli, "2", 2, &[]);
    let r3 = sync(&cli, "3", 3, &[]);
    assert_eq!(indexed(&cli), [r1.clone(), r2.clone(), r3.clone()].into());

    // The index answers as the renders did: with every render blob moved away, images
    // gives the same answer (the index is what was read).
    let all = cli.ok(&["images", "-o", "json"]);
    assert_eq!(tags(&all).len(), 3, "{all}");
    let renders = cli.store_dir().join("prod/ledger/renders");
    let aside = cli.dir.path().join("renders-aside");
    std::fs::rename(&renders, &aside).unwrap();
    assert_eq!(cli.ok(&["images", "-o", "json"]), all);
    std::fs::rename(&aside, &renders).unwrap();

    // GC keeps one entry and deletes the other renders: the index drops them too.
    cli.ok(&["gc", "prod/ledger", "--keep", "1", "--grace", "0"]);
    assert_eq!(indexed(&cli), [r3.clone()].into());
    let verify: Value = serde_json::from_str(&cli.ok(&["verify", "-o", "json"])).unwrap();
    assert_eq!(verify["problems"], Value::Array(vec![]), "{verify}");
    assert_eq!(verify["indexes"], 1);

    cli.ok(&["delete-release", "prod/ledger"]);
    let left = cli.store_dir().join("prod/ledger");
    assert!(
        !left.exists() || files_under(&left).is_empty(),
        "{:?}",
        files_under(&left)
    );
}

#[test]
fn reindex_builds_the_index_a_controller_without_it_left_out() {
    let cli = Cli::file_store();
    let r1 = sync(&cli, "1", 1, &[]);
    let r2 = sync(&cli, "2", 2, &[]);
    let before = cli.ok(&["images", "-o", "json"]);
    // As a controller that does not keep the index leaves the store.
    std::fs::remove_file(index_file(&cli)).unwrap();
    assert_eq!(
        cli.ok(&["images", "-o", "json"]),
        before,
        "renders are read instead"
    );

    let out: Value = serde_json::from_str(&cli.ok(&["reindex", "-o", "json"])).unwrap();
    assert_eq!(out["complete"], true, "{out}");
    assert_eq!(out["releases"][0]["read"], 2, "{out}");
    assert_eq!(indexed(&cli), [r1, r2].into());
    let again: Value =
        serde_json::from_str(&cli.ok(&["reindex", "prod/ledger", "-o", "json"])).unwrap();
    assert_eq!(
        (
            &again["releases"][0]["read"],
            &again["releases"][0]["written"]
        ),
        (&Value::from(0), &Value::Bool(false)),
        "{again}"
    );
    assert_eq!(cli.ok(&["images", "-o", "json"]), before);

    // An index that is not one (planted, or of a version to come) is read past, and
    // reindex replaces it, saying so.
    std::fs::write(index_file(&cli), b"{\"version\":7}").unwrap();
    assert_eq!(cli.ok(&["images", "-o", "json"]), before);
    let out = cli.run(&["reindex", "prod/ledger"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("replaced an index that could not be used"),
        "{err}"
    );
    assert_eq!(indexed(&cli).len(), 2);
}

#[test]
fn an_encrypted_store_holds_no_image_or_object_name_in_plaintext() {
    let cli = Cli::file_store();
    let keys = keyring_file(cli.dir.path(), &["k1"]);
    let keys = keys.to_str().unwrap();
    let with_keys = ["--encryption-keys", keys];
    sync(&cli, "1", 1, &with_keys);
    sync(&cli, "2", 2, &with_keys);
    let mut reindex = vec!["reindex"];
    reindex.extend_from_slice(&with_keys);
    cli.ok(&reindex);

    assert!(index_file(&cli).exists());
    for file in files_under(&cli.store_dir()) {
        let bytes = std::fs::read(&file).unwrap();
        for name in [IMAGE, "payments-ledger", OBJECT, "Deployment"] {
            assert!(
                !bytes.windows(name.len()).any(|w| w == name.as_bytes()),
                "{} holds {name} in plaintext",
                file.display()
            );
        }
    }
    // With the keyring the index answers; without it the sealed renders cannot be read
    // either, and the release is named as unread, never as "no image".
    let mut images = vec!["images", "-o", "json"];
    images.extend_from_slice(&with_keys);
    assert_eq!(tags(&cli.ok(&images)).len(), 2);
    let without = cli.differs(&["images", "-o", "json"]);
    let v: Value = serde_json::from_str(&without).unwrap();
    assert_eq!(v["complete"], false, "{v}");
    assert_eq!(v["unread"][0]["name"], "ledger", "{v}");
}
