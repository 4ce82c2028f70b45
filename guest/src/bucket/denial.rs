//! Why a bucket refused a call before it reached the backend, as data: a reason with its
//! key, worded once by [`messages`] (its `Display` is the `denied` text the WIT
//! specifies), so code that handles a refusal matches on the reason, not on a sentence.

use super::messages::{self, Unwalkable};
use std::fmt;

/// Why a host's bucket refused a call; its `Display` is the text of the `denied` it
/// answers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Denial {
    /// A bucket call made by a call that was given no bucket (the pure logic).
    NoBucket,
    /// `key` does not start with `prefix`, the prefix of the release being served.
    OutsidePrefix {
        /// The key asked for.
        key: String,
        /// The release's prefix.
        prefix: String,
    },
    /// `key` is not a clean `/`-separated path ([`check_key`](super::check_key)).
    InvalidKey {
        /// The key.
        key: String,
    },
    /// A `put` or `delete` on a read-only bucket (the observer's).
    ReadOnly {
        /// `put` or `delete`.
        call: &'static str,
        /// The key.
        key: String,
    },
    /// `file://`: a folder on the way to `key`, named `component`, is a link or a file.
    CrossesLink {
        /// The key.
        key: String,
        /// The path of the link or file, from the store's root.
        component: String,
    },
    /// `file://`: `key` names a FIFO, a socket or a device.
    NotPlainFile {
        /// The key.
        key: String,
    },
    /// `file://`: a `put` of a key holding `#`, which marks staging files.
    StagingMark {
        /// The key.
        key: String,
    },
    /// `file://`: a `delete` of a key that names a folder.
    FolderNotBlob {
        /// The key.
        key: String,
    },
    /// `file://`: a listing of `prefix` met `path`, which it will not walk.
    Unwalkable {
        /// The prefix listed.
        prefix: String,
        /// What the listing met, from the store's root.
        path: String,
        /// Why it will not walk it.
        why: Unwalkable,
    },
    /// A refusal in the words of a bucket written outside this library (a Go or
    /// Python bucket through the C ABI) or of a replayed trace.
    Given(String),
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Denial::NoBucket => messages::NO_BUCKET.to_string(),
            Denial::OutsidePrefix { key, prefix } => messages::outside_prefix(key, prefix),
            Denial::InvalidKey { key } => messages::invalid_key(key),
            Denial::ReadOnly { call, key } => messages::read_only(call, key),
            Denial::CrossesLink { key, component } => messages::crosses_link(key, component),
            Denial::NotPlainFile { key } => messages::not_plain_file(key),
            Denial::StagingMark { key } => messages::staging_mark(key),
            Denial::FolderNotBlob { key } => messages::folder_not_blob(key),
            Denial::Unwalkable { prefix, path, why } => messages::unwalkable(prefix, path, *why),
            Denial::Given(text) => return f.write_str(text),
        };
        f.write_str(&text)
    }
}
