//! Errors as values: every fallible call returns an `rs_error *`, NULL on success. The
//! kinds mirror `render_store::Error` (and the observer's and replay's errors), plus two
//! of the ABI's own: a panic caught at the boundary, and an argument the ABI refuses.

use render_store::trace::ReplayError;
use render_store::{BucketError, Error, ObserverError, YamlStage};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Input the library rejected before any bucket call: a namespace, name, renderRef,
/// time or summary (`render_store::Error::InvalidInput`), or text that is not UTF-8.
pub const RS_ERROR_INVALID_INPUT: i32 = 1;
/// An object of a render is not a JSON object; `rs_error_object_index` says which.
pub const RS_ERROR_INVALID_OBJECT: i32 = 2;
/// A YAML stream is not a render; `rs_error_yaml` says where.
pub const RS_ERROR_INVALID_YAML: i32 = 3;
/// The render asked for is not in the store.
pub const RS_ERROR_NOT_FOUND: i32 = 4;
/// A stored blob does not hash to its key, or a history entry does not parse.
pub const RS_ERROR_CORRUPT: i32 = 5;
/// A bucket call of the operation failed; the message names the call and the key.
pub const RS_ERROR_BUCKET: i32 = 6;
/// A bucket call the host made itself (outside the component) failed.
pub const RS_ERROR_BACKEND: i32 = 7;
/// The render-store URL cannot be opened (an unknown scheme or parameter, …).
pub const RS_ERROR_URL: i32 = 8;
/// The call's memory would have grown past its cap; `rs_error_memory_cap` gives both
/// sizes. Only this call was affected.
pub const RS_ERROR_MEMORY_CAP: i32 = 9;
/// The call used up its fuel (CPU budget); `rs_error_fuel` gives the budget.
pub const RS_ERROR_FUEL: i32 = 10;
/// The component trapped. Only this call was affected.
pub const RS_ERROR_TRAP: i32 = 11;
/// The sandbox or the library's runtime could not be set up or used.
pub const RS_ERROR_RUNTIME: i32 = 12;
/// A diff against the newest history entry of a release whose history is empty.
pub const RS_ERROR_NO_HISTORY: i32 = 13;
/// A trace given to `rs_replay` does not follow TRACES.md; `rs_error_trace_line` says
/// where.
pub const RS_ERROR_TRACE: i32 = 14;
/// The library panicked; the call was abandoned and nothing crossed the boundary. A
/// bug: please report it with the message.
pub const RS_ERROR_PANIC: i32 = 15;
/// The caller broke a rule of this ABI: a NULL where a pointer is needed, a length with
/// a NULL pointer, an unknown constant, a struct too small, a store call made from
/// inside one of the same thread's bucket callbacks.
pub const RS_ERROR_INVALID_ARGUMENT: i32 = 16;
/// A bucket refused a direct bucket call (`rs_store_bucket_*`): a key it cannot store,
/// a link or a FIFO where the key's path goes, a read-only bucket.
pub const RS_ERROR_DENIED: i32 = 17;
/// A direct `rs_store_bucket_get` of an object larger than its limit, refused before
/// the content was read.
pub const RS_ERROR_TOO_LARGE: i32 = 18;
/// A render blob is encrypted with a key the store's keyring does not hold, or holds
/// under that id a different key; the message names the key id.
pub const RS_ERROR_ENCRYPTION_KEY: i32 = 19;
/// The call's deadline (`rs_store_with_deadline`) passed before it finished: it was cut
/// where it waited, the bucket request in flight abandoned. The store is as a crash at
/// that moment leaves it: nothing half-written (CONTRACT.md §15).
pub const RS_ERROR_DEADLINE_EXCEEDED: i32 = 20;
/// The call's cancel handle (`rs_cancel_cancel`) was cancelled before it finished; cut
/// as at a deadline.
pub const RS_ERROR_CANCELLED: i32 = 21;

