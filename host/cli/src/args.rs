//! The command line's arguments: the global options, every command and its flags, and
//! the parsers of their values. What each command does is in [`crate::commands`].

use crate::input::{Format, RenderInput};
use crate::serve::ServeOptions;
use clap::{Parser, Subcommand};
use render_store::Limits;
use std::path::PathBuf;
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
    /// file:///abs/path, mem://); docs/urls.md has the parameters.
    #[arg(long, env = "RENDER_STORE_URL", global = true, default_value = "",
          help_heading = GLOBAL)]
    pub render_store_url: String,

    /// The namespace of the release, for commands given NAME alone (as kubectl's -n).
    #[arg(long, short = 'n', global = true, value_name = "NAMESPACE", help_heading = GLOBAL)]
    pub namespace: Option<String>,

    /// Output format: text (for people), json (for programs; errors too, as a JSON
    /// object on standard error), yaml (`get`: the render as YAML documents), wide
    /// (`history`: more columns), or ndjson (`export`: one JSON object a line).
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
    /// URL's timeout, retries, retry_timeout; docs/urls.md).
    #[arg(long, global = true, env = "RENDER_STORE_TIMEOUT", value_name = "DURATION",
          default_value = "2m", value_parser = parse_duration, help_heading = GLOBAL)]
    pub timeout: std::time::Duration,

    /// Sandboxed calls that may run at once; more wait for a free place. Each place
    /// reserves address space, not memory: about twice the memory cap (docs/cli.md).
    /// Default: 64 for
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
    /// Every container image of every release (or of -n NAMESPACE) matching PATTERN,
    /// with the intervals during which it was in the release's recorded render: from an
    /// entry's sync until the next entry's (open for the newest), consecutive entries
    /// merged. "Ran" is what the history records: a rollback adds no entry, so a render
    /// rolled back to keeps its recorded interval. Images are normalised as container
    /// runtimes read them (nginx is docker.io/library/nginx:latest). Each release's
    /// index is read, and each render it does not name (see reindex), in the sandbox.
    /// A release that cannot be read or a folder
    /// that cannot be listed is named on standard error and the exit status is 1: the
    /// answer is partial, never "not anywhere".
    #[command(
        after_help = "Examples:\n  render-store images nginx                      # every tag of docker.io/library/nginx\n  render-store images 'ghcr.io/org/*' --since 30d -o json\n  render-store images @sha256:4f1c…              # a digest, in any repository\n  render-store images -n prod --since 2026-12-01 --until 2026-12-06"
    )]
    Images {
        /// A repository (nginx, ghcr.io/org/app: every tag and digest of it), a
        /// reference (nginx:1.25, app@sha256:HEX), a digest (@sha256:HEX, any
        /// repository) or a glob (* and ?) over the normalised reference; none: every
        /// image.
        pattern: Option<String>,
        /// Only intervals that end after TIME: an RFC 3339 time, a date (midnight UTC)
        /// or an age (7d, 24h: that long ago).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Only intervals that start before TIME (as --since takes it).
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
    },
    /// Vouch for the history of a release (or of every release, --all) under the
    /// keyring: every entry whose body does not authenticate is given a MAC under the
    /// first key of --encryption-keys, and entries of an older key are moved to the
    /// first. Run it after `render-store verify` showed only entries you trust: an entry
    /// a writer of the bucket planted would be vouched for too. Entries whose body
    /// disagrees with their key are never vouched for (delete them). Needed once before
    /// --encryption-required on a store whose history was recorded without a keyring,
    /// or by a controller that does not use the render store's component; named on
    /// standard error, with exit status 1, when some entry was left unauthenticated.
    #[command(after_help = "Examples:
  render-store verify prod/app && render-store authenticate prod/app
  render-store authenticate --all --encryption-keys /etc/render-store/keys")]
    Authenticate {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        release: Option<String>,
        /// Every release of the store.
        #[arg(long)]
        all: bool,
    },
    /// Bring the release index of a release, or of every release (of -n NAMESPACE), up
    /// to date with its history: what each render holds (objects, their hashes, the
    /// images of their pod templates), one blob a release, so that images and export
    /// read one blob where they would read every render. record and gc keep it; this
    /// builds it for renders stored before, or by a controller that does not keep it.
    /// Sealed under the keyring's first key when one is given; an index that cannot be
    /// used (oversized, unreadable, plaintext on a store with a keyring) is replaced,
    /// and nothing of it is carried over.
    #[command(
        after_help = "Examples:\n  render-store reindex                 # every release of the store\n  render-store reindex prod/app\n  render-store reindex -n prod -o json\n  render-store reindex --force prod/app  # after verify reported the index"
    )]
    Reindex {
        /// NAMESPACE/NAME of the release (or NAME with -n); none: every release.
        release: Option<String>,
        /// Rebuild each index from the renders alone, whatever it holds: what verify
        /// asks for when an index disagrees with its renders (an index is a cache
        /// trusted as found on a store without a keyring).
        #[arg(long)]
        force: bool,
    },
    /// Which history entry last changed each field of an object, as git blame says which
    /// commit last changed each line: for each field of OBJECT in the newest render that
    /// holds it (or each field under FIELD), the entry since which it has had its value,
    /// with the entry's time and summary, and the value (Secret values masked unless
    /// --show-secrets). Every render of the history is read, one at a time, in the
    /// sandbox.
    #[command(
        after_help = "Examples:\n  render-store blame prod/app deployment/web\n  render-store blame prod/app deployment/web 'spec.template.spec.containers[name=web].image'\n  render-store blame prod/app prod/configmap/settings data -o json"
    )]
    Blame {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        /// The object: KIND/NAME (deployment/web; the kind in any case) or
        /// NAMESPACE/KIND/NAME when two namespaces hold one.
        object: String,
        /// Only the fields at or under this path, as the diff's hunk headers write
        /// paths (spec.replicas, spec.template.spec.containers[name=web].image).
        field: Option<String>,
    },
    /// Write one JSON object a line for each object of each history entry of every
    /// release (or of -n NAMESPACE): the release, the entry (its place, key, time,
    /// summary and render), the object (apiVersion, kind, namespace, name, the SHA-256 of
    /// its canonical line) and the images of its pod templates. For DuckDB, Athena,
    /// BigQuery or Trino: questions beyond one machine. Every render is read once, in
    /// the sandbox. A release that cannot be read is named on standard error and the
    /// exit status is 1.
    #[command(
        after_help = "Examples:\n  render-store export -o ndjson > fleet.ndjson\n  duckdb -c \"select distinct namespace, name, image from (select *, unnest(images) as image from read_json_auto('fleet.ndjson')) where image like '%nginx%'\""
    )]
    Export {
        /// Only entries synced since TIME (an RFC 3339 time, a date, or an age: 7d).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Only entries synced before TIME (as --since takes it).
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
    },
    /// List every history entry of the fleet (every release of the store, or of -n
    /// NAMESPACE) synced in a window of time, newest first, each with what changed
    /// against the entry just older than it in its release (in the window or not; a
    /// release's oldest entry against nothing, so everything is added): objects added
    /// (+), removed (-) and changed (~), container images (old → new, per container)
    /// and the keys of Secrets whose values changed (names only, never values). A
    /// folder that cannot be listed makes the list partial: it is named on standard
    /// error and the exit status is 1.
    #[command(
        after_help = "Examples:\n  render-store changes --since 24h\n  render-store changes --since 2026-12-01 --until 2026-12-02 -n prod\n  render-store changes --since 7d -o json"
    )]
    Changes {
        /// The earliest sync to list: an RFC 3339 time (2026-12-01T08:00:00Z), a date
        /// (2026-12-01, midnight UTC) or an age (7d, 24h, 30m: that long ago).
        #[arg(long, value_name = "TIME")]
        since: String,
        /// List only syncs before this time (the forms of --since); default: up to now
        /// and any later.
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
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
    /// Write a shell completion script to standard output. In bash, zsh and fish it
    /// completes release names and @N entries from the store (RENDER_STORE_URL, or
    /// --render-store-url on the line), within a few seconds.
    #[command(
        after_help = "Examples:\n  render-store completion bash > /etc/bash_completion.d/render-store\n  render-store completion zsh > \"${fpath[1]}/_render-store\""
    )]
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Complete the last of WORDS (the command line after `render-store`) with what the
    /// store knows: release names and @N entries. The scripts of `completion` call it.
    #[command(name = "__complete", hide = true)]
    Complete {
        /// The words of the command line, the one being completed last.
        #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        words: Vec<String>,
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
    Diff(DiffArgs),
    /// Serve the observer's read-only HTTP endpoints (/history, /renders, /diff,
    /// /releases, /healthz) and its web pages (/, /ui/…). Every endpoint but /healthz
    /// needs a token: without --token-file one is made into a new file only this user
    /// can read, with a login file beside it that logs a browser in (both paths are
    /// printed; both are removed when the server stops). A browser can also log in at
    /// /login by pasting the token.
    #[command(
        after_help = "Examples:\n  render-store serve                      # prints a login file to open in a browser\n  render-store serve --listen 0.0.0.0:8080 --token-file /run/secrets/token"
    )]
    Serve(ServeArgs),
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
    /// Print a release's history as helm history does: oldest first under a header,
    /// each entry with its place (@0 the newest, as every command takes it), sync time
    /// and age, short renderRef and summary; -o wide adds the whole time and renderRef
    /// and each render's size. --running marks the entry of the render that runs.
    #[command(
        after_help = "Examples:\n  render-store history prod/app\n  render-store history prod/app --limit 20 -o wide\n  render-store history prod/app --running \"$(kubectl get release app -n prod -o jsonpath='{.status.lastSuccessful}')\""
    )]
    History {
        /// NAMESPACE/NAME of the release (or NAME with -n).
        release: String,
        #[command(flatten)]
        trace: TraceOption,
        /// Show only the N newest entries, reading only those (-o json: a page, newest
        /// first, with the next page's cursor; not recorded by --trace).
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        /// With --limit: only entries older than this entry key (the previous page's
        /// next-before, printed on standard error).
        #[arg(long, value_name = "KEY", requires = "limit")]
        before: Option<String>,
        /// The render that runs, when the caller knows it (a Release's lastSuccessful):
        /// a renderRef, a unique prefix or @N. Its entry is marked `running`, and a note
        /// says so when that is not @0, as after a rollback.
        #[arg(long, value_name = "REF")]
        running: Option<String>,
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
    /// Lines for people with more columns (`history`: whole times and renderRefs, and
    /// the size of each render blob).
    Wide,
    /// One JSON object a line (`export`), for DuckDB, Athena, BigQuery or Trino.
    Ndjson,
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

/// Bytes in a MiB, the unit of `--memory-cap-mib`.
pub const MIB: usize = 1 << 20;

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
/// linear memories of the memory cap (at most 4 GiB each) and a 32 MiB guard: at the
/// largest cap, 4,096 places are 32 TiB, a quarter of a 47-bit address space.
const MAX_CONCURRENT_CALLS: u32 = 4_096;

fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

impl Args {
    /// Parses the command line, with `--version` saying which component interface
    /// this build speaks.
    pub fn parse_args() -> Self {
        use clap::FromArgMatches;
        let matches = command()
            .try_get_matches()
            .unwrap_or_else(|e| usage_error(e).exit());
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

    /// Whether this is a fleet query (`releases`, `images`, `changes`), which reads many
    /// releases at once, each read in a sandboxed call of its own.
    pub fn is_fleet(&self) -> bool {
        matches!(
            self.command,
            Command::Releases { .. } | Command::Images { .. } | Command::Changes { .. }
        )
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

/// `e` as a person should read it. clap's usage line names every argument the
/// environment set (`--render-store-url <RENDER_STORE_URL>` when RENDER_STORE_URL is
/// set), as if the command required it: the line is made again by the same parse with
/// no argument read from the environment, when that parse fails the same way.
fn usage_error(e: clap::Error) -> clap::Error {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return e;
    }
    match without_env(command()).try_get_matches() {
        Err(again) if again.kind() == e.kind() => again,
        _ => e,
    }
}

/// `cmd` and its subcommands with no argument read from the environment.
fn without_env(mut cmd: clap::Command) -> clap::Command {
    let from_env: Vec<clap::Id> = cmd
        .get_arguments()
        .filter(|a| a.get_env().is_some())
        .map(|a| a.get_id().clone())
        .collect();
    for id in from_env {
        cmd = cmd.mut_arg(id, |a| a.env(None::<&str>));
    }
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in subcommands {
        cmd = cmd.mut_subcommand(name, without_env);
    }
    cmd
}

/// The command tree with the version `--version` prints, for completion scripts and
/// the manual page.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    Args::command().version(VERSION.as_str())
}

/// `diff`'s arguments.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// NAMESPACE/NAME of the release (or NAME with -n).
    pub release: String,
    /// The old render (default: @1, the entry before the newest).
    #[arg(conflicts_with = "local")]
    pub from: Option<String>,
    /// The new render (default: @0, the newest entry).
    #[arg(conflicts_with = "local")]
    pub to: Option<String>,
    /// With --local: the stored render to compare the files with (default: @0, the
    /// newest history entry).
    #[arg(long, value_name = "REF", requires = "local")]
    pub against: Option<String>,
    /// Files of a local render (JSON objects or YAML streams, `-` for standard
    /// input), compared without storing anything.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub local: Vec<PathBuf>,
    /// How each --local file is read: auto, json or yaml (as for put).
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Take --local files that hold no object (the diff then removes everything).
    #[arg(long, requires = "local")]
    pub allow_empty: bool,
    /// Refuse --local objects without apiVersion, kind or metadata.name (as put).
    #[arg(long, env = "RENDER_STORE_VALIDATE", default_value_t = true,
          action = clap::ArgAction::Set, value_name = "BOOL")]
    pub validate: bool,
    /// How changed objects are written: yaml (as `kubectl get -o yaml` shows them) or
    /// json (pretty JSON).
    #[arg(long, value_enum, default_value_t = DiffOutput::Yaml)]
    pub form: DiffOutput,
    /// Colour removed and added lines: auto (when standard output is a terminal),
    /// always or never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `serve`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Time a client has to send a request's headers: seconds, or 30s, 10m, 1h.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = timeout)]
    pub header_timeout: Duration,
    /// Time a client has to send a request's body, from its headers; then it is
    /// answered 408.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = timeout)]
    pub body_timeout: Duration,
    /// Time a request may take, its body and waiting for a free place included;
    /// then it is answered 503.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = timeout)]
    pub request_timeout: Duration,
    /// Time a client has to read a response once it is sent; a connection that has
    /// not read it all by then is closed. Until then the response keeps its place
    /// among --max-concurrent-requests.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = timeout)]
    pub write_timeout: Duration,
    /// Largest response: a render or a diff's JSON over it is refused.
    #[arg(long, value_name = "BYTES",
          default_value_t = ServeOptions::DEFAULT_MAX_RESPONSE_BYTES,
          value_parser = positive)]
    pub max_response_bytes: usize,
    /// Largest request body on any endpoint; over it, 413.
    #[arg(long, value_name = "BYTES",
          default_value_t = ServeOptions::DEFAULT_MAX_REQUEST_BYTES,
          value_parser = positive)]
    pub max_request_bytes: usize,
    /// Largest body of a POST /diff (the YAML stream to preview); over it, 413.
    #[arg(long, value_name = "BYTES",
          default_value_t = ServeOptions::DEFAULT_MAX_DIFF_BODY_BYTES,
          value_parser = positive)]
    pub max_diff_body_bytes: usize,
    /// Requests handled at once, from their body's arrival until the client has
    /// read the answer; more wait.
    #[arg(long, value_name = "N",
          default_value_t = ServeOptions::DEFAULT_MAX_CONCURRENT_REQUESTS,
          value_parser = positive)]
    pub max_concurrent_requests: usize,
    /// Render bytes the requests that read renders (render pages, diffs, previews,
    /// raw renders) may hold at once; each reserves twice the stored size of what it
    /// reads, and one that finds no room within 10 s is answered 503 with
    /// Retry-After.
    #[arg(long, value_name = "BYTES",
          default_value_t = ServeOptions::DEFAULT_MAX_RENDER_BYTES_IN_FLIGHT,
          value_parser = positive)]
    pub max_render_bytes_in_flight: usize,
    /// Connections whose client showed the token open at once; another such client
    /// waits for a place, within its request timeout.
    #[arg(long, value_name = "N",
          default_value_t = ServeOptions::DEFAULT_MAX_CONNECTIONS,
          value_parser = positive)]
    pub max_connections: usize,
    /// Connections whose client has shown no token (new ones, probes, those
    /// answered 401) open at once; a new one past this closes the oldest of them.
    #[arg(long, value_name = "N",
          default_value_t = ServeOptions::DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS,
          value_parser = positive)]
    pub max_unauthenticated_connections: usize,
    /// A name (or IP address) to accept in the Host header besides localhost, the
    /// loopback addresses and the address listened on (repeatable).
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on every endpoint but /healthz, with
    /// the token read from FILE, instead of a token the server makes.
    #[arg(long, value_name = "FILE", conflicts_with = "no_auth")]
    pub token_file: Option<PathBuf>,
    /// Ask for no token at all. Every local user of this machine (and, with a
    /// --listen address others can reach, everyone who reaches it) can then read
    /// every render, Secrets included.
    #[arg(long)]
    pub no_auth: bool,
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
