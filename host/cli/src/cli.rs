//! The commands of the CLI: argument parsing and output; the work is the library's.

use crate::failure;
use crate::input::{Format, Render, RenderInput, read_render};
use crate::json_view::{diff_json, history_page_json};
use crate::names;
use crate::output::{
    count, output_json, print_diff, print_gc, print_history, print_history_wide, print_json,
};
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
    DEFAULT_CONTEXT, Grace, Keyring, Limits, NewEntry, ObjectForm, Observer, Release, RenderStore,
    Runtime, SecretValues, SyncTime,
};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The help section of the options every command takes.
const GLOBAL: &str = "Global options";

/// What `--version` prints: the CLI's version, and the versions of the interfaces it
/// speaks (the component's WIT package, the C ABI of the library).
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{} (component interface {})",
        env!("CARGO_PKG_VERSION"),
        render_store::WIT_PACKAGE
    )
});

/// Examples for the top-level help.
const EXAMPLES: &str = "\
Examples:
  # Store a render from helm and record it as synced
  helm template app ./chart | render-store --render-store-url file:///var/renders put prod/app
  render-store record prod/app d4b0c1e2 --summary v2   # a renderRef, or 8+ of its hex digits
  # What changed between the two newest syncs, and what a new render would change
  render-store diff prod/app @1 @0
  helm template app ./chart | render-store diff prod/app --local -
  # History, old entries collected, and a look at the web pages
  render-store history -n prod app
  render-store gc prod/app --keep 5 --dry-run
  render-store serve

Set RENDER_STORE_URL once instead of --render-store-url. `render-store help COMMAND` tells more.";

