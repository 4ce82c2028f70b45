//! The bucket contract (CONTRACT.md §2) as runnable checks, for any [`Bucket`].
//!
//! The cases are data, `tests/conformance/bucket.json` of the repository (embedded here;
//! its format is in `tests/conformance/README.md`): the Rust buckets run them in the
//! end-to-end tests, the JS and Python hosts' buckets in their own suites, and another
//! bucket implementation can run the same checks through this module, as object_store's
//! integration tests are run against each of its stores. Only with the `conformance`
//! feature.
//!
//! Each case works under a fresh prefix of its own (`conformance/<case>-<unique>/`) and
//! deletes what it wrote when it ends, so cases can run on a bucket shared with other
//! data, one after the other or at once.
//!
//! ```no_run
//! # async fn demo() {
//! use render_store::conformance::{cases, run_case};
//! let bucket = render_store::open_bucket("mem://").unwrap().unwrap();
//! for case in cases() {
//!     if let Err(failure) = run_case(bucket.as_ref(), case).await {
//!         panic!("{failure}");
//!     }
//! }
//! # }
//! ```
//!
//! The bounded read (`get` of an object over the caller's limit is
//! [`BucketError::TooLarge`]) is not among the cases, since the JS and Python buckets do
//! not bound reads; check it separately.

use crate::bucket::{Bucket, BucketError, ObjectMeta};
use crate::types::SyncTime;
use base64::Engine as _;
use futures::StreamExt;
use serde::Deserialize;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The cases as the file holds them.
pub const CASES_JSON: &str = include_str!("../../../tests/conformance/bucket.json");

/// How many puts of generated keys (and deletes when a case cleans up) are in flight at
/// once: a cloud bucket's round trips dominate, and 2,500 one at a time are slow.
const CONCURRENCY: usize = 32;

/// A listing or a value longer than this is described by its length and first
/// difference, not printed whole.
const SHOWN: usize = 64;

/// One case of the file: a rule of the contract and the calls that check it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique in the file, e.g. `get-of-an-absent-key-is-not-found`.
    pub name: String,
    /// The sections of CONTRACT.md it checks, e.g. `§2`.
    pub section: String,
    /// What the case needs of a bucket beyond the contract.
    #[serde(default)]
    needs: Option<Needs>,
    /// The rule, in words.
    pub checks: String,
    steps: Vec<Step>,
}

impl Case {
    /// Whether the case runs only on a bucket over a local folder, where it plants
    /// links, FIFOs and odd names beside the bucket's files ([`run_folder_case`]).
    pub fn needs_folder(&self) -> bool {
        self.needs == Some(Needs::Folder)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Needs {
    /// A bucket over a local folder, which [`run_folder_case`] is given.
    Folder,
}

/// Why a case failed: the case, the step and what the bucket answered instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseFailure {
    /// The case's name.
    pub case: String,
    /// The failing step's position in the case, from 1.
    pub step: usize,
    /// The call that step made, with the key or prefix it gave the bucket.
    pub call: String,
    /// What was expected and what came instead.
    pub message: String,
}

impl std::fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "case {}, step {} ({}): {}",
            self.case, self.step, self.call, self.message
        )
    }
}

impl std::error::Error for CaseFailure {}

/// Every case of the file, in its order.
///
/// # Panics
///
/// If the embedded file does not follow its format: a fault of this crate's build, which
/// its end-to-end tests would have caught.
pub fn cases() -> &'static [Case] {
    &FILE.cases
}

/// How far a `"recent"` last-modified time may lie from the time of the case: the
/// bucket's clock is not this machine's (a cloud's, an emulator's) and some backends
/// keep whole seconds only.
pub fn recent_seconds() -> u64 {
    FILE.recent_seconds
}

