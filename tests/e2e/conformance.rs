//! The bucket contract (CONTRACT.md §2): one function per behaviour, run on every
//! backend this build opens without a server.

use super::support::{Backend, backends, keys};
use render_store::{Bucket, BucketError};

/// No bound on a read: the contract's other behaviours.
const ANY: u64 = u64::MAX;

async fn get_of_an_absent_key_is_not_found(b: &dyn Bucket) {
    match b.get("ns/app/renders/absent", ANY).await {
        Err(BucketError::NotFound { key }) => assert_eq!(key, "ns/app/renders/absent"),
        other => panic!("expected NotFound, got {other:?}"),
    }
}

async fn put_then_get_returns_the_bytes(b: &dyn Bucket) {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    b.put("ns/app/renders/blob", bytes.clone()).await.unwrap();
    assert_eq!(b.get("ns/app/renders/blob", ANY).await.unwrap(), bytes);
    b.put("ns/app/renders/blob", b"second".to_vec())
        .await
        .unwrap();
    assert_eq!(b.get("ns/app/renders/blob", ANY).await.unwrap(), b"second");
    b.put("ns/app/renders/empty", Vec::new()).await.unwrap();
    assert_eq!(b.get("ns/app/renders/empty", ANY).await.unwrap(), b"");
}

async fn exists_answers_both_ways(b: &dyn Bucket) {
    assert_eq!(b.exists("ns/app/x").await.unwrap(), None);
    b.put("ns/app/x", b"1".to_vec()).await.unwrap();
    assert_eq!(b.exists("ns/app/x").await.unwrap(), Some(1));
    // A folder made by a deeper key is not a key.
    b.put("ns/app/dir/y", b"1".to_vec()).await.unwrap();
    assert_eq!(b.exists("ns/app/dir").await.unwrap(), None);
}

async fn delete_of_an_absent_key_succeeds(b: &dyn Bucket) {
    b.delete("ns/app/never-written").await.unwrap();
    b.put("ns/app/once", b"1".to_vec()).await.unwrap();
    b.delete("ns/app/once").await.unwrap();
    b.delete("ns/app/once").await.unwrap();
    assert_eq!(b.exists("ns/app/once").await.unwrap(), None);
}

async fn list_is_complete_sorted_and_by_string_prefix(b: &dyn Bucket) {
    let written = [
        "ns/app/history/b",
        "ns/app/history/a",
        "ns/app/renders/z",
        "ns/app/renders/sub/deeper",
        "ns/app2/renders/a",
        "ns/app.v2/renders/a",
        "ns/ap/renders/a",
        "other/app/renders/a",
    ];
    for k in written {
        b.put(k, k.as_bytes().to_vec()).await.unwrap();
    }
    assert_eq!(
        keys(b.list("ns/app/").await.unwrap()),
        [
            "ns/app/history/a",
            "ns/app/history/b",
            "ns/app/renders/sub/deeper",
            "ns/app/renders/z"
        ]
    );
    assert_eq!(
        keys(b.list("ns/app").await.unwrap()),
        [
            "ns/app.v2/renders/a",
            "ns/app/history/a",
            "ns/app/history/b",
            "ns/app/renders/sub/deeper",
            "ns/app/renders/z",
            "ns/app2/renders/a",
        ]
    );
    assert_eq!(
        keys(b.list("ns/app/history/").await.unwrap()),
        ["ns/app/history/a", "ns/app/history/b"]
    );
    assert!(keys(b.list("ns/nothing/").await.unwrap()).is_empty());
    let all = keys(b.list("").await.unwrap());
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
    assert_eq!(all.len(), written.len());
}

/// More keys than one listing page holds (S3 and Azure answer 1,000 or 5,000 a page):
/// the host must follow the pages.
async fn many_keys_list_complete(b: &dyn Bucket) {
    use futures::StreamExt;
    let want: Vec<String> = (0..2500)
        .map(|i| format!("ns/many/history/{i:05}"))
        .collect();
    futures::stream::iter(want.iter().rev())
        .for_each_concurrent(32, |key| async move {
            b.put(key, Vec::new()).await.unwrap();
        })
        .await;
    b.put("ns/many/other", Vec::new()).await.unwrap();
    assert_eq!(keys(b.list("ns/many/history/").await.unwrap()), want);
}

async fn keys_with_colon_and_dots_work(b: &dyn Bucket) {
    let key =
        "ns/app.v2/renders/sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    b.put(key, b"x".to_vec()).await.unwrap();
    assert_eq!(b.exists(key).await.unwrap(), Some(1));
    assert_eq!(keys(b.list("ns/app.v2/renders/").await.unwrap()), [key]);
    let entry = "ns/app.v2/history/20260101T000000.000000000Z-sha256:00";
    b.put(entry, b"y".to_vec()).await.unwrap();
    assert_eq!(b.get(entry, ANY).await.unwrap(), b"y");
}

async fn unclean_keys_are_refused_not_rewritten(b: &dyn Bucket) {
    for key in [
        "",
        "/ns/a",
        "ns/a/",
        "ns//a",
        "ns/../a",
        "ns/./a",
        "ns/a\u{0}b",
    ] {
        match b.put(key, b"x".to_vec()).await {
            Err(BucketError::Denied(m)) => assert!(m.contains("not a valid object key"), "{m}"),
            other => panic!("{key:?}: expected Denied, got {other:?}"),
        }
    }
    assert!(
        keys(b.list("").await.unwrap()).is_empty(),
        "nothing was written"
    );
}

async fn exists_answers_the_size_and_list_the_size_and_time(b: &dyn Bucket) {
    let before = now() - 5;
    b.put("ns/app/renders/sized", vec![7; 1234]).await.unwrap();
    assert_eq!(b.exists("ns/app/renders/sized").await.unwrap(), Some(1234));
    let listed = b.list("ns/app/renders/").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].size, 1234);
    // Emulators keep whole seconds; all run on this machine's clock.
    let modified = listed[0].modified.seconds;
    assert!(
        (before..=now() + 5).contains(&modified),
        "modified {modified}, now {}",
        now()
    );
}

fn now() -> i64 {
    render_store::SyncTime::now().seconds
}

async fn a_read_over_the_bound_is_refused_with_both_sizes(b: &dyn Bucket) {
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

macro_rules! conformance {
    ($($behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $behaviour() {
                for super::Backend { name, bucket, dir: _dir } in super::backends() {
                    eprintln!("backend {name}");
                    super::$behaviour(bucket.as_ref()).await;
                }
            }
        )*
    };
}

mod on_every_backend {
    conformance!(
        get_of_an_absent_key_is_not_found,
        put_then_get_returns_the_bytes,
        exists_answers_both_ways,
        delete_of_an_absent_key_succeeds,
        list_is_complete_sorted_and_by_string_prefix,
        many_keys_list_complete,
        keys_with_colon_and_dots_work,
        unclean_keys_are_refused_not_rewritten,
        exists_answers_the_size_and_list_the_size_and_time,
        a_read_over_the_bound_is_refused_with_both_sizes,
    );
}
