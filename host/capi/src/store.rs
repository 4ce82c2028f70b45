//! Store handles and the operations of CONTRACT.md §5.
//!
//! Every operation blocks the calling thread until it is done. A store handle may be
//! used by any number of threads at once; it must not be freed while a call on it runs.
//! The store operations that a trace can record (put-render, get-render,
//! has-history-ref, record-history, list-history, gc, delete-release) take a last
//! argument `trace`: NULL, or a buffer that receives the trace of the call (TRACES.md,
//! text), written whether the operation succeeded or failed. If the trace itself
//! cannot be written, the call returns that error (the operation may have run).

use crate::args::{self, opt_buf, opt_text, out, out_buf, text};
use crate::bucket::{CallbackBucket, Table, rs_bucket};
use crate::call::block_on;
use crate::error::{Result, guard, guard_void, rs_error};
use crate::json;
use crate::options::{rs_options, runtime};
use crate::value::{rs_buf, rs_grace, rs_time};
use render_store::operation::{Operation, Output};
use render_store::{
    CancelToken, Grace, Keyring, NewEntry, Observer, RenderStore, open_bucket_with,
};
use std::ffi::c_char;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A render store: a bucket, the runtime that runs the component over it, and GC's
/// grace period. Opened with `rs_store_open` or `rs_store_new`, freed with
/// `rs_store_free`. Safe to use from many threads at once.
pub struct rs_store {
    store: RenderStore,
    gc_grace: Duration,
}

impl rs_store {
    pub(crate) fn inner(&self) -> &RenderStore {
        &self.store
    }
}

/// The store behind `store`.
///
/// SAFETY (for callers): `store` is NULL or a store this library made, not freed.
pub(crate) unsafe fn get<'a>(store: *const rs_store) -> Result<&'a rs_store> {
    // SAFETY: as the caller promises.
    unsafe { store.as_ref() }.ok_or_else(|| {
        rs_error::argument(
            "store is NULL (an empty render-store URL gives no store: handle that case \
             before calling a store operation)",
        )
    })
}

fn made(store: RenderStore, options: &rs_options) -> *mut rs_store {
    let gc_grace = options.gc_grace();
    Box::into_raw(Box::new(rs_store {
        store: store.with_gc_grace(gc_grace),
        gc_grace,
    }))
}

/// Opens the store a render-store URL names (`url_len` bytes; `s3://`, `gs://`,
/// `azblob://`, `file://`, `mem://`, every parameter docs/urls.md lists), with `options`
/// (NULL: the defaults). Errors are the Rust library's: `RS_ERROR_URL` for an unknown
/// scheme or parameter or a bad value. An empty URL (or blanks only) means "no render
/// store": `*out` is set to NULL and no error is returned. Otherwise `*out` is a store
/// the caller frees with `rs_store_free`. A cloud backend's HTTP client waits and
/// retries as the options' `request_timeout_ms`, `connect_timeout_ms`, `max_retries`
/// and `retry_timeout_ms` say, unless the URL's `timeout`, `connect_timeout`, `retries`
/// and `retry_timeout` say otherwise. Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_open(
    url: *const c_char,
    url_len: usize,
    options: *const rs_options,
    out: *mut *mut rs_store,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, url, options) = unsafe {
            let out = args::out(out, "out")?;
            *out = std::ptr::null_mut();
            (out, text(url, url_len, "url")?, rs_options::read(options)?)
        };
        let rt = runtime(options.limits()?)?;
        if let Some(bucket) = open_bucket_with(url, &options.client_settings())? {
            *out = made(RenderStore::new(rt, bucket), &options);
        }
        Ok(())
    })
}

/// Opens a store over a bucket the caller implements (`rs_bucket`), with `options`
/// (NULL: the defaults). The table is copied; `user_data` is the store's from then on,
/// and passed to `bucket->drop` when the store is freed. On error nothing is kept:
/// `user_data` stays the caller's and `drop` is not called. Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_new(
    bucket: *const rs_bucket,
    options: *const rs_options,
    out: *mut *mut rs_store,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, options) = unsafe {
            let out = args::out(out, "out")?;
            *out = std::ptr::null_mut();
            (out, rs_options::read(options)?)
        };
        let rt = runtime(options.limits()?)?;
        // SAFETY: `bucket` is NULL or a readable rs_bucket of its stated size.
        let table = unsafe { Table::read(bucket) }?;
        *out = made(
            RenderStore::new(rt, Arc::new(CallbackBucket::new(table))),
            &options,
        );
        Ok(())
    })
}

