//! The convoy render store, host side.
//!
//! The logic runs in a WebAssembly component built from the `guest/` crate ([`COMPONENT`]);
//! this crate embeds it with wasmtime ([`Runtime`]), gives it a bucket over
//! `object_store` opened from a render-store URL ([`RenderStore::open`]), and offers the
//! async API. The `render-store` binary (package `render-store-cli`) is a thin CLI over
//! it.
//!
//! `file://` and `mem://` stores need nothing more; `s3://`, `gs://` and `azblob://`
//! need the `s3`, `gcs` and `azure` features (`cloud`: all three), which bring
//! object_store's cloud backends and their HTTP client. The `conformance` feature adds the module `conformance`: the bucket
//! contract's cases, runnable on any [`Bucket`].
//!
//! ```no_run
//! # async fn demo() -> render_store::Result<()> {
//! use render_store::{RenderStore, Release};
//! let store = RenderStore::open("mem://")?.expect("a URL was given");
//! let release = Release::new("default", "guestbook");
//! let render_ref = store
//!     .put_render(&release, &[br#"{"kind":"ConfigMap"}"#.to_vec()])
//!     .await?;
//! assert!(render_ref.starts_with("sha256:"));
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod bucket;
mod component_cache;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod controller;
mod deadline;
mod embedded;
mod error;
pub mod fleet;
pub mod fleet_changes;
pub mod fleet_images;
pub mod fleet_index;
pub mod json_encoding;
pub mod json_view;
mod keyring;
mod logic;
mod observer;
pub mod operation;
mod runtime;
mod secret_file;
mod store;
mod store_url;
pub mod trace;
mod types;
/// The JSON of every WIT type (docs/json.md), generated from the WIT.
pub mod wit_json;

/// The WIT package the embedded component implements, as wit/render-store.wit names it
/// (`convoy:render-store@VERSION`).
pub const WIT_PACKAGE: &str = env!("RENDER_STORE_WIT_PACKAGE");

pub use bucket::{
    Bucket, BucketCall, BucketError, Delimited, Denial, FolderBucket, ObjectMeta,
    ObjectStoreBucket, ReadOnlyBucket, RecordingBucket, check_key,
};
pub use deadline::CancelToken;
pub use embedded::COMPONENT;
pub use error::{BoxError, Error, Result};
pub use keyring::Keyring;
pub use observer::{Observer, ObserverError, ReleasePage, ReleaseSummary, RenderRead};
/// The suffix of gocloud fileblob's metadata file of a key (`<key>.attrs`), which the
/// store reads as part of its key (CONTRACT.md §3): not foreign, deleted with it.
pub use render_store_guest::keys::METADATA_SUFFIX;
/// Every type the WIT declares, one module per interface: the types the typed calls
/// ([`Runtime::logic`], [`RenderStore::calls`]) take and give.
pub use render_store_guest::wit;
pub use runtime::{Limits, Runtime};
pub use secret_file::read_secret_file;
pub use store::{
    LogicCalls, RUNTIME_FUNCTIONS, RenderStore, STORE_FUNCTIONS, StoreCalls, TraceCalls,
};
pub use store_url::{
    ClientSettings, REDACTED, SCHEMES, accepted_params, open_bucket, open_bucket_with, redact_url,
    redact_urls_in,
};
pub use types::{
    AuthenticateReport, ChangedObject, DEFAULT_CONTEXT, EntryRead, EntryTrust, FieldBlame, GcPlan,
    Grace, HistoryEntry, HistoryKey, HistoryPage, HistorySummary, ImageChange, ImageInterval,
    ImageUse, IndexCheck, IndexReport, IndexedObject, JoinedObjects, MAX_RENDER_BYTES, NewEntry,
    ObjectBlame, ObjectForm, ObjectId, PageObject, ParsedKey, Release, RenderChanges, RenderDiff,
    RenderPage, SecretKeyChange, SecretValues, ShownObject, SyncTime, YamlStage,
};
