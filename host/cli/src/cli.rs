//! The commands of the CLI: argument parsing and output; the work is the library's.

use crate::input::{Format, RenderInput, read_render};
use crate::json_view::{diff_json, history_page_json};
use crate::output::{count, output_json, print_diff, print_gc, print_history, print_json};
use crate::progress::{LARGE_RENDER_BYTES, Progress, ProgressBucket, Task};
use crate::serve::ServeOptions;
use crate::terminal::escape_for_terminal as esc;
use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use render_store::bucket::messages::quote;
use render_store::controller::DEFAULT_KEEP_HISTORY;
use render_store::operation::{Operation, Output};
use render_store::trace::ReplayError;
use render_store::{
    DEFAULT_CONTEXT, Grace, Limits, NewEntry, ObjectForm, Observer, Release, RenderStore, Runtime,
    SecretValues, SyncTime,
};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The convoy render store: the content and history of every render convoy applies,
/// kept in an object store.
#[derive(Debug, Parser)]
#[command(name = "render-store", version)]
pub struct Args {
    /// Where the store is: a gocloud URL (s3://BUCKET, gs://BUCKET, azblob://CONTAINER,
    /// file:///abs/path, mem://); see README.md for the parameters.
    #[arg(long, env = "RENDER_STORE_URL", global = true, default_value = "")]
    pub render_store_url: String,

    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    pub json: bool,

    /// Show the values of Secrets in diffs and in the web pages of `serve`. By default
    /// every value of a v1 Secret's data and stringData (and inside its
    /// last-applied-configuration annotation) is shown as `***`, or `*** (before)` and
    /// `*** (after)` where it changed. `get` always writes the blob as stored.
    #[arg(long, global = true, env = "RENDER_STORE_SHOW_SECRETS")]
    pub show_secrets: bool,

    /// Show no progress on standard error (delete-release, gc and put of a large
    /// render show it when standard error is a terminal).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,

    /// Record the store operation (put, get, history, record, gc, delete-release) with
    /// every bucket call and answer into FILE, as JSON lines (TRACES.md).
    #[arg(long, global = true, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Memory cap of one sandboxed call, in MiB.
    #[arg(long, global = true, env = "RENDER_STORE_MEMORY_CAP_MIB", value_name = "MIB",
          default_value_t = Limits::DEFAULT_MEMORY_BYTES / MIB)]
    pub memory_cap_mib: usize,

    /// CPU bound of one sandboxed call, in fuel units (about one per WebAssembly
    /// instruction).
    #[arg(long, global = true, env = "RENDER_STORE_FUEL", value_name = "UNITS",
          default_value_t = Limits::DEFAULT_FUEL)]
    pub fuel: u64,

    /// Sandboxed calls that may run at once; more wait for a free place. Each place
    /// reserves about 8 GiB of address space, not memory (README.md). Default: 64 for
    /// `serve`, 1 for every other command, which makes one call at a time (a smaller
    /// pool starts faster).
    #[arg(long, global = true, env = "RENDER_STORE_MAX_CONCURRENT_CALLS", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CONCURRENT_CALLS)))]
    pub max_concurrent_calls: Option<u32>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands; each documents its own arguments (`render-store help COMMAND`).