/// Runs one case on `bucket`, under a fresh prefix of its own, and then deletes what is
/// left under that prefix (best effort, whatever the outcome: a failure to clean up does
/// not fail the case). Reads are not bounded (`get` gets `u64::MAX`). A case that
/// [needs a folder](Case::needs_folder) fails here, saying so: run it with
/// [`run_folder_case`], or leave it out for a bucket that is not over a folder.
pub async fn run_case(bucket: &dyn Bucket, case: &Case) -> Result<(), CaseFailure> {
    run(bucket, case, None).await
}

/// Runs one case, as [`run_case`] does, on a bucket whose keys are files under the
/// local folder `root` (`<root>/<key>`), which `plant` steps write into directly. Every
/// case runs here, those that need a folder too. What the case planted is removed
/// before the clean-up.
pub async fn run_folder_case(
    bucket: &dyn Bucket,
    case: &Case,
    root: &std::path::Path,
) -> Result<(), CaseFailure> {
    run(bucket, case, Some(root)).await
}

async fn run(
    bucket: &dyn Bucket,
    case: &Case,
    root: Option<&std::path::Path>,
) -> Result<(), CaseFailure> {
    if case.needs_folder() && root.is_none() {
        return Err(CaseFailure {
            case: case.name.clone(),
            step: 0,
            call: "none".to_string(),
            message: "the case needs a bucket over a local folder: run it with \
                      run_folder_case"
                .to_string(),
        });
    }
    let prefix = unique_prefix(&case.name);
    let mut planted = Vec::new();
    let outcome = run_steps(bucket, case, &prefix, root, &mut planted).await;
    for path in planted.iter().rev() {
        let _ = std::fs::remove_file(path);
    }
    clean_up(bucket, &prefix).await;
    outcome
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)] // For readers of the file.
    about: String,
    recent_seconds: u64,
    cases: Vec<Case>,
}

static FILE: LazyLock<File> = LazyLock::new(|| {
    let file: File = serde_json::from_str(CASES_JSON)
        .unwrap_or_else(|e| panic!("tests/conformance/bucket.json: {e}"));
    let mut names = std::collections::HashSet::new();
    for case in &file.cases {
        assert!(
            names.insert(case.name.as_str()),
            "tests/conformance/bucket.json: two cases are named {}",
            case.name
        );
        for (i, step) in case.steps.iter().enumerate() {
            let why = match step.check() {
                Ok(()) if step.op == Op::Plant && !case.needs_folder() => {
                    Err("plant is for cases that need a folder".to_string())
                }
                other => other,
            };
            if let Err(why) = why {
                panic!(
                    "tests/conformance/bucket.json: case {}, step {}: {why}",
                    case.name,
                    i + 1
                );
            }
        }
    }
    file
});

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Op {
    Put,
    Get,
    Exists,
    List,
    Delete,
    #[serde(rename = "delete-many")]
    DeleteMany,
    /// The delimiter listing ([`Bucket::list_delimited`]).
    #[serde(rename = "list-delimited")]
    ListDelimited,
    /// Folder cases only: makes something beside the bucket's own files.
    Plant,
}

/// What a `plant` step makes at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Plant {
    /// A symbolic link to the absolute path of `target` under the folder.
    Link,
    /// A FIFO.
    Fifo,
    /// A regular file holding `x`.
    File,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    op: Op,
    /// Relative to the case's prefix.
    key: Option<String>,
    /// As written, `{prefix}` replaced by the case's prefix.
    raw_key: Option<String>,
    /// Generated keys, relative to the case's prefix (`put` and `delete-many`).
    keys: Option<Generated>,
    /// The keys of a `delete-many`, each as a step names its key.
    many: Option<Vec<KeyRef>>,
    /// Relative to the case's prefix (`list` and `list-delimited` only).
    prefix: Option<String>,
    value: Option<Value>,
    /// `plant`: where, relative to the case's prefix, as a path under the folder.
    path: Option<String>,
    /// `plant`: what.
    what: Option<Plant>,
    /// `plant` of a link: what it points to, relative to the case's prefix.
    target: Option<String>,
    /// With an error expectation: text the message names, after the case's prefix.
    mentions: Option<String>,
    /// Every op but `plant` has one.
    expect: Option<Expect>,
}

