//! The data types of the API: the guest's own plain types, which the records of the
//! WIT `types` interface mirror field for field. The sandbox converts them at the
//! boundary (`runtime/convert.rs`), so bindgen's output never shows in this crate's API,
//! and a type is defined once, where the logic that fills it lives.

pub use render_store_guest::diff::{
    ChangedObject, DEFAULT_CONTEXT, ObjectForm, ObjectId, PageObject, RenderDiff, RenderPage,
    ShownObject,
};
pub use render_store_guest::gc::{GcPlan, Grace};
pub use render_store_guest::history::{
    EntryRead, HistoryEntry, HistoryPage, HistorySummary, NewEntry,
};
pub use render_store_guest::keys::{HistoryKey, ParsedKey, Release};
/// The largest render the store takes, in canonical bytes (64 MiB): the component
/// refuses a larger one in every operation that makes canonical bytes.
pub use render_store_guest::render::MAX_RENDER_BYTES;
pub use render_store_guest::secrets::SecretValues;
pub use render_store_guest::time::SyncTime;
/// The step of the YAML path that rejected a stream (CONTRACT.md §11).
pub use render_store_guest::yaml::Stage as YamlStage;
