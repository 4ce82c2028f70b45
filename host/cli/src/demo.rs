//! `render-store demo`: the main job end to end on a local store, for a first look.

use crate::output::{count, print_diff, print_gc, print_history};
use crate::terminal::escape_for_terminal as esc;
use anyhow::{Context, Result};
use render_store::{NewEntry, Release, RenderStore, SyncTime, redact_url};

/// A ConfigMap and a Deployment of `image`, as a controller would render them.
fn render(version: u32) -> Vec<Vec<u8>> {
    let config = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"guestbook","namespace":"demo"}},"data":{{"greeting":"hello v{version}"}}}}"#
    );
    let deployment = format!(
        r#"{{"kind":"Deployment","apiVersion":"apps/v1","metadata":{{"namespace":"demo","name":"guestbook"}},"spec":{{"replicas":{version},"template":{{"spec":{{"containers":[{{"name":"web","image":"guestbook:{version}.0"}}]}}}}}}}}"#
    );
    vec![config.into_bytes(), deployment.into_bytes()]
}

/// Runs the demo on `url`, or without one in a new folder of the temporary directory
/// that only this user can enter and that is removed when the demo ends.
pub async fn run(url: &str, as_json: bool) -> Result<()> {
    // A fixed folder under the temporary directory would be shared with every user of
    // the machine: one could plant a link there and have the demo delete what it points
    // at. A fresh folder made with mode 0700 cannot be prepared by anyone else.
    let (url, temp_dir) = if url.is_empty() {
        let dir = tempfile::Builder::new()
            .prefix("render-store-demo-")
            .tempdir()
            .context("making a temporary folder for the demo")?;
        let mut url = url::Url::from_file_path(dir.path().join("store"))
            .map_err(|()| anyhow::anyhow!("the temporary folder is not an absolute path"))?;
        url.set_query(Some("create_dir=true"));
        (url.to_string(), Some(dir))
    } else {
        (url.to_string(), None)
    };
    let store = RenderStore::open(&url)?.expect("the URL is not empty");
    let release = Release::new("demo", "guestbook");
    let deleted = store.delete_release(&release).await?;
    match &temp_dir {
        Some(_) => println!(
            "store: {} (a new temporary folder, removed when the demo ends)",
            esc(&url)
        ),
        None => println!("store: {}", esc(&redact_url(&url))),
    }
    println!(
        "release {release}: cleared {} left by an earlier run",
        count(deleted as usize, "key", "keys")
    );

    // Five syncs, one a minute; the fourth re-applies v2, which the history keeps once.
    let start = 1_767_225_600; // 2026-01-01T00:00:00Z
    for (minute, version) in [1, 2, 3, 2, 4].into_iter().enumerate() {
        let render_ref = store.put_render(&release, &render(version)).await?;
        let entry = NewEntry {
            render_ref: render_ref.clone(),
            synced_at: SyncTime {
                seconds: start + 60 * minute as i64,
                nanoseconds: 0,
            },
            summary: format!("guestbook v{version}"),
        };
        let added = store.record_history(&release, &entry).await?;
        println!(
            "sync {}: v{version} {render_ref} ({})",
            minute + 1,
            if added {
                "recorded"
            } else {
                "already in the history"
            }
        );
    }

    println!("\nhistory before GC:");
    print_history(
        store.runtime(),
        &store.list_history(&release).await?,
        as_json,
    )
    .await?;

    let rollback_target = store.put_render(&release, &render(1)).await?;
    println!("\nGC keeping 2 entries, protecting the rollback target v1:");
    // The demo is the only writer and just wrote every blob: without a grace period
    // GC shows at once what it deletes.
    let plan = store
        .with_gc_grace(std::time::Duration::ZERO)
        .gc(&release, 2, std::slice::from_ref(&rollback_target), false)
        .await?;
    print_gc(store.runtime(), &plan, false, as_json).await?;

    println!("\nhistory after GC:");
    let history = store.list_history(&release).await?;
    print_history(store.runtime(), &history, as_json).await?;
    println!("\nkeys:");
    for object in store.bucket().list("demo/guestbook/").await? {
        println!("  {}", esc(&object.key));
    }

    // What the last sync changed, as `render-store diff demo/guestbook @1 @0` shows it.
    if let [.., before, last] = &history[..] {
        println!(
            "\nwhat the last sync changed ({} -> {}):",
            before.summary, last.summary
        );
        let diff = store
            .diff_renders(
                &release,
                &before.render_ref,
                &last.render_ref,
                render_store::ObjectForm::Yaml,
                render_store::SecretValues::Masked,
                render_store::DEFAULT_CONTEXT,
            )
            .await?;
        print_diff(&diff, false)?;
    }

    let shown_url = match &temp_dir {
        Some(_) => "file:///tmp/render-store-demo?create_dir=true".to_string(),
        None => redact_url(&url),
    };
    println!("\nnext, on a store that stays:");
    if temp_dir.is_some() {
        println!("  render-store --render-store-url '{shown_url}' demo");
    }
    println!("  export RENDER_STORE_URL='{shown_url}'");
    println!("  render-store history demo/guestbook");
    println!("  render-store diff demo/guestbook @1 @0");
    println!("  render-store get demo/guestbook @0 -o yaml");
    println!("  render-store serve      # prints a login URL for the web pages");
    Ok(())
}