/// A key as a step names it: `key` relative to the case's prefix, or `raw_key`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyRef {
    key: Option<String>,
    raw_key: Option<String>,
}

impl KeyRef {
    fn resolve(&self, prefix: &str) -> String {
        match (&self.key, &self.raw_key) {
            (Some(key), _) => format!("{prefix}{key}"),
            (_, Some(raw)) => raw.replace("{prefix}", prefix),
            _ => String::new(),
        }
    }
}

/// `prefix` followed by each number below `count`, zero-padded to `digits`, followed by
/// `suffix` (none when absent).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Generated {
    prefix: String,
    count: usize,
    digits: usize,
    #[serde(default)]
    suffix: String,
}

impl Generated {
    fn keys(&self) -> impl DoubleEndedIterator<Item = String> + '_ {
        (0..self.count).map(|i| {
            format!(
                "{}{i:0width$}{}",
                self.prefix,
                self.suffix,
                width = self.digits
            )
        })
    }
}

/// Bytes as text or base64, repeated to `length` when given.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Value {
    text: Option<String>,
    base64: Option<String>,
    length: Option<usize>,
}

impl Value {
    fn bytes(&self) -> Result<Vec<u8>, String> {
        let unit = match (&self.text, &self.base64) {
            (Some(text), None) => text.as_bytes().to_vec(),
            (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| format!("a value's base64: {e}"))?,
            _ => return Err("a value has exactly one of text and base64".into()),
        };
        match self.length {
            None => Ok(unit),
            Some(_) if unit.is_empty() => Err("a value with a length repeats some bytes".into()),
            Some(n) => Ok(unit.iter().copied().cycle().take(n).collect()),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Expect {
    Ok,
    Value(Value),
    Size(Option<u64>),
    Listed(Vec<Entry>),
    Error(ErrorKind),
    /// `delete-many`: one expectation per key, `ok` or `{"error": K}`.
    Each(Vec<Expect>),
    /// `list-delimited`: the folders and the objects directly under the prefix.
    Delimited(DelimitedExpect),
}

/// What a delimiter listing is expected to answer, each list in order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct DelimitedExpect {
    /// Folders relative to the case's prefix, each with its trailing `/`, or generated.
    folders: Vec<FolderEntry>,
    objects: Vec<Entry>,
}

/// A folder of an expected delimiter listing: its name, or generated names.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum FolderEntry {
    Name(String),
    Generated { keys: Generated },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    key: Option<String>,
    keys: Option<Generated>,
    size: u64,
    modified: Option<Modified>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Modified {
    /// Within [`recent_seconds`] of the case's time.
    Recent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum ErrorKind {
    NotFound,
    Denied,
    Failed,
    TooLarge,
}

impl ErrorKind {
    fn of(e: &BucketError) -> ErrorKind {
        match e {
            BucketError::NotFound { .. } => ErrorKind::NotFound,
            BucketError::Denied(_) => ErrorKind::Denied,
            BucketError::TooLarge { .. } => ErrorKind::TooLarge,
            BucketError::Backend { .. } | BucketError::Failed(_) => ErrorKind::Failed,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not-found",
            ErrorKind::Denied => "denied",
            ErrorKind::Failed => "failed",
            ErrorKind::TooLarge => "too-large",
        }
    }
}

impl Step {
    /// Whether the step is well formed: the fields its op needs and no others, and an
    /// expectation its op can meet.
    fn check(&self) -> Result<(), String> {
        if self.op == Op::Plant {
            return self.check_plant();
        }
        let Some(expect) = &self.expect else {
            return Err(format!("{:?} needs an expect", self.op));
        };
        if self.path.is_some() || self.what.is_some() || self.target.is_some() {
            return Err("path, what and target are for plant only".into());
        }
        if self.mentions.is_some() && !matches!(expect, Expect::Error(_)) {
            return Err("mentions goes with an error expectation".into());
        }
        let keyed = [
            self.key.is_some(),
            self.raw_key.is_some(),
            self.keys.is_some(),
            self.many.is_some(),
        ]
        .iter()
        .filter(|given| **given)
        .count();
        let (wants_key, wants_value) = match self.op {
            Op::Put => (true, true),
            Op::Get | Op::Exists | Op::Delete | Op::DeleteMany => (true, false),
            Op::List | Op::ListDelimited => (false, false),
            Op::Plant => unreachable!("checked above"),
        };
        if wants_key != (keyed == 1) || keyed > 1 {
            return Err(
                "give exactly one of key, raw_key, keys and many (none for the listings)".into(),
            );
        }
        if self.keys.is_some() && !matches!(self.op, Op::Put | Op::DeleteMany) {
            return Err("keys is for put and delete-many only".into());
        }
        if (self.op == Op::DeleteMany && self.many.is_none() && self.keys.is_none())
            || (self.op != Op::DeleteMany && self.many.is_some())
        {
            return Err(
                "delete-many, and only delete-many, names its keys with many or keys".into(),
            );
        }
        if let Some(many) = &self.many
            && many.iter().any(|k| k.key.is_some() == k.raw_key.is_some())
        {
            return Err("each key of many has exactly one of key and raw_key".into());
        }
        if matches!(self.op, Op::List | Op::ListDelimited) != self.prefix.is_some() {
            return Err("list and list-delimited, and only they, have a prefix".into());
        }
        match (&self.value, wants_value) {
            (Some(value), true) => {
                value.bytes()?;
            }
            (None, false) => {}
            _ => return Err("put, and only put, has a value".into()),
        }
        let fits = match (expect, self.op) {
            (Expect::Error(_), _) => true,
            (Expect::Ok, op) => matches!(op, Op::Put | Op::Delete | Op::DeleteMany),
            (Expect::Each(each), op) => {
                let count = self.many.as_ref().map_or(0, Vec::len);
                op == Op::DeleteMany
                    && self.many.is_some()
                    && each.len() == count
                    && each
                        .iter()
                        .all(|e| matches!(e, Expect::Ok | Expect::Error(_)))
            }
            (Expect::Value(value), op) => {
                value.bytes()?;
                op == Op::Get
            }
            (Expect::Size(_), op) => op == Op::Exists,
            (Expect::Delimited(d), op) => {
                check_entries(&d.objects)?;
                op == Op::ListDelimited
            }
            (Expect::Listed(entries), op) => {
                check_entries(entries)?;
                op == Op::List
            }
        };
        if fits {
            Ok(())
        } else {
            Err(format!("{:?} cannot answer {:?}", self.op, expect))
        }
    }
}

/// Whether listed entries are well formed.
fn check_entries(entries: &[Entry]) -> Result<(), String> {
    for entry in entries {
        if entry.key.is_some() == entry.keys.is_some() {
            return Err("a listed entry has exactly one of key and keys".into());
        }
        if entry.keys.is_some() && entry.modified.is_some() {
            return Err("generated listed entries have no modified time".into());
        }
    }
    Ok(())
}

impl Step {
    fn check_plant(&self) -> Result<(), String> {
        let others = self.key.is_some()
            || self.raw_key.is_some()
            || self.keys.is_some()
            || self.many.is_some()
            || self.prefix.is_some()
            || self.value.is_some()
            || self.mentions.is_some()
            || self.expect.is_some();
        if others {
            return Err("plant has path, what and (for a link) target only".into());
        }
        match (&self.path, self.what, &self.target) {
            (Some(path), Some(what), target) if !path.is_empty() => {
                if (what == Plant::Link) != target.is_some() {
                    return Err("a link, and only a link, has a target".into());
                }
                Ok(())
            }
            _ => Err("plant needs a path and what".into()),
        }
    }
}

/// `conformance/<case>-<pid>-<nanoseconds>-<n>/`: unique across the processes and runs
/// sharing a bucket.
fn unique_prefix(case: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("conformance/{case}-{}-{nanos}-{n}/", std::process::id())
}

/// A key quoted as a JSON string: keys under test may hold control characters.
use crate::bucket::messages::quote;

async fn run_steps(
    bucket: &dyn Bucket,
    case: &Case,
    prefix: &str,
    root: Option<&std::path::Path>,
    planted: &mut Vec<std::path::PathBuf>,
) -> Result<(), CaseFailure> {
    let started = SyncTime::now();
    for (i, step) in case.steps.iter().enumerate() {
        let fail = |call: String, message: String| CaseFailure {
            case: case.name.clone(),
            step: i + 1,
            call,
            message,
        };
        let key = match (&step.key, &step.raw_key) {
            (Some(key), _) => format!("{prefix}{key}"),
            (_, Some(raw)) => raw.replace("{prefix}", prefix),
            _ => String::new(),
        };
        if step.op == Op::Plant {
            let root = root.expect("a folder case has a folder");
            let path = step.path.as_deref().expect("checked");
            plant(root, prefix, step, planted)
                .map_err(|m| fail(format!("plant {}", quote(path)), m))?;
            continue;
        }
        // Checked when the file was loaded.
        let value = step.value.as_ref().map(|v| v.bytes().expect("checked"));
        let expect = step.expect.as_ref().expect("checked");
        let mentions = step.mentions.as_ref().map(|m| format!("{prefix}{m}"));
        let mentions = mentions.as_deref();
        match step.op {
            Op::Plant => unreachable!("handled above"),
            Op::Put => {
                let value = value.expect("checked");
                let keys: Vec<String> = match &step.keys {
                    // Last to first: a listing in write order is then out of order.
                    Some(generated) => generated
                        .keys()
                        .rev()
                        .map(|k| format!("{prefix}{k}"))
                        .collect(),
                    None => vec![key],
                };
                let call = |key: &str| format!("put {} ({} bytes)", quote(key), value.len());
                let mut answers = futures::stream::iter(keys.iter())
                    .map(|key| {
                        let value = value.clone();
                        async move { (key, bucket.put(key, value).await) }
                    })
                    .buffer_unordered(CONCURRENCY);
                while let Some((key, answer)) = answers.next().await {
                    check_done(expect, mentions, answer).map_err(|m| fail(call(key), m))?;
                }
            }
            Op::DeleteMany => {
                let keys: Vec<String> = match (&step.many, &step.keys) {
                    (Some(many), _) => many.iter().map(|k| k.resolve(prefix)).collect(),
                    (_, Some(generated)) => {
                        generated.keys().map(|k| format!("{prefix}{k}")).collect()
                    }
                    _ => unreachable!("checked"),
                };
                let call = format!(
                    "delete-many of {} keys from {}",
                    keys.len(),
                    quote(keys.first().map_or("", String::as_str))
                );
                let answer = bucket.delete_many(&keys).await;
                check_many(expect, mentions, &keys, answer).map_err(|m| fail(call, m))?;
            }
            Op::Delete => {
                let answer = bucket.delete(&key).await;
                check_done(expect, mentions, answer)
                    .map_err(|m| fail(format!("delete {}", quote(&key)), m))?;
            }
            Op::Get => {
                let answer = bucket.get(&key, u64::MAX).await;
                check_get(expect, mentions, &key, answer)
                    .map_err(|m| fail(format!("get {}", quote(&key)), m))?;
            }
            Op::Exists => {
                let answer = bucket.exists(&key).await;
                check_exists(expect, mentions, answer)
                    .map_err(|m| fail(format!("exists {}", quote(&key)), m))?;
            }
            Op::List => {
                let listed_prefix = format!("{prefix}{}", step.prefix.as_deref().unwrap_or(""));
                let answer = bucket.list(&listed_prefix).await;
                check_list(expect, mentions, prefix, started, answer)
                    .map_err(|m| fail(format!("list {}", quote(&listed_prefix)), m))?;
            }
            Op::ListDelimited => {
                let listed_prefix = format!("{prefix}{}", step.prefix.as_deref().unwrap_or(""));
                let answer = bucket.list_delimited(&listed_prefix).await;
                check_delimited(expect, mentions, prefix, started, answer)
                    .map_err(|m| fail(format!("list-delimited {}", quote(&listed_prefix)), m))?;
            }
        }
    }
    Ok(())
}

/// Carries out a `plant` step under `root`: the folders above the path as `put` makes
/// them (0700), then the link, FIFO or file, whose path goes into `planted`.
fn plant(
    root: &std::path::Path,
    prefix: &str,
    step: &Step,
    planted: &mut Vec<std::path::PathBuf>,
) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    let path = root.join(format!(
        "{prefix}{}",
        step.path.as_deref().expect("checked")
    ));
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| format!("making the folders above it: {e}"))?;
    }
    let made = match step.what.expect("checked") {
        Plant::Link => {
            let target = root.join(format!(
                "{prefix}{}",
                step.target.as_deref().expect("checked")
            ));
            std::os::unix::fs::symlink(target, &path)
        }
        Plant::Fifo => rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .map_err(Into::into),
        Plant::File => std::fs::write(&path, b"x"),
    };
    made.map_err(|e| e.to_string())?;
    planted.push(path);
    Ok(())
}

