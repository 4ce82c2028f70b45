//! The bindings wasmtime generates from wit/, private to the runtime, and the forms the
//! component takes its byte arguments in.

wasmtime::component::bindgen!({
    world: "render-store",
    path: "../../wit",
    imports: { default: async },
    exports: { default: async },
    additional_derives: [PartialEq, Eq],
});

pub(crate) use convoy::render_store::bucket as wit_bucket;
pub(crate) use exports::convoy::render_store::trace as wit_trace;
pub(crate) use exports::convoy::render_store::types as wit;

/// Bytes as the component takes them (the WIT `data`, a `list<u8>`): one copy.
pub(crate) fn data_arg(bytes: &[u8]) -> wit_bucket::Data {
    bytes.to_vec()
}

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

/// Lends `objects`' buffers to a call as the WIT `object-list` and takes them back when
/// `call` returns, whatever it returned: no copy of the render.
pub(crate) async fn lend_objects<T, F>(objects: &mut crate::types::JoinedObjects, call: F) -> T
where
    F: AsyncFnOnce(&wit::ObjectList) -> T,
{
    let lent = wit::JoinedObjects {
        bytes: std::mem::take(&mut objects.bytes),
        ends: std::mem::take(&mut objects.ends),
    };
    let answer = call(&lent).await;
    objects.bytes = lent.bytes;
    objects.ends = lent.ends;
    answer
}
