//! `reindex`: the release index of one release, or of every release, brought up to
//! date with its history ([`render_store::fleet_index`]).

use super::{Context, Finish};
use crate::names;
use crate::output::{count, print_json};
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::fleet_index::{FleetIndex, reindex};

/// Reindexes the release `release` names, or every release (of `-n`) when `None`,
/// every index rebuilt from the renders alone with `force`; [`Finish::Differs`] when
/// some release, folder or render could not be read.
pub async fn run(ctx: &Context<'_>, release: Option<&str>, force: bool) -> Result<Finish> {
    let store = ctx.open().await?;
    let done = match release {
        Some(r) => {
            let release = ctx.release(r)?;
            names::require_release(&store, &release).await?;
            let report = if force {
                store.rebuild_index(&release).await?
            } else {
                store.index_release(&release, true).await?
            };
            FleetIndex {
                releases: vec![(release, report)],
                ..FleetIndex::default()
            }
        }
        None => reindex(&store, ctx.namespace, force).await?,
    };
    if ctx.as_json() {
        print_json(&render_store::json_view::reindex(&done))?;
    } else {
        let (mut read, mut pruned, mut written) = (0u64, 0u64, 0usize);
        for (release, report) in &done.releases {
            read += u64::from(report.read);
            pruned += u64::from(report.pruned);
            written += usize::from(report.written);
            if let Some(why) = &report.replaced {
                eprintln!(
                    "render-store: {release}: replaced an index that could not be used ({})",
                    esc(why)
                );
            }
            for why in &report.unreadable {
                eprintln!(
                    "render-store: {release}: not indexed, the render does not read ({}); \
                     `render-store verify {release}` says what is wrong",
                    esc(why)
                );
            }
        }
        println!(
            "indexed {}: {} read, {} dropped, {} written",
            count(done.releases.len(), "release", "releases"),
            count(read as usize, "render", "renders"),
            count(pruned as usize, "render", "renders"),
            count(written, "index", "indexes"),
        );
    }
    for u in &done.unlisted {
        eprintln!(
            "render-store: could not list {} ({}): its releases are not indexed",
            esc(&u.folder),
            esc(&u.error)
        );
    }
    for (release, why) in &done.failed {
        eprintln!(
            "render-store: could not index {release} ({}); `render-store verify {release}` \
             says what is wrong",
            esc(why)
        );
    }
    Ok(if done.complete() {
        Finish::Done
    } else {
        Finish::Differs
    })
}
