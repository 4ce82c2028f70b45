//! One module per command: each takes the [`Context`] the global options make and its
//! own arguments, does its work through the library, and prints what it found.

pub mod authenticate;
pub mod blame;
pub mod changes;
pub mod completion;
pub mod component;
pub mod delete_entry;
pub mod delete_release;
pub mod demo;
pub mod diff;
pub mod export;
pub mod history;
pub mod images;
pub mod inspect;
pub mod ls;
pub mod operation;
pub mod reindex;
pub mod rekey;
pub mod releases;
pub mod replay;
pub mod serve;
pub mod verify;

use crate::args::OutputFormat;
use anyhow::{Context as _, Result, bail};
use render_store::bucket::messages::quote;
use render_store::{Keyring, Release, RenderStore, SecretValues};
use std::path::Path;

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// As asked: exit status 0.
    Done,
    /// `diff` found differences, `verify` problems, `releases` or `changes` an unlisted
    /// folder: exit status 1, as diff(1).
    Differs,
}

/// The keyring the global flags name, and whether it is required.
#[derive(Debug, Clone, Copy)]
pub struct Keys<'a> {
    /// `--encryption-keys`.
    pub file: Option<&'a Path>,
    /// `--encryption-required`.
    pub required: bool,
}

/// What the global options say, for every command.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// `--render-store-url` (empty: none given).
    pub url: &'a str,
    /// The keyring options.
    pub keys: Keys<'a>,
    /// `-n`.
    pub namespace: Option<&'a str>,
    /// `-o` (with `--json` folded in).
    pub format: OutputFormat,
    /// `--show-secrets`.
    pub secrets: SecretValues,
    /// `-q`.
    pub quiet: bool,
}

impl Context<'_> {
    /// Whether the output is JSON.
    pub fn as_json(&self) -> bool {
        self.format == OutputFormat::Json
    }

    /// The store `--render-store-url` names, with the keyring the options name.
    pub async fn open(&self) -> Result<RenderStore> {
        match RenderStore::open(self.url)? {
            Some(store) => with_keys(store, self.keys).await,
            None => bail!(
                "no render store: pass --render-store-url (s3://, gs://, azblob://, \
                 file:///abs/path or mem://) or set RENDER_STORE_URL"
            ),
        }
    }

    /// A release argument: `NAMESPACE/NAME`, or `NAME` with `-n NAMESPACE`.
    pub fn release(&self, text: &str) -> Result<Release> {
        parse_release(text, self.namespace)
    }

    /// The store with its keyring, for a command that writes under the keyring's first
    /// key (`what` says what it writes), and the release `release` names, or every
    /// release of the store when `None` (`--all`).
    pub async fn keyed_releases(
        &self,
        release: Option<&str>,
        what: &str,
    ) -> Result<(RenderStore, Vec<Release>)> {
        let store = self.open().await?;
        if store.keyring().is_empty() {
            bail!(
                "{what} under the first key of a keyring: give --encryption-keys FILE or \
                 set RENDER_STORE_ENCRYPTION_KEYS"
            );
        }
        let releases = match release {
            Some(r) => {
                let release = self.release(r)?;
                crate::names::require_release(&store, &release).await?;
                vec![release]
            }
            None => crate::names::releases(&store).await?,
        };
        Ok((store, releases))
    }
}

/// `store`, encrypted with the keyring file `keys` names when one is given.
pub async fn with_keys(store: RenderStore, keys: Keys<'_>) -> Result<RenderStore> {
    let store = match keys.file {
        None => store,
        Some(path) => {
            let keyring = Keyring::from_file(store.runtime(), path).await?;
            store.with_keyring(keyring)
        }
    };
    Ok(store.with_encryption_required(keys.required)?)
}

/// A release argument: `NAMESPACE/NAME`, or `NAME` with `-n NAMESPACE`. A bad one is
/// quoted as a JSON string, as every message of the hosts quotes keys: a newline or
/// quote in it cannot bend the message.
pub fn parse_release(text: &str, namespace: Option<&str>) -> Result<Release> {
    let joined;
    let text = match namespace {
        Some(ns) if !text.contains('/') => {
            joined = format!("{ns}/{text}");
            joined.as_str()
        }
        Some(ns) if !text.starts_with(&format!("{ns}/")) => bail!(
            "{} names another namespace than -n {}: give NAME alone with -n",
            quote(text),
            quote(ns)
        ),
        _ => text,
    };
    // The sentence every host writes (tests/vectors/messages.json).
    Release::parse(text).with_context(|| format!("{} is not NAMESPACE/NAME", quote(text)))
}