/// The expected error kind against an answer that was not the expected success.
fn check_error<T>(
    expect: &Expect,
    mentions: Option<&str>,
    answer: Result<T, BucketError>,
    shown: impl FnOnce(T) -> String,
) -> Result<(), String> {
    match (expect, answer) {
        (Expect::Error(kind), Err(e)) if ErrorKind::of(&e) == *kind => match mentions {
            Some(text) if !e.to_string().contains(text) => Err(format!(
                "expected {} naming {}, got: {e}",
                kind.name(),
                quote(text)
            )),
            _ => Ok(()),
        },
        (Expect::Error(kind), Err(e)) => Err(format!(
            "expected {}, got {}: {e}",
            kind.name(),
            ErrorKind::of(&e).name()
        )),
        (Expect::Error(kind), Ok(v)) => Err(format!("expected {}, got {}", kind.name(), shown(v))),
        (_, Err(e)) => Err(format!(
            "expected success, got {}: {e}",
            ErrorKind::of(&e).name()
        )),
        (_, Ok(v)) => Err(format!("unexpected answer {}", shown(v))),
    }
}

fn check_done(
    expect: &Expect,
    mentions: Option<&str>,
    answer: Result<(), BucketError>,
) -> Result<(), String> {
    match (expect, answer) {
        (Expect::Ok, Ok(())) => Ok(()),
        (expect, answer) => check_error(expect, mentions, answer, |()| "success".into()),
    }
}

