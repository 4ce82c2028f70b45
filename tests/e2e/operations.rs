//! Each operation through the component, with its bucket calls recorded and compared
//! with CONTRACT.md §5, on every local backend.

use super::support::*;
use render_store::{Bucket, BucketCall, NewEntry, Release};
use std::sync::Arc;

const P: &str = "ns/app/";

fn entry(render_ref: &str, seconds: i64, summary: &str) -> NewEntry {
    NewEntry {
        render_ref: render_ref.to_string(),
        synced_at: time(seconds),
        summary: summary.to_string(),
    }
}

fn history_key(seconds_since_2026: i64, render_ref: &str) -> String {
    // 2026-01-01T00:00:00Z is 1767225600.
    assert!(seconds_since_2026 < 60);
    format!("{P}history/20260101T0000{seconds_since_2026:02}.000000000Z-{render_ref}")
}

const T0: i64 = 1_767_225_600;

#[tokio::test]
async fn put_render_checks_then_writes_once() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        let render_ref = r.store.put_render(&app, &render(1)).await.unwrap();
        let key = format!("{P}renders/{render_ref}");
        assert_eq!(r.calls(), [exists(&key), put(&key)], "{}", b.name);

        // An existing render: one call, no write.
        let again = r.store.put_render(&app, &render(1)).await.unwrap();
        assert_eq!(again, render_ref);
        assert_eq!(r.calls(), [exists(&key)], "{}", b.name);

        // The blob is exactly the canonical bytes, and its hash is its key.
        let canonical = runtime().canonical(&render(1)).await.unwrap();
        assert_eq!(b.bucket.get(&key, u64::MAX).await.unwrap(), canonical);
        assert_eq!(
            r.store.get_render(&app, &render_ref).await.unwrap(),
            canonical
        );
        assert_eq!(r.calls(), [get(&key)], "{}", b.name);
    }
}

#[tokio::test]
async fn get_render_of_an_absent_render_is_not_found() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let absent = runtime().render_ref(&render(9)).await.unwrap();
        let err = r
            .store
            .get_render(&release("app"), &absent)
            .await
            .unwrap_err();
        assert!(matches!(err, render_store::Error::NotFound(_)), "{err}");
        assert_eq!(r.calls(), [get(&format!("{P}renders/{absent}"))]);
    }
}

#[tokio::test]
async fn history_records_distinct_renders_in_order() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        let one = runtime().render_ref(&render(1)).await.unwrap();
        let two = runtime().render_ref(&render(2)).await.unwrap();

        assert!(!r.store.has_history_ref(&app, &one).await.unwrap());
        assert_eq!(r.calls(), [list(&format!("{P}history/"))]);

        assert!(
            r.store
                .record_history(&app, &entry(&one, T0, "first <v1>"))
                .await
                .unwrap()
        );
        assert_eq!(
            r.calls(),
            [list(&format!("{P}history/")), put(&history_key(0, &one))],
            "{}",
            b.name
        );
        // A known render adds nothing, even at a later time.
        assert!(
            !r.store
                .record_history(&app, &entry(&one, T0 + 5, "again"))
                .await
                .unwrap()
        );
        assert_eq!(r.calls(), [list(&format!("{P}history/"))]);
        assert!(
            r.store
                .record_history(&app, &entry(&two, T0 + 1, "second"))
                .await
                .unwrap()
        );
        r.calls();

        assert!(r.store.has_history_ref(&app, &one).await.unwrap());
        r.calls();

        let history = r.store.list_history(&app).await.unwrap();
        assert_eq!(
            r.calls(),
            [
                list(&format!("{P}history/")),
                get(&history_key(0, &one)),
                get(&history_key(1, &two)),
            ]
        );
        let got: Vec<_> = history
            .iter()
            .map(|e| {
                (
                    e.render_ref.as_str(),
                    e.synced_at.seconds,
                    e.summary.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (one.as_str(), T0, "first <v1>"),
                (two.as_str(), T0 + 1, "second")
            ]
        );

        // The body is Go's encoding of the entry.
        let body = b.bucket.get(&history_key(0, &one), u64::MAX).await.unwrap();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            format!(
                r#"{{"renderRef":"{one}","syncedAt":"2026-01-01T00:00:00Z","summary":"first \u003cv1\u003e"}}"#
            )
        );
    }
}

