//! The error of every operation: the WIT `error` variant itself.

use std::fmt;

pub use crate::wit::types::{Error, ObjectError};

impl Error {
    /// `invalid-object`: object `index` (from 0) of a render, and what was wrong with
    /// it. An index past `u32::MAX`, which no render within the size cap reaches, is
    /// said as `u32::MAX`.
    pub fn invalid_object(index: usize, message: impl Into<String>) -> Error {
        Error::InvalidObject(ObjectError {
            index: u32::try_from(index).unwrap_or(u32::MAX),
            message: message.into(),
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidInput(m) => write!(f, "invalid input: {m}"),
            Error::InvalidObject(ObjectError { index, message }) => {
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