/// A `delete-many` answer: `ok` for every key, one expectation per key, or the whole
/// request's error.
fn check_many(
    expect: &Expect,
    mentions: Option<&str>,
    keys: &[String],
    answer: Result<Vec<Result<(), BucketError>>, BucketError>,
) -> Result<(), String> {
    let answers = match (expect, answer) {
        (Expect::Error(_), answer) => {
            return check_error(expect, mentions, answer, |a| format!("{} answers", a.len()));
        }
        (_, Err(e)) => {
            return Err(format!(
                "expected an answer per key, got {}: {e}",
                ErrorKind::of(&e).name()
            ));
        }
        (_, Ok(answers)) => answers,
    };
    if answers.len() != keys.len() {
        return Err(format!(
            "{} answers for {} keys: one per key, in order",
            answers.len(),
            keys.len()
        ));
    }
    for (i, (key, answer)) in keys.iter().zip(answers).enumerate() {
        let want = match expect {
            Expect::Each(each) => &each[i],
            other => other,
        };
        check_done(want, None, answer)
            .map_err(|m| format!("key {} ({}): {m}", i + 1, quote(key)))?;
    }
    Ok(())
}

fn check_get(
    expect: &Expect,
    mentions: Option<&str>,
    key: &str,
    answer: Result<Vec<u8>, BucketError>,
) -> Result<(), String> {
    match (expect, answer) {
        (Expect::Value(value), Ok(got)) => {
            let want = value.bytes().expect("checked");
            if got == want {
                Ok(())
            } else {
                Err(value_difference(&want, &got))
            }
        }
        // The error names the key asked for, as every Rust bucket's does.
        (Expect::Error(ErrorKind::NotFound), Err(BucketError::NotFound { key: named }))
            if named != key =>
        {
            Err(format!(
                "not-found names {}, not the key asked for",
                quote(&named)
            ))
        }
        (expect, answer) => check_error(expect, mentions, answer, |v| {
            format!("the value {}", bytes(&v))
        }),
    }
}

