//! The host's error type. Errors of the component's WIT `error` variant and traps are
//! mapped here, in one place.

use crate::bucket::BucketError;

/// Why a render-store call failed.
#[derive(Debug, thiserror::Error)]
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
    /// The render asked for is not in the store.
    #[error("not found: {0}")]
    NotFound(String),
    /// A stored blob does not hash to its key, or a history entry does not parse.
    #[error("corrupt: {0}")]
    Corrupt(String),
    /// A bucket call failed while the operation ran.
    #[error("bucket call failed: {0}")]
    Bucket(String),
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
    /// The component was stopped: it exceeded its memory cap or CPU budget, or failed.
    /// Only this call is affected.
    #[error("the render-store component was stopped: {0}")]
    Sandbox(String),
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