/// Frees a store; NULL is ignored. Only once no call on it is running (then, for a
/// store over callbacks, `drop` is called on this thread). Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_free(store: *mut rs_store) {
    guard_void(|| {
        if !store.is_null() {
            // SAFETY: a store this library made, freed once, with no call running.
            drop(unsafe { Box::from_raw(store) });
        }
    })
}

/// Runs `operation`, traced into `trace` when it is given.
fn run(store: &rs_store, operation: Operation, trace: Option<&mut rs_buf>) -> Result<Output> {
    match trace {
        None => Ok(block_on(store.store.run(&operation))??),
        Some(buf) => {
            let (output, text) = block_on(render_store::trace::record(&store.store, &operation))?;
            buf.set_text(text?);
            Ok(output?)
        }
    }
}

/// The release given as a namespace and a name.
macro_rules! release {
    ($ns:expr, $ns_len:expr, $name:expr, $name_len:expr) => {
        // SAFETY: the header's rules: each pointer NULL with length 0, or `len` bytes.
        unsafe { args::release($ns, $ns_len, $name, $name_len) }?
    };
}

/// Stores a render unless its blob is stored intact (calls: `exists`, then `put`).
/// The render's objects, each one JSON object's bytes, come in one buffer: object `i`
/// is `objects[ends[i-1] .. ends[i]]` (from 0 for the first), `count` objects; `ends`
/// never decreases and its last is `objects_len` (an empty render: `count` 0). Ends that
/// do not split the buffer are `RS_ERROR_INVALID_INPUT`, a bad object
/// `RS_ERROR_INVALID_OBJECT`. On success `*render_ref` holds the renderRef (text).
/// The library copies the objects once (into the sandbox) and keeps nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_put_render(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    objects: *const u8,
    objects_len: usize,
    ends: *const usize,
    count: usize,
    render_ref: *mut rs_buf,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, trace, store, objects) = unsafe {
            (
                out_buf(render_ref, "render_ref")?,
                opt_buf(trace),
                get(store)?,
                args::joined(objects, objects_len, ends, count, "objects")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        // Split only for a trace, which records the objects one by one.
        let split = trace.is_some().then(|| objects.split()).flatten();
        let reference = match (trace, split) {
            (Some(trace), Some(items)) => {
                let objects = items.into_iter().map(<[u8]>::to_vec).collect();
                match run(
                    store,
                    Operation::PutRender { release, objects },
                    Some(trace),
                )? {
                    Output::RenderRef(r) => r,
                    other => unreachable!("put-render answered {other:?}"),
                }
            }
            // Untraced, or ends that do not split the buffer (which the component refuses
            // before any bucket call; no trace is written then).
            _ => {
                let ends = objects.ends_u32("objects")?;
                block_on(
                    store
                        .store
                        .put_render_joined(&release, objects.bytes, &ends),
                )??
            }
        };
        out.set_text(reference);
        Ok(())
    })
}

/// Stores the render a multi-document YAML stream (`yaml_len` bytes) stands for, as a
/// Go controller reads it (CONTRACT.md §11): `rs_yaml_objects`, then put-render of those
/// objects. A stream that is not a render is `RS_ERROR_INVALID_YAML` (then nothing is
/// traced). On success `*render_ref` holds the renderRef (text).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_put_render_yaml(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    yaml: *const u8,
    yaml_len: usize,
    render_ref: *mut rs_buf,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, trace, store, yaml) = unsafe {
            (
                out_buf(render_ref, "render_ref")?,
                opt_buf(trace),
                get(store)?,
                args::bytes(yaml, yaml_len, "yaml")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let objects = block_on(store.store.runtime().yaml_objects(yaml))??;
        match run(store, Operation::PutRender { release, objects }, trace)? {
            Output::RenderRef(r) => out.set_text(r),
            other => unreachable!("put-render answered {other:?}"),
        }
        Ok(())
    })
}

