//! The WIT's types as the runtime names them (the guest's own, generated from wit/ by
//! render-store-bindgen), and the forms the component takes its byte arguments in.

pub(crate) use render_store_guest::wit::bucket as wit_bucket;
pub(crate) use render_store_guest::wit::trace as wit_trace;
pub(crate) use render_store_guest::wit::types as wit;

/// A render's objects as the component takes them (the WIT `object-list`): one buffer
/// and where each object ends, one copy of the whole render however many objects it has.
pub(crate) fn objects_arg(objects: &[Vec<u8>]) -> wit::ObjectList {
    let mut bytes = Vec::with_capacity(objects.iter().map(Vec::len).sum());
    let mut ends = Vec::with_capacity(objects.len());
    for o in objects {
        bytes.extend_from_slice(o);
        // An end past 4 GiB cannot be said in the WIT's u32: the component refuses the
        // render (its ends then do not fit), as it refuses any render that large.
        ends.push(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
    }
    wit::JoinedObjects { bytes, ends }
}

/// A render's objects already given as one buffer and where each ends (the C ABI's
/// form): one copy of the buffer.
pub(crate) fn joined_arg(bytes: &[u8], ends: &[u32]) -> wit::ObjectList {
    wit::JoinedObjects {
        bytes: bytes.to_vec(),
        ends: ends.to_vec(),
    }
}