#[derive(Debug, Subcommand)]
#[allow(missing_docs)] // the fields' meaning is each command's and flag's help text
pub enum Command {
    /// Print the renderRef of a render: JSON objects or YAML streams, from FILEs or
    /// standard input.
    Ref {
        #[command(flatten)]
        input: RenderInput,
    },
    /// Write the canonical bytes of a render to standard output.
    Canonical {
        #[command(flatten)]
        input: RenderInput,
    },
    /// The store operations (each can be recorded with --trace).
    #[command(flatten)]
    Store(StoreCommand),
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
    /// Show what changed from AGAINST (default: the newest history entry) to RENDER, a
    /// stored render, or to the render in the --local files, which is not stored (exit
    /// status then 0 when equal, 1 when different, 2 on error, as diff(1)).
    Diff {
        release: String,
        /// The stored render to show (a renderRef); not with --local.
        #[arg(required_unless_present = "local", conflicts_with = "local")]
        render: Option<String>,
        /// The render to compare with (default: the newest history entry).
        #[arg(value_name = "AGAINST", conflicts_with = "against")]
        against_ref: Option<String>,
        /// The render to compare with (default: the newest history entry).
        #[arg(long, value_name = "REF")]
        against: Option<String>,
        /// Files of a local render (JSON objects or YAML streams, `-` for standard
        /// input), compared without storing anything.
        #[arg(long, value_name = "FILE", num_args = 1..)]
        local: Vec<PathBuf>,
        /// How each --local file is read: auto, json or yaml (as for put).
        #[arg(long, value_enum, default_value_t = Format::Auto)]
        format: Format,
        /// How changed objects are shown: yaml (as `kubectl get -o yaml` shows them) or
        /// json (pretty JSON).
        #[arg(long, value_enum, default_value_t = DiffOutput::Yaml)]
        output: DiffOutput,
        /// Colour removed and added lines: auto (when standard output is a terminal),
        /// always or never.
        #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
        color: ColorChoice,
    },
    /// Serve the observer's read-only HTTP endpoints (/history, /renders, /diff,
    /// /releases, /healthz) and its web pages (/, /ui/…). Every endpoint but /healthz
    /// needs a token: without --token-file one is made into a new file only this user
    /// can read (its path is printed, and it is removed when the server stops), and a
    /// one-time login URL for a browser is printed (not with --token-file, whose
    /// standard error is often a log others read).
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: String,
        /// Time a client has to send a request's headers: seconds, or 30s, 10m, 1h.
        #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = timeout)]
        header_timeout: Duration,
        /// Time a client has to send a request's body, from its headers; then it is
        /// answered 408.
        #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = timeout)]
        body_timeout: Duration,
        /// Time a request may take, its body and waiting for a free place included;
        /// then it is answered 503.
        #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = timeout)]
        request_timeout: Duration,
        /// Time a client has to read a response once it is sent; a connection that has
        /// not read it all by then is closed. Until then the response keeps its place
        /// among --max-concurrent-requests.
        #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = timeout)]
        write_timeout: Duration,
        /// Largest response: a render or a diff's JSON over it is refused.
        #[arg(long, value_name = "BYTES",
              default_value_t = ServeOptions::DEFAULT_MAX_RESPONSE_BYTES,
              value_parser = positive)]
        max_response_bytes: usize,
        /// Largest request body on any endpoint; over it, 413.
        #[arg(long, value_name = "BYTES",
              default_value_t = ServeOptions::DEFAULT_MAX_REQUEST_BYTES,
              value_parser = positive)]
        max_request_bytes: usize,
        /// Largest body of a POST /diff (the YAML stream to preview); over it, 413.
        #[arg(long, value_name = "BYTES",
              default_value_t = ServeOptions::DEFAULT_MAX_DIFF_BODY_BYTES,
              value_parser = positive)]
        max_diff_body_bytes: usize,
        /// Requests handled at once, from their body's arrival until the client has
        /// read the answer; more wait.
        #[arg(long, value_name = "N",
              default_value_t = ServeOptions::DEFAULT_MAX_CONCURRENT_REQUESTS,
              value_parser = positive)]
        max_concurrent_requests: usize,
        /// Connections open at once; more wait to be accepted until one ends.
        #[arg(long, value_name = "N",
              default_value_t = ServeOptions::DEFAULT_MAX_CONNECTIONS,
              value_parser = positive)]
        max_connections: usize,
        /// A name (or IP address) to accept in the Host header besides localhost, the
        /// loopback addresses and the address listened on (repeatable).
        #[arg(long = "allow-host", value_name = "NAME")]
        allow_host: Vec<String>,
        /// Require `Authorization: Bearer TOKEN` on every endpoint but /healthz, with
        /// the token read from FILE, instead of a token the server makes.
        #[arg(long, value_name = "FILE", conflicts_with = "no_auth")]
        token_file: Option<PathBuf>,
        /// Ask for no token at all. Every local user of this machine (and, with a
        /// --listen address others can reach, everyone who reaches it) can then read
        /// every render, Secrets included.
        #[arg(long)]
        no_auth: bool,
    },
    /// Re-run a traced operation in the sandbox against the trace's answers alone (no
    /// store is opened) and report whether every call and the result match.
    Replay {
        /// A trace written by --trace.
        file: PathBuf,
    },
    /// Store a few renders, record history, run GC and print the history, on
    /// --render-store-url or a file:// store in a new private temporary folder, removed
    /// at the end.
    Demo,
}