/// An error: its kind, its message and what the kind carries. Made by the library,
/// owned by the caller from the moment a call returns it, freed with [`rs_error_free`].
/// Its accessors may be called from any thread, several at once.
pub struct rs_error {
    kind: i32,
    /// The whole sentence, with a NUL after it.
    message: String,
    /// What the kind carries, with a NUL after it.
    detail: String,
    object_index: Option<u32>,
    yaml: Option<[u32; 4]>,
    trace_line: Option<u32>,
    memory_cap: Option<(u64, u64)>,
    fuel: Option<u64>,
    too_large: Option<(u64, u64)>,
}

impl std::fmt::Debug for rs_error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rs_error({}: {})", self.kind, self.message())
    }
}

/// The result of the code behind an entry point: the error boxed already, as the call
/// hands it out.
pub(crate) type Result<T, E = Box<rs_error>> = std::result::Result<T, E>;

impl rs_error {
    fn new(kind: i32, message: String, detail: String) -> rs_error {
        rs_error {
            kind,
            message: message + "\0",
            detail: detail + "\0",
            object_index: None,
            yaml: None,
            trace_line: None,
            memory_cap: None,
            fuel: None,
            too_large: None,
        }
    }

    /// An argument this ABI refuses.
    pub(crate) fn argument(message: impl Into<String>) -> Box<rs_error> {
        let message = message.into();
        Box::new(rs_error::new(
            RS_ERROR_INVALID_ARGUMENT,
            message.clone(),
            message,
        ))
    }

    /// Input the library could not take (text that is not UTF-8, a list whose ends do
    /// not split it), in the kind the library gives any other rejected input.
    pub(crate) fn input(message: impl Into<String>) -> Box<rs_error> {
        let detail = message.into();
        Box::new(rs_error::new(
            RS_ERROR_INVALID_INPUT,
            format!("invalid input: {detail}"),
            detail,
        ))
    }

    /// The library's runtime could not be used.
    pub(crate) fn runtime(message: impl Into<String>) -> Box<rs_error> {
        let detail = message.into();
        Box::new(rs_error::new(
            RS_ERROR_RUNTIME,
            format!("the render-store runtime: {detail}"),
            detail,
        ))
    }

    fn panic(payload: Box<dyn Any + Send>) -> rs_error {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        rs_error::new(
            RS_ERROR_PANIC,
            format!("the render-store library panicked (a bug; the call was abandoned): {what}"),
            what,
        )
    }

    /// An error of a direct bucket call, in the kind that says what the bucket meant.
    pub(crate) fn of_bucket(e: &BucketError) -> rs_error {
        let message = e.to_string();
        let plain = |kind| rs_error::new(kind, message.clone(), message.clone());
        match e {
            BucketError::NotFound { .. } => plain(RS_ERROR_NOT_FOUND),
            BucketError::Denied(_) => plain(RS_ERROR_DENIED),
            BucketError::TooLarge { size, limit, .. } => rs_error {
                too_large: Some((*size, *limit)),
                ..plain(RS_ERROR_TOO_LARGE)
            },
            _ => plain(RS_ERROR_BACKEND),
        }
    }

    pub(crate) fn kind(&self) -> i32 {
        self.kind
    }

    pub(crate) fn message(&self) -> &str {
        self.message.strip_suffix('\0').unwrap_or(&self.message)
    }
}

impl From<Error> for Box<rs_error> {
    fn from(e: Error) -> Box<rs_error> {
        Box::new(rs_error::of(e))
    }
}