/// The canonical bytes of a stored render (call: `get`), verified against
/// `render_ref`: `RS_ERROR_NOT_FOUND` when absent, `RS_ERROR_CORRUPT` when they do not
/// hash to it. `*render` receives the bytes as the sandbox handed them out (no copy;
/// no NUL after them).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_get_render(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    render_ref: *const c_char,
    render_ref_len: usize,
    render: *mut rs_buf,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, trace, store, render_ref) = unsafe {
            (
                out_buf(render, "render")?,
                opt_buf(trace),
                get(store)?,
                text(render_ref, render_ref_len, "render_ref")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let operation = Operation::GetRender {
            release,
            render_ref: render_ref.to_string(),
        };
        match run(store, operation, trace)? {
            Output::Render(bytes) => out.set_bytes(bytes),
            other => unreachable!("get-render answered {other:?}"),
        }
        Ok(())
    })
}

/// Whether a history entry records `render_ref` (call: `list` of the history; no entry
/// is read): `*recorded`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_has_history_ref(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    render_ref: *const c_char,
    render_ref_len: usize,
    recorded: *mut bool,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (trace, store, render_ref, recorded) = unsafe {
            (
                opt_buf(trace),
                get(store)?,
                text(render_ref, render_ref_len, "render_ref")?,
                out(recorded, "recorded")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let operation = Operation::HasHistoryRef {
            release,
            render_ref: render_ref.to_string(),
        };
        match run(store, operation, trace)? {
            Output::Recorded(yes) => *recorded = yes,
            other => unreachable!("has-history-ref answered {other:?}"),
        }
        Ok(())
    })
}

/// Appends a history entry (`render_ref`, `synced_at`, `summary` of at most 65,536
/// bytes) unless one records the same render: `*added` says whether it did. The
/// library does not check the render is stored (`render-store record` does, with
/// `rs_store_get_render` or put-render first).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_record_history(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    render_ref: *const c_char,
    render_ref_len: usize,
    synced_at: rs_time,
    summary: *const c_char,
    summary_len: usize,
    added: *mut bool,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (trace, store, render_ref, summary, added) = unsafe {
            (
                opt_buf(trace),
                get(store)?,
                text(render_ref, render_ref_len, "render_ref")?,
                text(summary, summary_len, "summary")?,
                out(added, "added")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let entry = NewEntry {
            render_ref: render_ref.to_string(),
            synced_at: synced_at.into(),
            summary: summary.to_string(),
        };
        match run(store, Operation::RecordHistory { release, entry }, trace)? {
            Output::Added(yes) => *added = yes,
            other => unreachable!("record-history answered {other:?}"),
        }
        Ok(())
    })
}

/// The history, oldest first (calls: `list`, then `get` of each entry). `*entries`
/// receives JSON text, the shape the component writes for list-history (a trace's
/// result, `render-store replay --json`): `{"entries":[{"key":…,"renderRef":…,
/// "summary":…,"syncedAt":{"nanoseconds":N,"seconds":N}}, …]}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_list_history(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    entries: *mut rs_buf,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, trace, store) =
            unsafe { (out_buf(entries, "entries")?, opt_buf(trace), get(store)?) };
        let release = release!(namespace, namespace_len, name, name_len);
        let output = run(store, Operation::ListHistory { release }, trace)?;
        out.set_text(block_on(json::output(store.store.runtime(), &output))??);
        Ok(())
    })
}

/// At most `limit` history entries, newest first, older than the entry key `before`
/// when it is not NULL (the previous page's `nextBefore`): one listing and one read per
/// entry of the page. `*page` receives JSON text: `{"entries":[…],"nextBefore":KEY or
/// null}`, each entry as `rs_store_list_history` writes it. Not traceable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_list_history_page(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    limit: u32,
    before: *const c_char,
    before_len: usize,
    page: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, before) = unsafe {
            (
                out_buf(page, "page")?,
                get(store)?,
                opt_text(before, before_len, "before")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let text = block_on(async {
            let page = store
                .store
                .list_history_page(&release, limit, before)
                .await?;
            let entries = Output::Entries(page.entries);
            let ok = json::output(store.store.runtime(), &entries).await?;
            json::page(&ok, page.next_before.as_deref())
        })??;
        out.set_text(text);
        Ok(())
    })
}