/// A release with `n` syncs of distinct renders, one a second from T0.
async fn synced(r: &Recorded, app: &Release, n: u32) -> Vec<String> {
    let mut refs = Vec::new();
    for i in 0..n {
        let render_ref = r.store.put_render(app, &render(i)).await.unwrap();
        r.store
            .record_history(app, &entry(&render_ref, T0 + i as i64, &format!("v{i}")))
            .await
            .unwrap();
        refs.push(render_ref);
    }
    r.calls();
    refs
}

#[tokio::test]
async fn gc_with_keep_zero_or_less_makes_no_call() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        synced(&r, &app, 3).await;
        for keep in [0, -1, i64::MIN] {
            let plan = r.store.gc(&app, keep, &[], false).await.unwrap();
            assert!(plan.delete_history.is_empty() && plan.delete_renders.is_empty());
            assert_eq!(r.calls(), [], "{} keep {keep}", b.name);
        }
        assert_eq!(r.store.list_history(&app).await.unwrap().len(), 3);
    }
}

#[tokio::test]
async fn gc_follows_the_four_steps_and_spares_protected_and_foreign_keys() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        let refs = synced(&r, &app, 5).await;
        // A blob stored at a gate (lastAttempted) with no history entry.
        let attempted = r.store.put_render(&app, &render(100)).await.unwrap();
        // Keys GC must never delete: foreign files, temp files, a bad time.
        let foreign = [
            format!("{P}renders/{}.attrs", refs[0]),
            format!("{P}renders/tmp-upload"),
            format!("{P}history/2026-01-01-{}", refs[0]),
            format!("{P}history/notes.txt"),
        ];
        for k in &foreign {
            b.bucket.put(k, b"foreign".to_vec()).await.unwrap();
        }
        r.calls();

        let protected = vec![refs[0].clone(), attempted.clone(), String::new()];
        let dry = r.store.gc(&app, 2, &protected, true).await.unwrap();
        assert_eq!(
            r.calls(),
            [list(&format!("{P}history/")), list(&format!("{P}renders/"))]
        );

        let plan = r.store.gc(&app, 2, &protected, false).await.unwrap();
        assert_eq!(plan, dry, "{}: the dry run predicts the real run", b.name);
        let h = |i: usize| history_key(i as i64, &refs[i]);
        let rk = |r: &str| format!("{P}renders/{r}");
        // Both listings first (which entries count depends on the blobs), then the
        // entries, the history again, and the blobs.
        let mut want = vec![
            list(&format!("{P}history/")),
            list(&format!("{P}renders/")),
            delete_many(&[h(0), h(1), h(2)]),
        ];
        want.push(list(&format!("{P}history/")));
        let mut deleted_renders = vec![rk(&refs[1]), rk(&refs[2])];
        deleted_renders.sort();
        want.push(delete_many(&deleted_renders));
        assert_eq!(r.calls(), want, "{}", b.name);

        assert_eq!(plan.delete_history, [h(0), h(1), h(2)]);
        assert_eq!(plan.keep_history, [h(3), h(4)]);
        assert_eq!(plan.delete_renders, deleted_renders);
        let mut kept = vec![rk(&refs[0]), rk(&refs[3]), rk(&refs[4]), rk(&attempted)];
        kept.sort();
        assert_eq!(plan.keep_renders, kept);
        let mut ignored = foreign.to_vec();
        ignored.sort();
        let mut got_ignored = plan.ignored.clone();
        got_ignored.sort();
        assert_eq!(got_ignored, ignored);

        for k in foreign.iter().chain(&kept) {
            assert!(
                b.bucket.exists(k).await.unwrap().is_some(),
                "{}: {k} survives",
                b.name
            );
        }
        for k in &deleted_renders {
            assert!(
                b.bucket.exists(k).await.unwrap().is_none(),
                "{}: {k} is gone",
                b.name
            );
        }
        // Every kept entry's blob exists.
        for e in r.store.list_history(&app).await.unwrap() {
            r.store.get_render(&app, &e.render_ref).await.unwrap();
        }
    }
}