impl rs_error {
    fn of(e: Error) -> rs_error {
        let message = e.to_string();
        let plain = |kind, detail: &String| rs_error::new(kind, message.clone(), detail.clone());
        match &e {
            Error::InvalidInput(m) => plain(RS_ERROR_INVALID_INPUT, m),
            Error::InvalidObject {
                index,
                message: detail,
            } => rs_error {
                object_index: Some(*index),
                ..plain(RS_ERROR_INVALID_OBJECT, detail)
            },
            Error::InvalidYaml {
                document,
                line,
                column,
                stage,
                message: detail,
            } => {
                let stage = match stage {
                    YamlStage::Split => RS_YAML_STAGE_SPLIT,
                    YamlStage::Yaml => RS_YAML_STAGE_YAML,
                    YamlStage::Object => RS_YAML_STAGE_OBJECT,
                };
                rs_error {
                    yaml: Some([*document, *line, *column, stage]),
                    ..plain(RS_ERROR_INVALID_YAML, detail)
                }
            }
            Error::NotFound(m) => plain(RS_ERROR_NOT_FOUND, m),
            Error::Corrupt(m) => plain(RS_ERROR_CORRUPT, m),
            Error::EncryptionKey(m) => plain(RS_ERROR_ENCRYPTION_KEY, m),
            Error::Bucket(m) => plain(RS_ERROR_BUCKET, m),
            Error::Backend(b) => plain(RS_ERROR_BACKEND, &b.to_string()),
            Error::Url { reason, .. } => plain(RS_ERROR_URL, reason),
            Error::MemoryCap { wanted, cap } => rs_error {
                memory_cap: Some((*wanted, *cap)),
                ..plain(RS_ERROR_MEMORY_CAP, &message)
            },
            Error::Fuel { budget } => rs_error {
                fuel: Some(*budget),
                ..plain(RS_ERROR_FUEL, &message)
            },
            Error::Trap {
                message: detail, ..
            } => plain(RS_ERROR_TRAP, detail),
            Error::Runtime(m) => plain(RS_ERROR_RUNTIME, m),
            Error::DeadlineExceeded { .. } => plain(RS_ERROR_DEADLINE_EXCEEDED, &message),
            Error::Cancelled => plain(RS_ERROR_CANCELLED, &message),
            // `Error` may grow (it is non_exhaustive): until this crate names a new
            // variant, it reaches C as a runtime error with the library's own words.
            _ => plain(RS_ERROR_RUNTIME, &message),
        }
    }
}

impl From<ObserverError> for Box<rs_error> {
    fn from(e: ObserverError) -> Box<rs_error> {
        Box::new(match e {
            ObserverError::Store(e) => rs_error::of(e),
            ObserverError::NoHistory(ref release) => {
                rs_error::new(RS_ERROR_NO_HISTORY, e.to_string(), release.clone())
            }
            // The C ABI gives the observer a store and no render source, so neither can
            // happen; kept in the library's words if one ever does.
            ObserverError::NoStore | ObserverError::Source(_) => {
                rs_error::new(RS_ERROR_RUNTIME, e.to_string(), e.to_string())
            }
        })
    }
}

impl From<ReplayError> for Box<rs_error> {
    fn from(e: ReplayError) -> Box<rs_error> {
        Box::new(match e {
            ReplayError::Trace { line, ref message } => rs_error {
                trace_line: Some(line),
                ..rs_error::new(RS_ERROR_TRACE, e.to_string(), message.clone())
            },
            ReplayError::Stopped(e) => rs_error::of(e),
        })
    }
}

/// Runs the body of an entry point: its error, or a panic, becomes the `rs_error *` the
/// call returns, so no panic unwinds into the caller.
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> *mut rs_error {
    let outcome =
        catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(Box::new(rs_error::panic(p))));
    match outcome {
        Ok(()) => std::ptr::null_mut(),
        Err(e) => Box::into_raw(e),
    }
}

/// [`guard`] for an entry point that returns a value: `fallback` if the body panicked.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// [`guard`] for an entry point that returns nothing.
pub(crate) fn guard_void(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// The error behind `error`, if it is not NULL.
///
/// SAFETY (for callers): `error` is NULL or an error this library returned and the
/// caller has not freed.
unsafe fn get<'a>(error: *const rs_error) -> Option<&'a rs_error> {
    // SAFETY: as the caller promises above.
    unsafe { error.as_ref() }
}

/// The kind of `error` (`RS_ERROR_INVALID_INPUT`, …); 0 for NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_kind(error: *const rs_error) -> i32 {
    // SAFETY: the header's rule: NULL or an unfreed error of this library.
    guard_value(0, || unsafe { get(error) }.map_or(0, |e| e.kind))
}

