//! `history`: a release's entries as helm history shows revisions, oldest first under
//! a header, each with its place (`@N`, the name every command takes), its time to the
//! second and its age, a short renderRef and its summary; `-o wide` adds the whole time
//! and renderRef and the size of the render. `--limit` shows the newest entries in the
//! same order, reading only those.

use super::{Context, Finish};
use crate::json_view::history_page_json;
use crate::names;
use crate::output::{count, print_json, table_lines};
use crate::render_sizes::render_sizes;
use crate::terminal::escape_for_terminal as esc;
use crate::time_view::{age, now_seconds, to_the_second};
use anyhow::{Result, bail};
use render_store::{EntryTrust, HistoryEntry, Release, RenderStore, Runtime};
use std::collections::HashMap;
use std::io::Write;

/// Hex digits of the renderRef the table shows: as git's short hashes, enough to tell
/// renders apart, and every command takes a unique prefix of eight or more.
const SHORT_REF_DIGITS: usize = 12;

/// How the table is drawn.
#[derive(Debug, Clone, Copy, Default)]
pub struct Table<'a> {
    /// `-o wide`: whole times and renderRefs, and each render's size.
    pub wide: bool,
    /// The renderRef that runs, when the caller knows it (`--running`): its entry is
    /// marked, and a note says so when it is not the newest.
    pub running: Option<&'a str>,
}

/// Prints `entries` (oldest first; the last at place `@newest`) as the history table.
/// The store is listed once for the render sizes when `table.wide`.
pub async fn print_table(
    store: &RenderStore,
    release: &Release,
    entries: &[HistoryEntry],
    newest: usize,
    table: Table<'_>,
) -> Result<()> {
    let rt = store.runtime();
    if entries.is_empty() {
        println!("(no history)");
        return Ok(());
    }
    let sizes: HashMap<String, u64> = if table.wide {
        render_sizes(store, release, &entries[0].render_ref)
            .await?
            .1
    } else {
        HashMap::new()
    };
    let trust = Trust::of(store);
    // Which entry runs, as the component decides it: the STATUS column marks it, and
    // the note below says where it is.
    let running_at = match table.running {
        Some(running) => rt
            .logic()
            .running_entry(entries, running, trust == Trust::Required)
            .await?
            .map(|i| i as usize),
        None => None,
    };
    let rows = rows(rt, entries, newest, table, trust, running_at, &sizes).await?;
    let mut out = std::io::stdout().lock();
    for line in lay_out(&rows, table, trust) {
        writeln!(out, "{line}")?;
    }
    drop(out);
    let unauthenticated = entries
        .iter()
        .filter(|e| matches!(e.trust, EntryTrust::Unauthenticated(_)))
        .count();
    if unauthenticated > 0 {
        eprintln!(
            "render-store: {} of {release} {} not authenticate under the keyring{}; \
             `render-store verify {release}` says why",
            count(unauthenticated, "entry", "entries"),
            if unauthenticated == 1 { "does" } else { "do" },
            if trust == Trust::Required {
                " and, as encryption is required, have no @N and are never applied"
            } else {
                ""
            }
        );
    }
    if let Some(running) = table.running {
        let places = places(entries, newest, trust);
        match running_at.and_then(|i| places[i]) {
            Some(0) => {}
            Some(n) => eprintln!(
                "render-store: @{n} runs, not @0: the history keeps each render at its first \
                 apply, so a rollback does not make it the newest"
            ),
            None if newest == 0 => eprintln!(
                "render-store: the running render {running} is in no history entry of {release}"
            ),
            None => {}
        }
    }
    Ok(())
}

/// Marks the entry of the running render in `json`, the history's JSON array (oldest
/// first, or newest first with `newest_first`, as a page), with `"running": true`: the
/// entry the table's STATUS column and the history page mark, as the component decides
/// it (`logic.running-entry`). `entries` are oldest first.
pub async fn mark_running(
    store: &RenderStore,
    entries: &[HistoryEntry],
    running: Option<&str>,
    json: &mut serde_json::Value,
    newest_first: bool,
) -> Result<()> {
    let Some(running) = running else {
        return Ok(());
    };
    let at = store
        .runtime()
        .logic()
        .running_entry(entries, running, Trust::of(store) == Trust::Required)
        .await?;
    if let (Some(at), Some(items)) = (at, json.as_array_mut()) {
        let at = at as usize;
        let i = if newest_first {
            items.len() - 1 - at
        } else {
            at
        };
        if let Some(entry) = items.get_mut(i) {
            entry["running"] = serde_json::Value::Bool(true);
        }
    }
    Ok(())
}

/// What the table says of entries' MACs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// No keyring: nothing to say.
    Unchecked,
    /// A keyring: a VERIFIED column.
    Shown,
    /// Encryption required: the column, and unauthenticated entries have no `@N`.
    Required,
}

impl Trust {
    fn of(store: &RenderStore) -> Trust {
        match (store.keyring().is_empty(), store.encryption_required()) {
            (true, _) => Trust::Unchecked,
            (false, false) => Trust::Shown,
            (false, true) => Trust::Required,
        }
    }
}

/// The `@N` of each entry (oldest first; the last at `newest`), `None` for one that is
/// not numbered: an unauthenticated entry where encryption is required, which no
/// position names (CONTRACT.md §14).
fn places(entries: &[HistoryEntry], newest: usize, trust: Trust) -> Vec<Option<usize>> {
    let mut next = newest;
    let mut places: Vec<Option<usize>> = entries
        .iter()
        .rev()
        .map(|e| {
            if !e.trust.counts_where(trust == Trust::Required) {
                return None;
            }
            next += 1;
            Some(next - 1)
        })
        .collect();
    places.reverse();
    places
}

