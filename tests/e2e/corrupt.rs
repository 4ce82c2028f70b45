//! A blob changed on disk is reported as corrupt, never returned as content.

use super::support::*;
use render_store::{Error, RenderStore};

#[tokio::test]
async fn a_changed_blob_on_disk_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let store = RenderStore::open(&format!("file://{}", dir.path().display()))
        .unwrap()
        .unwrap();
    let app = release("app");
    let render_ref = store.put_render(&app, &render(1)).await.unwrap();
    let file = dir.path().join("ns/app/renders").join(&render_ref);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[10] ^= 0x20;
    std::fs::write(&file, &bytes).unwrap();

    match store.get_render(&app, &render_ref).await {
        Err(Error::Corrupt(m)) => {
            assert!(m.contains(&render_ref) && m.contains("hashes to"), "{m}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // put-render never rewrites an existing blob, even a damaged one.
    store.put_render(&app, &render(1)).await.unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

#[tokio::test]
async fn an_unreadable_history_entry_is_corrupt() {
    let bucket = bucket_from_url("mem://");
    let store =
        RenderStore::new(runtime(), bucket.clone()).with_gc_grace(std::time::Duration::ZERO);
    let app = release("app");
    let render_ref = store.put_render(&app, &render(1)).await.unwrap();
    let key = format!("ns/app/history/20260101T000000.000000000Z-{render_ref}");
    bucket.put(&key, b"not json".to_vec()).await.unwrap();
    match store.list_history(&app).await {
        Err(Error::Corrupt(m)) => assert!(m.contains(&key), "{m}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}
