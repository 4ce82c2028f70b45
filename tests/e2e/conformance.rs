//! The bucket contract (CONTRACT.md §2): every case of tests/conformance/bucket.json on
//! every backend, through `render_store::conformance` (the JS and Python hosts run the
//! same file on their buckets), and the bounded read, which only the Rust buckets have.

use super::support::{Backend, CLOUD_URL_VARS, backends, bucket_from_url, emulators_required};
use render_store::conformance::{cases, run_case, run_folder_case};
use render_store::{Bucket, BucketError};
use std::path::Path;

/// Runs every case on `bucket`, one after the other (cases share the bucket, each under
/// its own prefix), and fails naming every failing case, its step and the backend.
/// `folder` is the bucket's folder, for a file:// bucket: then the cases that need one
/// run too; otherwise they are left out, saying so.
async fn every_case(backend: &str, bucket: &dyn Bucket, folder: Option<&Path>) {
    let mut failures = Vec::new();
    for case in cases() {
        let started = std::time::Instant::now();
        let outcome = match folder {
            Some(root) => run_folder_case(bucket, case, root).await,
            None if case.needs_folder() => {
                eprintln!("{backend}: {} needs a folder; not run", case.name);
                continue;
            }
            None => run_case(bucket, case).await,
        };
        match outcome {
            Ok(()) => eprintln!("{backend}: {} ok ({:.1?})", case.name, started.elapsed()),
            Err(failure) => {
                eprintln!("{backend}: {failure}");
                failures.push(failure.to_string());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "backend {backend}: {} of {} cases failed:\n  {}",
        failures.len(),
        cases().len(),
        failures.join("\n  ")
    );
}

/// The shared emulator bucket of a cloud backend, as is: the cases keep to prefixes of
/// their own. `None` (the test passes, saying so) when the environment names none and
/// the emulators are not required.
fn cloud_bucket(backend: &str) -> Option<std::sync::Arc<dyn Bucket>> {
    let (_, var) = CLOUD_URL_VARS
        .iter()
        .find(|(name, _)| *name == backend)
        .expect("a cloud backend");
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(bucket_from_url(&url)),
        _ => {
            assert!(
                !emulators_required(),
                "RENDER_STORE_REQUIRE_EMULATORS=1 but {var} is not set"
            );
            eprintln!("{backend}: {var} is not set; not run");
            None
        }
    }
}

#[tokio::test]
async fn every_case_on_mem() {
    every_case("mem", bucket_from_url("mem://").as_ref(), None).await;
}

#[tokio::test]
async fn every_case_on_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bucket = bucket_from_url(&format!("file://{}", dir.path().display()));
    every_case("file", bucket.as_ref(), Some(dir.path())).await;
    let folder_cases = cases().iter().filter(|c| c.needs_folder()).count();
    assert!(folder_cases >= 4, "only {folder_cases} folder cases");
}

/// A bucket without a delimiter listing of its own: `list_delimited` is the trait's
/// fallback, the plain listing folded, as a bucket a C caller implements has it.
struct PlainListingsOnly(std::sync::Arc<dyn Bucket>);

