//! JSON values written in the order they were built: the descriptions keep the WIT's
//! order of interfaces, functions and fields, which a map type would sort.

use std::fmt::{self, Write};

/// A JSON value whose objects keep their insertion order.
#[derive(Debug)]
pub enum Json {
    Null,
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn string(s: &str) -> Json {
        Json::String(s.to_owned())
    }

    pub fn object<'a>(entries: impl IntoIterator<Item = (&'a str, Json)>) -> Json {
        Json::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }
}

fn quoted(out: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    // serde_json's string escaping, the same JSON.parse reads back.
    out.write_str(&serde_json::to_string(s).map_err(|_| fmt::Error)?)
}

impl fmt::Display for Json {
    /// Compact JSON, as `JSON.stringify` writes it.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => out.write_str("null"),
            Json::String(s) => quoted(out, s),
            Json::Array(items) => {
                out.write_char('[')?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.write_char(',')?;
                    }
                    item.fmt(out)?;
                }
                out.write_char(']')
            }
            Json::Object(entries) => {
                out.write_char('{')?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.write_char(',')?;
                    }
                    quoted(out, key)?;
                    out.write_char(':')?;
                    value.fmt(out)?;
                }
                out.write_char('}')
            }
        }
    }
}