fn check_exists(
    expect: &Expect,
    mentions: Option<&str>,
    answer: Result<Option<u64>, BucketError>,
) -> Result<(), String> {
    let shown = |size: Option<u64>| size.map_or("absent".to_string(), |n| format!("size {n}"));
    match (expect, answer) {
        (Expect::Size(want), Ok(got)) if *want == got => Ok(()),
        (Expect::Size(want), Ok(got)) => {
            Err(format!("expected {}, got {}", shown(*want), shown(got)))
        }
        (expect, answer) => check_error(expect, mentions, answer, shown),
    }
}

/// One object of a listing as compared: the key relative to the case's prefix, or the
/// whole key when it lies outside it.
#[derive(PartialEq)]
struct Listed {
    key: String,
    size: u64,
}

impl std::fmt::Display for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} bytes)", quote(&self.key), self.size)
    }
}

fn check_list(
    expect: &Expect,
    mentions: Option<&str>,
    prefix: &str,
    started: SyncTime,
    answer: Result<Vec<ObjectMeta>, BucketError>,
) -> Result<(), String> {
    let (entries, got) = match (expect, answer) {
        (Expect::Listed(entries), Ok(got)) => (entries, got),
        (expect, answer) => {
            return check_error(expect, mentions, answer, |v| {
                format!("a listing of {} objects", v.len())
            });
        }
    };
    let mut want = Vec::new();
    let mut recent = Vec::new();
    for entry in entries {
        match (&entry.key, &entry.keys) {
            (Some(key), _) => {
                if entry.modified.is_some() {
                    recent.push(want.len());
                }
                want.push(Listed {
                    key: key.clone(),
                    size: entry.size,
                });
            }
            (_, Some(generated)) => want.extend(generated.keys().map(|key| Listed {
                key,
                size: entry.size,
            })),
            _ => unreachable!("checked"),
        }
    }
    let seen: Vec<Listed> = got
        .iter()
        .map(|o| Listed {
            key: o.key.strip_prefix(prefix).map_or_else(
                || format!("{} (outside the case's prefix)", o.key),
                str::to_string,
            ),
            size: o.size,
        })
        .collect();
    if seen != want {
        return Err(listing_difference(&want, &seen));
    }
    let now = SyncTime::now().seconds;
    let tolerance = i64::try_from(recent_seconds()).unwrap_or(i64::MAX);
    for i in recent {
        let modified = got[i].modified.seconds;
        let window = started.seconds.saturating_sub(tolerance)..=now.saturating_add(tolerance);
        if !window.contains(&modified) {
            return Err(format!(
                "{}: modified at {modified} s, not within {tolerance} s of this case's time ({} to {now} s)",
                quote(&got[i].key),
                started.seconds
            ));
        }
    }
    Ok(())
}