#[tokio::test]
async fn gc_plan_is_pure_and_matches_the_store() {
    let rt = runtime();
    let app = release("app");
    let refs: Vec<String> = {
        let mut v = Vec::new();
        for i in 0..4 {
            v.push(rt.render_ref(&render(i)).await.unwrap());
        }
        v
    };
    let history: Vec<String> = (0..4).map(|i| history_key(i as i64, &refs[i])).collect();
    let renders: Vec<String> = refs.iter().map(|r| format!("{P}renders/{r}")).collect();
    let now = time(T0 + 60);
    let plan = rt
        .plan_gc(
            &app,
            1,
            &history,
            &renders,
            std::slice::from_ref(&refs[1]),
            now,
        )
        .await
        .unwrap();
    assert_eq!(plan.delete_history, history[..3]);
    assert_eq!(plan.keep_history, history[3..]);
    let mut deleted = vec![renders[0].clone(), renders[2].clone()];
    deleted.sort();
    assert_eq!(plan.delete_renders, deleted);
    // An edited listing changes the decision: one protected ref fewer deletes one more.
    let plan = rt
        .plan_gc(&app, 1, &history, &renders, &[], now)
        .await
        .unwrap();
    assert_eq!(plan.delete_renders.len(), 3);
    let off = rt
        .plan_gc(&app, 0, &history, &renders, &[], now)
        .await
        .unwrap();
    assert!(off.delete_history.is_empty() && off.delete_renders.is_empty());
    assert_eq!(off.keep_history.len(), 4);
}

#[tokio::test]
async fn delete_release_removes_its_prefix_and_nothing_else() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        synced(&r, &app, 3).await;
        for neighbour in ["app2", "app.v2", "ap"] {
            synced(&r, &release(neighbour), 2).await;
        }
        synced(&r, &Release::new("other", "app"), 1).await;
        b.bucket
            .put(&format!("{P}renders/leftover.tmp"), Vec::new())
            .await
            .unwrap();
        let before = keys(b.bucket.list("").await.unwrap());
        let mine: Vec<&String> = before.iter().filter(|k| k.starts_with(P)).collect();
        assert_eq!(mine.len(), 3 + 3 + 1);
        r.calls();

        let deleted = r.store.delete_release(&app).await.unwrap();
        assert_eq!(deleted as usize, mine.len());
        // Entries and blobs go in batches of their own, entries first.
        let (entries, blobs): (Vec<&String>, Vec<&String>) = mine
            .iter()
            .partition(|k| k.starts_with(&format!("{P}history/")));
        assert_eq!((entries.len(), blobs.len()), (3, 4));
        let want = vec![list(P), delete_many(&entries), delete_many(&blobs)];
        assert_eq!(r.calls(), want, "{}", b.name);
        let after = keys(b.bucket.list("").await.unwrap());
        let others: Vec<&String> = before.iter().filter(|k| !k.starts_with(P)).collect();
        assert_eq!(after.iter().collect::<Vec<_>>(), others, "{}", b.name);

        // A second run is a no-op.
        assert_eq!(r.store.delete_release(&app).await.unwrap(), 0);
        assert_eq!(r.calls(), [list(P)]);
    }
}

#[tokio::test]
async fn diff_renders_of_the_store_reads_both_renders_and_diffs_them() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        let old = r.store.put_render(&app, &render(1)).await.unwrap();
        let new = r.store.put_render(&app, &render(2)).await.unwrap();
        r.calls();
        let d = r
            .store
            .diff_renders(
                &app,
                &old,
                &new,
                render_store::ObjectForm::Json,
                render_store::SecretValues::Masked,
                render_store::DEFAULT_CONTEXT,
            )
            .await
            .unwrap();
        // The same answer as the pure diff of the two canonical renders.
        let rt = runtime();
        let want = rt
            .diff_renders(
                &rt.canonical(&render(1)).await.unwrap(),
                &rt.canonical(&render(2)).await.unwrap(),
                render_store::ObjectForm::Json,
                render_store::SecretValues::Masked,
                render_store::DEFAULT_CONTEXT,
            )
            .await
            .unwrap();
        assert_eq!(d, want, "{}", b.name);
        assert!(!d.changed.is_empty() || !d.added.is_empty(), "{}", b.name);
        assert_eq!(
            r.calls(),
            [
                get(&format!("{P}renders/{old}")),
                get(&format!("{P}renders/{new}"))
            ],
            "{}",
            b.name
        );
        // An absent render is not-found, after one get.
        let absent = runtime().render_ref(&render(9)).await.unwrap();
        let err = r
            .store
            .diff_renders(
                &app,
                &old,
                &absent,
                render_store::ObjectForm::Yaml,
                render_store::SecretValues::Masked,
                render_store::DEFAULT_CONTEXT,
            )
            .await
            .unwrap_err();
        assert!(matches!(err, render_store::Error::NotFound(_)), "{err}");
    }
}

