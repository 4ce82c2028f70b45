//! Shared fixtures: stores on every local backend, recording buckets, renders.

use render_store::{
    Bucket, BucketCall, ObjectMeta, RecordingBucket, Release, RenderStore, Runtime, open_bucket,
};
use std::sync::Arc;
use tempfile::TempDir;

/// A backend under test, with whatever must live as long as it.
pub struct Backend {
    pub name: &'static str,
    pub bucket: Arc<dyn Bucket>,
    /// The folder of a file:// backend.
    pub dir: Option<TempDir>,
}

/// The cloud backends under test: the variable holding each one's URL (set by
/// tests/emulators/start.sh).
pub const CLOUD_URL_VARS: &[(&str, &str)] = &[
    ("s3", "RENDER_STORE_TEST_S3_URL"),
    ("gs", "RENDER_STORE_TEST_GCS_URL"),
    ("azblob", "RENDER_STORE_TEST_AZURE_URL"),
];

/// Whether the test script started the emulators: then a missing or unreachable one
/// fails the tests instead of being left out.
pub fn emulators_required() -> bool {
    std::env::var("RENDER_STORE_REQUIRE_EMULATORS").is_ok_and(|v| v == "1")
}

/// The URLs of the cloud backends configured for this run.
pub fn cloud_urls() -> Vec<(&'static str, String)> {
    let mut urls = Vec::new();
    for (name, var) in CLOUD_URL_VARS {
        match std::env::var(var) {
            Ok(url) if !url.is_empty() => urls.push((*name, url)),
            _ => assert!(
                !emulators_required(),
                "RENDER_STORE_REQUIRE_EMULATORS=1 but {var} is not set"
            ),
        }
    }
    urls
}

/// Every backend under test: mem:// and file:// always, and the cloud emulators the
/// environment names. Each call gets an empty bucket (a fresh prefix on a shared one).
pub fn backends() -> Vec<Backend> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file_url = format!("file://{}", dir.path().display());
    let mut all = vec![
        Backend {
            name: "mem",
            bucket: bucket_from_url("mem://"),
            dir: None,
        },
        Backend {
            name: "file",
            bucket: bucket_from_url(&file_url),
            dir: Some(dir),
        },
    ];
    for (name, url) in cloud_urls() {
        all.push(Backend {
            name,
            bucket: Arc::new(PrefixedBucket::new(bucket_from_url(&url))),
            dir: None,
        });
    }
    all
}

/// A unique folder of a shared bucket, seen as a whole bucket: every key gets the
/// prefix on the way in and loses it on the way out, so tests never see each other.
pub struct PrefixedBucket {
    inner: Arc<dyn Bucket>,
    root: String,
}

impl PrefixedBucket {
    pub fn new(inner: Arc<dyn Bucket>) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        PrefixedBucket {
            inner,
            root: format!("t{}-{nanos}-{n}/", std::process::id()),
        }
    }
}