/// The name of an error kind, as the WIT and a trace spell it where they have one
/// (`"invalid-input"`, `"not-found"`, `"memory-cap"`, …; `"unknown"` for a number that
/// is no kind): a static NUL-terminated string, never freed.
#[unsafe(no_mangle)]
pub extern "C" fn rs_error_kind_name(kind: i32) -> *const std::ffi::c_char {
    let name: &'static std::ffi::CStr = match kind {
        RS_ERROR_INVALID_INPUT => c"invalid-input",
        RS_ERROR_INVALID_OBJECT => c"invalid-object",
        RS_ERROR_INVALID_YAML => c"invalid-yaml",
        RS_ERROR_NOT_FOUND => c"not-found",
        RS_ERROR_CORRUPT => c"corrupt",
        RS_ERROR_BUCKET => c"bucket",
        RS_ERROR_BACKEND => c"backend",
        RS_ERROR_URL => c"url",
        RS_ERROR_MEMORY_CAP => c"memory-cap",
        RS_ERROR_FUEL => c"fuel",
        RS_ERROR_TRAP => c"trap",
        RS_ERROR_RUNTIME => c"runtime",
        RS_ERROR_NO_HISTORY => c"no-history",
        RS_ERROR_TRACE => c"trace",
        RS_ERROR_PANIC => c"panic",
        RS_ERROR_INVALID_ARGUMENT => c"invalid-argument",
        RS_ERROR_DENIED => c"denied",
        RS_ERROR_TOO_LARGE => c"too-large",
        RS_ERROR_ENCRYPTION_KEY => c"encryption-key",
        RS_ERROR_DEADLINE_EXCEEDED => c"deadline-exceeded",
        RS_ERROR_CANCELLED => c"cancelled",
        _ => c"unknown",
    };
    name.as_ptr()
}

/// Sets `*data` and `*len` to the whole message, as the Rust library words it (what the
/// CLI prints): UTF-8, followed by a NUL that `len` does not count, owned by `error`
/// and valid until [`rs_error_free`]. Both NULL and 0 for a NULL error. Either out
/// pointer may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_message(
    error: *const rs_error,
    data: *mut *const u8,
    len: *mut usize,
) {
    // SAFETY: the header's rules: an unfreed error or NULL; out pointers NULL or valid.
    guard_void(|| unsafe { lend(get(error).map(|e| e.message.as_str()), data, len) })
}

/// Like [`rs_error_message`], the text the kind carries alone: the component's message
/// for the kinds of the WIT `error` (the text a trace's result records), the reason for
/// a URL, the trap's message; the whole message for the others.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_detail(
    error: *const rs_error,
    data: *mut *const u8,
    len: *mut usize,
) {
    // SAFETY: as for rs_error_message.
    guard_void(|| unsafe { lend(get(error).map(|e| e.detail.as_str()), data, len) })
}

/// Writes `text` (which ends in the NUL `len` leaves out) to the out pointers given.
///
/// SAFETY (for callers): each out pointer is NULL or valid for a write.
unsafe fn lend(text: Option<&str>, data: *mut *const u8, len: *mut usize) {
    let (p, n) = match text {
        Some(t) => (t.as_ptr(), t.len().saturating_sub(1)),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: as the caller promises above.
    unsafe {
        if let Some(d) = data.as_mut() {
            *d = p;
        }
        if let Some(l) = len.as_mut() {
            *l = n;
        }
    }
}

/// For `RS_ERROR_INVALID_OBJECT`: sets `*index` to the position (from 0) of the first
/// bad object and returns true; false (and `*index` untouched) for any other error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_object_index(error: *const rs_error, index: *mut u32) -> bool {
    // SAFETY: an unfreed error or NULL; `index` NULL or valid for a write.
    guard_value(false, || unsafe {
        match (get(error).and_then(|e| e.object_index), index.as_mut()) {
            (Some(i), Some(out)) => {
                *out = i;
                true
            }
            (Some(_), None) => true,
            _ => false,
        }
    })
}