/// Puts `n` small objects under `folder` (a few at a time: the cloud emulators are
/// slow one by one) and returns their keys, sorted.
async fn filled(
    bucket: &Arc<dyn Bucket>,
    folder: &str,
    n: usize,
    key: impl Fn(usize) -> String,
) -> Vec<String> {
    use futures::StreamExt;
    let keys: Vec<String> = (0..n).map(|i| format!("{folder}{}", key(i))).collect();
    futures::stream::iter(keys.clone())
        .map(|k| async move { bucket.put(&k, b"x".to_vec()).await.unwrap() })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let mut keys = keys;
    keys.sort();
    keys
}

/// The sizes of the batch deletes among `calls`, and whether any single delete was made.
fn batch_sizes(calls: &[BucketCall]) -> (Vec<usize>, bool) {
    let sizes = calls
        .iter()
        .filter_map(|c| match c {
            BucketCall::DeleteMany(keys) => Some(keys.len()),
            _ => None,
        })
        .collect();
    (
        sizes,
        calls.iter().any(|c| matches!(c, BucketCall::Delete(_))),
    )
}

#[tokio::test]
async fn gc_of_2500_blobs_makes_three_batch_calls() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        let live = synced(&r, &app, 1).await;
        let blobs = filled(&b.bucket, &format!("{P}renders/"), 2_500, |i| {
            format!("sha256:{:064x}", i + 1)
        })
        .await;
        r.calls();
        let plan = r.store.gc(&app, 1, &[], false).await.unwrap();
        assert_eq!(plan.delete_renders, blobs, "{}", b.name);
        let calls = r.calls();
        let mut want = vec![
            list(&format!("{P}history/")),
            list(&format!("{P}renders/")),
            list(&format!("{P}history/")),
        ];
        want.extend(blobs.chunks(1_000).map(delete_many));
        assert_eq!(calls, want, "{}: three batches, not 2,500 deletes", b.name);
        assert_eq!(batch_sizes(&calls), (vec![1_000, 1_000, 500], false));
        let left = keys(b.bucket.list(P).await.unwrap());
        assert_eq!(
            left.len(),
            2,
            "{}: the entry and its blob: {left:?}",
            b.name
        );
        assert!(left.contains(&format!("{P}renders/{}", live[0])));
    }
}

#[tokio::test]
async fn delete_release_deletes_in_batches_in_key_order() {
    for b in backends() {
        let r = Recorded::new(b.bucket.clone());
        let app = release("app");
        let mine = filled(&b.bucket, P, 1_500, |i| format!("k/{i}")).await;
        filled(&b.bucket, "ns/app2/", 3, |i| format!("k/{i}")).await;
        r.calls();
        assert_eq!(r.store.delete_release(&app).await.unwrap(), 1_500);
        let mut want = vec![list(P)];
        want.extend(mine.chunks(1_000).map(delete_many));
        assert_eq!(r.calls(), want, "{}", b.name);
        assert!(b.bucket.list(P).await.unwrap().is_empty(), "{}", b.name);
        assert_eq!(b.bucket.list("ns/app2/").await.unwrap().len(), 3);
    }
}

#[tokio::test]
async fn a_batch_with_failures_names_every_key_and_stops_there() {
    for b in backends() {
        let fails = |k: &str| k.ends_with("/k/0007") || k.ends_with("/k/0500");
        let faulty = FaultyBucket::new(
            b.bucket.clone(),
            move |c| matches!(c, BucketCall::Delete(k) if fails(k)),
        );
        let r = Recorded::new(faulty);
        let app = release("app");
        let mine = filled(&b.bucket, P, 1_200, |i| format!("k/{i:04}")).await;
        r.calls();
        let err = r.store.delete_release(&app).await.unwrap_err().to_string();
        assert!(
            err.contains("2 of 1000 keys could not be deleted"),
            "{}: {err}",
            b.name
        );
        for k in ["ns/app/k/0007", "ns/app/k/0500"] {
            assert!(
                err.contains(&format!("{k}: ")),
                "{}: {k} named in {err}",
                b.name
            );
        }
        assert!(err.contains("injected fault"), "{}: why: {err}", b.name);
        assert_eq!(
            r.calls(),
            [list(P), delete_many(&mine[..1_000])],
            "{}: no batch after the failed one",
            b.name
        );
        let left = keys(b.bucket.list(P).await.unwrap());
        let mut want = vec!["ns/app/k/0007".to_string(), "ns/app/k/0500".to_string()];
        want.extend(mine[1_000..].iter().cloned());
        assert_eq!(left, want, "{}", b.name);
    }
}