fn check_delimited(
    expect: &Expect,
    mentions: Option<&str>,
    prefix: &str,
    started: SyncTime,
    answer: Result<crate::bucket::Delimited, BucketError>,
) -> Result<(), String> {
    let (want, got) = match (expect, answer) {
        (Expect::Delimited(want), Ok(got)) => (want, got),
        (expect, answer) => {
            return check_error(expect, mentions, answer, |d| {
                format!(
                    "a listing of {} folders and {} objects",
                    d.folders.len(),
                    d.objects.len()
                )
            });
        }
    };
    let mut folders = Vec::new();
    for folder in &want.folders {
        match folder {
            FolderEntry::Name(name) => folders.push(name.clone()),
            FolderEntry::Generated { keys } => folders.extend(keys.keys()),
        }
    }
    let as_listed = |names: Vec<String>| -> Vec<Listed> {
        names
            .into_iter()
            .map(|key| Listed { key, size: 0 })
            .collect()
    };
    let seen: Vec<String> = got
        .folders
        .iter()
        .map(|f| {
            f.strip_prefix(prefix).map_or_else(
                || format!("{f} (outside the case's prefix)"),
                str::to_string,
            )
        })
        .collect();
    if seen != folders {
        return Err(format!(
            "folders: {}",
            listing_difference(&as_listed(folders), &as_listed(seen))
        ));
    }
    let objects = Expect::Listed(want.objects.clone());
    check_list(&objects, None, prefix, started, Ok(got.objects))
        .map_err(|m| format!("objects: {m}"))
}

