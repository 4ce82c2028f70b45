//! `changes`: every history entry of the fleet synced in a window of time, newest
//! first, each with what changed against the entry before it in its release
//! ([`render_store::fleet_changes`]): the question "what changed in the fleet since
//! yesterday" that no single release's history answers.

use super::{Context, Finish};
use crate::output::print_json;
use crate::terminal::escape_for_terminal as esc;
use crate::time_window::Window;
use anyhow::Result;
use render_store::ObjectId;
use render_store::fleet_changes::{EntryChanges, fleet_changes};
use std::io::Write;

/// `changes --since SINCE [--until UNTIL]`: prints the entries of the window (of `-n`'s
/// namespace alone when given); [`Finish::Differs`] when a folder could not be listed or
/// a release could not be read, which makes the list partial: the other releases'
/// entries are still printed, and each one left out is named on standard error.
pub async fn run(ctx: &Context<'_>, since: &str, until: Option<&str>) -> Result<Finish> {
    let store = ctx.open().await?;
    let rt = store.runtime().clone();
    let window = Window::parse(&rt, Some(since), until).await?;
    let found = fleet_changes(&store, ctx.namespace, window.since, window.until).await?;
    let times: Vec<_> = found.entries.iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    if ctx.as_json() {
        // The library's shape, which the C ABI gives too.
        print_json(&render_store::json_view::changes(&rt, &found).await?)?;
    } else {
        let mut out = std::io::stdout().lock();
        for (e, time) in found.entries.iter().zip(&times) {
            out.write_all(entry_text(e, time).as_bytes())?;
        }
        if found.entries.is_empty() && found.complete() {
            writeln!(out, "(no history entry was synced in the window)")?;
        }
    }
    for u in &found.unlisted {
        eprintln!(
            "render-store: the list is partial: {} could not be listed: {}",
            esc(&u.folder),
            esc(&u.error)
        );
    }
    for (release, why) in &found.unread {
        eprintln!(
            "render-store: the list is partial: could not read {release} ({}): its entries \
             are not in the list; `render-store verify {release}` says what is wrong",
            esc(why)
        );
    }
    Ok(if found.complete() {
        Finish::Done
    } else {
        Finish::Differs
    })
}

/// An entry for people: `NS/NAME @N TIME SUMMARY`, then one indented line a change.
/// Every text from the store is escaped for the terminal.
pub fn entry_text(e: &EntryChanges, time: &str) -> String {
    let mut out = format!("{} @{} {time}", esc(&e.release.to_string()), e.position);
    if !e.summary.is_empty() {
        out.push(' ');
        out.push_str(&esc(&e.summary));
    }
    out.push('\n');
    let c = &e.changes;
    let mut line = |text: String| {
        out.push_str("  ");
        out.push_str(&text);
        out.push('\n');
    };
    for (mark, ids) in [("+", &c.added), ("-", &c.removed), ("~", &c.changed)] {
        for id in ids {
            line(format!("{mark} {}", object(id)));
        }
    }
    for i in &c.images {
        line(format!(
            "image {} ({}): {} → {}",
            esc(&i.container),
            object(&i.object),
            image(&i.old),
            image(&i.new)
        ));
    }
    for k in &c.secret_keys {
        line(format!(
            "secret key changed: {} {}",
            object(&k.secret),
            esc(&k.key)
        ));
    }
    out
}

/// An image as people read it: `(none)` where the container or its image is absent.
fn image(image: &Option<String>) -> String {
    image
        .as_deref()
        .map_or("(none)".into(), |i| esc(i).into_owned())
}

/// `Kind ns/name` (`Kind name` for an object without a namespace).
fn object(id: &ObjectId) -> String {
    let name = if id.name.is_empty() {
        "(no name)"
    } else {
        &id.name
    };
    if id.namespace.is_empty() {
        format!("{} {}", esc(&id.kind), esc(name))
    } else {
        format!("{} {}/{}", esc(&id.kind), esc(&id.namespace), esc(name))
    }
}
