//! Fail closed (CONTRACT.md §12): a listing that cannot see everything under its prefix
//! is an error, so GC and delete-release stop and delete nothing, instead of reading
//! "could not see" as "not there" and deleting every render.

use super::cli::Cli;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path as StorePath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use render_store::bucket::ObjectStoreBucket;
use render_store::{Error, Release, RenderStore, Runtime};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A file:// store holding release `prod/db` with two renders, each recorded.
struct Release2 {
    cli: Cli,
}

impl Release2 {
    fn new() -> Release2 {
        let cli = Cli::file_store();
        for n in 1..=2 {
            let object = cli.object(
                &format!("{n}.json"),
                &format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c"}},"data":{{"n":"{n}"}}}}"#),
            );
            let render_ref = cli.ok(&["put", "prod/db", &object]).trim().to_string();
            cli.ok(&[
                "record",
                "prod/db",
                &render_ref,
                "--summary",
                &format!("v{n}"),
            ]);
        }
        Release2 { cli }
    }

    fn release_dir(&self) -> PathBuf {
        self.cli.store_dir().join("prod/db")
    }

    fn files(&self, folder: &Path) -> usize {
        std::fs::read_dir(folder).map_or(0, |d| d.count())
    }

    /// GC keeping one entry with no grace period, and delete-release, both refused with
    /// a message holding `says`; then both renders are still there.
    fn refuses_to_delete(&self, says: &str, renders: usize) {
        for args in [
            vec!["gc", "prod/db", "--keep", "1", "--grace", "0"],
            vec!["delete-release", "prod/db"],
        ] {
            let err = self.cli.fails(&args);
            assert!(err.contains(says), "{args:?}: {err}");
            assert!(!err.contains("deleted"), "{args:?}: {err}");
        }
        assert_eq!(self.files(&self.release_dir().join("renders")), renders);
    }
}

#[test]
fn gc_of_a_release_whose_history_folder_is_a_link_deletes_nothing() {
    let r = Release2::new();
    // The history moved to another disk, a link left in its place.
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("history");
    std::fs::rename(r.release_dir().join("history"), &moved).unwrap();
    symlink(&moved, r.release_dir().join("history")).unwrap();
    r.refuses_to_delete("\"prod/db/history\", a symbolic link", 2);
    assert_eq!(r.files(&moved), 2, "the entries beyond the link");
    let err = r.cli.fails(&["history", "prod/db"]);
    assert!(err.contains("symbolic link"), "{err}");
    // A dry run says the same: its plan would be built from the same short listing.
    let err = r.cli.fails(&["gc", "prod/db", "--dry-run", "--grace", "0"]);
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn gc_of_a_release_whose_history_is_a_file_deletes_nothing() {
    let r = Release2::new();
    let history = r.release_dir().join("history");
    std::fs::remove_dir_all(&history).unwrap();
    std::fs::write(&history, b"not a folder").unwrap();
    let err = r
        .cli
        .fails(&["gc", "prod/db", "--keep", "1", "--grace", "0"]);
    assert!(
        err.contains("\"prod/db/history\", which is not a folder"),
        "{err}"
    );
    assert_eq!(r.files(&r.release_dir().join("renders")), 2);
}

#[test]
fn gc_of_a_release_whose_history_cannot_be_read_deletes_nothing() {
    let r = Release2::new();
    let history = r.release_dir().join("history");
    std::fs::set_permissions(&history, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads a folder of mode 000 anyway: as root, the CLI runs without the
    // capabilities that let it (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH).
    let is_root = unsafe { libc::geteuid() } == 0;
    let run = |args: &[&str]| {
        let mut command = if is_root {
            let mut c = std::process::Command::new("setpriv");
            c.arg("--bounding-set=-dac_override,-dac_read_search")
                .arg(env!("CARGO_BIN_EXE_render-store-under-test"));
            c
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        };
        command
            .args(args)
            .env("RENDER_STORE_URL", &r.cli.url)
            .output()
            .expect("the CLI runs")
    };
    for args in [
        &["gc", "prod/db", "--keep", "1", "--grace", "0"][..],
        &["delete-release", "prod/db"][..],
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.contains("\"prod/db/history\", a folder this user cannot read"),
            "{args:?}: {err}"
        );
    }
    std::fs::set_permissions(&history, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(r.files(&r.release_dir().join("renders")), 2);
    assert_eq!(r.files(&history), 2);
}

/// An in-memory object store whose listings, once `failing` is set, fail after their
/// first object, as a cloud listing whose second page fails would.
#[derive(Debug)]
struct FailingPages {
    inner: InMemory,
    failing: AtomicBool,
}

impl std::fmt::Display for FailingPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FailingPages")
    }
}

#[async_trait::async_trait]
impl ObjectStore for FailingPages {
    async fn put_opts(
        &self,
        location: &StorePath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &StorePath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &StorePath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<StorePath>>,
    ) -> BoxStream<'static, object_store::Result<StorePath>> {
        self.inner.delete_stream(locations)
    }
    fn list(
        &self,
        prefix: Option<&StorePath>,
    ) -> BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        let listed = self.inner.list(prefix);
        if !self.failing.load(Ordering::SeqCst) {
            return listed;
        }
        let page_error = object_store::Error::Generic {
            store: "FailingPages",
            source: "the second page of the listing: connection reset".into(),
        };
        listed
            .take(1)
            .chain(futures::stream::iter([Err(page_error)]))
            .boxed()
    }
    async fn list_with_delimiter(
        &self,
        prefix: Option<&StorePath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &StorePath,
        to: &StorePath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[tokio::test]
async fn a_cloud_listing_that_fails_on_its_second_page_stops_gc() {
    let backend = Arc::new(FailingPages {
        inner: InMemory::new(),
        failing: AtomicBool::new(false),
    });
    let store = RenderStore::new(
        Runtime::shared().unwrap(),
        Arc::new(ObjectStoreBucket::new(backend.clone())),
    )
    .with_gc_grace(std::time::Duration::ZERO);
    let release = Release::new("prod", "db");
    for n in 1..=3 {
        let object =
            format!(r#"{{"kind":"ConfigMap","metadata":{{"name":"c"}},"data":{{"n":"{n}"}}}}"#);
        let render_ref = store
            .put_render(&release, &[object.into_bytes()])
            .await
            .unwrap();
        let entry = render_store::NewEntry {
            render_ref,
            synced_at: render_store::SyncTime {
                seconds: 1_700_000_000 + n,
                nanoseconds: 0,
            },
            summary: String::new(),
        };
        assert!(store.record_history(&release, &entry).await.unwrap());
    }
    backend.failing.store(true, Ordering::SeqCst);
    for outcome in [
        store.gc(&release, 1, &[], false).await.map(|_| ()),
        store.delete_release(&release).await.map(|_| ()),
    ] {
        match outcome {
            Err(Error::Bucket(m)) => assert!(m.contains("second page"), "{m}"),
            other => panic!("expected a bucket error, got {other:?}"),
        }
    }
    let left: Vec<_> = backend
        .inner
        .list(None)
        .map(|o| o.unwrap().location.to_string())
        .collect()
        .await;
    assert_eq!(left.len(), 6, "{left:?}");
}
