//! The observer: read-only, and falling back to the source when a blob is missing.

use super::support::*;
use render_store::{
    DEFAULT_CONTEXT, Error, NewEntry, ObjectForm, Observer, ObserverError, Release, RenderStore,
    SecretValues, SyncTime,
};

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
        .diff(&app, &refs[0], None, ObjectForm::Yaml, DEFAULT_CONTEXT)
        .await
        .unwrap();
    assert_eq!(
        (d.added.len(), d.removed.len(), d.changed.len(), d.unchanged),
        (1, 1, 0, 1)
    );
    assert_eq!(d.added[0].id.name, "c1");
    assert_eq!(d.removed[0].id.name, "c2");
    let same = observer
        .diff(&app, &refs[1], None, ObjectForm::Json, DEFAULT_CONTEXT)
        .await
        .unwrap();
    assert_eq!(same.unchanged, 2);
    assert!(same.added.is_empty() && same.removed.is_empty() && same.changed.is_empty());
}

/// Releases are found by folder listings on every backend; the component decides which
/// folders are releases, and each release's count and newest entry come from its keys.
#[tokio::test]
async fn releases_are_found_by_folders_on_every_backend() {
    for backend in backends() {
        let name = backend.name;
        let writer = RenderStore::new(runtime(), backend.bucket.clone());
        let web = Release::new("prod", "web");
        let api = Release::new("staging", "api");
        let mut newest = String::new();
        for n in 1..=3 {
            let r = writer.put_render(&web, &render(n)).await.unwrap();
            let entry = NewEntry {
                render_ref: r.clone(),
                synced_at: time(1_700_000_000 + i64::from(n)),
                summary: format!("v{n}"),
            };
            writer.record_history(&web, &entry).await.unwrap();
            newest = r;
        }
        // A release with renders and no history yet.
        writer.put_render(&api, &render(9)).await.unwrap();
        // Folders that are no release: an invalid namespace, an invalid name, a file at
        // the top, a foreign file in a release's history.
        for key in [
            "Not_A_Namespace/web/history/x",
            "prod/UPPER/renders/x",
            "README",
            "prod/web/history/notes.txt",
        ] {
            backend.bucket.put(key, b"x".to_vec()).await.unwrap();
        }
        let observer = Observer::new(Some(writer)).unwrap();
        let page = observer.releases_page(None, None, 100).await.unwrap();
        assert_eq!(
            (page.next_after.clone(), page.unlisted.len()),
            (None, 0),
            "{name}"
        );
        let found = page.releases;
        let names: Vec<String> = found.iter().map(|r| r.release.to_string()).collect();
        assert_eq!(names, ["prod/web", "staging/api"], "{name}");
        assert_eq!(
            found[0].newest_summary,
            Some(Ok("v3".to_string())),
            "{name}"
        );
        assert_eq!(found[1].newest_summary, None, "{name}");
        // A page at a time: the cursor is the page's last release.
        let first = observer.releases_page(None, None, 1).await.unwrap();
        assert_eq!(first.releases.len(), 1, "{name}");
        assert_eq!(first.next_after, Some(web.clone()), "{name}");
        let second = observer
            .releases_page(None, first.next_after.as_ref(), 1)
            .await
            .unwrap();
        let names: Vec<String> = second
            .releases
            .iter()
            .map(|r| r.release.to_string())
            .collect();
        assert_eq!(
            (names, second.next_after),
            (vec!["staging/api".to_string()], None),
            "{name}"
        );
        // One namespace alone.
        let staging = observer
            .releases_page(Some("staging"), None, 10)
            .await
            .unwrap();
        assert_eq!(staging.releases.len(), 1, "{name}");
        assert_eq!(staging.releases[0].release, api, "{name}");
        assert_eq!(found[0].history.entries, 3, "{name}");
        let top = found[0].history.newest.as_ref().unwrap();
        assert_eq!(top.render_ref, newest, "{name}");
        assert_eq!(
            top.synced_at,
            SyncTime {
                seconds: 1_700_000_003,
                nanoseconds: 0
            },
            "{name}"
        );
        assert_eq!(found[1].history.entries, 0, "{name}");
        assert!(found[1].history.newest.is_none(), "{name}");
    }
    let none = Observer::new(None).unwrap();
    assert!(matches!(
        none.releases_page(None, None, 10).await,
        Err(ObserverError::NoStore)
    ));
}

/// A render's objects as people read them: the YAML a diff shows, in render order.
#[tokio::test]
async fn show_objects_writes_each_object_as_diffs_do() {
    let rt = runtime();
    let canonical = rt.canonical(&render(1)).await.unwrap();
    let shown = rt
        .show_objects(&canonical, ObjectForm::Yaml, SecretValues::Masked)
        .await
        .unwrap();
    assert_eq!(shown.len(), 2);
    assert_eq!(shown[0].id.kind, "ConfigMap");
    assert!(shown[0].text.contains("  'n': '1'\n"), "{}", shown[0].text);
    assert_eq!(shown[1].id.name, "s");
    let mut changed = render(1);
    changed[0] =
        br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c1"},"data":{"n":"2"}}"#
            .to_vec();
    let other = rt.canonical(&changed).await.unwrap();
    let diff = rt
        .diff_renders(
            &canonical,
            &other,
            ObjectForm::Yaml,
            SecretValues::Masked,
            DEFAULT_CONTEXT,
        )
        .await
        .unwrap();
    assert_eq!(diff.changed.len(), 1);
    // Every removed line of the diff is a line of the shown text.
    for line in diff.changed.iter().flat_map(|c| &c.lines) {
        if let Some(old) = line.strip_prefix('-') {
            assert!(
                shown.iter().any(|o| o.text.lines().any(|l| l == old)),
                "{line}"
            );
        }
    }
    assert!(matches!(
        rt.show_objects(b"not json\n", ObjectForm::Yaml, SecretValues::Masked)
            .await,
        Err(Error::InvalidInput(_))
    ));
}