/// Garbage collection (CONTRACT.md §5): keeps the newest `keep` history entries, the
/// renders they and the `protected` renderRefs name (a list of `protected_count`
/// strings in one buffer, ending at `protected_ends`, as the objects of
/// `rs_store_put_render`; empty ones ignored) and every render blob younger than the
/// grace period; `keep <= 0` does nothing. Entries dated more than 300 s after the
/// grace period's `now`, and entries whose render is not stored, do not count toward
/// `keep` and are never deleted. `grace` NULL: the store's period
/// (`rs_options.gc_grace_seconds`) ending now, by this machine's clock. With `dry_run`
/// nothing is deleted and the plan of a real run is returned. `*plan` receives JSON
/// text, the component's GC plan: `{"danglingHistory":[…],"deleteHistory":[…],
/// "deleteRenders":[…],"futureHistory":[…],"ignored":[…],"keepHistory":[…],
/// "keepRenders":[…],"recentRenders":[…]}`, full keys.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_gc(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    keep: i64,
    protected: *const u8,
    protected_len: usize,
    protected_ends: *const usize,
    protected_count: usize,
    dry_run: bool,
    grace: *const rs_grace,
    plan: *mut rs_buf,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, trace, store, protected, grace) = unsafe {
            (
                out_buf(plan, "plan")?,
                opt_buf(trace),
                get(store)?,
                args::joined(
                    protected,
                    protected_len,
                    protected_ends,
                    protected_count,
                    "protected",
                )?,
                grace.as_ref().copied(),
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let grace = match grace {
            Some(g) => Grace::from(g),
            None => Grace::ending_now(store.gc_grace),
        };
        let operation = Operation::Gc {
            release,
            keep,
            protected: protected.texts("protected")?,
            dry_run,
            grace,
        };
        let output = run(store, operation, trace)?;
        out.set_text(block_on(json::output(store.store.runtime(), &output))??);
        Ok(())
    })
}

/// Deletes every key of the release (calls: `list`, then `delete_many` in batches):
/// `*deleted` is how many. A second run deletes nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_delete_release(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    deleted: *mut u32,
    trace: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (trace, store, deleted) =
            unsafe { (opt_buf(trace), get(store)?, out(deleted, "deleted")?) };
        let release = release!(namespace, namespace_len, name, name_len);
        match run(store, Operation::DeleteRelease { release }, trace)? {
            Output::Deleted(n) => *deleted = n,
            other => unreachable!("delete-release answered {other:?}"),
        }
        Ok(())
    })
}

/// A keyring read from a keyring file (CONTRACT.md, Encryption at rest), for
/// `rs_store_with_keyring` and `rs_replay`. Made by `rs_keyring_open`, freed with
/// `rs_keyring_free`. Immutable: any thread, several at once.
pub struct rs_keyring {
    keyring: Keyring,
}

impl rs_keyring {
    /// The keyring behind `keyring`; NULL is none (a plaintext store).
    ///
    /// SAFETY (for callers): `keyring` is NULL or a keyring this library made, not freed.
    pub(crate) unsafe fn get(keyring: *const rs_keyring) -> Keyring {
        // SAFETY: as the caller promises.
        unsafe { keyring.as_ref() }.map_or_else(Keyring::default, |k| k.keyring.clone())
    }
}

/// Reads the keyring file at `path` (`path_len` bytes): lines `<id> <key>`, the key the
/// base64 of 32 bytes, the first the one new blobs are sealed with. The file must be a
/// regular file of this user or root, readable by its owner alone; a bad file or line
/// is `RS_ERROR_INVALID_INPUT` naming the file and the line, never a key. `options`
/// (NULL: the defaults) are the limits of the sandbox that parses it. `*out` is freed
/// with `rs_keyring_free`. Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_keyring_open(
    path: *const c_char,
    path_len: usize,
    options: *const rs_options,
    out: *mut *mut rs_keyring,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, path, options) = unsafe {
            let out = args::out(out, "out")?;
            *out = std::ptr::null_mut();
            (
                out,
                text(path, path_len, "path")?,
                rs_options::read(options)?,
            )
        };
        let rt = runtime(options.limits()?)?;
        let keyring = block_on(Keyring::from_file(&rt, std::path::Path::new(path)))??;
        *out = Box::into_raw(Box::new(rs_keyring { keyring }));
        Ok(())
    })
}

/// Frees a keyring; NULL is ignored. Stores made with it keep their own copy. Any
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_keyring_free(keyring: *mut rs_keyring) {
    guard_void(|| {
        if !keyring.is_null() {
            // SAFETY: a keyring this library made, freed once.
            drop(unsafe { Box::from_raw(keyring) });
        }
    })
}

