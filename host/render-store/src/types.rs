//! The data types of the API: the guest's own plain types, which the records of the
//! WIT `types` interface mirror field for field. The sandbox converts them at the
//! boundary (`runtime/convert.rs`), so bindgen's output never shows in this crate's API,
//! and a type is defined once, where the logic that fills it lives.

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
/// `Runtime::check_objects_in`, …) lend its buffers to the sandboxed call and have them
/// back when it returns, whatever it returned: the host holds the render once, with no
/// copy made to pass it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinedObjects {
    /// Every object's bytes, one after another.
    pub bytes: Vec<u8>,
    /// Where each object ends in `bytes`; the last end is `bytes.len()`.
    pub ends: Vec<u32>,
}

impl JoinedObjects {
    /// How many objects.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no object.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Object `i`'s bytes.
    pub fn object(&self, i: usize) -> &[u8] {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// Each object's bytes, copied: for what takes objects one by one (a trace records
    /// them so).
    pub fn to_objects(&self) -> Vec<Vec<u8>> {
        (0..self.len()).map(|i| self.object(i).to_vec()).collect()
    }

    /// Appends an object.
    pub fn push(&mut self, object: &[u8]) {
        self.bytes.extend_from_slice(object);
        // An end past 4 GiB cannot be said in the WIT's u32: the component refuses the
        // render (its ends then do not fit), as it refuses any render that large.
        self.ends
            .push(u32::try_from(self.bytes.len()).unwrap_or(u32::MAX));
    }
}
