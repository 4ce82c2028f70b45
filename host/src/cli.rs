//! The commands of the CLI: argument parsing and output; the work is the library's.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use render_store::json_view::{diff_json, gc_json, history_json};
use render_store::{
    GcPlan, HistoryEntry, NewEntry, Observer, Release, RenderDiff, RenderStore, Runtime, SyncTime,
};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// The convoy render store: the content and history of every render convoy applies,
/// kept in an object store.
#[derive(Debug, Parser)]
#[command(name = "render-store", version)]
pub struct Args {
    /// Where the store is: file:///abs/path[?create_dir=true] or mem://.
    #[arg(long, env = "RENDER_STORE_URL", global = true, default_value = "")]
    pub render_store_url: String,

    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the renderRef of a render (each FILE is one object's JSON; none: the empty
    /// render).
    Ref { files: Vec<PathBuf> },
    /// Write the canonical bytes of a render to standard output.
    Canonical { files: Vec<PathBuf> },
    /// Store a render; prints its renderRef.
    Put {
        /// NAMESPACE/NAME of the release.
        release: String,
        /// One object's JSON per file, in render order.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Write a stored render's canonical bytes to standard output.
    Get { release: String, render_ref: String },
    /// Print a release's history, oldest first.
    History { release: String },
    /// Record a history entry (nothing is added if the render is already recorded).
    Record {
        release: String,
        render_ref: String,
        /// A one-line description for people.
        #[arg(long, default_value = "")]
        summary: String,
        /// RFC 3339 time of the sync (default: now).
        #[arg(long)]
        synced_at: Option<String>,
    },
    /// Delete old history entries and the renders nothing needs any more.
    Gc {
        release: String,
        /// Entries to keep (unset: 10; 0 or less: no GC).
        #[arg(long, allow_negative_numbers = true)]
        keep: Option<i64>,
        /// A renderRef to keep whatever the history says (repeatable).
        #[arg(long = "protect")]
        protect: Vec<String>,
        /// Only say what would be deleted.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete everything stored for a release.
    DeleteRelease { release: String },
    /// List the keys of the store (under PREFIX).
    Ls {
        #[arg(default_value = "")]
        prefix: String,
    },
    /// Write the embedded WebAssembly component, for hosts in other languages.
    Component {
        #[arg(long)]
        out: PathBuf,
    },
    /// Show what changed between two stored renders: from AGAINST (default: the newest
    /// history entry) to RENDER.
    Diff {
        release: String,
        render: String,
        against: Option<String>,
    },
    /// Serve the observer's read-only HTTP endpoints (/history, /renders, /diff,
    /// /healthz).
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: String,
    },
    /// Store a few renders, record history, run GC and print the history, on
    /// --render-store-url or a file:// store in a temporary folder.
    Demo,
}

/// Keep this many history entries when `--keep` is not given.
pub const DEFAULT_KEEP_HISTORY: i64 = 10;

fn read_objects(files: &[PathBuf]) -> Result<Vec<Vec<u8>>> {
    files
        .iter()
        .map(|f| std::fs::read(f).with_context(|| format!("reading {}", f.display())))
        .collect()
}

fn parse_release(text: &str) -> Result<Release> {
    Release::parse(text).with_context(|| format!("{text:?} is not NAMESPACE/NAME"))
}

fn open(url: &str) -> Result<RenderStore> {
    match RenderStore::open(url)? {
        Some(store) => Ok(store),
        None => bail!(
            "no render store: pass --render-store-url (file:///abs/path or mem://) or set \
             RENDER_STORE_URL"
        ),
    }
}

pub(crate) fn print_json(value: &serde_json::Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

pub(crate) async fn print_history(
    rt: &Runtime,
    entries: &[HistoryEntry],
    as_json: bool,
) -> Result<()> {
    if as_json {
        return print_json(&history_json(rt, entries).await?);
    }
    if entries.is_empty() {
        println!("(no history)");
    }
    for e in entries {
        let time = rt.format_synced_at(e.synced_at).await?;
        println!("{time}  {}  {}", e.render_ref, e.summary);
    }
    Ok(())
}

pub(crate) fn print_gc(plan: &GcPlan, dry_run: bool, as_json: bool) -> Result<()> {
    if as_json {
        return print_json(&gc_json(plan, dry_run));
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    for key in plan.delete_history.iter().chain(&plan.delete_renders) {
        println!("{verb} {key}");
    }
    for key in &plan.ignored {
        println!("left alone (not a render or entry) {key}");
    }
    println!(
        "{verb} {} history entries and {} renders; kept {} entries and {} renders",
        plan.delete_history.len(),
        plan.delete_renders.len(),
        plan.keep_history.len(),
        plan.keep_renders.len()
    );
    Ok(())
}

fn print_diff(diff: &RenderDiff) {
    let id = |i: &render_store::ObjectId| {
        let ns = if i.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", i.namespace)
        };
        format!("{} {} {ns}{}", i.api_version, i.kind, i.name)
    };
    for a in &diff.added {
        println!("added    {}", id(a));
    }
    for r in &diff.removed {
        println!("removed  {}", id(r));
    }
    for c in &diff.changed {
        println!("changed  {}", id(&c.id));
        for line in &c.lines {
            println!("    {line}");
        }
    }
    println!(
        "{} added, {} removed, {} changed, {} unchanged",
        diff.added.len(),
        diff.removed.len(),
        diff.changed.len(),
        diff.unchanged
    );
}

pub async fn run(args: Args) -> Result<()> {
    let url = args.render_store_url.as_str();
    match args.command {
        Command::Ref { files } => {
            let render_ref = Runtime::shared()?
                .render_ref(&read_objects(&files)?)
                .await?;
            if args.json {
                print_json(&json!({ "renderRef": render_ref }))?;
            } else {
                println!("{render_ref}");
            }
        }
        Command::Canonical { files } => {
            let bytes = Runtime::shared()?.canonical(&read_objects(&files)?).await?;
            std::io::stdout().lock().write_all(&bytes)?;
        }
        Command::Put { release, files } => {
            let release = parse_release(&release)?;
            let objects = read_objects(&files)?;
            let render_ref = open(url)?.put_render(&release, &objects).await?;
            if args.json {
                print_json(&json!({ "renderRef": render_ref }))?;
            } else {
                println!("{render_ref}");
            }
        }
        Command::Get {
            release,
            render_ref,
        } => {
            let release = parse_release(&release)?;
            let bytes = open(url)?.get_render(&release, &render_ref).await?;
            std::io::stdout().lock().write_all(&bytes)?;
        }
        Command::History { release } => {
            let release = parse_release(&release)?;
            let store = open(url)?;
            let entries = store.list_history(&release).await?;
            print_history(store.runtime(), &entries, args.json).await?;
        }
        Command::Record {
            release,
            render_ref,
            summary,
            synced_at,
        } => {
            let release = parse_release(&release)?;
            let store = open(url)?;
            let synced_at = match synced_at {
                Some(text) => store.runtime().parse_synced_at(&text).await?,
                None => SyncTime::now(),
            };
            let entry = NewEntry {
                render_ref,
                synced_at,
                summary,
            };
            let added = store.record_history(&release, &entry).await?;
            if args.json {
                print_json(&json!({ "added": added }))?;
            } else if added {
                println!("recorded {}", entry.render_ref);
            } else {
                println!("already in the history: {}", entry.render_ref);
            }
        }
        Command::Gc {
            release,
            keep,
            protect,
            dry_run,
        } => {
            let release = parse_release(&release)?;
            let keep = keep.unwrap_or(DEFAULT_KEEP_HISTORY);
            let plan = open(url)?.gc(&release, keep, &protect, dry_run).await?;
            if keep <= 0 && !args.json {
                println!("keep is {keep}: GC is off, nothing deleted");
            } else {
                print_gc(&plan, dry_run, args.json)?;
            }
        }
        Command::DeleteRelease { release } => {
            let release = parse_release(&release)?;
            let deleted = open(url)?.delete_release(&release).await?;
            if args.json {
                print_json(&json!({ "deleted": deleted }))?;
            } else {
                println!("deleted {deleted} keys of {release}");
            }
        }
        Command::Ls { prefix } => {
            let keys = open(url)?.bucket().list(&prefix).await?;
            if args.json {
                print_json(&json!(keys))?;
            } else {
                let mut out = std::io::stdout().lock();
                for key in keys {
                    writeln!(out, "{key}")?;
                }
            }
        }
        Command::Component { out } => {
            std::fs::write(&out, render_store::COMPONENT)
                .with_context(|| format!("writing {}", out.display()))?;
            if !args.json {
                println!(
                    "wrote {} ({} bytes)",
                    out.display(),
                    render_store::COMPONENT.len()
                );
            } else {
                print_json(&json!({ "path": out, "bytes": render_store::COMPONENT.len() }))?;
            }
        }
        Command::Diff {
            release,
            render,
            against,
        } => {
            let release = parse_release(&release)?;
            let observer = Observer::new(Some(open(url)?))?;
            let diff = observer.diff(&release, &render, against.as_deref()).await?;
            if args.json {
                print_json(&diff_json(&diff))?;
            } else {
                print_diff(&diff);
            }
        }
        Command::Serve { listen } => {
            let observer = std::sync::Arc::new(Observer::open(url)?);
            if observer.store().is_none() {
                tracing::warn!("no render store: /history answers 503 and /diff an error");
            }
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .with_context(|| format!("listening on {listen}"))?;
            eprintln!("render-store: serving on http://{}", listener.local_addr()?);
            render_store::serve::serve(listener, observer).await?;
        }
        Command::Demo => crate::demo::run(url, args.json).await?,
    }
    Ok(())
}
