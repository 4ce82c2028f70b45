//! A store gocloud's fileblob wrote: `<key>.attrs` beside each key is that key's
//! metadata (CONTRACT.md §3). `verify` does not call it foreign, GC deletes it with its
//! key and leaves it with a kept one, delete-release deletes it, and the file:// URL
//! takes gocloud's `metadata=skip`.

use super::support::*;
use render_store::{NewEntry, RenderStore};
use std::path::Path;

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args(args)
        .env_remove("RENDER_STORE_URL")
        .output()
        .expect("the CLI runs")
}

/// The files under `root`, as keys, in key order.
fn files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let key = path.strip_prefix(root).unwrap().to_str().unwrap();
                out.push(key.to_string());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn gocloud_s_metadata_files_go_with_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    // gocloud's own parameter: the URL a gocloud controller opens serves here too.
    let url = format!("file://{}?create_dir=true&metadata=skip", root.display());
    let store = RenderStore::open(&url)
        .unwrap()
        .unwrap()
        .with_gc_grace(std::time::Duration::ZERO);
    let app = release("app");
    let mut refs = Vec::new();
    for i in 0..3 {
        let r = store.put_render(&app, &render(i)).await.unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: time(1_767_225_600 + i64::from(i)),
            summary: format!("v{i}"),
        };
        store.record_history(&app, &entry).await.unwrap();
        refs.push(r);
    }
    // What fileblob writes beside each key.
    for key in files(&root) {
        std::fs::write(
            root.join(format!("{key}.attrs")),
            br#"{"user.cache_control":""}"#,
        )
        .unwrap();
    }
    let out = cli(&["--render-store-url", &url, "verify", "ns/app"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("foreign"), "{text}");

    // GC keeps one entry: the two others, their blobs and the four metadata files go.
    let out = cli(&[
        "--render-store-url",
        &url,
        "gc",
        "ns/app",
        "--keep",
        "1",
        "--grace",
        "0",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("deleted 2 history entries and 2 renders (with 4 gocloud metadata files)"),
        "{text}"
    );
    assert!(
        text.contains("kept with its key (gocloud metadata)"),
        "{text}"
    );
    let left = files(&root);
    let want: Vec<String> = {
        let entry = left
            .iter()
            .find(|k| k.contains("/history/") && !k.ends_with(".attrs"));
        let entry = entry.expect("an entry is kept").clone();
        let blob = format!("ns/app/renders/{}", refs[2]);
        let mut w = vec![
            entry.clone(),
            format!("{entry}.attrs"),
            blob.clone(),
            format!("{blob}.attrs"),
            // The release index `record` wrote (CONTRACT.md §3); gocloud wrote none for it.
            "ns/app/index/v1".to_string(),
        ];
        w.sort();
        w
    };
    assert_eq!(left, want);

    // A metadata file whose key is gone is foreign: verify says so, GC leaves it.
    let orphan = format!("ns/app/renders/{}.attrs", refs[0]);
    std::fs::write(root.join(&orphan), b"{}").unwrap();
    let out = cli(&["--render-store-url", &url, "verify", "ns/app"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("foreign {orphan}")));

    // delete-release deletes every key of the release, metadata files too.
    let out = cli(&["--render-store-url", &url, "delete-release", "ns/app"]);
    assert!(out.status.success());
    assert_eq!(files(&root), Vec::<String>::new());

    // Any other value of gocloud's parameter is refused, naming it.
    let out = cli(&[
        "--render-store-url",
        &format!("file://{}?metadata=xattrs", root.display()),
        "ls",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("metadata: the only value is skip"));
}