/// The cells of each row, escaped for the terminal.
async fn rows(
    rt: &Runtime,
    entries: &[HistoryEntry],
    newest: usize,
    table: Table<'_>,
    trust: Trust,
    running_at: Option<usize>,
    sizes: &HashMap<String, u64>,
) -> Result<Vec<Vec<String>>> {
    let times: Vec<_> = entries.iter().map(|e| e.synced_at).collect();
    let times = rt.format_synced_at_all(&times).await?;
    let now = now_seconds();
    let places = places(entries, newest, trust);
    Ok(entries
        .iter()
        .zip(times)
        .zip(places)
        .enumerate()
        .map(|(i, ((e, time), place))| {
            let render = if table.wide {
                e.render_ref.clone()
            } else {
                short_ref(&e.render_ref).to_string()
            };
            let mut row = vec![
                place.map_or_else(|| "-".to_string(), |n| format!("@{n}")),
                if table.wide {
                    time
                } else {
                    to_the_second(&time)
                },
                age(e.synced_at, now),
                esc(&render).into_owned(),
            ];
            if table.wide {
                row.push(
                    sizes
                        .get(&e.render_ref)
                        .map_or_else(|| "missing".to_string(), u64::to_string),
                );
            }
            if table.running.is_some() {
                row.push(if running_at == Some(i) { "running" } else { "" }.to_string());
            }
            if trust != Trust::Unchecked {
                row.push(
                    if e.trust.is_authenticated() {
                        "yes"
                    } else {
                        "NO"
                    }
                    .to_string(),
                );
            }
            row.push(esc(&e.summary).into_owned());
            row
        })
        .collect())
}

/// The table's lines: a header, then one line per row, columns padded to their widest
/// cell (sizes to the right, as numbers), the summary last and unpadded.
fn lay_out(rows: &[Vec<String>], table: Table<'_>, trust: Trust) -> Vec<String> {
    let mut header = vec!["ENTRY", "SYNCED", "AGE", "RENDER"];
    if table.wide {
        header.push("SIZE");
    }
    if table.running.is_some() {
        header.push("STATUS");
    }
    if trust != Trust::Unchecked {
        header.push("VERIFIED");
    }
    header.push("SUMMARY");
    let header: Vec<String> = header.into_iter().map(String::from).collect();
    // Sizes line up on the right, as numbers do.
    let size_column = table.wide.then_some(4);
    table_lines(Some(&header), rows, 3, size_column)
}

/// The hex digits a person reads of a renderRef: its first few, without `sha256:`.
pub fn short_ref(render_ref: &str) -> &str {
    let hex = render_ref.strip_prefix("sha256:").unwrap_or(render_ref);
    hex.get(..SHORT_REF_DIGITS).unwrap_or(hex)
}

/// `history --limit`: one page of the history, the newest entries (before `before`),
/// reading only those: JSON newest first with the next page's cursor, as `/history`
/// answers; the table oldest first, as the whole history.
pub async fn page(
    ctx: &Context<'_>,
    release: &str,
    limit: u32,
    before: Option<&str>,
    trace: Option<&std::path::Path>,
    running: Option<&str>,
) -> Result<()> {
    if trace.is_some() {
        bail!(
            "--trace records whole store operations; a history page (--limit) is \
             not one: trace `history` without --limit"
        );
    }
    let store = ctx.open().await?;
    let release = ctx.release(release)?;
    let page = store.list_history_page(&release, limit, before).await?;
    // The page's own listing says the release exists when it found an entry;
    // only an empty one needs the check (one bounded call).
    if page.entries.is_empty() && page.next_before.is_none() {
        names::require_release(&store, &release).await?;
    }
    let rt = store.runtime();
    let running = match running {
        Some(name) => Some(names::resolve_ref(&store, &release, name).await?),
        None => None,
    };
    if ctx.as_json() {
        let mut json = history_page_json(rt, &page).await?;
        let mut oldest_first = page.entries.clone();
        oldest_first.reverse();
        mark_running(
            &store,
            &oldest_first,
            running.as_deref(),
            &mut json["entries"],
            true,
        )
        .await?;
        print_json(&json)?;
    } else {
        let table = Table {
            wide: ctx.format == crate::args::OutputFormat::Wide,
            running: running.as_deref(),
        };
        // The page's places: from the newest unless it starts before a key, where one
        // listing counts the entries after that key.
        let newest = match before {
            None => 0,
            Some(key) => names::history_keys(&store, &release)
                .await?
                .iter()
                .filter(|e| e.key.as_str() >= key)
                .count(),
        };
        let mut entries = page.entries.clone();
        entries.reverse();
        print_table(&store, &release, &entries, newest, table).await?;
        if let Some(next) = &page.next_before {
            // On standard error, so standard output stays the table.
            eprintln!("older entries: --before {}", esc(next));
        }
    }
    Ok(())
}

/// `history` when an entry does not read: every entry read alone, the bad ones shown as
/// such, exit status 1 at the end.
pub async fn despite_bad_entries(store: &RenderStore, release: &Release) -> Result<Finish> {
    let rt = store.runtime();
    let mut bad = 0;
    for (key, entry) in super::verify::history_entry_by_entry(store, release).await? {
        match entry {
            Ok(e) => {
                let time = rt.format_synced_at(e.synced_at).await?;
                println!("{time}  {}  {}", esc(&e.render_ref), esc(&e.summary));
            }
            Err(m) => {
                bad += 1;
                println!("(corrupt entry {}: {})", esc(&key), esc(&m));
            }
        }
    }
    eprintln!(
        "render-store: {} of {release} do not read; `render-store verify {release}` says what to do",
        count(bad, "history entry", "history entries")
    );
    Err(crate::failure::Refusal {
        kind: "corrupt",
        message: format!("{release} has corrupt history entries"),
    }
    .into())
}
