//! `render-store demo`: the main job end to end on a local store, for a first look.

use crate::json_view::history_json;
use crate::output::{count, print_diff, print_gc, print_json};
use crate::terminal::escape_for_terminal as esc;
use anyhow::{Context, Result};
use render_store::{
    DEFAULT_CONTEXT, NewEntry, ObjectForm, Release, RenderStore, SecretValues, SyncTime, redact_url,
};

/// A real, public manifest people apply as it is: ingress-nginx's cloud deployment
/// (Apache-2.0; the same stream the tests and benchmarks read).
const INGRESS_NGINX: &str = include_str!("../../../../tests/real-renders/ingress-nginx-cloud.yaml");

/// The release the demo writes.
const NAMESPACE: &str = "ingress-nginx";
const NAME: &str = "ingress-nginx";

/// `text` with `from` replaced by `to`, which must be in it: the demo's edits fail
/// loudly, not silently, if the manifest ever changes.
fn edit(text: &str, from: &str, to: &str) -> Result<String> {
    anyhow::ensure!(text.contains(from), "the demo manifest lacks {from:?}");
    Ok(text.replacen(from, to, 1))
}

/// The revisions the demo syncs, oldest first, each as (summary, YAML stream): the
/// manifest as published, then an operator's two changes to it.
fn revisions() -> Result<Vec<(&'static str, String)>> {
    let v1 = INGRESS_NGINX.to_string();
    let v2 = edit(
        &v1,
        "data: null\nkind: ConfigMap",
        "data:\n  proxy-body-size: 8m\nkind: ConfigMap",
    )?;
    let v3 = edit(
        &v2,
        "        - --ingress-class=nginx\n",
        "        - --ingress-class=nginx\n        - --enable-metrics=true\n",
    )?;
    Ok(vec![
        ("ingress-nginx as published", v1),
        ("proxy-body-size 8m", v2),
        ("metrics on", v3),
    ])
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
    let release = Release::new(NAMESPACE, NAME);
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

    // Three syncs of a real manifest, a minute apart, as the controller records them.
    let start = 1_767_225_600; // 2026-01-01T00:00:00Z
    let runtime = store.runtime();
    let revisions = revisions()?;
    for (minute, (summary, yaml)) in revisions.iter().enumerate() {
        let objects = runtime.yaml_objects(yaml.as_bytes()).await?;
        let render_ref = store.put_render(&release, &objects).await?;
        let entry = NewEntry {
            render_ref: render_ref.clone(),
            synced_at: SyncTime {
                seconds: start + 60 * minute as i64,
                nanoseconds: 0,
            },
            summary: summary.to_string(),
        };
        store.record_history(&release, &entry).await?;
        println!(
            "sync {}: {summary}: {} objects, {render_ref}",
            minute + 1,
            objects.len()
        );
    }

    println!("\n$ render-store history {release}");
    let history = store.list_history(&release).await?;
    if as_json {
        print_json(&history_json(runtime, &history).await?)?;
    } else {
        let table = super::history::Table::default();
        super::history::print_table(&store, &release, &history, 0, table).await?;
    }

    // What the last sync changed, as `diff NS/NAME @1 @0` shows it.
    if let [.., before, last] = &history[..] {
        println!("\n$ render-store diff {release} @1 @0");
        let diff = store
            .diff_renders(
                &release,
                &before.render_ref,
                &last.render_ref,
                ObjectForm::Yaml,
                SecretValues::Masked,
                DEFAULT_CONTEXT,
            )
            .await?;
        print_diff(&diff, false)?;
    }

    // What applying a local edit would change, before it is applied: `diff --local`.
    if let Some(newest) = history.last() {
        let (_, newest_yaml) = revisions.last().expect("three revisions");
        let local = edit(
            newest_yaml,
            "        imagePullPolicy: IfNotPresent\n        lifecycle:",
            "        imagePullPolicy: Always\n        lifecycle:",
        )?;
        println!("\n$ render-store diff {release} --local deploy.yaml   # pullPolicy Always");
        let stored = store.get_render(&release, &newest.render_ref).await?;
        let canonical = runtime.yaml_canonical(local.as_bytes()).await?;
        let diff = runtime
            .diff_renders(
                &stored,
                &canonical,
                ObjectForm::Yaml,
                SecretValues::Masked,
                DEFAULT_CONTEXT,
            )
            .await?;
        print_diff(&diff, false)?;
    }

    println!("\n$ render-store gc {release} --keep 2");
    // The demo is the only writer and just wrote every blob: without a grace period
    // GC shows at once what it deletes.
    let plan = store
        .with_gc_grace(std::time::Duration::ZERO)
        .gc(&release, 2, &[], false)
        .await?;
    print_gc(runtime, &release, &plan, false, as_json).await?;

    let shown_url = match &temp_dir {
        Some(_) => "file:///tmp/render-store-demo?create_dir=true".to_string(),
        None => redact_url(&url),
    };
    println!("\nnext, on a store that stays:");
    if temp_dir.is_some() {
        println!("  render-store --render-store-url '{shown_url}' demo");
    }
    println!("  export RENDER_STORE_URL='{shown_url}'");
    println!("  render-store history {release}");
    println!("  render-store diff {release} @1 @0");
    println!("  render-store get {release} @0 -o yaml");
    println!("the web pages of the same store (history, renders, diffs side by side):");
    println!("  render-store serve      # prints a login file; open it in a browser");
    println!("  then /ui/{release} shows the history, and each entry's \"with previous\" its diff");
    Ok(())
}
