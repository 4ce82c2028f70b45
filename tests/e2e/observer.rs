//! The observer: read-only, and falling back to the source when a blob is missing.

use super::support::*;
use render_store::{Error, NewEntry, ObjectForm, Observer, ObserverError, RenderStore};

#[tokio::test]
async fn the_observer_cannot_write() {
    let bucket = bucket_from_url("mem://");
    let writer = RenderStore::new(runtime(), bucket.clone());
    let app = release("app");
    let r = writer.put_render(&app, &render(1)).await.unwrap();
    let observer = Observer::new(Some(writer.clone())).unwrap();
    let ro = observer.store().unwrap();
    let before = bucket.list("").await.unwrap();

    let refused = |e: Error| match e {
        Error::Bucket(m) => assert!(m.contains("read-only"), "{m}"),
        other => panic!("expected a refused write, got {other}"),
    };
    refused(ro.put_render(&app, &render(2)).await.unwrap_err());
    let entry = NewEntry {
        render_ref: r.clone(),
        synced_at: time(0),
        summary: String::new(),
    };
    refused(ro.record_history(&app, &entry).await.unwrap_err());
    refused(ro.delete_release(&app).await.unwrap_err());
    writer.record_history(&app, &entry).await.unwrap();
    let second = writer.put_render(&app, &render(2)).await.unwrap();
    let later = NewEntry {
        render_ref: second,
        synced_at: time(1),
        summary: String::new(),
    };
    writer.record_history(&app, &later).await.unwrap();
    let before_gc = bucket.list("").await.unwrap();
    refused(ro.gc(&app, 1, &[], false).await.unwrap_err());
    assert_eq!(bucket.list("").await.unwrap(), before_gc);
    assert_eq!(before.len() + 3, before_gc.len());

    // Reads work.
    assert_eq!(
        observer.render(&app, &r).await.unwrap(),
        runtime().canonical(&render(1)).await.unwrap()
    );
    assert_eq!(observer.history(&app).await.unwrap().len(), 2);
    // A dry-run GC only reads, so the observer may show one.
    assert!(ro.gc(&app, 1, &[], true).await.is_ok());
}

#[tokio::test]
async fn a_missing_blob_falls_back_to_the_source() {
    let bucket = bucket_from_url("mem://");
    let writer = RenderStore::new(runtime(), bucket.clone());
    let app = release("app");
    let stored = writer.put_render(&app, &render(1)).await.unwrap();
    let observer = Observer::new(Some(writer)).unwrap();

    let read = observer
        .render_or_source(&app, &stored, || async {
            panic!("the blob exists; no source render")
        })
        .await
        .unwrap();
    assert!(!read.from_source);
    assert_eq!(read.render_ref, stored);

    bucket
        .delete(&format!("ns/app/renders/{stored}"))
        .await
        .unwrap();
    let read = observer
        .render_or_source(&app, &stored, || async { Ok(render(1)) })
        .await
        .unwrap();
    assert!(read.from_source);
    assert_eq!(
        read.render_ref, stored,
        "the source still renders the pinned render"
    );
    assert_eq!(
        read.canonical,
        runtime().canonical(&render(1)).await.unwrap()
    );

    let err = observer
        .render_or_source(&app, &stored, || async { Err("git fetch failed".into()) })
        .await
        .unwrap_err();
    assert!(
        matches!(err, ObserverError::Source(ref source) if source.to_string() == "git fetch failed"),
        "{err}"
    );

    // Without a store the source is the only way.
    let none = Observer::new(None).unwrap();
    assert!(
        none.render_or_source(&app, &stored, || async { Ok(render(1)) })
            .await
            .unwrap()
            .from_source
    );
    assert!(matches!(
        none.history(&app).await,
        Err(ObserverError::NoStore)
    ));
}

#[tokio::test]
async fn diff_defaults_to_the_newest_entry() {
    let bucket = bucket_from_url("mem://");
    let writer = RenderStore::new(runtime(), bucket.clone());
    let app = release("app");
    let mut refs = Vec::new();
    for n in [1, 2] {
        let r = writer.put_render(&app, &render(n)).await.unwrap();
        let entry = NewEntry {
            render_ref: r.clone(),
            synced_at: time(n as i64),
            summary: String::new(),
        };
        writer.record_history(&app, &entry).await.unwrap();
        refs.push(r);
    }
    let observer = Observer::new(Some(writer)).unwrap();
    let d = observer
        .diff(&app, &refs[0], None, ObjectForm::Yaml)
        .await
        .unwrap();
    assert_eq!(
        (d.added.len(), d.removed.len(), d.changed.len(), d.unchanged),
        (1, 1, 0, 1)
    );
    assert_eq!(d.added[0].name, "c1");
    assert_eq!(d.removed[0].name, "c2");
    let same = observer
        .diff(&app, &refs[1], None, ObjectForm::Json)
        .await
        .unwrap();
    assert_eq!(same.unchanged, 2);
    assert!(same.added.is_empty() && same.removed.is_empty() && same.changed.is_empty());
}
