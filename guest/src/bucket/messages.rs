//! Every message a host gives the component in a `bucket-error`, and the line it logs
//! for an entry a `file://` listing leaves out, worded as `bucket-error` in
//! wit/render-store.wit specifies them, once: the Rust host words its refusals and
//! failures with these (and so do the Go and Python packages, through it), and the
//! component scopes a replayed bucket with the same words.
//!
//! Keys, prefixes and file names are quoted as JSON strings ([`quote`]): every language
//! has that quoting in its standard library (`JSON.stringify`, `json.dumps`), so no host
//! carries a copy of another language's string escaping, and a hostile key (a newline,
//! a quote) cannot make a message say something else.

use std::fmt::Display;

pub use crate::json::quote;

/// `denied`: a bucket call made while the component runs a call that was given no
/// bucket (the pure logic).
pub const NO_BUCKET: &str = "this call has no bucket";

/// `denied`: `key` does not start with the prefix of the release being served.
pub fn outside_prefix(key: &str, prefix: &str) -> String {
    format!(
        "key {} lies outside {}, the prefix of the release being served",
        quote(key),
        quote(prefix)
    )
}

/// `denied`: `key` is not a clean `/`-separated path (empty, a leading or trailing
/// `/`, an empty, `.` or `..` component, a control character): every backend refuses
/// it rather than store it under another name.
pub fn invalid_key(key: &str) -> String {
    format!(
        "{} is not a valid object key (empty, `.` or `..` components, or control characters)",
        quote(key)
    )
}

/// `denied`: a `put` or `delete` (`call`) on a read-only bucket (the observer's).
pub fn read_only(call: &str, key: &str) -> String {
    format!("{call} {}: this bucket is read-only", quote(key))
}

/// `failed`: a `get` of an object larger than the call's memory cap, refused before
/// it is read.
pub fn too_large(key: &str, size: u64, limit: u64) -> String {
    format!(
        "get {}: the object is {size} bytes, over the call's memory cap of {limit} bytes; \
         raise the cap if the object is legitimate",
        quote(key)
    )
}

/// `failed` (of the whole `delete-many` request): the bucket answered `answered`
/// results for the `asked` keys it was given, the first of which is `first`.
pub fn miscounted(first: &str, answered: usize, asked: usize) -> String {
    backend(
        "delete-many",
        first,
        format!("the bucket answered {answered} results for {asked} keys"),
    )
}

/// `failed`: the backend failed a call; `description` is the backend's own text (an
/// I/O or HTTP error), which differs between hosts.
pub fn backend(call: &str, key: &str, description: impl Display) -> String {
    format!("{call} {}: {description}", quote(key))
}

/// `denied` (`file://`): a folder on the way to `key`, the name `component`, is a
/// symbolic link or a file.
pub fn crosses_link(key: &str, component: &str) -> String {
    format!(
        "key {} crosses {}, which is a symbolic link or not a folder; a file:// store \
         never follows links: remove it",
        quote(key),
        quote(component)
    )
}

/// `denied` (`file://`): `key` names a FIFO, a socket or a device.
pub fn not_plain_file(key: &str) -> String {
    format!(
        "{} is not a regular file; a file:// store keeps blobs in plain files only",
        quote(key)
    )
}

/// `denied` (`file://`): a `put` of a key holding `#`, which marks staging files.
pub fn staging_mark(key: &str) -> String {
    format!(
        "{} holds \"#\", which a file:// store reserves for staging files",
        quote(key)
    )
}

/// `denied` (`file://`): a `delete` of a key that names a folder.
pub fn folder_not_blob(key: &str) -> String {
    format!("{} is a folder, not a blob", quote(key))
}

pub use crate::wit::logic::Unwalkable;

impl Unwalkable {
    fn what(self) -> &'static str {
        match self {
            Unwalkable::Link => "a symbolic link, which a file:// store never follows",
            Unwalkable::NotFolder => "which is not a folder, though the prefix needs one there",
            Unwalkable::Unreadable => "a folder this user cannot read",
        }
    }

    fn fix(self) -> &'static str {
        match self {
            Unwalkable::Link => "remove the link, or move back what it points to",
            Unwalkable::NotFolder => "remove it, or move back the folder",
            Unwalkable::Unreadable => "make it readable by this user",
        }
    }
}

/// `denied` (`file://`): a listing of `prefix` met `path` inside it, which it will not
/// walk. The listing fails as a whole: an answer without what lies beyond `path` would
/// read as "not there" to GC and delete-release (CONTRACT.md §12, fail closed).
pub fn unwalkable(prefix: &str, path: &str, why: Unwalkable) -> String {
    format!(
        "list {} meets {}, {}; a listing fails rather than leave out what it cannot see: {}",
        quote(prefix),
        quote(path),
        why.what(),
        why.fix()
    )
}

pub use crate::wit::logic::LeftOut;