/// The convoy render store: the content and history of every render convoy applies,
/// kept in an object store.
#[derive(Debug, Parser)]
#[command(name = "render-store", after_help = EXAMPLES)]
pub struct Args {
    /// Where the store is: a gocloud URL (s3://BUCKET, gs://BUCKET, azblob://CONTAINER,
    /// file:///abs/path, mem://); see README.md for the parameters.
    #[arg(long, env = "RENDER_STORE_URL", global = true, default_value = "",
          help_heading = GLOBAL)]
    pub render_store_url: String,

    /// The namespace of the release, for commands given NAME alone (as kubectl's -n).
    #[arg(long, short = 'n', global = true, value_name = "NAMESPACE", help_heading = GLOBAL)]
    pub namespace: Option<String>,

    /// Output format: text (for people), json (for programs; errors too, as a JSON
    /// object on standard error), yaml (`get`: the render as YAML documents), or wide
    /// (`history`: more columns).
    #[arg(long, short = 'o', global = true, value_enum, default_value_t = OutputFormat::Text,
          help_heading = GLOBAL)]
    pub output: OutputFormat,

    /// The same as -o json.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,

    /// Show the values of Secrets in diffs and in the web pages of `serve`. By default
    /// every value of a v1 Secret's data and stringData (and inside its
    /// last-applied-configuration annotation) is shown as `***`, or `*** (before)` and
    /// `*** (after)` where it changed. `get` always writes the blob as stored.
    #[arg(long, global = true, env = "RENDER_STORE_SHOW_SECRETS", help_heading = GLOBAL)]
    pub show_secrets: bool,

    /// Show no progress on standard error (delete-release, gc and put of a large
    /// render show it when standard error is a terminal).
    #[arg(long, short = 'q', global = true, help_heading = GLOBAL)]
    pub quiet: bool,

    /// Encrypt the store's render blobs with the keyring in FILE (lines `ID KEY`, KEY
    /// the base64 of 32 random bytes; the first key seals new blobs, any key reads).
    /// FILE must be readable by its owner alone. Stores without it stay plaintext;
    /// plaintext blobs still read with it.
    #[arg(long, global = true, env = "RENDER_STORE_ENCRYPTION_KEYS", value_name = "FILE",
          help_heading = GLOBAL)]
    pub encryption_keys: Option<PathBuf>,

    /// Require every render blob to be sealed under a key of --encryption-keys: a
    /// plaintext blob is refused as corrupt (get, diff, serve; verify reports it) and
    /// rewritten sealed by put, so a writer of the bucket without the key cannot plant
    /// a render a rollback would apply. Needs --encryption-keys. Seal a store's old
    /// plaintext blobs (rekey) before turning it on: rekey then stops at them.
    #[arg(long, global = true, env = "RENDER_STORE_ENCRYPTION_REQUIRED", help_heading = GLOBAL)]
    pub encryption_required: bool,

    /// Memory cap of one sandboxed call, in MiB.
    #[arg(long, global = true, env = "RENDER_STORE_MEMORY_CAP_MIB", value_name = "MIB",
          default_value_t = Limits::DEFAULT_MEMORY_BYTES / MIB, help_heading = GLOBAL)]
    pub memory_cap_mib: usize,

    /// CPU bound of one sandboxed call, in fuel units (about one per WebAssembly
    /// instruction).
    #[arg(long, global = true, env = "RENDER_STORE_FUEL", value_name = "UNITS",
          default_value_t = Limits::DEFAULT_FUEL, help_heading = GLOBAL)]
    pub fuel: u64,

    /// The most the command may take (reading its input and every store call
    /// included), as 30s, 2m or seconds; 0: no limit. A bucket request still waiting
    /// then is abandoned and the command fails (kind `deadline`), leaving the store as
    /// a crash at that moment would: nothing half-written. Not for `serve`, whose
    /// requests --request-timeout bounds. Cloud requests also end on their own (the
    /// URL's timeout, retries, retry_timeout; README.md).
    #[arg(long, global = true, env = "RENDER_STORE_TIMEOUT", value_name = "DURATION",
          default_value = "2m", value_parser = parse_duration, help_heading = GLOBAL)]
    pub timeout: std::time::Duration,

    /// Sandboxed calls that may run at once; more wait for a free place. Each place
    /// reserves about 8 GiB of address space, not memory (README.md). Default: 64 for
    /// `serve`, 1 for every other command, which makes one call at a time (a smaller
    /// pool starts faster).
    #[arg(long, global = true, env = "RENDER_STORE_MAX_CONCURRENT_CALLS", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CONCURRENT_CALLS)), help_heading = GLOBAL)]
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
    #[command(
        after_help = "Examples:\n  helm template app ./chart | render-store ref\n  render-store ref deploy.yaml extra.json"
    )]
    Ref {
        #[command(flatten)]
        input: RenderInput,
    },
    /// Write the canonical bytes of a render to standard output (any JSON objects: no
    /// Kubernetes rule is applied).
    #[command(after_help = "Example:\n  render-store canonical deploy.yaml | sha256sum")]
    Canonical {
        #[command(flatten)]
        input: RenderInput,
    },
    /// The store operations (each can be recorded with its --trace).
    #[command(flatten)]
    Store(StoreCommand),
    /// List the keys of the store (under PREFIX).
    #[command(after_help = "Example:\n  render-store ls prod/app/history/")]
    Ls {
        /// Only keys that start with this text (`NAMESPACE/NAME/` for one release).
        #[arg(default_value = "")]
        prefix: String,
    },
    /// List the releases of the store (or of -n NAMESPACE), each with its number of
    /// history entries and its newest entry's time and summary. Releases are found with
    /// delimiter listings (one of the store, one of each namespace), and each release
    /// costs one listing of its history and one read of its newest entry, many at once.
    /// A folder that cannot be listed makes the list partial: it is named on standard
    /// error and the exit status is 1.
    #[command(
        after_help = "Examples:\n  render-store releases\n  render-store releases -n prod -o json\n  render-store releases --limit 100 --after prod/web"
    )]
    Releases {
        /// Print at most N releases (a page; the next page's --after goes to standard
        /// error, nextAfter with -o json).
        #[arg(long, value_name = "N", value_parser = positive)]
        limit: Option<usize>,
        /// Only releases after this one, by namespace then name (the previous page's
        /// last).
        #[arg(long, value_name = "NAMESPACE/NAME")]
        after: Option<String>,
    },
    /// Write the embedded WebAssembly component, for hosts in other languages.
    #[command(after_help = "Example:\n  render-store component --out render-store.wasm")]
    Component {
        /// The file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Read every render blob and history entry of a release (or of the whole store)
    /// and report each corrupt blob or entry, each entry whose render is not stored and
    /// each key the render store did not make, with what to do; exit status 1 if any.
    #[command(
        after_help = "Examples:\n  render-store verify prod/app\n  render-store verify -o json"
    )]
    Verify {
        /// NAMESPACE/NAME of the release (or NAME with -n); none: every release.
        release: Option<String>,
    },
    /// Delete one history entry of a release, named by its place (@N) or its key: an
    /// entry whose body does not read, or whose render is gone, as `verify` reports.
    /// Nothing else is deleted; the render it named stays until GC finds nothing needs it.
    #[command(
        name = "delete-entry",
        after_help = "Examples:\n  render-store delete-entry prod/app @3 --dry-run\n  render-store delete-entry prod/app KEY      (the key `render-store verify prod/app` printed)"
    )]
    DeleteEntry {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        /// The entry: @N (the N-th newest, @0 the newest) or its whole key.
        entry: String,
        /// Say what would be deleted, and delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Seal every render blob of a release (or of every release, --all) that is not
    /// sealed under the first key of --encryption-keys under it: plaintext blobs of a
    /// store where encryption was turned on, and blobs of an older key. Each blob is
    /// read, verified and replaced atomically, so a crash at any point leaves every
    /// blob readable; run it again to finish. Remove an old key from the keyring only
    /// after a rekey of every release.
    #[command(
        after_help = "Examples:\n  render-store rekey prod/app --encryption-keys /etc/render-store/keys\n  RENDER_STORE_ENCRYPTION_KEYS=/etc/render-store/keys render-store rekey --all"
    )]
    Rekey {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        release: Option<String>,
        /// Every release of the store.
        #[arg(long)]
        all: bool,
    },
    /// Write a shell completion script to standard output.
    #[command(
        after_help = "Examples:\n  render-store completion bash > /etc/bash_completion.d/render-store\n  render-store completion zsh > \"${fpath[1]}/_render-store\""
    )]
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Write the manual page (roff) to standard output.
    #[command(
        after_help = "Example:\n  render-store man > /usr/local/share/man/man1/render-store.1"
    )]
    Man,
    /// Show what changed from the render FROM to the render TO (old, then new, as
    /// diff(1) and git take them), or from a stored render to the render in the --local
    /// files, which is not stored. A render is named by its renderRef, a unique prefix
    /// of it (8 hex digits or more) or @N, the N-th newest history entry (@0 the
    /// newest). Without TO, the newest entry; without FROM, the one before it: `diff
    /// prod/app` is the last sync's changes, `diff prod/app @3` what changed since @3.
    /// Exit status 0 when the renders are equal, 1 when they differ, 2 on error, as
    /// diff(1) and kubectl diff.
    #[command(
        after_help = "Examples:\n  render-store diff prod/app                        # the last sync's changes (@1 to @0)\n  render-store diff prod/app @3                     # everything since @3\n  render-store diff prod/app 4f1c2a9e d4b0c1e2\n  helm template app ./chart | render-store diff prod/app --local -\n  render-store diff prod/app --local deploy.yaml --against @3"
    )]
    Diff {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        /// The old render (default: @1, the entry before the newest).
        #[arg(conflicts_with = "local")]
        from: Option<String>,
        /// The new render (default: @0, the newest entry).
        #[arg(conflicts_with = "local")]
        to: Option<String>,
        /// With --local: the stored render to compare the files with (default: @0, the
        /// newest history entry).
        #[arg(long, value_name = "REF", requires = "local")]
        against: Option<String>,
        /// Files of a local render (JSON objects or YAML streams, `-` for standard
        /// input), compared without storing anything.
        #[arg(long, value_name = "FILE", num_args = 1..)]
        local: Vec<PathBuf>,
        /// How each --local file is read: auto, json or yaml (as for put).
        #[arg(long, value_enum, default_value_t = Format::Auto)]
        format: Format,
        /// Take --local files that hold no object (the diff then removes everything).
        #[arg(long, requires = "local")]
        allow_empty: bool,
        /// Refuse --local objects without apiVersion, kind or metadata.name (as put).
        #[arg(long, env = "RENDER_STORE_VALIDATE", default_value_t = true,
              action = clap::ArgAction::Set, value_name = "BOOL")]
        validate: bool,
        /// How changed objects are written: yaml (as `kubectl get -o yaml` shows them) or
        /// json (pretty JSON).
        #[arg(long, value_enum, default_value_t = DiffOutput::Yaml)]
        form: DiffOutput,
        /// Colour removed and added lines: auto (when standard output is a terminal),
        /// always or never.
        #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
        color: ColorChoice,
    },
    /// Serve the observer's read-only HTTP endpoints (/history, /renders, /diff,
    /// /releases, /healthz) and its web pages (/, /ui/…). Every endpoint but /healthz
    /// needs a token: without --token-file one is made into a new file only this user
    /// can read, with a login file beside it that logs a browser in (both paths are
    /// printed; both are removed when the server stops). A browser can also log in at
    /// /login by pasting the token.
    #[command(
        after_help = "Examples:\n  render-store serve                      # prints a login file to open in a browser\n  render-store serve --listen 0.0.0.0:8080 --token-file /run/secrets/token"
    )]
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
        /// Render bytes the requests that read renders (render pages, diffs, previews,
        /// raw renders) may hold at once; each reserves twice the stored size of what it
        /// reads, and one that finds no room within 10 s is answered 503 with
        /// Retry-After.
        #[arg(long, value_name = "BYTES",
              default_value_t = ServeOptions::DEFAULT_MAX_RENDER_BYTES_IN_FLIGHT,
              value_parser = positive)]
        max_render_bytes_in_flight: usize,
        /// Connections whose client showed the token open at once; another such client
        /// waits for a place, within its request timeout.
        #[arg(long, value_name = "N",
              default_value_t = ServeOptions::DEFAULT_MAX_CONNECTIONS,
              value_parser = positive)]
        max_connections: usize,
        /// Connections whose client has shown no token (new ones, probes, those
        /// answered 401) open at once; a new one past this closes the oldest of them.
        #[arg(long, value_name = "N",
              default_value_t = ServeOptions::DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS,
              value_parser = positive)]
        max_unauthenticated_connections: usize,
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
    #[command(
        after_help = "Example:\n  render-store gc prod/app --dry-run --trace gc.jsonl && render-store replay gc.jsonl"
    )]
    Replay {
        /// A trace written by --trace.
        file: PathBuf,
    },
    /// The main job on three revisions of a real manifest: store, record, history,
    /// diff, diff --local and GC, then the commands to try next; on --render-store-url or
    /// a file:// store in a new private temporary folder, removed at the end.
    #[command(after_help = "Example:\n  render-store demo")]
    Demo,
}

