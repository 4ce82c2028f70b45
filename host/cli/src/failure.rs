//! How a command's failure is told: the kind of each error, stable for programs that
//! read `-o json` errors, and the refusals of the CLI's own rules.

use render_store::{Error, ObserverError};

/// A refusal by one of the CLI's own rules (an empty render, a release with no key, a
/// render name that names nothing), with the kind `-o json` reports.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// The kind: `input` or `not-found`.
    pub kind: &'static str,
    /// What was wrong and what to do.
    pub message: String,
}

/// An input the CLI's rules refuse.
pub fn input(message: impl Into<String>) -> anyhow::Error {
    Refusal {
        kind: "input",
        message: message.into(),
    }
    .into()
}

/// Something named that is not in the store.
pub fn not_found(message: impl Into<String>) -> anyhow::Error {
    Refusal {
        kind: "not-found",
        message: message.into(),
    }
    .into()
}

/// What the user can do about a limit the error ran into, in the CLI's own words (the
/// library's message names no setting): the flag that raises it.
pub fn advice(e: &anyhow::Error) -> Option<&'static str> {
    let limit = e
        .chain()
        .find_map(|cause| match cause.downcast_ref::<Error>() {
            Some(e @ (Error::MemoryCap { .. } | Error::Fuel { .. })) => Some(e),
            Some(_) => None,
            None => match cause.downcast_ref::<ObserverError>() {
                Some(ObserverError::Store(e @ (Error::MemoryCap { .. } | Error::Fuel { .. }))) => {
                    Some(e)
                }
                _ => None,
            },
        })?;
    Some(match limit {
        Error::MemoryCap { .. } => {
            "raise --memory-cap-mib (RENDER_STORE_MEMORY_CAP_MIB) if the input is legitimate"
        }
        _ => "raise --fuel (RENDER_STORE_FUEL) if the input is legitimate",
    })
}

/// The kind of a command's error: the first error in its chain that has one.
pub fn kind(e: &anyhow::Error) -> &'static str {
    for cause in e.chain() {
        if let Some(r) = cause.downcast_ref::<Refusal>() {
            return r.kind;
        }
        if let Some(e) = cause.downcast_ref::<Error>() {
            return store_kind(e);
        }
        if let Some(e) = cause.downcast_ref::<ObserverError>() {
            return match e {
                ObserverError::NoStore => "input",
                ObserverError::Store(e) => store_kind(e),
                ObserverError::NoHistory(_) => "not-found",
                ObserverError::Source(_) => "other",
            };
        }
        if cause.downcast_ref::<render_store::BucketError>().is_some() {
            return "bucket";
        }
    }
    "other"
}

fn store_kind(e: &Error) -> &'static str {
    match e {
        Error::InvalidInput(_) => "input",
        Error::InvalidObject { .. } => "invalid-object",
        Error::InvalidYaml { .. } => "invalid-yaml",
        Error::NotFound(_) => "not-found",
        Error::Corrupt(_) => "corrupt",
        Error::EncryptionKey(_) => "encryption-key",
        Error::Bucket(_) | Error::Backend(_) => "bucket",
        Error::Url { .. } => "url",
        Error::MemoryCap { .. } | Error::Fuel { .. } => "limit",
        Error::Trap { .. } | Error::Runtime(_) => "runtime",
        Error::DeadlineExceeded { .. } | Error::Cancelled => "deadline",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_found_through_context() {
        use anyhow::Context;
        let e: anyhow::Result<()> = Err(Error::NotFound("x".into())).context("reading");
        assert_eq!(kind(&e.unwrap_err()), "not-found");
        assert_eq!(kind(&input("empty").context("put")), "input");
        assert_eq!(kind(&anyhow::anyhow!("plain")), "other");
    }

    #[test]
    fn a_limit_is_told_with_the_flag_that_raises_it() {
        use anyhow::Context;
        let e: anyhow::Result<()> = Err(Error::MemoryCap { wanted: 2, cap: 1 }).context("reading");
        let told = advice(&e.unwrap_err()).unwrap();
        assert!(told.contains("--memory-cap-mib"), "{told}");
        let e = anyhow::Error::new(Error::Fuel { budget: 1 });
        assert!(advice(&e).unwrap().contains("--fuel"));
        assert_eq!(advice(&anyhow::anyhow!("plain")), None);
    }
}