/// The commands that are store operations: what `--trace` records and `replay` re-runs.
#[derive(Debug, Subcommand)]
#[allow(missing_docs)] // the fields' meaning is each command's and flag's help text
pub enum StoreCommand {
    /// Store a render; prints its renderRef.
    Put {
        /// NAMESPACE/NAME of the release.
        release: String,
        #[command(flatten)]
        input: RenderInput,
    },
    /// Write a stored render's canonical bytes to standard output: the blob as stored,
    /// Secret values included (the views for people, `diff` and `serve`, mask them).
    Get { release: String, render_ref: String },
    /// Print a release's history, oldest first; with --limit, one page of it, newest
    /// first, reading only that page's entries.
    History {
        release: String,
        /// Print at most N entries, newest first (a page; not recorded by --trace).
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        /// With --limit: only entries older than this entry key (the previous page's
        /// next-before, printed on standard error).
        #[arg(long, value_name = "KEY", requires = "limit")]
        before: Option<String>,
    },
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
        /// Never delete a render blob written less than this long ago (a sync may
        /// not have recorded its entry yet): seconds, or a number with s, m or h;
        /// 0 deletes every unreferenced blob whatever its age.
        #[arg(long, default_value = "10m", value_parser = parse_duration)]
        grace: std::time::Duration,
    },
    /// Delete everything stored for a release.
    DeleteRelease { release: String },
}

/// How `diff` shows changed objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffOutput {
    /// YAML, as `kubectl get -o yaml` shows objects.
    Yaml,
    /// Pretty JSON (Go's `MarshalIndent`, two spaces).
    Json,
}

/// Whether to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// When standard output is a terminal.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether output gets colour: `auto` asks whether standard output is a terminal.
    pub fn enabled(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Auto => std::io::stdout().is_terminal(),
            ColorChoice::Always => true,
            ColorChoice::Never => false,
        }
    }
}

const MIB: usize = 1 << 20;

/// A duration as `--grace` takes it: whole seconds, or a number followed by `s`, `m`
/// or `h`.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => {
            return Err(format!(
                "{text:?} is not a duration: use seconds, or 30s, 10m, 1h"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .map(std::time::Duration::from_secs)
        .ok_or_else(|| format!("{text:?} is not a duration: use seconds, or 30s, 10m, 1h"))
}

/// A timeout: a duration as [`parse_duration`] reads it, more than zero (a zero timeout
/// would end every connection or request at once).
fn timeout(text: &str) -> Result<std::time::Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => Err("must be more than zero".to_string()),
        d => Ok(d),
    }
}

/// The most sandboxed calls at once. Each place of the instance pool reserves two
/// linear memories of 4 GiB and a 32 MiB guard, whatever the memory cap: 4,096 places
/// are 32 TiB, a quarter of a 47-bit address space; at 16,384 the pool cannot be mapped.
const MAX_CONCURRENT_CALLS: u32 = 4_096;

fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// A release argument. A bad one is quoted as a JSON string, as every message of the
/// hosts quotes keys: a newline or quote in it cannot bend the message.
fn parse_release(text: &str) -> Result<Release> {
    Release::parse(text).with_context(|| format!("{} is not NAMESPACE/NAME", quote(text)))
}

fn open(url: &str) -> Result<RenderStore> {
    match RenderStore::open(url)? {
        Some(store) => Ok(store),
        None => bail!(
            "no render store: pass --render-store-url (s3://, gs://, azblob://, \
             file:///abs/path or mem://) or set RENDER_STORE_URL"
        ),
    }
}

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