/// A new store over the same bucket, runtime and grace period as `store`, its render
/// blobs sealed under `keyring`'s first key and opened under any of its keys (NULL: a
/// plaintext store). With `encryption_required`, every render blob must be sealed
/// under one of its keys: a plaintext blob is `RS_ERROR_CORRUPT` where it is read and
/// rewritten sealed by a put (CONTRACT.md, Encryption at rest); it needs a keyring, so
/// with a NULL keyring it is `RS_ERROR_INVALID_INPUT` and nothing is made. `*out` is a
/// store the caller frees with `rs_store_free`; `store` and `keyring` stay the
/// caller's. Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_with_keyring(
    store: *const rs_store,
    keyring: *const rs_keyring,
    encryption_required: bool,
    out: *mut *mut rs_store,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, keyring) = unsafe {
            let out = args::out(out, "out")?;
            *out = std::ptr::null_mut();
            (out, get(store)?, rs_keyring::get(keyring))
        };
        let sealed = store
            .store
            .with_keyring(keyring)
            .with_encryption_required(encryption_required)?;
        *out = Box::into_raw(Box::new(rs_store {
            store: sealed,
            gc_grace: store.gc_grace,
        }));
        Ok(())
    })
}

/// A cancel handle: cancels the calls of every store handle made with it
/// (`rs_store_with_deadline`). Made by `rs_cancel_new`, freed with `rs_cancel_free`
/// once no store handle made with it is used any more. `rs_cancel_cancel` may be
/// called from any thread, while calls run.
pub struct rs_cancel {
    token: CancelToken,
}

/// A new cancel handle, not cancelled, into `*out`. Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_cancel_new(out: *mut *mut rs_cancel) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rule for the out pointer.
        let out = unsafe { args::out(out, "out")? };
        *out = Box::into_raw(Box::new(rs_cancel {
            token: CancelToken::new(),
        }));
        Ok(())
    })
}

/// Cancels: every call of a store handle made with `cancel` that is running ends at
/// once with `RS_ERROR_CANCELLED` (the bucket request in flight is abandoned; the store
/// is as a crash at that moment leaves it), and every later call fails so before any
/// bucket call. For good; calling it again does nothing. Never blocks; any thread, also
/// while calls run on other threads (a Go context's done channel, a signal's thread).
/// NULL is ignored.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_cancel_cancel(cancel: *const rs_cancel) {
    guard_void(|| {
        // SAFETY: NULL or a cancel handle this library made, not freed.
        if let Some(cancel) = unsafe { cancel.as_ref() } {
            cancel.token.cancel();
        }
    })
}

/// Frees a cancel handle; NULL is ignored. Store handles made with it keep their own
/// reference: freeing it does not cancel them, and they may still be used and freed.
/// Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_cancel_free(cancel: *mut rs_cancel) {
    guard_void(|| {
        if !cancel.is_null() {
            // SAFETY: a cancel handle this library made, freed once.
            drop(unsafe { Box::from_raw(cancel) });
        }
    })
}

/// A new handle over the same store (bucket, runtime, keyring, grace period) whose
/// calls must end `timeout_ns` nanoseconds after this function is called (0: no
/// deadline; the earlier one wins over a deadline `store` already has), and end when
/// `cancel` is cancelled (NULL: no cancel handle). A call still running at its deadline
/// is cut where it waits, the bucket request in flight abandoned, and fails with
/// `RS_ERROR_DEADLINE_EXCEEDED` (`RS_ERROR_CANCELLED` when cancelled); one made after
/// either fails so before any bucket call. Nothing is left half-written: the store is
/// as a crash at that moment leaves it (CONTRACT.md §15). The direct bucket calls
/// (`rs_store_bucket_*`) are bounded the same way. A bucket callback running at the
/// deadline is not interrupted (it runs on the calling thread): the call ends when it
/// returns. `*out` is freed with `rs_store_free`; `store` and `cancel` stay the
/// caller's. A call per store handle is cheap (no copy of the store): a Go context or
/// a Python `timeout=` makes one per call. Any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_with_deadline(
    store: *const rs_store,
    timeout_ns: u64,
    cancel: *const rs_cancel,
    out: *mut *mut rs_store,
) -> *mut rs_error {
    guard(|| {
        let now = Instant::now();
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, cancel) = unsafe {
            let out = args::out(out, "out")?;
            *out = std::ptr::null_mut();
            (out, get(store)?, cancel.as_ref())
        };
        let mut bounded = store.store.clone();
        if timeout_ns > 0 {
            // A deadline past what an Instant can hold is no deadline.
            if let Some(deadline) = now.checked_add(Duration::from_nanos(timeout_ns)) {
                bounded = bounded.with_deadline(deadline);
            }
        }
        if let Some(cancel) = cancel {
            bounded = bounded.with_cancel(cancel.token.clone());
        }
        *out = Box::into_raw(Box::new(rs_store {
            store: bounded,
            gc_grace: store.gc_grace,
        }));
        Ok(())
    })
}