#[async_trait::async_trait]
impl Bucket for PrefixedBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, render_store::BucketError> {
        match self.inner.get(&format!("{}{key}", self.root), limit).await {
            Err(render_store::BucketError::NotFound { .. }) => {
                Err(render_store::BucketError::NotFound { key: key.into() })
            }
            other => other,
        }
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), render_store::BucketError> {
        if key.is_empty() || key.starts_with('/') {
            // The inner bucket would see a valid key; keep the contract's refusal.
            return self.inner.put(key, value).await;
        }
        self.inner.put(&format!("{}{key}", self.root), value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, render_store::BucketError> {
        self.inner.exists(&format!("{}{key}", self.root)).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, render_store::BucketError> {
        let listed = self.inner.list(&format!("{}{prefix}", self.root)).await?;
        Ok(listed
            .into_iter()
            .filter_map(|o| {
                let key = o.key.strip_prefix(&self.root)?.to_string();
                Some(ObjectMeta { key, ..o })
            })
            .collect())
    }
    async fn delete(&self, key: &str) -> Result<(), render_store::BucketError> {
        self.inner.delete(&format!("{}{key}", self.root)).await
    }
    // Passed on, so the cloud backends' own batch requests are what is tested.
    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), render_store::BucketError>>, render_store::BucketError> {
        let keys: Vec<String> = keys.iter().map(|k| format!("{}{k}", self.root)).collect();
        self.inner.delete_many(&keys).await
    }
    // Passed on, so the cloud backends' own delimiter listings are what is tested.
    async fn list_delimited(
        &self,
        prefix: &str,
    ) -> Result<render_store::Delimited, render_store::BucketError> {
        render_store::bucket::check_folder_prefix(prefix)?;
        let listed = self
            .inner
            .list_delimited(&format!("{}{prefix}", self.root))
            .await?;
        Ok(render_store::Delimited {
            folders: listed
                .folders
                .into_iter()
                .filter_map(|f| f.strip_prefix(&self.root).map(String::from))
                .collect(),
            objects: listed
                .objects
                .into_iter()
                .filter_map(|o| {
                    let key = o.key.strip_prefix(&self.root)?.to_string();
                    Some(ObjectMeta { key, ..o })
                })
                .collect(),
        })
    }
}

pub fn bucket_from_url(url: &str) -> Arc<dyn Bucket> {
    open_bucket(url).expect("opens").expect("not empty")
}

/// The keys of a listing.
pub fn keys(listed: Vec<ObjectMeta>) -> Vec<String> {
    listed.into_iter().map(|o| o.key).collect()
}

/// A store over `bucket` whose calls are recorded.
pub struct Recorded {
    pub store: RenderStore,
    pub recorder: Arc<RecordingBucket>,
}

impl Recorded {
    pub fn new(bucket: Arc<dyn Bucket>) -> Self {
        let recorder = Arc::new(RecordingBucket::new(bucket));
        // These tests check the exact steps of GC, on blobs they have just written.
        let store =
            RenderStore::new(runtime(), recorder.clone()).with_gc_grace(std::time::Duration::ZERO);
        Recorded { store, recorder }
    }

    pub fn calls(&self) -> Vec<BucketCall> {
        self.recorder.take_calls()
    }
}

pub fn runtime() -> Arc<Runtime> {
    Runtime::shared().expect("the component compiles")
}

pub fn release(name: &str) -> Release {
    Release::new("ns", name)
}

/// A small render whose content depends on `n`.
pub fn render(n: u32) -> Vec<Vec<u8>> {
    vec![
        format!(r#"{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"c{n}"}},"data":{{"n":"{n}"}}}}"#)
            .into_bytes(),
        br#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"s"}}"#.to_vec(),
    ]
}

pub fn time(seconds: i64) -> render_store::SyncTime {
    render_store::SyncTime {
        seconds,
        nanoseconds: 0,
    }
}

pub fn get(key: &str) -> BucketCall {
    BucketCall::Get(key.to_string())
}
pub fn put(key: &str) -> BucketCall {
    BucketCall::Put(key.to_string())
}
pub fn exists(key: &str) -> BucketCall {
    BucketCall::Exists(key.to_string())
}
pub fn list(prefix: &str) -> BucketCall {
    BucketCall::List(prefix.to_string())
}
pub fn delete_many<K: AsRef<str>>(keys: &[K]) -> BucketCall {
    BucketCall::DeleteMany(keys.iter().map(|k| k.as_ref().to_string()).collect())
}

/// A bucket that fails the calls `fail` picks, and passes the others on.
pub struct FaultyBucket {
    inner: Arc<dyn Bucket>,
    fail: Box<dyn Fn(&BucketCall) -> bool + Send + Sync>,
}

impl FaultyBucket {
    pub fn new(
        inner: Arc<dyn Bucket>,
        fail: impl Fn(&BucketCall) -> bool + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(FaultyBucket {
            inner,
            fail: Box::new(fail),
        })
    }

    fn check(&self, call: BucketCall) -> Result<(), render_store::BucketError> {
        if (self.fail)(&call) {
            return Err(render_store::BucketError::Backend {
                call: "injected",
                key: format!("{call:?}"),
                source: Box::new(std::io::Error::other("injected fault")),
            });
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Bucket for FaultyBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, render_store::BucketError> {
        self.check(BucketCall::Get(key.into()))?;
        self.inner.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), render_store::BucketError> {
        self.check(BucketCall::Put(key.into()))?;
        self.inner.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, render_store::BucketError> {
        self.check(BucketCall::Exists(key.into()))?;
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, render_store::BucketError> {
        self.check(BucketCall::List(prefix.into()))?;
        self.inner.list(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), render_store::BucketError> {
        self.check(BucketCall::Delete(key.into()))?;
        self.inner.delete(key).await
    }
    async fn list_delimited(
        &self,
        prefix: &str,
    ) -> Result<render_store::Delimited, render_store::BucketError> {
        self.check(BucketCall::ListDelimited(prefix.into()))?;
        self.inner.list_delimited(prefix).await
    }
}

/// Every file under `dir` with its bytes, sorted by path: equal before and after an
/// operation that must write nothing.
pub fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `render-store serve` started by a test, with what it printed before it began to
/// serve; killed when dropped.
pub struct Served {
    pub child: std::process::Child,
    pub addr: std::net::SocketAddr,
    /// The file of the token it made, when it made one.
    pub token_file: Option<std::path::PathBuf>,
    /// The login file it made and printed, if any: a page that posts the token.
    pub login_file: Option<std::path::PathBuf>,
    /// Everything it printed up to its "serving on" line.
    pub printed: String,
}

impl Served {
    /// What a browser posts from the login file: the form's action and the token.
    pub fn login_form(&self) -> (String, String) {
        let path = self
            .login_file
            .as_ref()
            .expect("the server made a login file");
        let page = std::fs::read_to_string(path).unwrap();
        let attribute = |name: &str| {
            let start = page.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
            page[start..][..page[start..].find('"').unwrap()].to_string()
        };
        (attribute("action"), attribute("value"))
    }

    /// The token the server made.
    pub fn token(&self) -> String {
        let path = self.token_file.as_ref().expect("the server made a token");
        std::fs::read_to_string(path).unwrap().trim().to_string()
    }

    /// Stops the server with `signal` and waits for it; its exit status.
    pub fn stop(mut self, signal: i32) -> std::process::ExitStatus {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: kill has no memory-safety preconditions.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = self.child.wait().unwrap();
        std::mem::forget(self);
        status
    }
}

impl Drop for Served {
    // Stopped as a person stops it, so it removes the token it made; killed if it has
    // not stopped within its shutdown grace and some.
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `render-store serve --listen 127.0.0.1:0 ARGS` over the store at `url` and
/// reads what it prints until it serves. Its later log lines are read and dropped, so
/// it never blocks on a full pipe.
pub fn serve_cli(url: &str, args: &[&str]) -> Served {
    serve_cli_with(url, args, &[])
}

/// [`serve_cli`] with environment variables set (`Some`) or removed (`None`).
pub fn serve_cli_with(url: &str, args: &[&str], env: &[(&str, Option<&str>)]) -> Served {
    use std::io::BufRead;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"));
    command
        .args([
            "--max-concurrent-calls",
            "4",
            "serve",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(args)
        .env("RENDER_STORE_URL", url)
        .env_remove("RENDER_STORE_LOG")
        .env_remove("RENDER_STORE_MAX_CONCURRENT_CALLS")
        .stderr(std::process::Stdio::piped());
    for (name, value) in env {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let mut child = command.spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut printed = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if stderr.read_line(&mut line).unwrap() == 0 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve ended before it served: {printed}");
        }
        printed.push_str(&line);
        if line.contains("serving on") {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let after = |marker: &str| {
        printed
            .lines()
            .find_map(|l| l.split_once(marker).map(|(_, rest)| rest.to_string()))
    };
    let addr = after("serving on http://").unwrap().trim().parse().unwrap();
    let token_file = after("the token is in ")
        .map(|rest| std::path::PathBuf::from(rest.split(": send").next().unwrap()));
    let login_file = after("open file://").map(|rest| {
        let url = format!("file://{}", rest.split_whitespace().next().unwrap());
        url::Url::parse(&url).unwrap().to_file_path().unwrap()
    });
    Served {
        child,
        addr,
        token_file,
        login_file,
        printed,
    }
}

/// Copies the folder `from` to `to`, recursively.
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A component of the world `wit` (the text of a WIT package) made from wit-component's
/// dummy module, whose every function body is `unreachable` until `edit` changes the
/// module's text: for a component that misbehaves, or one built from another WIT.
pub fn dummy_component(wit: &str, edit: impl FnOnce(String) -> String) -> Vec<u8> {
    let mut resolve = wit_parser::Resolve::new();
    let package = resolve.push_str("render-store.wit", wit).unwrap();
    let world = resolve.select_world(&[package], None).unwrap();
    let dummy = wit_component::dummy_module(
        &resolve,
        world,
        wit_parser::ManglingAndAbi::Legacy(wit_parser::LiftLowerAbi::Sync),
    );
    let mut module = wat::parse_str(edit(wasmprinter::print_bytes(&dummy).unwrap())).unwrap();
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .unwrap();
    wit_component::ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .unwrap()
}