/// The commands that are store operations: what `--trace` records and `replay` re-runs.
#[derive(Debug, Subcommand)]
#[allow(missing_docs)] // the fields' meaning is each command's and flag's help text
pub enum StoreCommand {
    /// Store a render; prints its renderRef. Input that holds no object is refused
    /// (unless --allow-empty), and so is an object without apiVersion, kind or
    /// metadata.name.
    #[command(
        after_help = "Examples:\n  helm template app ./chart | render-store put prod/app\n  render-store put -n prod app deploy.yaml config.json"
    )]
    Put {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        #[command(flatten)]
        trace: TraceOption,
        #[command(flatten)]
        input: RenderInput,
    },
    /// Write a stored render to standard output: its canonical bytes (JSON lines), the
    /// blob as stored, Secret values included; or with -o yaml the objects as YAML
    /// documents, Secret values masked unless --show-secrets.
    #[command(
        after_help = "Examples:\n  render-store get prod/app @0 -o yaml\n  render-store get prod/app d4b0c1e2 > render.jsonl"
    )]
    Get {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        #[command(flatten)]
        trace: TraceOption,
        /// The render: its renderRef, a unique prefix (8 hex digits or more) or @N, the
        /// N-th newest history entry.
        render_ref: String,
    },
    /// Print a release's history, oldest first; with --limit, one page of it, newest
    /// first, reading only that page's entries.
    #[command(
        after_help = "Examples:\n  render-store history prod/app\n  render-store history prod/app --limit 20 -o json"
    )]
    History {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        #[command(flatten)]
        trace: TraceOption,
        /// Print at most N entries, newest first (a page; not recorded by --trace).
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        /// With --limit: only entries older than this entry key (the previous page's
        /// next-before, printed on standard error).
        #[arg(long, value_name = "KEY", requires = "limit")]
        before: Option<String>,
    },
    /// Record a history entry (nothing is added if the render is already recorded).
    /// The render must be stored first.
    #[command(
        after_help = "Example:\n  render-store record prod/app d4b0c1e2 --summary 'chart 1.4.2' --synced-at 2026-05-01T12:00:00Z"
    )]
    Record {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        #[command(flatten)]
        trace: TraceOption,
        /// The stored render: its renderRef or a unique prefix (8 hex digits or more).
        render_ref: String,
        /// A one-line description for people.
        #[arg(long, default_value = "")]
        summary: String,
        /// RFC 3339 time of the sync (default: now).
        #[arg(long)]
        synced_at: Option<String>,
    },
    /// Delete old history entries and the renders nothing needs any more.
    #[command(
        after_help = "Examples:\n  render-store gc prod/app --keep 5 --dry-run\n  render-store gc prod/app --keep 5 --protect @0"
    )]
    Gc {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        #[command(flatten)]
        trace: TraceOption,
        /// Entries to keep (unset: 10; 0 or less: no GC). Entries dated more than 5
        /// minutes after now, or whose render is not stored, do not count and are
        /// never deleted: gc lists them and says what to do.
        #[arg(long, allow_negative_numbers = true)]
        keep: Option<i64>,
        /// A render to keep whatever the history says (repeatable): a renderRef, a
        /// unique prefix or @N.
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
    /// Delete everything stored for a release. A release with nothing stored is not an
    /// error (a finalizer may run twice): it says so and exits 0.
    #[command(
        after_help = "Examples:\n  render-store delete-release prod/app --dry-run\n  render-store delete-release prod/app"
    )]
    DeleteRelease {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        #[command(flatten)]
        trace: TraceOption,
        /// Only list the keys that would be deleted.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `--trace FILE`: taken by the store operations alone, the ones a trace can record.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TraceOption {
    /// Record this operation with every bucket call and answer into FILE, as JSON lines
    /// (TRACES.md); `render-store replay FILE` re-runs it.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

impl StoreCommand {
    /// The file `--trace` names, if given.
    pub fn trace(&self) -> Option<&PathBuf> {
        match self {
            StoreCommand::Put { trace, .. }
            | StoreCommand::Get { trace, .. }
            | StoreCommand::History { trace, .. }
            | StoreCommand::Record { trace, .. }
            | StoreCommand::Gc { trace, .. }
            | StoreCommand::DeleteRelease { trace, .. } => trace.trace.as_ref(),
        }
    }
}

/// The format of what a command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Lines for people.
    Text,
    /// JSON for programs.
    Json,
    /// YAML documents (`get`).
    Yaml,
    /// Lines for people with more columns, under a header (`history`: each entry's
    /// position and the size of its render blob).
    Wide,
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
    /// Whether output gets colour: `auto` asks whether standard output is a terminal
    /// and whether `NO_COLOR` is unset or empty (no-color.org's convention).
    pub fn enabled(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Auto => std::io::stdout().is_terminal() && !no_color(),
            ColorChoice::Always => true,
            ColorChoice::Never => false,
        }
    }
}