/// Seals every render blob of the release not yet sealed under the store's keyring's
/// first key under it (calls: `list` of `renders/`, then `get` of each blob and `put`
/// of those that change), each replaced atomically, so a crash at any point leaves
/// every blob readable with the keyring. `*rewritten` and `*kept` (either may be NULL)
/// are how many blobs were rewritten and how many already were sealed under the first
/// key. A store without a keyring is `RS_ERROR_INVALID_INPUT`; a blob that cannot be
/// read stops it (`RS_ERROR_CORRUPT`, `RS_ERROR_ENCRYPTION_KEY`). Not traced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_rekey_release(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    rewritten: *mut u32,
    kept: *mut u32,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let store = unsafe { get(store)? };
        let release = release!(namespace, namespace_len, name, name_len);
        let (r, k) = block_on(store.store.rekey_release(&release))??;
        // SAFETY: each is NULL or valid for a write, as the header says.
        unsafe {
            if let Some(p) = rewritten.as_mut() {
                *p = r;
            }
            if let Some(p) = kept.as_mut() {
                *p = k;
            }
        }
        Ok(())
    })
}

/// The observer's view of `store` (read-only), masking Secrets as `secrets` says.
fn observer(store: &rs_store, secrets: u32) -> Result<Observer> {
    Ok(Observer::new(Some(store.store.clone()))?.with_secrets(crate::value::secrets(secrets)?))
}

/// What changed from the stored render `against` (NULL: the newest history entry's;
/// an empty history is `RS_ERROR_NO_HISTORY`) to the stored render `render_ref`, each
/// changed object's lines in `form` (`RS_FORM_*`) with `context` lines around each
/// change (`RS_DEFAULT_CONTEXT`; `UINT32_MAX` shows each changed object whole, its
/// hunks abutting, each still headed by its path), Secret values as `secrets`
/// (`RS_SECRETS_*`) says, read through a read-only view of the store, as
/// `render-store diff` does. `*diff` receives JSON text, what `render-store --json diff`
/// prints: `{"added":[ID with "text"…],"changed":[ID with "diff":[lines]…],
/// "removed":[ID with "text"…],"unchanged":N}`, an ID being
/// `{"apiVersion","kind","name","namespace"}` and "text" an added or removed object
/// whole in `form`, Secret values as `secrets` says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_diff(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    render_ref: *const c_char,
    render_ref_len: usize,
    against: *const c_char,
    against_len: usize,
    form: u32,
    secrets: u32,
    context: u32,
    diff: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, render_ref, against) = unsafe {
            (
                out_buf(diff, "diff")?,
                get(store)?,
                text(render_ref, render_ref_len, "render_ref")?,
                opt_text(against, against_len, "against")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let form = crate::value::form(form)?;
        let observer = observer(store, secrets)?;
        let diff = block_on(observer.diff(&release, render_ref, against, form, context))??;
        out.set_text(json::diff(&diff));
        Ok(())
    })
}

/// What applying a render that is not stored would change: the diff from the stored
/// render `against` (NULL: the newest history entry's) to `canonical` (`canonical_len`
/// bytes of a canonical render, from `rs_canonical` or `rs_yaml_canonical`). Reads
/// only. Arguments and `*diff` as for `rs_store_diff`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_diff_local(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    canonical: *const u8,
    canonical_len: usize,
    against: *const c_char,
    against_len: usize,
    form: u32,
    secrets: u32,
    context: u32,
    diff: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, canonical, against) = unsafe {
            (
                out_buf(diff, "diff")?,
                get(store)?,
                args::bytes(canonical, canonical_len, "canonical")?,
                opt_text(against, against_len, "against")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let form = crate::value::form(form)?;
        let observer = observer(store, secrets)?;
        let diff = block_on(observer.diff_local(&release, canonical, against, form, context))??;
        out.set_text(json::diff(&diff));
        Ok(())
    })
}