/// `rs_error_yaml`'s stage: splitting the stream into documents.
pub const RS_YAML_STAGE_SPLIT: u32 = 1;
/// `rs_error_yaml`'s stage: YAML to JSON (syntax, tags, keys, aliases).
pub const RS_YAML_STAGE_YAML: u32 = 2;
/// `rs_error_yaml`'s stage: the document is not a JSON object.
pub const RS_YAML_STAGE_OBJECT: u32 = 3;

/// For `RS_ERROR_INVALID_YAML`: the first failing document (its index from 0, empty
/// and `null` documents counted), the line and column in the stream (from 1) and the
/// stage (`RS_YAML_STAGE_*`); returns true. False for any other error. Each out
/// pointer may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_yaml(
    error: *const rs_error,
    document: *mut u32,
    line: *mut u32,
    column: *mut u32,
    stage: *mut u32,
) -> bool {
    // SAFETY: an unfreed error or NULL; out pointers NULL or valid for writes.
    guard_value(false, || unsafe {
        let Some(at) = get(error).and_then(|e| e.yaml) else {
            return false;
        };
        for (out, value) in [document, line, column, stage].into_iter().zip(at) {
            if let Some(out) = out.as_mut() {
                *out = value;
            }
        }
        true
    })
}

/// For `RS_ERROR_TRACE`: the first bad line of the trace (from 1); returns true. False
/// for any other error. `line` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_trace_line(error: *const rs_error, line: *mut u32) -> bool {
    // SAFETY: an unfreed error or NULL; `line` NULL or valid for a write.
    guard_value(false, || unsafe {
        let Some(at) = get(error).and_then(|e| e.trace_line) else {
            return false;
        };
        if let Some(out) = line.as_mut() {
            *out = at;
        }
        true
    })
}

/// For `RS_ERROR_MEMORY_CAP`: the bytes the call's memory would have grown to and the
/// cap; returns true. False for any other error. Either out pointer may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_memory_cap(
    error: *const rs_error,
    wanted: *mut u64,
    cap: *mut u64,
) -> bool {
    // SAFETY: an unfreed error or NULL; out pointers NULL or valid for writes.
    guard_value(false, || unsafe {
        let Some((w, c)) = get(error).and_then(|e| e.memory_cap) else {
            return false;
        };
        if let Some(out) = wanted.as_mut() {
            *out = w;
        }
        if let Some(out) = cap.as_mut() {
            *out = c;
        }
        true
    })
}

/// For `RS_ERROR_FUEL`: the call's fuel budget; returns true. False for any other
/// error. `budget` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_fuel(error: *const rs_error, budget: *mut u64) -> bool {
    // SAFETY: an unfreed error or NULL; `budget` NULL or valid for a write.
    guard_value(false, || unsafe {
        let Some(b) = get(error).and_then(|e| e.fuel) else {
            return false;
        };
        if let Some(out) = budget.as_mut() {
            *out = b;
        }
        true
    })
}

/// For `RS_ERROR_TOO_LARGE`: the object's size and the call's limit; returns true.
/// False for any other error. Either out pointer may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_too_large(
    error: *const rs_error,
    size: *mut u64,
    limit: *mut u64,
) -> bool {
    // SAFETY: an unfreed error or NULL; out pointers NULL or valid for writes.
    guard_value(false, || unsafe {
        let Some((s, l)) = get(error).and_then(|e| e.too_large) else {
            return false;
        };
        if let Some(out) = size.as_mut() {
            *out = s;
        }
        if let Some(out) = limit.as_mut() {
            *out = l;
        }
        true
    })
}

/// Frees an error a call returned; NULL is ignored. Once, from any thread, after its
/// last accessor call (the message pointers die with it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_error_free(error: *mut rs_error) {
    guard_void(|| {
        if !error.is_null() {
            // SAFETY: the header's rule: an error this library returned, freed once.
            drop(unsafe { Box::from_raw(error) });
        }
    })
}
