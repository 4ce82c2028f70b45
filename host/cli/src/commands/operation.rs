//! The store operations (`put`, `get`, `history`, `record`, `gc`, `delete-release`):
//! arguments resolved against the store, the operation run (recorded with `--trace`),
//! and its output printed.

use super::{Context, Finish, history, parse_release};
use crate::args::{OutputFormat, StoreCommand};
use crate::input::Render;
use crate::json_view::history_json;
use crate::names;
use crate::output::{count, output_json, print_gc, print_json};
use crate::progress::{LARGE_RENDER_BYTES, Progress, ProgressBucket, Task};
use crate::terminal::escape_for_terminal as esc;
use anyhow::{Context as _, Result, bail};
use render_store::controller::DEFAULT_KEEP_HISTORY;
use render_store::operation::{Operation, Output};
use render_store::{
    Grace, NewEntry, ObjectForm, Release, RenderStore, Runtime, SecretValues, SyncTime,
};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Refuses to record an entry for a render the store does not hold: the entry would
/// name a blob nothing can read, and an operator's typo would look like history. (The
/// controller always stores the render first; its path has no such check.)
async fn require_stored(store: &RenderStore, release: &Release, render_ref: &str) -> Result<()> {
    let key = match store.runtime().render_key(release, render_ref).await {
        Ok(key) => key,
        // The operation refuses it itself, in its own words (and a trace records that).
        Err(render_store::Error::InvalidInput(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if store.bucket().exists(&key).await?.is_none() {
        bail!(
            "{render_ref} is not stored for {release}: put the render first \
             (render-store put {release} FILE), then record it"
        );
    }
    Ok(())
}

/// A store command's operation, with its arguments read, parsed and resolved against
/// the store (release names checked, render names turned into renderRefs), and for
/// `put` the render as read (to name the file of an invalid object).
async fn store_operation(
    command: StoreCommand,
    store: &RenderStore,
    namespace: Option<&str>,
) -> Result<(Operation, Option<Render>)> {
    let rt = store.runtime();
    Ok(match command {
        StoreCommand::Put { release, input, .. } => {
            let given = release.clone();
            let release = parse_release(&release, namespace)?;
            let render = input
                .read(rt)
                .await
                .map_err(|e| with_swap_hint(e, &given, &input.files))?;
            // The objects stay joined in `render`: a put that is not traced lends them
            // to the sandbox as they are; a traced one copies them into the operation.
            let objects = Vec::new();
            (Operation::PutRender { release, objects }, Some(render))
        }
        StoreCommand::Get {
            release,
            render_ref,
            ..
        } => {
            let release = parse_release(&release, namespace)?;
            names::require_release(store, &release).await?;
            let render_ref = names::resolve_ref(store, &release, &render_ref).await?;
            (
                Operation::GetRender {
                    release,
                    render_ref,
                },
                None,
            )
        }
        StoreCommand::History { release, .. } => {
            let release = parse_release(&release, namespace)?;
            names::require_release(store, &release).await?;
            (Operation::ListHistory { release }, None)
        }
        StoreCommand::Record {
            release,
            render_ref,
            summary,
            synced_at,
            ..
        } => {
            let synced_at = match synced_at {
                Some(text) => rt.parse_synced_at(&text).await?,
                None => SyncTime::now(),
            };
            let release = parse_release(&release, namespace)?;
            let render_ref = names::resolve_ref(store, &release, &render_ref).await?;
            require_stored(store, &release, &render_ref).await?;
            (
                Operation::RecordHistory {
                    release,
                    entry: NewEntry {
                        render_ref,
                        synced_at,
                        summary,
                    },
                },
                None,
            )
        }
        StoreCommand::Gc {
            release,
            keep,
            protect,
            dry_run,
            grace,
            ..
        } => {
            let release = parse_release(&release, namespace)?;
            let keep = keep.unwrap_or(DEFAULT_KEEP_HISTORY);
            let mut protected = Vec::with_capacity(protect.len());
            // GC off (keep <= 0) does nothing and reads nothing: no check, no names to
            // resolve (GC ignores protected renders then).
            if keep > 0 {
                names::require_release(store, &release).await?;
                for name in &protect {
                    protected.push(names::resolve_ref(store, &release, name).await?);
                }
            }
            (
                Operation::Gc {
                    release,
                    keep,
                    protected,
                    dry_run,
                    grace: Grace::ending_now(grace),
                },
                None,
            )
        }
        StoreCommand::DeleteRelease { release, .. } => (
            Operation::DeleteRelease {
                release: parse_release(&release, namespace)?,
            },
            None,
        ),
    })
}

/// What progress an operation shows, if any: deletes of `delete-release` and `gc`, the
/// bytes of a large render's `put` (`render`, the render it puts).
fn progress_task(operation: &Operation, render: Option<&Render>) -> Option<Task> {
    match operation {
        Operation::DeleteRelease { .. } => Some(Task::DeleteRelease),
        Operation::Gc { dry_run: false, .. } => Some(Task::Gc),
        Operation::PutRender { .. } => {
            let bytes = render.map_or(0, |r| r.objects.bytes.len());
            (bytes >= LARGE_RENDER_BYTES).then_some(Task::Put(bytes))
        }
        _ => None,
    }
}

async fn print_output(
    rt: &Runtime,
    operation: &Operation,
    output: &Output,
    format: OutputFormat,
    secrets: SecretValues,
) -> Result<()> {
    let as_json = format == OutputFormat::Json;
    match (operation, output) {
        (_, Output::Render(bytes)) if format == OutputFormat::Yaml => {
            let shown = rt.show_objects(bytes, ObjectForm::Yaml, secrets).await?;
            let mut out = std::io::stdout().lock();
            for object in shown {
                writeln!(out, "---")?;
                out.write_all(object.text.as_bytes())?;
                if !object.text.ends_with('\n') {
                    writeln!(out)?;
                }
            }
        }
        (_, Output::Render(bytes)) => std::io::stdout().lock().write_all(bytes)?,
        (_, Output::Entries(entries)) => print_json(&history_json(rt, entries).await?)?,
        (
            Operation::Gc {
                release,
                keep,
                dry_run,
                ..
            },
            Output::Plan(plan),
        ) => {
            if *keep <= 0 && !as_json {
                println!("keep is {keep}: GC is off, nothing deleted");
            } else {
                print_gc(rt, release, plan, *dry_run, as_json).await?;
            }
        }
        (_, output) if as_json => print_json(&output_json(rt, output).await?)?,
        (_, Output::RenderRef(render_ref)) => println!("{render_ref}"),
        (Operation::RecordHistory { entry, .. }, Output::Added(added)) => {
            if *added {
                println!("recorded {}", entry.render_ref);
            } else {
                println!("already in the history: {}", entry.render_ref);
            }
        }
        (Operation::DeleteRelease { release }, Output::Deleted(0)) => {
            println!("nothing to delete: no key is stored for {release}")
        }
        (Operation::DeleteRelease { release }, Output::Deleted(n)) => {
            println!("deleted {} of {release}", count(*n as usize, "key", "keys"))
        }
        (_, output) => print_json(&output_json(rt, output).await?)?,
    }
    Ok(())
}

/// `record` of a render the history already holds adds nothing: the history is the
/// order of first applies (CONTRACT.md §5), so after a rollback `@0` is not what runs.
/// Say which entry records the render and when it was first applied, from one listing
/// of the history (the keys hold both; no entry is read).
async fn print_already_recorded(
    store: &RenderStore,
    release: &Release,
    render_ref: &str,
) -> Result<()> {
    let history = names::history_keys(store, release).await?;
    let found = history
        .iter()
        .rev()
        .enumerate()
        .find(|(_, e)| e.render_ref == render_ref);
    match found {
        Some((n, e)) => {
            let first = store.runtime().format_synced_at(e.synced_at).await?;
            println!(
                "already recorded as @{n} (first applied {first}): nothing added; the history \
                 keeps each render at its first apply, so @0 is not what runs after a rollback"
            );
        }
        // Deleted between the record and the listing (a GC of another writer).
        None => println!("already in the history: {render_ref}"),
    }
    Ok(())
}

/// Keeps the release index (CONTRACT.md §3) in step after a write: a `record` that
/// added an entry indexes its render, a `gc` that deleted something drops what the
/// history no longer names. The index is a cache: a failure here loses no data and
/// fails nothing (the write is done), so it is said on standard error with the fix.
async fn keep_index(store: &RenderStore, operation: &Operation, output: &Output) {
    let (release, added, gc_deleted) = match (operation, output) {
        (Operation::RecordHistory { release, .. }, Output::Added(added)) => {
            (release, *added, false)
        }
        (
            Operation::Gc {
                release,
                dry_run: false,
                ..
            },
            Output::Plan(plan),
        ) => (release, false, plan.deletes_anything()),
        _ => return,
    };
    let Some(read_missing) = render_store::controller::index_update(added, gc_deleted) else {
        return;
    };
    if let Err(e) = store.index_release(release, read_missing).await {
        eprintln!(
            "render-store: the release index of {release} was not updated ({}); queries \
             read the renders it lacks, and `render-store reindex {release}` rebuilds it",
            esc(&e.to_string())
        );
    }
}

/// `put`'s repair of a blob that does not read although its size matches (the
/// component's put-render compares sizes only, to stay one metadata request on the
/// controller's path): the CLI reads the blob back (one read and one hash of it) and
/// rewrites it when it does not verify or does not open under the keyring. Either way
/// the content is fixed by the renderRef, so nothing is lost.
///
/// With a keyring the blob is rewritten sealed, whatever it was (damaged, forged, or
/// sealed under a key the keyring lacks), so that afterwards it opens under the
/// keyring. Without one, the blob put-render kept has the plaintext size, which no
/// sealed blob of this render has: whatever header it carries it was never one, and
/// plaintext replaces it (no downgrade). A blob of another size by then was written
/// meanwhile, and is left for the next put to judge.
async fn repair_blob(
    store: &RenderStore,
    release: &Release,
    objects: &mut render_store::JoinedObjects,
    render_ref: &str,
) -> Result<()> {
    let refused = match store.get_render(release, render_ref).await {
        Err(e @ (render_store::Error::Corrupt(_) | render_store::Error::EncryptionKey(_))) => e,
        // Collected meanwhile by a GC with no grace period: nothing left to repair.
        Err(render_store::Error::NotFound(_)) | Ok(_) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let rt = store.runtime();
    let key = rt.render_key(release, render_ref).await?;
    if store.keyring().is_empty() {
        let canonical = rt.canonical_in(objects).await?;
        if store.bucket().exists(&key).await? != Some(canonical.len() as u64) {
            return Err(refused.into());
        }
        store.bucket().put(&key, canonical).await?;
    } else {
        // Only the component seals: the blob goes, and put-render writes it again (it
        // did not open, so nothing this keyring could read is lost between).
        store.bucket().delete(&key).await?;
        store.put_render_in(release, objects).await?;
    }
    store.get_render(release, render_ref).await?;
    eprintln!(
        "render-store: rewrote the damaged blob {} (it did not read: {})",
        esc(&key),
        esc(&refused.to_string())
    );
    Ok(())
}

/// `e`, a failure to read `put`'s inputs, with a hint when the release and the file look
/// swapped: an input that does not exist reads as NAMESPACE/NAME, and the release given
/// is a file.
fn with_swap_hint(e: anyhow::Error, release: &str, files: &[PathBuf]) -> anyhow::Error {
    let missing = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
    });
    let looks_like_release = |f: &PathBuf| {
        f.to_str()
            .and_then(|f| f.split_once('/'))
            .is_some_and(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains('/'))
            && !f.exists()
    };
    match files.iter().find(|f| looks_like_release(f)) {
        Some(file) if missing && std::path::Path::new(release).is_file() => e.context(format!(
            "the release comes first, then the files: render-store put {} {release}",
            file.display()
        )),
        _ => e,
    }
}

/// Runs `command`, recorded into `trace` when given, and prints its output.
pub async fn run(
    ctx: &Context<'_>,
    command: StoreCommand,
    trace: Option<PathBuf>,
) -> Result<Finish> {
    let format = ctx.format;
    let as_json = ctx.as_json();
    let store = ctx.open().await?;
    let running = match &command {
        StoreCommand::History {
            release,
            running: Some(running),
            ..
        } => {
            let release = parse_release(release, ctx.namespace)?;
            Some(names::resolve_ref(&store, &release, running).await?)
        }
        _ => None,
    };
    let (mut operation, mut render) = store_operation(command, &store, ctx.namespace).await?;
    let progress = progress_task(&operation, render.as_ref())
        .and_then(|task| Progress::to_terminal(task, ctx.quiet));
    let store = match &progress {
        Some(p) => RenderStore::new(
            store.runtime().clone(),
            Arc::new(ProgressBucket::new(store.bucket().clone(), p.clone())),
        ),
        None => store,
    };
    let output = match (&trace, &mut operation, &mut render) {
        // A put not traced: the render's buffers lent to the call, not copied.
        (None, Operation::PutRender { release, .. }, Some(render)) => store
            .put_render_in(release, &mut render.objects)
            .await
            .map(Output::RenderRef),
        (Some(path), operation, render) => {
            if let (Operation::PutRender { objects, .. }, Some(render)) = (&mut *operation, render)
            {
                // A trace records the objects one by one.
                *objects = render.objects.to_objects();
            }
            let (output, trace) = render_store::trace::record(&store, operation).await;
            let trace = trace.context("writing the trace")?;
            crate::local_file::write_private(path, trace.as_bytes())
                .context("writing the trace")?;
            output
        }
        (None, operation, _) => store.run(operation).await,
    };
    if let Some(p) = &progress {
        p.finish();
    }
    let output = match (output, &render, &operation) {
        (Ok(output), _, _) => output,
        (Err(e), Some(render), _) => return Err(render.name_input(e)),
        // One bad entry: show the others, and the bad one as such.
        (Err(render_store::Error::Corrupt(_)), _, Operation::ListHistory { release })
            if !as_json =>
        {
            return history::despite_bad_entries(&store, release).await;
        }
        (Err(e), _, _) => return Err(e.into()),
    };
    if let (Operation::PutRender { release, .. }, Output::RenderRef(r), Some(render)) =
        (&operation, &output, &mut render)
    {
        repair_blob(&store, release, &mut render.objects, r).await?;
    }
    keep_index(&store, &operation, &output).await;
    match (&operation, &output) {
        (Operation::ListHistory { release }, Output::Entries(entries)) if !as_json => {
            let table = history::Table {
                wide: format == OutputFormat::Wide,
                running: running.as_deref(),
            };
            history::print_table(&store, release, entries, 0, table).await?
        }
        (Operation::ListHistory { .. }, Output::Entries(entries)) if running.is_some() => {
            let mut json = crate::json_view::history_json(store.runtime(), entries).await?;
            history::mark_running(&store, entries, running.as_deref(), &mut json, false).await?;
            crate::output::print_json(&json)?
        }
        (Operation::RecordHistory { release, entry }, Output::Added(false))
            if format == OutputFormat::Text =>
        {
            print_already_recorded(&store, release, &entry.render_ref).await?
        }
        _ => print_output(store.runtime(), &operation, &output, format, ctx.secrets).await?,
    }
    Ok(Finish::Done)
}
