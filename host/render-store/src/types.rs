//! The data types of the API: the guest's own types, which are the records of the WIT
//! (generated from it into `render_store_guest::wit`) and cross into the component as
//! they are. A type is defined once, by the WIT.

pub use render_store_guest::blame::{FieldBlame, ObjectBlame};
pub use render_store_guest::changes::{ImageChange, RenderChanges, SecretKeyChange};
pub use render_store_guest::diff::{
    ChangedObject, DEFAULT_CONTEXT, ObjectForm, ObjectId, PageObject, RenderDiff, RenderPage,
    ShownObject,
};
pub use render_store_guest::gc::{GcPlan, Grace};
pub use render_store_guest::history::{
    AuthenticateReport, EntryRead, EntryTrust, HistoryEntry, HistoryPage, HistorySummary, NewEntry,
};
pub use render_store_guest::images::{ImageInterval, ImageUse, IndexedObject};
pub use render_store_guest::keys::{HistoryKey, ParsedKey, Release};
/// The largest render the store takes, in canonical bytes (64 MiB): the component
/// refuses a larger one in every operation that makes canonical bytes.
pub use render_store_guest::render::MAX_RENDER_BYTES;
pub use render_store_guest::render_index::{IndexCheck, IndexReport};
pub use render_store_guest::secrets::SecretValues;
pub use render_store_guest::time::SyncTime;
/// The step of the YAML path that rejected a stream (CONTRACT.md §11).
pub use render_store_guest::yaml::Stage as YamlStage;

/// A render's objects in one buffer, the form the component takes them in (WIT
/// `object-list`): object `i` is `bytes[ends[i - 1]..ends[i]]`, from 0 for the first.
/// The calls that take one by `&mut` (`RenderStore::put_render_in`,
/// `Runtime::check_objects_in`, …) pass it to the sandboxed call as it is: the host
/// holds the render once, with no copy made to pass it.
pub use render_store_guest::render::JoinedObjects;
