//! The host's error type. Errors of the component's WIT `error` variant and traps are
//! mapped here, in one place.

use crate::bucket::BucketError;

/// Why a render-store call failed.
///
/// The first five variants are the component's WIT `error`; the next three say the
/// sandbox stopped the call ([`Error::is_stopped`]); the rest are the host's own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument was rejected before any bucket call (namespace, name, renderRef,
    /// time). Nothing was read or written.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Object `index` (from 0) of a render is not a JSON object Go's decoder accepts.
    /// Nothing was written.
    #[error("object {index} of the render is invalid: {message}")]
    InvalidObject {
        /// Position of the object in the render.
        index: u32,
        /// What was wrong and where.
        message: String,
    },
    /// A YAML stream given to a `yaml-*` export is not a render: the first failing
    /// document (CONTRACT.md §11).
    #[error(
        "invalid YAML stream: document {document} (line {line}, column {column}): {stage} error: {message}"
    )]
    InvalidYaml {
        /// The document's index from 0, counting skipped (empty or `null`) documents.
        document: u32,
        /// The line in the stream, from 1.
        line: u32,
        /// The column, from 1, in characters.
        column: u32,
        /// The step that failed.
        stage: crate::types::YamlStage,
        /// What was wrong.
        message: String,
    },
    /// The render asked for is not in the store.
    #[error("not found: {0}")]
    NotFound(String),
    /// A stored blob does not hash to its key, or a history entry does not parse.
    #[error("corrupt: {0}")]
    Corrupt(String),
    /// A bucket call failed while the operation ran.
    #[error("bucket call failed: {0}")]
    Bucket(String),
    /// A render blob is sealed under a key the store's keyring does not hold (or holds
    /// under that id a different key); the text names the key id.
    #[error("encryption key: {0}")]
    EncryptionKey(String),
    /// A bucket call made by the host itself (such as `ls`) failed.
    #[error(transparent)]
    Backend(#[from] BucketError),
    /// The render-store URL cannot be opened.
    #[error("render-store URL {url:?}: {reason}")]
    Url {
        /// The URL without its user, password and query values
        /// ([`redact_url`](crate::redact_url)).
        url: String,
        /// What is wrong with it and what to do.
        reason: String,
    },
    /// The call's linear memory would have grown past its cap: the input is too large
    /// for [`Limits::memory_bytes`](crate::Limits::memory_bytes). Only this call is
    /// affected. The message names no setting: each host names its own (the CLI's
    /// `--memory-cap-mib`, this library's `Limits::memory_bytes`, Go's `WithMemoryLimit`).
    #[error(
        "the render-store component was stopped: the call exceeded its memory cap: it wanted \
         {wanted} bytes of memory, over its cap of {cap} bytes; the input is too large for \
         the cap"
    )]
    MemoryCap {
        /// The size the memory would have grown to, in bytes.
        wanted: u64,
        /// The cap, in bytes.
        cap: u64,
    },
    /// The call used up its CPU budget ([`Limits::fuel`](crate::Limits::fuel)): the
    /// input is too large or the guest looped. Only this call is affected.
    #[error(
        "the render-store component was stopped: the call used up its CPU budget of \
         {budget} fuel units; the input is too large for the budget, or the guest looped"
    )]
    Fuel {
        /// The budget, in fuel units.
        budget: u64,
    },
    /// The component trapped (a bug in it, or a host function failed). Only this call
    /// is affected.
    #[error("the render-store component was stopped: {message}")]
    Trap {
        /// What the trap said, with its context.
        message: String,
        /// The trap as wasmtime reported it.
        #[source]
        source: BoxError,
    },
    /// The sandbox could not be set up or used: the component does not compile, the
    /// instance pool cannot be reserved, the runtime is shutting down.
    #[error("the render-store runtime: {0}")]
    Runtime(String),
    /// The call's deadline passed before it finished
    /// ([`RenderStore::with_deadline`](crate::RenderStore::with_deadline),
    /// [`RenderStore::with_timeout`](crate::RenderStore::with_timeout)): it was cut
    /// where it waited, the bucket request in flight abandoned. The store is as a crash
    /// at that moment leaves it: nothing half-written (CONTRACT.md §15).
    #[error("deadline exceeded: the call was cut after {}", humanize(*after))]
    DeadlineExceeded {
        /// How long the call ran before it was cut.
        after: std::time::Duration,
    },
    /// The call was cancelled ([`CancelToken::cancel`](crate::CancelToken::cancel))
    /// before it finished, and cut as at a deadline.
    #[error("cancelled: the call was cancelled before it finished")]
    Cancelled,
}

/// A duration as people read it: milliseconds below ten seconds, seconds above.
fn humanize(d: std::time::Duration) -> String {
    if d < std::time::Duration::from_secs(10) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// An error from code outside this crate (an [`Applier`](crate::controller::Applier),
/// a render source), kept whole as a source.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

impl Error {
    /// Whether the sandbox stopped the call (memory cap, CPU budget, trap), as opposed
    /// to the component answering an error or a bucket failing.
    pub fn is_stopped(&self) -> bool {
        matches!(
            self,
            Error::MemoryCap { .. } | Error::Fuel { .. } | Error::Trap { .. }
        )
    }

    /// Whether the caller's deadline or cancellation cut the call
    /// ([`Error::DeadlineExceeded`], [`Error::Cancelled`]) rather than anything going
    /// wrong in the store.
    pub fn is_cut(&self) -> bool {
        matches!(self, Error::DeadlineExceeded { .. } | Error::Cancelled)
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