/// Whether `NO_COLOR` asks for no colour: set to anything but the empty string.
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

const MIB: usize = 1 << 20;

/// A duration as `--grace` takes it: whole seconds, or humantime's form (`30s`, `10m`,
/// `1h30m`, `2h 15m`).
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u64>()
            .map(std::time::Duration::from_secs)
            .map_err(|e| format!("{text:?} is not a duration: {e}"));
    }
    humantime::parse_duration(text)
        .map_err(|e| format!("{text:?} is not a duration ({e}): use seconds, or 30s, 10m, 1h30m"))
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

/// A release argument: `NAMESPACE/NAME`, or `NAME` with `-n NAMESPACE`. A bad one is
/// quoted as a JSON string, as every message of the hosts quotes keys: a newline or
/// quote in it cannot bend the message.
fn parse_release(text: &str, namespace: Option<&str>) -> Result<Release> {
    let joined;
    let text = match namespace {
        Some(ns) if !text.contains('/') => {
            joined = format!("{ns}/{text}");
            joined.as_str()
        }
        Some(ns) if !text.starts_with(&format!("{ns}/")) => bail!(
            "{} names another namespace than -n {}: give NAME alone with -n",
            quote(text),
            quote(ns)
        ),
        _ => text,
    };
    // The sentence every host writes (tests/vectors/messages.json).
    Release::parse(text).with_context(|| format!("{} is not NAMESPACE/NAME", quote(text)))
}

/// The keyring the global flags name, and whether it is required.
#[derive(Debug, Clone, Copy)]
struct Keys<'a> {
    file: Option<&'a Path>,
    required: bool,
}

/// `store`, encrypted with the keyring file `keys` names when one is given.
async fn with_keys(store: RenderStore, keys: Keys<'_>) -> Result<RenderStore> {
    let store = match keys.file {
        None => store,
        Some(path) => {
            let keyring = Keyring::from_file(store.runtime(), path).await?;
            store.with_keyring(keyring)
        }
    };
    Ok(store.with_encryption_required(keys.required)?)
}

