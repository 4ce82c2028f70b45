//! The error of every operation, mirrored one to one by the WIT `error` variant.

use std::fmt;

/// Why an operation of the render store failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An argument was rejected before any bucket call.
    InvalidInput(String),
    /// Object `index` (from 0) of a render is not a JSON object Go's decoder accepts.
    InvalidObject {
        /// Position of the object in the render.
        index: usize,
        /// What was wrong and where.
        message: String,
    },
    /// The render or entry asked for does not exist.
    NotFound(String),
    /// A stored blob does not hash to its key, or an entry body does not parse.
    Corrupt(String),
    /// A bucket call failed.
    Bucket(String),
    /// A YAML stream is not a render.
    InvalidYaml(crate::yaml::YamlError),
    /// A render blob is encrypted with a key the keyring does not hold (or holds under
    /// its id a different key); the text names the key id.
    EncryptionKey(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidInput(m) => write!(f, "invalid input: {m}"),
            Error::InvalidObject { index, message } => {
                write!(f, "object {index} of the render is invalid: {message}")
            }
            Error::NotFound(m) => write!(f, "not found: {m}"),
            Error::Corrupt(m) => write!(f, "corrupt: {m}"),
            Error::Bucket(m) => write!(f, "bucket call failed: {m}"),
            Error::InvalidYaml(e) => write!(f, "invalid YAML stream: {e}"),
            Error::EncryptionKey(m) => write!(f, "encryption key: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<crate::yaml::YamlError> for Error {
    fn from(e: crate::yaml::YamlError) -> Self {
        Error::InvalidYaml(e)
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidInput(message.into())
}
