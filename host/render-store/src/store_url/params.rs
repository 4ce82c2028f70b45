//! The query parameters of a render-store URL: each one must be used, or the URL is
//! refused naming it.

use super::redact::url_error;
use crate::error::Error;
use std::collections::BTreeMap;

/// The parameters of one URL, consumed as a backend reads them.
pub(crate) struct Params {
    url: String,
    scheme: String,
    values: BTreeMap<String, String>,
}

// Without the `cloud` feature, file:// uses only a part of this.
#[cfg_attr(
    not(any(feature = "s3", feature = "gcs", feature = "azure")),
    allow(dead_code)
)]
impl Params {
    pub fn new(url: &str, parsed: &url::Url) -> Result<Self, Error> {
        let mut values = BTreeMap::new();
        for (k, v) in parsed.query_pairs() {
            if values.insert(k.to_string(), v.to_string()).is_some() {
                return Err(url_error(url, format!("parameter {k:?} is given twice")));
            }
        }
        Ok(Params {
            url: url.to_string(),
            scheme: parsed.scheme().to_string(),
            values,
        })
    }

    pub fn error(&self, reason: impl Into<String>) -> Error {
        url_error(&self.url, reason)
    }

    /// The URL's host part, which names the bucket (`what`: "bucket" or "container").
    pub fn bucket_name(&self, parsed: &url::Url, what: &str) -> Result<String, Error> {
        parsed
            .host_str()
            .filter(|name| !name.is_empty())
            .map(String::from)
            .ok_or_else(|| {
                let scheme = &self.scheme;
                self.error(format!(
                    "{scheme}:// needs a {what}: {scheme}://{}",
                    what.to_uppercase()
                ))
            })
    }

    /// Takes a parameter's value.
    pub fn take(&mut self, name: &str) -> Option<String> {
        self.values.remove(name)
    }

    /// Takes the first of several names for one parameter (a name and its legacy
    /// alias); both at once is an error.
    pub fn take_any(&mut self, names: &[&str]) -> Result<Option<String>, Error> {
        let found: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| self.values.contains_key(*n))
            .collect();
        if found.len() > 1 {
            return Err(self.error(format!(
                "parameters {found:?} mean the same; give one of them"
            )));
        }
        Ok(found.first().and_then(|n| self.values.remove(*n)))
    }

    /// Takes a boolean parameter, parsed as Go's `strconv.ParseBool` does. A bad value
    /// is not repeated in the error: the URL shown beside it has every value redacted,
    /// and a value put in the wrong place may be a credential.
    pub fn take_bool(&mut self, names: &[&str]) -> Result<Option<bool>, Error> {
        match self.take_any(names)? {
            None => Ok(None),
            Some(v) => parse_bool(&v)
                .map(Some)
                .ok_or_else(|| self.error(not_a_bool(names[0]))),
        }
    }

    /// Takes a boolean parameter this build cannot honour when true.
    pub fn refuse_true(&mut self, name: &str, why: &str) -> Result<(), Error> {
        if self.take_bool(&[name])? == Some(true) {
            return Err(self.error(format!("parameter {name:?} is not supported: {why}")));
        }
        Ok(())
    }

    /// Refuses a parameter this build cannot honour, whatever its value.
    pub fn refuse(&mut self, name: &str, why: &str) -> Result<(), Error> {
        if self.values.contains_key(name) {
            return Err(self.error(format!("parameter {name:?} is not supported: {why}")));
        }
        Ok(())
    }

    /// Every parameter must have been taken by now.
    pub fn finish(self, accepted: &[&str]) -> Result<(), Error> {
        match self.values.keys().next() {
            None => Ok(()),
            Some(name) => Err(url_error(
                &self.url,
                format!(
                    "unknown parameter {name:?} for {}:// (accepted: {})",
                    self.scheme,
                    if accepted.is_empty() {
                        "none".to_string()
                    } else {
                        accepted.join(", ")
                    }
                ),
            )),
        }
    }
}

/// The refusal of a value that is not a boolean, which never repeats the value.
pub(crate) fn not_a_bool(name: &str) -> String {
    format!("{name} must be true or false (or 1, t, T, TRUE, True, 0, f, F, FALSE, False)")
}

/// Go's `strconv.ParseBool`, which gocloud uses for its parameters.
pub(crate) fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// An environment variable, empty counting as unset.
#[cfg_attr(
    not(any(feature = "s3", feature = "gcs", feature = "azure")),
    allow(dead_code)
)]
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