async fn open(url: &str, keys: Keys<'_>) -> Result<RenderStore> {
    match RenderStore::open(url)? {
        Some(store) => with_keys(store, keys).await,
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
        (_, Output::Entries(entries)) => print_history(rt, entries, as_json).await?,
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

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// As asked: exit status 0.
    Done,
    /// `diff` found differences: exit status 1, as diff(1).
    Differs,
}

impl Args {
    /// Parses the command line, with `--version` saying which component interface
    /// this build speaks.
    pub fn parse_args() -> Self {
        use clap::{CommandFactory, FromArgMatches};
        let matches = Self::command().version(VERSION.as_str()).get_matches();
        Self::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }

    /// Whether this is `diff`, whose errors exit with status 2 (1 means "the renders
    /// differ").
    pub fn is_diff(&self) -> bool {
        matches!(&self.command, Command::Diff { .. })
    }

    /// Whether this is `serve`, the one command that runs sandboxed calls at once and
    /// needs a multi-threaded runtime and a pool of places.
    pub fn is_server(&self) -> bool {
        matches!(self.command, Command::Serve { .. })
    }

    /// Whether this is `releases`, which reads many releases at once (a fleet page's
    /// newest entries, each read in a sandboxed call of its own).
    pub fn is_fleet(&self) -> bool {
        matches!(self.command, Command::Releases { .. })
    }

    /// The output format asked for: `--json` is `-o json`.
    pub fn format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else {
            self.output
        }
    }
}

/// The command tree with the version `--version` prints, for completion scripts and
/// the manual page.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    Args::command().version(VERSION.as_str())
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