/// The store operation a command stands for, with its arguments read and parsed.
async fn store_operation(command: StoreCommand) -> Result<Operation> {
    Ok(match command {
        StoreCommand::Put { release, input } => Operation::PutRender {
            release: parse_release(&release)?,
            objects: input.read(&*Runtime::shared()?).await?,
        },
        StoreCommand::Get {
            release,
            render_ref,
        } => Operation::GetRender {
            release: parse_release(&release)?,
            render_ref,
        },
        StoreCommand::History { release, .. } => Operation::ListHistory {
            release: parse_release(&release)?,
        },
        StoreCommand::Record {
            release,
            render_ref,
            summary,
            synced_at,
        } => {
            let synced_at = match synced_at {
                Some(text) => Runtime::shared()?.parse_synced_at(&text).await?,
                None => SyncTime::now(),
            };
            Operation::RecordHistory {
                release: parse_release(&release)?,
                entry: NewEntry {
                    render_ref,
                    synced_at,
                    summary,
                },
            }
        }
        StoreCommand::Gc {
            release,
            keep,
            protect,
            dry_run,
            grace,
        } => Operation::Gc {
            release: parse_release(&release)?,
            keep: keep.unwrap_or(DEFAULT_KEEP_HISTORY),
            protected: protect,
            dry_run,
            grace: Grace::ending_now(grace),
        },
        StoreCommand::DeleteRelease { release } => Operation::DeleteRelease {
            release: parse_release(&release)?,
        },
    })
}

/// What progress an operation shows, if any: deletes of `delete-release` and `gc`, the
/// bytes of a large render's `put`.
fn progress_task(operation: &Operation) -> Option<Task> {
    match operation {
        Operation::DeleteRelease { .. } => Some(Task::DeleteRelease),
        Operation::Gc { dry_run: false, .. } => Some(Task::Gc),
        Operation::PutRender { objects, .. } => {
            let bytes = objects.iter().map(Vec::len).sum();
            (bytes >= LARGE_RENDER_BYTES).then_some(Task::Put(bytes))
        }
        _ => None,
    }
}