impl LeftOut {
    fn why(self) -> &'static str {
        match self {
            LeftOut::Link => "a symbolic link",
            LeftOut::LinkOrFile => "a symbolic link or not a folder",
            LeftOut::NotPlainFile => "not a regular file",
            LeftOut::OddName => "a name that is not UTF-8 or holds control characters",
        }
    }
}

/// The path a listing left out, for [`left_out`]: the would-be key, quoted; a name
/// that is not UTF-8 is shown with U+FFFD for each invalid sequence (the "maximal
/// subpart" rule of `String::from_utf8_lossy`, `TextDecoder` and Python's `"replace"`).
pub fn entry(path: &[u8]) -> String {
    quote(&String::from_utf8_lossy(path))
}

/// The path a listing left out when the folder `dir` the prefix names crosses
/// `component`, a link or a file.
pub fn entry_at(dir: &str, component: &str) -> String {
    format!("{} (at {})", quote(dir), quote(component))
}

/// The log line (after the host's own lead-in) for an entry a `file://` listing left
/// out; `entry` is made by [`entry`] or [`entry_at`].
pub fn left_out(entry: &str, why: LeftOut) -> String {
    format!(
        "left out of listings: {entry} is {}; a file:// store never follows links or lists \
         what is not a plain file with a clean name",
        why.why()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use serde_json::Value;

    /// The shared vectors (tests/vectors/messages.json): the Node host checks the same
    /// file, so it and the Rust host agree byte for byte.
    const VECTORS: &str = include_str!("../../../tests/vectors/messages.json");

    fn text<'a>(case: &'a Value, field: &str) -> &'a str {
        case[field]
            .as_str()
            .unwrap_or_else(|| panic!("{field} of {case}"))
    }

    #[test]
    fn the_shared_vectors() {
        let vectors: Value = serde_json::from_str(VECTORS).expect("the vectors parse");
        let cases = vectors["cases"].as_array().expect("cases");
        assert!(cases.len() >= 20, "only {} cases", cases.len());
        for case in cases {
            let got = match text(case, "message") {
                "quote" => quote(text(case, "text")),
                "no-bucket" => NO_BUCKET.to_string(),
                "outside-prefix" => outside_prefix(text(case, "key"), text(case, "prefix")),
                "invalid-key" => invalid_key(text(case, "key")),
                "read-only" => read_only(text(case, "call"), text(case, "key")),
                "too-large" => too_large(
                    text(case, "key"),
                    case["size"].as_u64().expect("size"),
                    case["limit"].as_u64().expect("limit"),
                ),
                "backend" => backend(
                    text(case, "call"),
                    text(case, "key"),
                    text(case, "description"),
                ),
                "miscounted" => miscounted(
                    text(case, "first"),
                    case["answered"].as_u64().expect("answered") as usize,
                    case["asked"].as_u64().expect("asked") as usize,
                ),
                "crosses-link" => crosses_link(text(case, "key"), text(case, "component")),
                "not-plain-file" => not_plain_file(text(case, "key")),
                "staging-mark" => staging_mark(text(case, "key")),
                "folder-not-blob" => folder_not_blob(text(case, "key")),
                "unwalkable" => {
                    let why = match text(case, "why") {
                        "link" => Unwalkable::Link,
                        "not-folder" => Unwalkable::NotFolder,
                        "unreadable" => Unwalkable::Unreadable,
                        other => panic!("why {other:?}"),
                    };
                    unwalkable(text(case, "prefix"), text(case, "path"), why)
                }
                "left-out" => {
                    let why = match text(case, "why") {
                        "link" => LeftOut::Link,
                        "link-or-file" => LeftOut::LinkOrFile,
                        "not-plain-file" => LeftOut::NotPlainFile,
                        "odd-name" => LeftOut::OddName,
                        other => panic!("why {other:?}"),
                    };
                    let entry = match (case.get("bytes_b64"), case.get("component")) {
                        (Some(_), _) => entry(&BASE64.decode(text(case, "bytes_b64")).unwrap()),
                        (None, Some(_)) => entry_at(text(case, "path"), text(case, "component")),
                        (None, None) => entry(text(case, "path").as_bytes()),
                    };
                    left_out(&entry, why)
                }
                other => panic!("unknown message {other:?}"),
            };
            assert_eq!(got, text(case, "want"), "{case}");
        }
    }

    /// JSON quoting escapes the C0 controls, `"` and `\` and nothing else, as
    /// JSON.stringify and json.dumps(ensure_ascii=False) do (checked over every
    /// character in tests/vectors/messages.json's `quote` cases and here).
    #[test]
    fn quote_escapes_only_c0_quote_and_backslash() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let quoted = quote(&c.to_string());
            let plain = format!("\"{c}\"");
            assert_eq!(quoted == plain, c >= ' ' && c != '"' && c != '\\', "{c:?}");
        }
        assert_eq!(
            quote("\u{1f}\u{7f}\u{85}\u{2028}"),
            "\"\\u001f\u{7f}\u{85}\u{2028}\""
        );
    }
}
