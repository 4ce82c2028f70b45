//! The data types of the API. They mirror the records of the WIT `types` interface
//! field for field; the sandbox converts them at the boundary (`runtime/convert.rs`), so
//! bindgen's output never shows in this crate's API.

/// A Release: the namespace and name its keys live under (`<namespace>/<name>/`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Release {
    /// The Kubernetes namespace.
    pub namespace: String,
    /// The Release's name.
    pub name: String,
}

/// A point in time: seconds since the Unix epoch and nanoseconds within the second
/// (`0..1_000_000_000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SyncTime {
    /// Whole seconds since 1970-01-01T00:00:00Z (negative before).
    pub seconds: i64,
    /// Nanoseconds past `seconds`.
    pub nanoseconds: u32,
}

/// A history entry to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    /// The render the sync applied.
    pub render_ref: String,
    /// When the sync happened.
    pub synced_at: SyncTime,
    /// A line for people (at most 65,536 bytes).
    pub summary: String,
}

/// A recorded history entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// Its key, `<namespace>/<name>/history/<time>-<renderRef>`.
    pub key: String,
    /// The render the sync applied (from the key).
    pub render_ref: String,
    /// When the sync happened (from the key).
    pub synced_at: SyncTime,
    /// The entry body's summary.
    pub summary: String,
}

/// One page of a release's history, newest first ([`crate::RenderStore::list_history_page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryPage {
    /// At most the page's limit of entries, newest first.
    pub entries: Vec<HistoryEntry>,
    /// The key to pass as `before` for the next, older page; `None` when no older entry
    /// remains.
    pub next_before: Option<String>,
}

/// What a key of a release is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedKey {
    /// A render blob: its renderRef.
    Render(String),
    /// A history entry.
    History(HistoryKey),
}

/// The parts of a history entry's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryKey {
    /// When the sync happened.
    pub synced_at: SyncTime,
    /// The render it applied.
    pub render_ref: String,
}

/// What garbage collection deleted and kept (or, in a dry run, would delete), as keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcPlan {
    /// History entries deleted, oldest first.
    pub delete_history: Vec<String>,
    /// History entries kept.
    pub keep_history: Vec<String>,
    /// Render blobs deleted.
    pub delete_renders: Vec<String>,
    /// Render blobs kept.
    pub keep_renders: Vec<String>,
    /// Keys under the release that are neither renders nor entries, left alone.
    pub ignored: Vec<String>,
    /// Unreferenced render blobs kept because they are younger than the grace period.
    pub recent_renders: Vec<String>,
}

/// What identifies an object of a render in a diff.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectId {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace` (empty when absent).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

/// The step of the YAML path that rejected a stream (CONTRACT.md §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YamlStage {
    /// Splitting the stream into documents (apimachinery's reader).
    Split,
    /// YAML to JSON (go-yaml v2 and sigs.k8s.io/yaml): syntax, tags, keys, aliases.
    Yaml,
    /// The document is not a JSON object.
    Object,
}

impl std::fmt::Display for YamlStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            YamlStage::Split => "split",
            YamlStage::Yaml => "yaml",
            YamlStage::Object => "object",
        })
    }
}

/// How a diff writes a changed object's lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ObjectForm {
    /// YAML as `kubectl get -o yaml` shows objects (keys sorted, two-space indent,
    /// block style, strings quoted only when needed).
    #[default]
    Yaml,
    /// Go's `json.MarshalIndent(v, "", "  ")`.
    Json,
}

/// Lines of context a diff shows around each change unless asked otherwise, as diff(1)
/// and git show them; `u32::MAX` shows each changed object whole.
pub const DEFAULT_CONTEXT: u32 = 3;

/// Whether the forms made for people (a diff's lines, [`Runtime::show_objects`]) show
/// the values of Secrets. `Masked` (the default) writes kubectl diff's markers in place
/// of every value of a `v1` `Secret`'s `data` and `stringData`, there and inside its
/// last-applied-configuration annotation: `***`, or `*** (before)` and `*** (after)` for
/// a value that changed (the component decides it; wit/render-store.wit,
/// `secret-values`). `Shown` is for a user who asked (`--show-secrets`).
///
/// [`Runtime::show_objects`]: crate::Runtime::show_objects
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SecretValues {
    /// Values replaced by markers that say only whether each changed.
    #[default]
    Masked,
    /// Values as stored.
    Shown,
}

/// An object present in both renders with other content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedObject {
    /// The object.
    pub id: ObjectId,
    /// A unified diff of its pretty-printed JSON (Go's `MarshalIndent`, two spaces),
    /// old to new: `@@ -a,b +c,d @@` hunk headers, then lines starting with ` `
    /// (context), `-` (old) or `+` (new).
    pub lines: Vec<String>,
}

/// The difference between two renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderDiff {
    /// Objects only in the new render, in its order.
    pub added: Vec<ObjectId>,
    /// Objects only in the old render, in its order.
    pub removed: Vec<ObjectId>,
    /// Objects in both with other content, in the new render's order.
    pub changed: Vec<ChangedObject>,
    /// How many objects are identical in both.
    pub unchanged: u32,
}

/// What one listing of a release's `history/` says, no entry read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistorySummary {
    /// How many history entries the release has.
    pub entries: u32,
    /// The newest entry's time and renderRef; `None` for an empty history.
    pub newest: Option<HistoryKey>,
}

/// An object of a render written out for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownObject {
    /// The object.
    pub id: ObjectId,
    /// Its whole text in the [`ObjectForm`] asked for, as a diff writes it.
    pub text: String,
}

impl Release {
    /// A release from its namespace and name (checked by each call).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Release {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Parses `NAMESPACE/NAME` (split at the first `/`; the names are checked by each
    /// call).
    pub fn parse(text: &str) -> Option<Self> {
        let (namespace, name) = text.split_once('/')?;
        Some(Release::new(namespace, name))
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl SyncTime {
    /// The current time of this machine's clock.
    pub fn now() -> Self {
        std::time::SystemTime::now().into()
    }
}

impl From<std::time::SystemTime> for SyncTime {
    fn from(t: std::time::SystemTime) -> Self {
        match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => SyncTime {
                seconds: d.as_secs() as i64,
                nanoseconds: d.subsec_nanos(),
            },
            Err(e) => {
                let d = e.duration();
                let (seconds, nanoseconds) = match d.subsec_nanos() {
                    0 => (-(d.as_secs() as i64), 0),
                    n => (-(d.as_secs() as i64) - 1, 1_000_000_000 - n),
                };
                SyncTime {
                    seconds,
                    nanoseconds,
                }
            }
        }
    }
}
