//! Invalid input gets a clear error and makes no bucket call at all.

use super::support::*;
use render_store::{Error, NewEntry, Release, SyncTime};

const REF: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn bad_releases() -> Vec<(Release, &'static str)> {
    vec![
        (Release::new("ns", "a/b"), "subdomain"),
        (Release::new("ns", ".."), "subdomain"),
        (Release::new("ns", "../other"), "subdomain"),
        (Release::new("..", "app"), "label"),
        (Release::new("ns/x", "app"), "label"),
        (Release::new("ns", "App"), "subdomain"),
        (Release::new("NS", "app"), "label"),
        (Release::new("", "app"), "label"),
        (Release::new("ns", ""), "subdomain"),
        (Release::new("ns", "a".repeat(254)), "subdomain"),
        (Release::new("a".repeat(64), "app"), "label"),
        (Release::new("ns", "app%2Fx"), "subdomain"),
        (Release::new("ns", "app\0"), "subdomain"),
        (Release::new("ns", "аpp"), "subdomain"), // Cyrillic 'а'
    ]
}

fn bad_refs() -> Vec<String> {
    vec![
        REF.to_uppercase(),
        REF.replace("sha256:", "SHA256:"),
        REF[..70].to_string(),
        format!("{REF}0"),
        REF.replace("sha256:", "sha512:"),
        REF.replace("sha256:", ""),
        format!("{}/../../x", &REF[..60]),
        String::new(),
    ]
}

fn assert_invalid(err: Error, needle: &str) {
    match &err {
        Error::InvalidInput(m) => assert!(m.contains(needle), "{m:?} should mention {needle}"),
        other => panic!("expected InvalidInput mentioning {needle}, got {other}"),
    }
}

#[tokio::test]
async fn bad_names_reach_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    for (bad, what) in bad_releases() {
        let e = NewEntry {
            render_ref: REF.to_string(),
            synced_at: time(0),
            summary: String::new(),
        };
        assert_invalid(
            r.store.put_render(&bad, &render(1)).await.unwrap_err(),
            what,
        );
        assert_invalid(r.store.get_render(&bad, REF).await.unwrap_err(), what);
        assert_invalid(r.store.has_history_ref(&bad, REF).await.unwrap_err(), what);
        assert_invalid(r.store.record_history(&bad, &e).await.unwrap_err(), what);
        assert_invalid(r.store.list_history(&bad).await.unwrap_err(), what);
        assert_invalid(r.store.gc(&bad, 3, &[], false).await.unwrap_err(), what);
        assert_invalid(r.store.gc(&bad, 0, &[], false).await.unwrap_err(), what);
        assert_invalid(r.store.delete_release(&bad).await.unwrap_err(), what);
        assert_eq!(r.calls(), [], "{bad:?}");
    }
}

#[tokio::test]
async fn bad_refs_reach_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    let app = release("app");
    for bad in bad_refs() {
        let e = NewEntry {
            render_ref: bad.clone(),
            synced_at: time(0),
            summary: String::new(),
        };
        assert_invalid(
            r.store.get_render(&app, &bad).await.unwrap_err(),
            "renderRef",
        );
        assert_invalid(
            r.store.has_history_ref(&app, &bad).await.unwrap_err(),
            "renderRef",
        );
        assert_invalid(
            r.store.record_history(&app, &e).await.unwrap_err(),
            "renderRef",
        );
        if !bad.is_empty() {
            let protected = [REF.to_string(), bad.clone()];
            assert_invalid(
                r.store.gc(&app, 3, &protected, false).await.unwrap_err(),
                "renderRef",
            );
        }
        assert_eq!(r.calls(), [], "{bad:?}");
    }
}

#[tokio::test]
async fn invalid_json_reaches_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    let app = release("app");
    let cases: Vec<Vec<Vec<u8>>> = vec![
        vec![b"{".to_vec()],
        vec![b"{}".to_vec(), b"[1]".to_vec()],
        vec![b"{}".to_vec(), b"{}".to_vec(), b"{\"a\":1e400}".to_vec()],
        vec![b"".to_vec()],
        vec![format!("{{\"d\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000)).into_bytes()],
    ];
    for (i, objects) in cases.into_iter().enumerate() {
        let err = r.store.put_render(&app, &objects).await.unwrap_err();
        match err {
            Error::InvalidObject { index, message } => {
                assert_eq!(index as usize, objects.len() - 1, "case {i}: {message}");
                assert!(!message.is_empty());
            }
            other => panic!("case {i}: {other}"),
        }
        assert_eq!(r.calls(), [], "case {i}");
    }
}

#[tokio::test]
async fn times_outside_0000_to_9999_reach_no_bucket() {
    let r = Recorded::new(bucket_from_url("mem://"));
    let app = release("app");
    for synced_at in [
        SyncTime {
            seconds: 253_402_300_800,
            nanoseconds: 0,
        }, // 10000-01-01
        SyncTime {
            seconds: -62_167_219_201,
            nanoseconds: 0,
        }, // -0001-12-31
        SyncTime {
            seconds: i64::MAX,
            nanoseconds: 0,
        },
        SyncTime {
            seconds: 0,
            nanoseconds: 1_000_000_000,
        },
    ] {
        let e = NewEntry {
            render_ref: REF.to_string(),
            synced_at,
            summary: String::new(),
        };
        let err = r.store.record_history(&app, &e).await.unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
        assert_eq!(r.calls(), []);
    }
    let rt = runtime();
    for text in [
        "10000-01-01T00:00:00Z",
        "9999-12-31T23:30:00-01:00",
        "2026-13-01T00:00:00Z",
        "yesterday",
    ] {
        assert!(
            matches!(rt.parse_synced_at(text).await, Err(Error::InvalidInput(_))),
            "{text}"
        );
    }
}
