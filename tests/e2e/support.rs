//! Shared fixtures: stores on every local backend, recording buckets, renders.

use render_store::{
    Bucket, BucketCall, ObjectStoreBucket, RecordingBucket, Release, RenderStore, Runtime,
    open_backend,
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

/// Every backend this build can open without a server: mem:// and file://.
pub fn backends() -> Vec<Backend> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file_url = format!("file://{}", dir.path().display());
    vec![
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
    ]
}

pub fn bucket_from_url(url: &str) -> Arc<dyn Bucket> {
    let backend = open_backend(url).expect("opens").expect("not empty");
    Arc::new(ObjectStoreBucket::new(backend))
}

/// A store over `bucket` whose calls are recorded.
pub struct Recorded {
    pub store: RenderStore,
    pub recorder: Arc<RecordingBucket>,
}

impl Recorded {
    pub fn new(bucket: Arc<dyn Bucket>) -> Self {
        let recorder = Arc::new(RecordingBucket::new(bucket));
        let store = RenderStore::new(runtime(), recorder.clone());
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
pub fn delete(key: &str) -> BucketCall {
    BucketCall::Delete(key.to_string())
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
    async fn get(&self, key: &str) -> Result<Vec<u8>, render_store::BucketError> {
        self.check(BucketCall::Get(key.into()))?;
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), render_store::BucketError> {
        self.check(BucketCall::Put(key.into()))?;
        self.inner.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<bool, render_store::BucketError> {
        self.check(BucketCall::Exists(key.into()))?;
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, render_store::BucketError> {
        self.check(BucketCall::List(prefix.into()))?;
        self.inner.list(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), render_store::BucketError> {
        self.check(BucketCall::Delete(key.into()))?;
        self.inner.delete(key).await
    }
}
