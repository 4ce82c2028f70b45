//! The logic of the convoy render store, as a plain Rust library and as the
//! WebAssembly component the hosts run.
//!
//! Everything that decides anything lives here: the Go-compatible canonical JSON and
//! renderRef ([`render`], [`json`]), the key layout ([`keys`], [`time`]), the history
//! ([`history`]), garbage collection ([`gc`]), what changed from one render to the next
//! ([`changes`]), and the exact order of bucket calls of
//! every operation ([`store`]), and traces of operations with their replay ([`trace`]).
//! The only I/O is through a [`Bucket`]; there is no clock
//! and no randomness, so every operation is a pure function of its arguments and of the
//! bucket's answers.
//!
//! Built for `wasm32-unknown-unknown` with `--crate-type cdylib`, the `component`
//! module exports the WIT world `convoy:render-store/render-store` over the imported
//! `bucket` interface.

#![warn(missing_docs)]

pub mod blame;
pub mod bucket;
pub mod changes;
pub mod diff;
pub mod encryption;
pub mod error;
pub mod gc;
pub mod history;
pub mod images;
pub mod json;
pub mod keys;
pub mod kube_object;
pub mod policy;
pub mod render;
pub mod render_index;
pub mod secrets;
pub mod store;
pub mod time;
pub mod trace;
pub mod wit;
pub mod yaml;

#[cfg(target_arch = "wasm32")]
mod component;
#[cfg(target_arch = "wasm32")]
mod heap;

pub use bucket::{Bucket, BucketError, MemoryBucket, ObjectMeta};
pub use changes::{ImageChange, RenderChanges, SecretKeyChange, render_changes};
pub use diff::{
    ChangedObject, DEFAULT_CONTEXT, DiffView, ObjectForm, ObjectId, PageObject, RenderDiff,
    RenderPage, ShownObject, diff_canonical, render_page, show_objects,
};
pub use encryption::{Keyring, SealingKey};
pub use error::{Error, Result};
pub use gc::{GcPlan, Grace, gc, plan_gc};
pub use history::{
    AuthenticateReport, EntryRead, EntryTrust, HistoryEntry, HistoryPage, HistorySummary, NewEntry,
    authenticate_history, entry_body, has_history_ref, list_history, list_history_page,
    read_history_entries, record_history, summarize_history,
};
pub use images::{
    ImageInterval, ImagePattern, ImageUse, IndexedObject, image_intervals, index_objects,
    release_images, render_images,
};
pub use keys::{
    HistoryKey, ParsedKey, Release, ReleasePrefix, validate_name, validate_namespace,
    validate_render_ref,
};
pub use kube_object::{check_objects, json_object_ends, json_objects};
pub use render::{
    MAX_RENDER_BYTES, canonical, check_render_size, render_ref, render_ref_of_canonical, sha256_hex,
};
pub use secrets::SecretValues;
pub use store::{delete_release, diff_stored, get_render, put_render, show_render_page};
pub use time::{SyncTime, format_key_time, format_synced_at, parse_key_time, parse_synced_at};
pub use yaml::{Stage, YamlError, yaml_canonical, yaml_objects, yaml_render_ref};