/// How two listings differ: whole when short, else their lengths and first difference.
fn listing_difference(want: &[Listed], seen: &[Listed]) -> String {
    let all = |l: &[Listed]| {
        let shown: Vec<String> = l.iter().map(ToString::to_string).collect();
        format!("[{}]", shown.join(", "))
    };
    if want.len() <= 10 && seen.len() <= 10 {
        return format!("expected {}, got {}", all(want), all(seen));
    }
    let at = want.iter().zip(seen).take_while(|(w, s)| w == s).count();
    let item = |l: &[Listed]| l.get(at).map_or("nothing".to_string(), ToString::to_string);
    format!(
        "expected {} objects, got {}; the first difference is at #{at}: expected {}, got {}",
        want.len(),
        seen.len(),
        item(want),
        item(seen)
    )
}

/// How two values differ: whole when short, else their lengths and first difference.
fn value_difference(want: &[u8], got: &[u8]) -> String {
    let shown = |b: &[u8]| format!("{} bytes {:?}", b.len(), String::from_utf8_lossy(b));
    if want.len() <= SHOWN && got.len() <= SHOWN {
        return format!("expected {}, got {}", shown(want), shown(got));
    }
    let at = want.iter().zip(got).take_while(|(w, g)| w == g).count();
    format!(
        "expected {} bytes, got {}; the first difference is at byte {at}",
        want.len(),
        got.len()
    )
}

/// A value for a message: whole when short, else its length.
fn bytes(b: &[u8]) -> String {
    if b.len() <= SHOWN {
        format!("{} bytes {:?}", b.len(), String::from_utf8_lossy(b))
    } else {
        format!("{} bytes", b.len())
    }
}

/// Deletes every object under `prefix`, ignoring failures: a case's result does not
/// depend on it.
async fn clean_up(bucket: &dyn Bucket, prefix: &str) {
    let Ok(left) = bucket.list(prefix).await else {
        return;
    };
    futures::stream::iter(left)
        .for_each_concurrent(CONCURRENCY, |o| async move {
            let _ = bucket.delete(&o.key).await;
        })
        .await;
}
