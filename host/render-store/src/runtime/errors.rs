//! Every error that crosses the sandbox's edge is converted here: the bucket's errors
//! into the WIT's, the component's errors and traps into the host's, and back, for the
//! trace of an operation that failed.

use super::bindings::{wit, wit_bucket};
use super::limits::Limits;
use crate::bucket::BucketError;
use crate::error::Error;
use wasmtime::Trap;

/// A bucket error as the component is given it.
pub(super) fn to_wit(e: BucketError) -> wit_bucket::BucketError {
    match e {
        BucketError::NotFound { .. } => wit_bucket::BucketError::NotFound,
        BucketError::Denied(reason) => wit_bucket::BucketError::Denied(reason.to_string()),
        BucketError::Failed(m) => wit_bucket::BucketError::Failed(m),
        // A backend's error may quote the request URL, and a signed (SAS) URL carries
        // its signature in the query: the component and everything it reports get it
        // redacted.
        other => wit_bucket::BucketError::Failed(crate::redact_urls_in(&other.to_string())),
    }
}

/// A wasmtime failure outside a call (engine, compile, link) as the host's error.
pub(super) fn sandbox(e: impl std::fmt::Display) -> Error {
    Error::Runtime(e.to_string())
}

/// A trap or host failure during a call, in words an operator can act on. A call whose
/// memory was refused growth and then trapped stopped for want of that memory (an
/// allocation the guest cannot do without aborts).
pub(super) fn trap(e: wasmtime::Error, refused: Option<usize>, limits: Limits) -> Error {
    if let Some(wanted) = refused
        && !matches!(e.downcast_ref::<Trap>(), Some(Trap::OutOfFuel))
    {
        return Error::MemoryCap {
            wanted: wanted as u64,
            cap: limits.memory_bytes as u64,
        };
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Error::Fuel {
            budget: limits.fuel,
        },
        _ => Error::Trap {
            message: format!("{e:#}"),
            source: e.into(),
        },
    }
}

/// The component's error variant as the host's error.
pub(crate) fn from_wit(e: wit::Error) -> Error {
    match e {
        wit::Error::InvalidInput(m) => Error::InvalidInput(m),
        wit::Error::InvalidObject(o) => Error::InvalidObject {
            index: o.index,
            message: o.message,
        },
        wit::Error::NotFound(m) => Error::NotFound(m),
        wit::Error::Corrupt(m) => Error::Corrupt(m),
        wit::Error::Bucket(m) => Error::Bucket(m),
        wit::Error::EncryptionKey(m) => Error::EncryptionKey(m),
        wit::Error::InvalidYaml(y) => Error::InvalidYaml {
            document: y.document,
            line: y.line,
            column: y.column,
            stage: y.stage,
            message: y.message,
        },
    }
}

/// The host's error as the component's error variant it came from; `None` for an error
/// the component did not return (the host stopped the call: a trap, a cap, a budget).
pub(crate) fn error_to_wit(e: &Error) -> Option<wit::Error> {
    Some(match e {
        Error::InvalidInput(m) => wit::Error::InvalidInput(m.clone()),
        Error::InvalidObject { index, message } => wit::Error::InvalidObject(wit::ObjectError {
            index: *index,
            message: message.clone(),
        }),
        Error::InvalidYaml {
            document,
            line,
            column,
            stage,
            message,
        } => wit::Error::InvalidYaml(wit::YamlError {
            stage: (*stage),
            document: *document,
            line: *line,
            column: *column,
            message: message.clone(),
        }),
        Error::NotFound(m) => wit::Error::NotFound(m.clone()),
        Error::Corrupt(m) => wit::Error::Corrupt(m.clone()),
        Error::Bucket(m) => wit::Error::Bucket(m.clone()),
        Error::EncryptionKey(m) => wit::Error::EncryptionKey(m.clone()),
        _ => return None,
    })
}