async fn print_output(
    rt: &Runtime,
    operation: &Operation,
    output: &Output,
    as_json: bool,
) -> Result<()> {
    match (operation, output) {
        (_, Output::Render(bytes)) => std::io::stdout().lock().write_all(bytes)?,
        (_, Output::Entries(entries)) => print_history(rt, entries, as_json).await?,
        (Operation::Gc { keep, dry_run, .. }, Output::Plan(plan)) => {
            if *keep <= 0 && !as_json {
                println!("keep is {keep}: GC is off, nothing deleted");
            } else {
                print_gc(rt, plan, *dry_run, as_json).await?;
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
        (Operation::DeleteRelease { release }, Output::Deleted(n)) => {
            println!("deleted {} of {release}", count(*n as usize, "key", "keys"))
        }
        (_, output) => print_json(&output_json(rt, output).await?)?,
    }
    Ok(())
}

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// As asked: exit status 0.
    Done,
    /// `diff --local` found differences: exit status 1, as diff(1).
    Differs,
}

impl Args {
    /// Whether this is `diff --local`, whose errors exit with status 2 (1 means "the
    /// renders differ").
    pub fn is_preview(&self) -> bool {
        matches!(&self.command, Command::Diff { local, .. } if !local.is_empty())
    }

    /// Whether this is `serve`, the one command that runs sandboxed calls at once and
    /// needs a multi-threaded runtime and a pool of places.
    pub fn is_server(&self) -> bool {
        matches!(self.command, Command::Serve { .. })
    }
}

/// Runs the command `args` names, printing its output to standard output.
pub async fn run(args: Args) -> Result<Finish> {
    let url = args.render_store_url.as_str();
    let limits = Limits {
        memory_bytes: args
            .memory_cap_mib
            .checked_mul(MIB)
            .filter(|&b| b > 0)
            .context("--memory-cap-mib must be at least 1 and fit this machine's address space")?,
        fuel: args.fuel,
        concurrent_calls: args.max_concurrent_calls.unwrap_or(if args.is_server() {
            Limits::DEFAULT_CONCURRENT_CALLS
        } else {
            1
        }),
    };
    Runtime::init_shared(limits)?;
    let secrets = if args.show_secrets {
        SecretValues::Shown
    } else {
        SecretValues::Masked
    };
    if args.trace.is_some() && !matches!(args.command, Command::Store(_)) {
        bail!(
            "--trace records a store operation (put, get, history, record, gc, \
             delete-release); this command is not one"
        );
    }
    match args.command {
        Command::Ref { input } => {
            let rt = Runtime::shared()?;
            let render_ref = rt.render_ref(&input.read(&rt).await?).await?;
            if args.json {
                print_json(&json!({ "renderRef": render_ref }))?;
            } else {
                println!("{render_ref}");
            }
        }
        Command::Canonical { input } => {
            let rt = Runtime::shared()?;
            let bytes = rt.canonical(&input.read(&rt).await?).await?;
            std::io::stdout().lock().write_all(&bytes)?;
        }
        Command::Store(StoreCommand::History {
            release,
            limit: Some(limit),
            before,
        }) => {
            if args.trace.is_some() {
                bail!(
                    "--trace records whole store operations; a history page (--limit) is \
                     not one: trace `history` without --limit"
                );
            }
            let store = open(url)?;
            let release = parse_release(&release)?;
            let page = store
                .list_history_page(&release, limit, before.as_deref())
                .await?;
            let rt = store.runtime();
            if args.json {
                print_json(&history_page_json(rt, &page).await?)?;
            } else {
                print_history(rt, &page.entries, false).await?;
                if let Some(next) = &page.next_before {
                    // On standard error, so standard output stays one line per entry.
                    eprintln!("older entries: --before {}", esc(next));
                }
            }
        }
        Command::Store(command) => {
            let operation = store_operation(command).await?;
            let store = open(url)?;
            if let Operation::RecordHistory { release, entry } = &operation {
                require_stored(&store, release, &entry.render_ref).await?;
            }
            let progress =
                progress_task(&operation).and_then(|task| Progress::to_terminal(task, args.quiet));
            let store = match &progress {
                Some(p) => RenderStore::new(
                    store.runtime().clone(),
                    Arc::new(ProgressBucket::new(store.bucket().clone(), p.clone())),
                ),
                None => store,
            };
            let output = match &args.trace {
                Some(path) => {
                    let (output, trace) = render_store::trace::record(&store, &operation).await;
                    let trace = trace.context("writing the trace")?;
                    crate::local_file::write_private(path, trace.as_bytes())
                        .context("writing the trace")?;
                    output
                }
                None => operation.run(&store).await,
            };
            if let Some(p) = &progress {
                p.finish();
            }
            let output = output?;
            print_output(store.runtime(), &operation, &output, args.json).await?;
        }
        Command::Ls { prefix } => {
            let listed = open(url)?.bucket().list(&prefix).await?;
            let keys: Vec<String> = listed.into_iter().map(|o| o.key).collect();
            if args.json {
                print_json(&json!(keys))?;
            } else {
                let mut out = std::io::stdout().lock();
                for key in keys {
                    writeln!(out, "{}", esc(&key))?;
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
            against_ref,
            against,
            local,
            format,
            output,
            color,
        } => {
            let release = parse_release(&release)?;
            let observer = Observer::new(Some(open(url)?))?.with_secrets(secrets);
            let form = match output {
                DiffOutput::Yaml => ObjectForm::Yaml,
                DiffOutput::Json => ObjectForm::Json,
            };
            let against = against.or(against_ref);
            let diff = match render {
                Some(render) => {
                    observer
                        .diff(&release, &render, against.as_deref(), form, DEFAULT_CONTEXT)
                        .await?
                }
                None => {
                    let rt = observer.runtime();
                    let objects = read_render(rt, &local, format, rt.limits().memory_bytes).await?;
                    let canonical = rt.canonical(&objects).await?;
                    observer
                        .diff_local(
                            &release,
                            &canonical,
                            against.as_deref(),
                            form,
                            DEFAULT_CONTEXT,
                        )
                        .await?
                }
            };
            if args.json {
                print_json(&diff_json(&diff))?;
            } else {
                print_diff(&diff, color.enabled())?;
            }
            let same = diff.added.is_empty() && diff.removed.is_empty() && diff.changed.is_empty();
            if !local.is_empty() && !same {
                return Ok(Finish::Differs);
            }
        }
        Command::Serve {
            listen,
            header_timeout,
            body_timeout,
            request_timeout,
            write_timeout,
            max_response_bytes,
            max_request_bytes,
            max_diff_body_bytes,
            max_concurrent_requests,
            max_connections,
            allow_host,
            token_file,
            no_auth,
        } => {
            match crate::serve::raise_open_file_limit() {
                Ok(Some((from, to))) => {
                    tracing::debug!("raised the open-file limit from {from} to {to}")
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(
                    "could not raise the open-file limit to its hard limit ({e}): the                      server may run out of descriptors with many connections"
                ),
            }
            // The token's file, when the server makes it: removed when this is dropped,
            // after the server stopped.
            let mut made = None;
            let token = match (&token_file, no_auth) {
                (_, true) => None,
                (Some(path), false) => {
                    Some(crate::serve::read_token_file(path).map_err(anyhow::Error::msg)?)
                }
                (None, false) => {
                    let token = crate::serve::random_secret().map_err(anyhow::Error::msg)?;
                    made =
                        Some(crate::serve::TokenFile::create(&token).map_err(anyhow::Error::msg)?);
                    Some(token)
                }
            };
            // Only for a token the server made: then standard error is the terminal of
            // whoever started it. With --token-file it is usually a log (a pod's) that
            // people without the token read, and a browser goes through a proxy that
            // adds the header.
            let login_code = match &made {
                Some(_) => Some(crate::serve::random_secret().map_err(anyhow::Error::msg)?),
                None => None,
            };
            let options = ServeOptions {
                header_timeout,
                body_timeout,
                request_timeout,
                write_timeout,
                max_response_bytes,
                max_request_bytes,
                max_diff_body_bytes,
                max_concurrent_requests,
                max_connections,
                allowed_hosts: allow_host,
                token,
                login_code: login_code.clone(),
            };
            options.check().map_err(|m| anyhow::anyhow!("serve: {m}"))?;
            let observer = std::sync::Arc::new(Observer::open(url)?.with_secrets(secrets));
            if observer.store().is_none() {
                tracing::warn!("no render store: /history answers 503 and /diff an error");
            }
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .with_context(|| format!("listening on {listen}"))?;
            let addr = listener.local_addr()?;
            let stop = crate::serve::stop_signal().context("handling SIGINT and SIGTERM")?;
            if let Some(made) = &made {
                eprintln!(
                    "render-store: the token is in {}: send it as Authorization: Bearer \
                     TOKEN; the file is removed when the server stops",
                    made.path().display()
                );
            }
            if let Some(code) = &login_code {
                // A browser on this machine reaches a server listening on every
                // address through the loopback one.
                let mut at = addr;
                if at.ip().is_unspecified() {
                    at.set_ip(match at.ip() {
                        std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                        std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
                    });
                }
                eprintln!(
                    "render-store: for the web pages, open http://{at}/login?code={code} \
                     (it works once, within {} minutes)",
                    ServeOptions::LOGIN_CODE_LIFETIME.as_secs() / 60
                );
            }
            if no_auth {
                eprintln!(
                    "render-store: --no-auth: no token is asked for; every local user can \
                     read every render, Secrets included"
                );
            }
            eprintln!("render-store: serving on http://{addr}");
            crate::serve::serve_until(listener, observer, options, stop).await?;
            drop(made);
            eprintln!("render-store: stopped");
        }
        Command::Replay { file } => {
            let text = crate::local_file::read_regular(&file, limits.memory_bytes as u64)
                .context("reading the trace")?;
            let report = match Runtime::shared()?.replay(&text).await {
                Ok(report) => report,
                Err(e @ ReplayError::Trace { .. }) => {
                    return Err(e).with_context(|| format!("reading {}", file.display()));
                }
                // The component could not report: nothing was compared, so it fails.
                Err(e @ ReplayError::Stopped(_)) => return Err(e.into()),
            };
            // Both forms come from the component: every host prints the same report.
            if args.json {
                print_json(&serde_json::from_str(&report.json)?)?;
            } else {
                print!("{}", report.text);
            }
            if !report.matches {
                bail!("the replay does not match the trace {}", file.display());
            }
        }
        Command::Demo => crate::demo::run(url, args.json).await?,
    }
    Ok(Finish::Done)
}