/// `history` when an entry does not read: every entry read alone, the bad ones shown as
/// such, exit status 1 at the end.
async fn history_despite_bad_entries(store: &RenderStore, release: &Release) -> Result<Finish> {
    let rt = store.runtime();
    let mut bad = 0;
    for (key, entry) in crate::verify::history_entry_by_entry(store, release).await? {
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
    Err(failure::Refusal {
        kind: "corrupt",
        message: format!("{release} has corrupt history entries"),
    }
    .into())
}

/// How each side of a diff is named in its header: the renderRef, with its place in the
/// history (counted in the listing), its newest entry's time and summary when it has
/// one. Only those entries are read (one read each).
async fn describe_sides(
    store: &RenderStore,
    release: &Release,
    history: &[names::ListedEntry],
    refs: [Option<&String>; 2],
) -> Result<[Option<String>; 2]> {
    let rt = store.runtime();
    let found: Vec<Option<(usize, &names::ListedEntry)>> = refs
        .iter()
        .map(|r| {
            let r = (*r)?;
            history
                .iter()
                .rev()
                .enumerate()
                .find(|(_, e)| &e.render_ref == r)
        })
        .collect();
    let mut keys: Vec<String> = found.iter().flatten().map(|(_, e)| e.key.clone()).collect();
    keys.dedup();
    let read = store.read_history_entries(release, &keys).await?;
    let summaries: std::collections::HashMap<&String, Result<&str, &str>> = keys
        .iter()
        .zip(&read)
        .map(|(k, r)| {
            let summary = match r {
                render_store::EntryRead::Entry(e) => Ok(e.summary.as_str()),
                render_store::EntryRead::Corrupt(m) => Err(m.as_str()),
                render_store::EntryRead::Gone => Ok(""),
            };
            (k, summary)
        })
        .collect();
    let mut out = [None, None];
    for ((slot, r), found) in out.iter_mut().zip(refs).zip(found) {
        let Some(r) = r else { continue };
        *slot = Some(match found {
            Some((n, entry)) => {
                let time = rt.format_synced_at(entry.synced_at).await?;
                let summary = match summaries.get(&entry.key) {
                    Some(Ok("")) | None => String::new(),
                    Some(Ok(summary)) => format!(", {}", quote(summary)),
                    Some(Err(_)) => ", its entry does not read".to_string(),
                };
                format!("{r} (@{n}, synced {time}{summary})")
            }
            None => format!("{r} (not in the history)"),
        });
    }
    Ok(out)
}

/// Runs the command `args` names, printing its output to standard output.
pub async fn run(args: Args) -> Result<Finish> {
    let url = args.render_store_url.as_str();
    let keys = Keys {
        file: args.encryption_keys.as_deref(),
        required: args.encryption_required,
    };
    // Before anything is read, whichever command: the flag promises what only a
    // keyring can keep.
    if keys.required && keys.file.is_none() {
        bail!(
            "--encryption-required (RENDER_STORE_ENCRYPTION_REQUIRED) needs a keyring: every \
             render blob must open under one of its keys; give --encryption-keys FILE or set \
             RENDER_STORE_ENCRYPTION_KEYS"
        );
    }
    let format = args.format();
    let as_json = format == OutputFormat::Json;
    let namespace = args.namespace.as_deref();
    let limits = Limits {
        memory_bytes: args
            .memory_cap_mib
            .checked_mul(MIB)
            .filter(|&b| b > 0)
            .context("--memory-cap-mib must be at least 1 and fit this machine's address space")?,
        fuel: args.fuel,
        concurrent_calls: args.max_concurrent_calls.unwrap_or(if args.is_server() {
            Limits::DEFAULT_CONCURRENT_CALLS
        } else if args.is_fleet() {
            render_store::fleet::FLEET_CONCURRENCY as u32
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
    let trace = match &args.command {
        Command::Store(command) => command.trace().cloned(),
        _ => None,
    };
    if format == OutputFormat::Yaml
        && !matches!(args.command, Command::Store(StoreCommand::Get { .. }))
    {
        bail!("-o yaml is for `get` (the render as YAML documents); use -o json or -o text");
    }
    if format == OutputFormat::Wide {
        match &args.command {
            Command::Store(StoreCommand::History { limit: None, .. }) => {}
            Command::Store(StoreCommand::History { .. }) => bail!(
                "-o wide shows each entry's position, counted over the whole history: \
                 leave out --limit, or use -o text or -o json for a page"
            ),
            _ => bail!("-o wide is for `history` (positions and sizes); use -o text or -o json"),
        }
    }
    match args.command {
        Command::Ref { input } => {
            let rt = Runtime::shared()?;
            let mut render = input.read(&rt).await?;
            let render_ref = rt
                .render_ref_in(&mut render.objects)
                .await
                .map_err(|e| render.name_input(e))?;
            if as_json {
                print_json(&json!({ "renderRef": render_ref }))?;
            } else {
                println!("{render_ref}");
            }
        }
        Command::Canonical { input } => {
            let rt = Runtime::shared()?;
            let mut render = input.read_unchecked(&rt).await?;
            let bytes = rt
                .canonical_in(&mut render.objects)
                .await
                .map_err(|e| render.name_input(e))?;
            std::io::stdout().lock().write_all(&bytes)?;
        }
        Command::Store(StoreCommand::History {
            release,
            limit: Some(limit),
            before,
            ..
        }) => {
            if trace.is_some() {
                bail!(
                    "--trace records whole store operations; a history page (--limit) is \
                     not one: trace `history` without --limit"
                );
            }
            let store = open(url, keys).await?;
            let release = parse_release(&release, namespace)?;
            let page = store
                .list_history_page(&release, limit, before.as_deref())
                .await?;
            // The page's own listing says the release exists when it found an entry;
            // only an empty one needs the check (one bounded call).
            if page.entries.is_empty() && page.next_before.is_none() {
                names::require_release(&store, &release).await?;
            }
            let rt = store.runtime();
            if as_json {
                print_json(&history_page_json(rt, &page).await?)?;
            } else {
                print_history(rt, &page.entries, false).await?;
                if let Some(next) = &page.next_before {
                    // On standard error, so standard output stays one line per entry.
                    eprintln!("older entries: --before {}", esc(next));
                }
            }
        }
        Command::Store(StoreCommand::DeleteRelease {
            release,
            dry_run: true,
            ..
        }) => {
            if trace.is_some() {
                bail!("--trace records what delete-release deletes; --dry-run deletes nothing");
            }
            let store = open(url, keys).await?;
            let release = parse_release(&release, namespace)?;
            let prefix = store.runtime().release_prefix(&release).await?;
            let keys: Vec<String> = store
                .bucket()
                .list(&prefix)
                .await?
                .into_iter()
                .map(|o| o.key)
                .collect();
            if as_json {
                print_json(&json!({ "dryRun": true, "keys": keys }))?;
            } else if keys.is_empty() {
                println!("nothing to delete: no key is stored for {release}");
            } else {
                for key in &keys {
                    println!("would delete {}", esc(key));
                }
                println!(
                    "would delete {} of {release}",
                    count(keys.len(), "key", "keys")
                );
            }
        }
        Command::Store(command) => {
            let store = open(url, keys).await?;
            let (mut operation, mut render) = store_operation(command, &store, namespace).await?;
            let progress = progress_task(&operation, render.as_ref())
                .and_then(|task| Progress::to_terminal(task, args.quiet));
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
                    if let (Operation::PutRender { objects, .. }, Some(render)) =
                        (&mut *operation, render)
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
                    return history_despite_bad_entries(&store, release).await;
                }
                (Err(e), _, _) => return Err(e.into()),
            };
            if let (Operation::PutRender { release, .. }, Output::RenderRef(r), Some(render)) =
                (&operation, &output, &mut render)
            {
                repair_blob(&store, release, &mut render.objects, r).await?;
            }
            match (&operation, &output) {
                (Operation::ListHistory { release }, Output::Entries(entries))
                    if format == OutputFormat::Wide =>
                {
                    print_history_wide(&store, release, entries).await?
                }
                (Operation::RecordHistory { release, entry }, Output::Added(false))
                    if format == OutputFormat::Text =>
                {
                    print_already_recorded(&store, release, &entry.render_ref).await?
                }
                _ => print_output(store.runtime(), &operation, &output, format, secrets).await?,
            }
        }
        Command::Releases { limit, after } => {
            let store = open(url, keys).await?;
            let after = match after {
                Some(text) => Some(Release::parse(&text).ok_or_else(|| {
                    failure::input(format!(
                        "--after {text:?}: expected NAMESPACE/NAME, a release the list printed"
                    ))
                })?),
                None => None,
            };
            let listing = crate::releases::run(store, namespace, after, limit, as_json).await?;
            if !listing.unlisted.is_empty() {
                return Ok(Finish::Differs);
            }
        }
        Command::Ls { prefix } => {
            let listed = open(url, keys).await?.bucket().list(&prefix).await?;
            let keys: Vec<String> = listed.into_iter().map(|o| o.key).collect();
            if as_json {
                print_json(&json!(keys))?;
            } else {
                let mut out = std::io::stdout().lock();
                for key in keys {
                    writeln!(out, "{}", esc(&key))?;
                }
            }
        }
        Command::Component { out } => {
            crate::local_file::write_file(
                &out,
                render_store::COMPONENT,
                crate::local_file::Readers::Everyone,
            )
            .context("writing the component")?;
            if !as_json {
                println!(
                    "wrote {} ({} bytes)",
                    out.display(),
                    render_store::COMPONENT.len()
                );
            } else {
                print_json(&json!({ "path": out, "bytes": render_store::COMPONENT.len() }))?;
            }
        }
        Command::Rekey { release, all } => {
            let store = open(url, keys).await?;
            if store.keyring().is_empty() {
                bail!(
                    "rekey seals blobs under the first key of a keyring: give \
                     --encryption-keys FILE or set RENDER_STORE_ENCRYPTION_KEYS"
                );
            }
            let releases = match (release, all) {
                (Some(r), _) => {
                    let release = parse_release(&r, namespace)?;
                    names::require_release(&store, &release).await?;
                    vec![release]
                }
                (None, _) => names::releases(&store).await?,
            };
            let (mut rewritten, mut kept) = (0u64, 0u64);
            for release in &releases {
                let (r, k) = store.rekey_release(release).await.with_context(|| {
                    format!("rekey of {release} (run it again once fixed: nothing was lost)")
                })?;
                rewritten += u64::from(r);
                kept += u64::from(k);
                if !as_json && !args.quiet {
                    eprintln!(
                        "render-store: {release}: {r} rewritten, {k} already under the first key"
                    );
                }
            }
            if as_json {
                print_json(
                    &json!({"releases": releases.len(), "rewritten": rewritten, "kept": kept}),
                )?;
            } else {
                println!(
                    "{rewritten} render blobs sealed under key {}, {kept} already were, in {} releases",
                    quote(&store.keyring().ids()[0]),
                    releases.len()
                );
            }
        }
        Command::DeleteEntry {
            release,
            entry,
            dry_run,
        } => {
            let store = open(url, keys).await?;
            let release = parse_release(&release, namespace)?;
            let crate::delete_entry::Found {
                entry: found,
                position,
            } = crate::delete_entry::find(&store, &release, &entry).await?;
            let synced = store.runtime().format_synced_at(found.synced_at).await?;
            if !dry_run {
                store.within(store.bucket().delete(&found.key)).await??;
            }
            if as_json {
                print_json(&json!({
                    "dryRun": dry_run,
                    "key": found.key,
                    "renderRef": found.render_ref,
                    "syncedAt": synced,
                }))?;
            } else {
                let verb = if dry_run { "would delete" } else { "deleted" };
                println!(
                    "{verb} @{position} of {release}: {} (synced {synced}, render {}); the render \
                     stays until GC finds nothing needs it",
                    esc(&found.key),
                    found.render_ref
                );
            }
        }
        Command::Verify { release } => {
            let store = open(url, keys).await?;
            let release = match release {
                Some(r) => Some(parse_release(&r, namespace)?),
                None => None,
            };
            let report = crate::verify::verify(&store, release.as_ref()).await?;
            if as_json {
                let problems: Vec<_> = report
                    .problems
                    .iter()
                    .map(|p| json!({"kind": p.kind, "key": p.key, "message": p.message, "fix": p.fix}))
                    .collect();
                print_json(&json!({
                    "releases": report.releases,
                    "renders": report.renders,
                    "entries": report.entries,
                    "problems": problems,
                }))?;
            } else {
                for p in &report.problems {
                    println!("{} {}: {}", p.kind, esc(&p.key), esc(&p.message));
                    println!("    what to do: {}", p.fix);
                }
                println!(
                    "read {} and {} of {}: {}",
                    count(report.renders, "render", "renders"),
                    count(report.entries, "history entry", "history entries"),
                    count(report.releases, "release", "releases"),
                    if report.problems.is_empty() {
                        "no problem".to_string()
                    } else {
                        count(report.problems.len(), "problem", "problems")
                    }
                );
            }
            if !report.problems.is_empty() {
                return Ok(Finish::Differs);
            }
        }
        Command::Completion { shell } => {
            clap_complete::generate(
                shell,
                &mut command(),
                "render-store",
                &mut std::io::stdout(),
            );
        }
        Command::Man => {
            clap_mangen::Man::new(command()).render(&mut std::io::stdout())?;
        }
        Command::Diff {
            release,
            from,
            to,
            against,
            local,
            format: input_format,
            allow_empty,
            validate,
            form,
            color,
        } => {
            let release = parse_release(&release, namespace)?;
            let store = open(url, keys).await?;
            // One listing of the history serves every @N name and the header's labels; an
            // entry in it says the release exists, else one bounded call checks.
            let history = names::history_keys(&store, &release).await?;
            if history.is_empty() {
                names::require_release(&store, &release).await?;
            }
            let rt = store.runtime().clone();
            let object_form = match form {
                DiffOutput::Yaml => ObjectForm::Yaml,
                DiffOutput::Json => ObjectForm::Json,
            };
            let (from_ref, to_ref) = if local.is_empty() {
                let from = from.as_deref().unwrap_or("@1");
                let to = to.as_deref().unwrap_or("@0");
                (
                    names::resolve_ref_in(&store, &release, &history, from).await?,
                    Some(names::resolve_ref_in(&store, &release, &history, to).await?),
                )
            } else {
                (
                    names::resolve_ref_in(
                        &store,
                        &release,
                        &history,
                        against.as_deref().unwrap_or("@0"),
                    )
                    .await?,
                    None,
                )
            };
            // The --local render, read and checked before anything is compared.
            let local_render = match &to_ref {
                Some(_) => None,
                None => {
                    let mut render =
                        read_render(&rt, &local, input_format, rt.limits().memory_bytes).await?;
                    render.check(&rt, allow_empty, validate).await?;
                    Some(render)
                }
            };
            let observer = Observer::new(Some(store))?.with_secrets(secrets);
            let mut local_render = local_render;
            let diff = match (&to_ref, &mut local_render) {
                (Some(to_ref), _) => {
                    observer
                        .diff(
                            &release,
                            to_ref,
                            Some(&from_ref),
                            object_form,
                            DEFAULT_CONTEXT,
                        )
                        .await?
                }
                (None, Some(render)) => {
                    let canonical = match rt.canonical_in(&mut render.objects).await {
                        Ok(c) => c,
                        Err(e) => return Err(render.name_input(e)),
                    };
                    // The canonical bytes are what is compared: the input's buffer goes.
                    render.objects = render_store::JoinedObjects::default();
                    observer
                        .diff_local(
                            &release,
                            &canonical,
                            Some(&from_ref),
                            object_form,
                            DEFAULT_CONTEXT,
                        )
                        .await?
                }
                (None, None) => unreachable!("a --local diff reads its render above"),
            };
            let same = diff.added.is_empty() && diff.removed.is_empty() && diff.changed.is_empty();
            if as_json {
                // The shape the HTTP /diff and the packages' diffs give.
                print_json(&diff_json(&diff))?;
            } else {
                // Only the header for people names the sides by their history entries: the
                // newest entry of each side's render, and nothing else, is read.
                let store = observer
                    .store()
                    .expect("the observer was made over the store");
                let sides = [Some(&from_ref), to_ref.as_ref()];
                let described = describe_sides(store, &release, &history, sides).await?;
                let [from_side, to_side] = described;
                let to_side = match (to_side, &local_render) {
                    (Some(side), _) => side,
                    (None, render) => format!(
                        "local {}",
                        render
                            .as_ref()
                            .map(|r| r.inputs.join(", "))
                            .unwrap_or_default()
                    ),
                };
                println!("--- {}", esc(&from_side.unwrap_or_default()));
                println!("+++ {}", esc(&to_side));
                print_diff(&diff, color.enabled())?;
            }
            if !same {
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
            max_render_bytes_in_flight,
            max_connections,
            max_unauthenticated_connections,
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
                    "could not raise the open-file limit to its hard limit ({e}): the \
                     server may run out of descriptors with many connections"
                ),
            }
            let token = match (&token_file, no_auth) {
                (_, true) => None,
                (Some(path), false) => {
                    Some(crate::serve::read_token_file(path).map_err(anyhow::Error::msg)?)
                }
                (None, false) => Some(crate::serve::random_secret().map_err(anyhow::Error::msg)?),
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
                max_render_bytes_in_flight,
                max_connections,
                max_unauthenticated_connections,
                allowed_hosts: allow_host,
                token: token.clone(),
            };
            options.check().map_err(|m| anyhow::anyhow!("serve: {m}"))?;
            let store = match RenderStore::open(url)? {
                Some(store) => Some(with_keys(store, keys).await?),
                None => None,
            };
            let observer = std::sync::Arc::new(Observer::new(store)?.with_secrets(secrets));
            if observer.store().is_none() {
                tracing::warn!("no render store: /history answers 503 and /diff an error");
            }
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .with_context(|| format!("listening on {listen}"))?;
            let addr = listener.local_addr()?;
            let stop = crate::serve::stop_signal().context("handling SIGINT and SIGTERM")?;
            // A browser on this machine reaches a server listening on every address
            // through the loopback one.
            let mut local = addr;
            if local.ip().is_unspecified() {
                local.set_ip(match local.ip() {
                    std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                    std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
                });
            }
            let login_url = format!("http://{local}/login");
            // The token's file and the login file, when the server makes the token:
            // removed when this is dropped, after the server stopped.
            let made = match (&token, &token_file) {
                (Some(token), None) => Some(
                    crate::serve::TokenFile::create(token, &login_url)
                        .map_err(anyhow::Error::msg)?,
                ),
                _ => None,
            };
            if let Some(made) = &made {
                eprintln!(
                    "render-store: the token is in {}: send it as Authorization: Bearer \
                     TOKEN; the file is removed when the server stops",
                    made.path().display()
                );
                // A path, not a URL with a secret in it: what is opened lands on the
                // command lines of the opener and the browser, which every local user
                // can read; the file itself only this user can.
                eprintln!(
                    "render-store: for the web pages, open {} in a browser of this user \
                     (it logs the browser in; any browser, as often as needed)",
                    file_url(made.login_path())
                );
            }
            if token.is_some() {
                eprintln!("render-store: a browser can also log in at {login_url} with the token");
            }
            if no_auth {
                eprintln!(
                    "render-store: --no-auth: no token is asked for; every local user can \
                     read every render, Secrets included"
                );
            }
            if !url.is_empty() {
                eprintln!("render-store: reading {}", render_store::redact_url(url));
            }
            eprintln!("render-store: serving on http://{addr}");
            crate::serve::serve_until(listener, observer, options, stop).await?;
            drop(made);
            eprintln!("render-store: stopped");
        }
        Command::Replay { file } => {
            let text = crate::local_file::read_regular(&file, limits.memory_bytes as u64)
                .context("reading the trace")?;
            let rt = Runtime::shared()?;
            // Whether encryption is required is the trace's: it replays as it ran.
            let keyring = match keys.file {
                Some(path) => Keyring::from_file(&rt, path).await?,
                None => Keyring::default(),
            };
            let report = match rt.replay(&text, &keyring).await {
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
        Command::Demo => crate::demo::run(url, as_json).await?,
    }
    Ok(Finish::Done)
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

/// `path` as a `file://` URL a terminal makes clickable (the path itself when it is not
/// absolute).
fn file_url(path: &std::path::Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_take_bare_seconds_and_units() {
        assert_eq!(parse_duration("600"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "ten", "10x", "-5s", "99999999999999999999"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains("is not a duration"), "{bad:?}: {err}");
        }
        assert_eq!(timeout("0s"), Err("must be more than zero".to_string()));
    }
}