#[async_trait::async_trait]
impl Bucket for PlainListingsOnly {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        self.0.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        self.0.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.0.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<render_store::ObjectMeta>, BucketError> {
        self.0.list(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.0.delete(key).await
    }
}

/// The delimiter listing is optional in a bucket: without one, the fallback answers every
/// case the same.
#[tokio::test]
async fn every_case_on_a_bucket_without_a_delimiter_listing() {
    let bucket = PlainListingsOnly(bucket_from_url("mem://"));
    every_case("mem, plain listings only", &bucket, None).await;
}

#[tokio::test]
async fn every_case_on_s3() {
    if let Some(bucket) = cloud_bucket("s3") {
        every_case("s3", bucket.as_ref(), None).await;
    }
}

#[tokio::test]
async fn every_case_on_gs() {
    if let Some(bucket) = cloud_bucket("gs") {
        every_case("gs", bucket.as_ref(), None).await;
    }
}

#[tokio::test]
async fn every_case_on_azblob() {
    if let Some(bucket) = cloud_bucket("azblob") {
        every_case("azblob", bucket.as_ref(), None).await;
    }
}

/// Not a case of the file: the JS and Python buckets do not bound reads.
#[tokio::test]
async fn a_read_over_the_bound_is_refused_with_both_sizes() {
    for Backend {
        name,
        bucket,
        dir: _dir,
    } in backends()
    {
        eprintln!("backend {name}");
        let b = bucket.as_ref();
        b.put("ns/app/history/big", vec![1; 100]).await.unwrap();
        match b.get("ns/app/history/big", 99).await {
            Err(e @ BucketError::TooLarge { .. }) => {
                let BucketError::TooLarge { size, limit, .. } = &e else {
                    unreachable!()
                };
                assert_eq!((*size, *limit), (100, 99));
                let message = e.to_string();
                assert!(
                    message.contains("100") && message.contains("99"),
                    "{message}"
                );
            }
            other => panic!("expected TooLarge, got {:?}", other.map(|v| v.len())),
        }
        assert_eq!(b.get("ns/app/history/big", 100).await.unwrap().len(), 100);
    }
}

/// A bucket that lists in reverse order: the cases must catch it, naming the case and
/// the step, or they prove nothing.
struct ReversedListings(std::sync::Arc<dyn Bucket>);

#[async_trait::async_trait]
impl Bucket for ReversedListings {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        self.0.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        self.0.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.0.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<render_store::ObjectMeta>, BucketError> {
        let mut listed = self.0.list(prefix).await?;
        listed.reverse();
        Ok(listed)
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.0.delete(key).await
    }
}

#[tokio::test]
async fn a_bucket_that_breaks_the_contract_fails_the_cases_that_check_it() {
    let bucket = ReversedListings(bucket_from_url("mem://"));
    let mut failed = Vec::new();
    for case in cases().iter().filter(|c| !c.needs_folder()) {
        if let Err(failure) = run_case(&bucket, case).await {
            assert_eq!(failure.case, case.name);
            assert!(failure.call.starts_with("list"), "{failure}");
            assert!(failure.to_string().contains("expected"), "{failure}");
            failed.push((failure.case, failure.step));
        }
    }
    // The first listing of more than one object in each.
    assert_eq!(
        failed,
        [
            (
                "list-is-complete-sorted-and-by-string-prefix".to_string(),
                9
            ),
            ("many-keys-list-complete".to_string(), 3),
        ]
    );
}

/// A bucket whose batch delete answers in reverse order: the delete-many case must catch
/// it.
struct ReversedBatchAnswers(std::sync::Arc<dyn Bucket>);

#[async_trait::async_trait]
impl Bucket for ReversedBatchAnswers {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        self.0.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        self.0.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.0.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<render_store::ObjectMeta>, BucketError> {
        self.0.list(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.0.delete(key).await
    }
    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let mut answers = self.0.delete_many(keys).await?;
        answers.reverse();
        Ok(answers)
    }
}

#[tokio::test]
async fn a_batch_delete_answering_out_of_order_fails_its_case() {
    let bucket = ReversedBatchAnswers(bucket_from_url("mem://"));
    let mut failed = Vec::new();
    for case in cases().iter().filter(|c| !c.needs_folder()) {
        if let Err(failure) = run_case(&bucket, case).await {
            failed.push(failure);
        }
    }
    let names: Vec<(&str, usize)> = failed.iter().map(|f| (f.case.as_str(), f.step)).collect();
    assert_eq!(names, [("delete-many-answers-each-key-in-order", 4)]);
    assert!(
        failed[0].call.starts_with("delete-many of 5 keys"),
        "{}",
        failed[0]
    );
    assert!(failed[0].message.contains("key 1 "), "{}", failed[0]);
}

/// A folder bucket that reads "could not walk" as "not there", as every file:// bucket
/// did before listings failed closed: the folder cases must catch it.
struct ShortListings(std::sync::Arc<dyn Bucket>);

#[async_trait::async_trait]
impl Bucket for ShortListings {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        self.0.get(key, limit).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        self.0.put(key, value).await
    }
    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.0.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<render_store::ObjectMeta>, BucketError> {
        match self.0.list(prefix).await {
            Err(BucketError::Denied(_)) => Ok(Vec::new()),
            other => other,
        }
    }
    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        self.0.delete(key).await
    }
}

#[tokio::test]
async fn a_folder_bucket_whose_listings_come_back_short_fails_the_folder_cases() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bucket = ShortListings(bucket_from_url(&format!("file://{}", dir.path().display())));
    let mut failed = Vec::new();
    for case in cases() {
        if let Err(failure) = run_folder_case(&bucket, case, dir.path()).await {
            assert!(failure.call.starts_with("list"), "{failure}");
            failed.push(failure.case);
        }
    }
    assert_eq!(
        failed,
        [
            "a-listing-through-a-link-fails-closed",
            "a-listing-that-meets-a-link-to-a-file-fails-closed",
            "a-listing-through-a-file-or-fifo-where-a-folder-should-be-fails-closed",
            "a-delimited-listing-through-a-link-fails-closed",
        ]
    );
}
