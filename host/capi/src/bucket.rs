//! A bucket the caller implements as C callbacks, and the answers they give.
//!
//! Each callback receives an answer handle and answers through it before it returns
//! (`rs_answer_bytes`, `rs_answer_not_found`, …). The handle is a number looked up in a
//! table, not a pointer into the library, so a callback that keeps it and answers late,
//! or answers twice or with the wrong kind of answer, only gets `false` back and makes
//! its call a `failed` bucket answer: no caller mistake can reach the library's memory
//! through it. The library copies everything a callback gives it.

use crate::call::on_calling_thread;
use crate::error::guard_value;
use crate::value::rs_str;
use async_trait::async_trait;
use render_store::bucket::messages;
use render_store::{Bucket, BucketError, Denial, ObjectMeta, SyncTime};
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The handle a bucket callback answers through. Valid until the callback returns;
/// the `rs_answer_*` functions may be called on it from any thread until then (a
/// `delete_many` callback may answer its keys from several threads at once).
pub struct rs_answer {
    _private: [u8; 0],
}

/// `get`: the whole content of `key` (`key_len` bytes of UTF-8, NUL after them), if
/// it is at most `limit` bytes (the call's memory cap). Answer with `rs_answer_bytes`,
/// `rs_answer_not_found` (absent), `rs_answer_too_large` (larger than `limit`, ideally
/// known before reading it), `rs_answer_denied` or `rs_answer_failed`.
pub type rs_get_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        key: *const c_char,
        key_len: usize,
        limit: u64,
        answer: *mut rs_answer,
    ),
>;

/// `put`: stores `value` (`value_len` bytes, valid until the callback returns: copy
/// them) under `key`, atomically: a reader sees the old content or the new, never a
/// part. Answer `rs_answer_ok`, `rs_answer_denied` or `rs_answer_failed`.
pub type rs_put_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        key: *const c_char,
        key_len: usize,
        value: *const u8,
        value_len: usize,
        answer: *mut rs_answer,
    ),
>;

/// A call on one key or prefix: `exists` (answer `rs_answer_size` or
/// `rs_answer_not_found`, by a metadata request), `list` (every object whose key starts
/// with the prefix, complete: `rs_answer_listed` for each, in any order, then
/// `rs_answer_ok`; a listing that cannot be complete is `rs_answer_failed` or
/// `rs_answer_denied`, never a shorter one) or `delete_key` (`rs_answer_ok`; an absent
/// key is not an error: `rs_answer_ok` or `rs_answer_not_found`). Each may also answer
/// `rs_answer_denied` or `rs_answer_failed`.
pub type rs_key_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        key: *const c_char,
        key_len: usize,
        answer: *mut rs_answer,
    ),
>;

/// `delete_many`: deletes `count` keys (at most 1,000), one request where the backend
/// has a batch request. Answer each key by its index, in any order, with
/// `rs_answer_key_ok` (deleted, or absent), `rs_answer_key_denied` or
/// `rs_answer_key_failed`; or the whole request with `rs_answer_failed` (then any of
/// the keys may or may not be gone). `keys` is valid until the callback returns.
pub type rs_delete_many_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        keys: *const rs_str,
        count: usize,
        answer: *mut rs_answer,
    ),
>;

/// Called once with `user_data` when the store no longer needs it.
pub type rs_drop_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A bucket implemented by the caller, for `rs_store_new`: the bucket contract of
/// CONTRACT.md §2 as six callbacks and the data they share.
///
/// The library may call the callbacks from several threads at once (each store call
/// runs its callbacks on the thread that made it), so `user_data` must be safe to use
/// from any thread. Callbacks run outside the sandbox, on the calling thread's own
/// stack; each must answer before it returns, must not unwind (a C++ exception, a
/// `longjmp`, a Go panic) through the library, and must not call the store (or any
/// other call that runs the component) on the same thread: such a call fails with
/// `RS_ERROR_INVALID_ARGUMENT`. Keys are those the store's operations make, every one
/// inside the release being served; the library normalises the listing's order.
///
/// Sized like `rs_options`: set `size` to `sizeof(rs_bucket)`; fields past `size` are
/// taken as NULL.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rs_bucket {
    /// `sizeof(rs_bucket)` of the caller's header.
    pub size: usize,
    /// Passed to every callback as it is.
    pub user_data: *mut c_void,
    /// Required.
    pub get: rs_get_fn,
    /// Required.
    pub put: rs_put_fn,
    /// Required.
    pub exists: rs_key_fn,
    /// Required.
    pub list: rs_key_fn,
    /// Required.
    pub delete_key: rs_key_fn,
    /// Optional: NULL deletes one key after another with `delete_key`.
    pub delete_many: rs_delete_many_fn,
    /// Optional: called once with `user_data` when the store is freed (after its last
    /// call ends), on the thread that frees it. Not called when `rs_store_new` fails:
    /// `user_data` stays the caller's then.
    pub drop: rs_drop_fn,
}

/// The caller's table, shared by the store and every call in flight.
pub(crate) struct Table(rs_bucket);

// SAFETY: `rs_bucket`'s contract (in the header): the callbacks and `user_data` may be
// used from any thread, several at once.
unsafe impl Send for Table {}
// SAFETY: as above.
unsafe impl Sync for Table {}

impl Drop for Table {
    fn drop(&mut self) {
        if let Some(drop) = self.0.drop {
            // SAFETY: the caller's callback, given its own `user_data`, once.
            unsafe { drop(self.0.user_data) }
        }
    }
}

impl Table {
    /// The table at `ptr`, checked: every required callback present.
    ///
    /// SAFETY (for callers): `ptr` is NULL or points to at least `size` readable bytes,
    /// `size` being its first field.
    pub(crate) unsafe fn read(ptr: *const rs_bucket) -> crate::error::Result<Table> {
        use crate::rs_error;
        if ptr.is_null() {
            return Err(rs_error::argument("bucket is NULL"));
        }
        if !ptr.is_aligned() {
            return Err(rs_error::argument("bucket is not aligned"));
        }
        // SAFETY: `size` is the first field of every version of the struct.
        let size = unsafe { (*ptr).size };
        let required = std::mem::offset_of!(rs_bucket, delete_many);
        if size < required {
            return Err(rs_error::argument(format!(
                "bucket.size is {size}, too small for the five required callbacks: set it \
                 to sizeof(rs_bucket)"
            )));
        }
        let mut table = rs_bucket {
            size: size_of::<rs_bucket>(),
            user_data: std::ptr::null_mut(),
            get: None,
            put: None,
            exists: None,
            list: None,
            delete_key: None,
            delete_many: None,
            drop: None,
        };
        // SAFETY: `size` readable bytes, at most the whole struct copied; every field
        // is a pointer or an optional function pointer, for which any bits the caller
        // wrote there are its own choice (NULL is `None`).
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.cast::<u8>(),
                (&mut table as *mut rs_bucket).cast::<u8>(),
                size.min(size_of::<rs_bucket>()),
            );
        }
        let missing: Vec<&str> = [
            ("get", table.get.is_none()),
            ("put", table.put.is_none()),
            ("exists", table.exists.is_none()),
            ("list", table.list.is_none()),
            ("delete_key", table.delete_key.is_none()),
        ]
        .into_iter()
        .filter_map(|(name, absent)| absent.then_some(name))
        .collect();
        if !missing.is_empty() {
            return Err(rs_error::argument(format!(
                "bucket: the callbacks {} are NULL; only delete_many and drop may be",
                missing.join(", ")
            )));
        }
        Ok(Table(table))
    }
}

/// Which call an answer answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Get,
    Put,
    Exists,
    List,
    Delete,
    DeleteMany,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Get => "get",
            Call::Put => "put",
            Call::Exists => "exists",
            Call::List => "list",
            Call::Delete => "delete",
            Call::DeleteMany => "delete-many",
        }
    }
}

/// A final answer.
#[derive(Debug)]
enum Given {
    Bytes(Vec<u8>),
    Size(u64),
    NotFound,
    TooLarge(u64),
    Ok,
    Denied(String),
    Failed(String),
}

/// What a callback has answered so far.
#[derive(Debug)]
struct Answer {
    call: Call,
    /// The key (a `delete-many`'s first), for messages.
    key: String,
    limit: u64,
    given: Option<Given>,
    listed: Vec<ObjectMeta>,
    each: Vec<Option<Result<(), BucketError>>>,
    /// Why the answer is malformed, once it is.
    wrong: Option<String>,
}

/// Answers being given, by handle. A handle is never used twice.
static ANSWERS: Mutex<Option<HashMap<usize, Arc<Mutex<Answer>>>>> = Mutex::new(None);
static NEXT_ANSWER: AtomicUsize = AtomicUsize::new(1);

fn answers() -> std::sync::MutexGuard<'static, Option<HashMap<usize, Arc<Mutex<Answer>>>>> {
    ANSWERS.lock().unwrap_or_else(|p| p.into_inner())
}

impl Answer {
    fn new(call: Call, key: &str, limit: u64, keys: usize) -> Answer {
        Answer {
            call,
            key: key.to_string(),
            limit,
            given: None,
            listed: Vec::new(),
            each: (0..keys).map(|_| None).collect(),
            wrong: None,
        }
    }

    /// Opens the answer to a callback: its handle.
    fn open(self) -> (usize, Arc<Mutex<Answer>>) {
        let id = NEXT_ANSWER.fetch_add(1, Ordering::Relaxed);
        let cell = Arc::new(Mutex::new(self));
        answers()
            .get_or_insert_with(HashMap::new)
            .insert(id, cell.clone());
        (id, cell)
    }

    /// Closes handle `id`: later answers through it are refused.
    fn close(id: usize, cell: Arc<Mutex<Answer>>) -> Answer {
        if let Some(map) = answers().as_mut() {
            map.remove(&id);
        }
        let mut cell = cell.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *cell, Answer::new(Call::Get, "", 0, 0))
    }

    /// The failure a malformed or missing answer is, in the words every host uses for a
    /// backend's failure (`get "key": …`).
    fn failed(&self, why: impl std::fmt::Display) -> BucketError {
        BucketError::Failed(messages::backend(self.call.name(), &self.key, why))
    }

    fn unanswered(&self) -> BucketError {
        self.failed(format_args!(
            "the bucket's {} callback returned without an answer",
            self.call.name()
        ))
    }

    /// The final answer, or why there is none worth trusting.
    fn finish(mut self) -> Result<Given, BucketError> {
        if let Some(why) = &self.wrong {
            return Err(self.failed(format_args!(
                "the bucket's {} callback answered wrongly: {why}",
                self.call.name()
            )));
        }
        match self.given.take() {
            None => Err(self.unanswered()),
            Some(Given::Denied(m)) => Err(BucketError::Denied(Denial::Given(m))),
            Some(Given::Failed(m)) => Err(BucketError::Failed(m)),
            Some(Given::NotFound) if self.call != Call::Delete => Err(BucketError::NotFound {
                key: self.key.clone(),
            }),
            Some(Given::TooLarge(size)) => Err(BucketError::TooLarge {
                key: self.key.clone(),
                size,
                limit: self.limit,
            }),
            Some(given) => Ok(given),
        }
    }
}

/// Applies `change` to the answer behind `handle`: false if the handle is closed or
/// unknown, or the change is refused (which makes the answer malformed).
fn answer(handle: *mut rs_answer, change: impl FnOnce(&mut Answer) -> Result<(), String>) -> bool {
    guard_value(false, || {
        let id = handle as usize;
        let Some(cell) = answers().as_ref().and_then(|m| m.get(&id).cloned()) else {
            return false;
        };
        let mut a = cell.lock().unwrap_or_else(|p| p.into_inner());
        if a.wrong.is_some() {
            return false;
        }
        match change(&mut a) {
            Ok(()) => true,
            Err(why) => {
                a.wrong = Some(why);
                false
            }
        }
    })
}

/// Sets the final answer, once, for one of `calls`.
fn give(a: &mut Answer, function: &str, calls: &[Call], given: Given) -> Result<(), String> {
    if !calls.contains(&a.call) {
        return Err(format!(
            "{function} does not answer a {} call",
            a.call.name()
        ));
    }
    if a.given.is_some() {
        return Err(format!(
            "{function} came after the call was already answered"
        ));
    }
    if a.call == Call::DeleteMany && a.each.iter().any(Option::is_some) {
        return Err(format!(
            "{function} came after some keys were answered one by one"
        ));
    }
    a.given = Some(given);
    Ok(())
}

/// A message from the callback, as text (bytes that are not UTF-8 replaced).
///
/// SAFETY (for callers): `ptr` is NULL or points to `len` readable bytes.
unsafe fn message(ptr: *const c_char, len: usize) -> Result<String, String> {
    // SAFETY: passed on from the caller.
    match unsafe { crate::args::bytes(ptr.cast(), len, "message") } {
        Ok(b) => Ok(String::from_utf8_lossy(b).into_owned()),
        Err(e) => Err(e.message().to_string()),
    }
}

/// Answers a `get` with the object's content, copied (`len` bytes at `data`; NULL with
/// 0 is the empty object). Content longer than the call's `limit` is answered as
/// `rs_answer_too_large` would, without copying. True if the answer was taken.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_bytes(
    answer: *mut rs_answer,
    data: *const u8,
    len: usize,
) -> bool {
    self::answer(answer, |a| {
        if a.call == Call::Get && len as u64 > a.limit {
            return give(
                a,
                "rs_answer_bytes",
                &[Call::Get],
                Given::TooLarge(len as u64),
            );
        }
        // SAFETY: the callback gives `len` readable bytes at `data`.
        let bytes = unsafe { crate::args::bytes(data, len, "rs_answer_bytes's data") }
            .map_err(|e| e.message().to_string())?;
        give(
            a,
            "rs_answer_bytes",
            &[Call::Get],
            Given::Bytes(bytes.to_vec()),
        )
    })
}

/// Answers a `get` of an object of `size` bytes, over the call's limit, without its
/// content: the call fails with a message naming both sizes, as every backend's does.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_too_large(answer: *mut rs_answer, size: u64) -> bool {
    self::answer(answer, |a| {
        if a.call == Call::Get && size <= a.limit {
            return Err(format!(
                "rs_answer_too_large said {size} bytes, which is within the limit of {}",
                a.limit
            ));
        }
        give(
            a,
            "rs_answer_too_large",
            &[Call::Get],
            Given::TooLarge(size),
        )
    })
}

/// Answers an `exists` with the object's size in bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_size(answer: *mut rs_answer, size: u64) -> bool {
    self::answer(answer, |a| {
        give(a, "rs_answer_size", &[Call::Exists], Given::Size(size))
    })
}

/// Answers a `get` or `exists` of an absent key (and a `delete_key` of one, which
/// succeeds).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_not_found(answer: *mut rs_answer) -> bool {
    self::answer(answer, |a| {
        let calls = [Call::Get, Call::Exists, Call::Delete];
        give(a, "rs_answer_not_found", &calls, Given::NotFound)
    })
}

/// Answers a `put` or `delete_key` that succeeded, or ends a complete listing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_ok(answer: *mut rs_answer) -> bool {
    self::answer(answer, |a| {
        give(
            a,
            "rs_answer_ok",
            &[Call::Put, Call::Delete, Call::List],
            Given::Ok,
        )
    })
}

/// Answers any call with a refusal (a key the backend cannot store, a read-only
/// bucket): `message` (`len` bytes, UTF-8) reaches the operation's error as it is.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_denied(
    answer: *mut rs_answer,
    message: *const c_char,
    len: usize,
) -> bool {
    self::answer(answer, |a| {
        // SAFETY: the callback gives `len` readable bytes at `message`.
        let m = unsafe { self::message(message, len) }?;
        let all = [
            Call::Get,
            Call::Put,
            Call::Exists,
            Call::List,
            Call::Delete,
            Call::DeleteMany,
        ];
        give(a, "rs_answer_denied", &all, Given::Denied(m))
    })
}

/// Answers any call with a failure of the backend: `message` (`len` bytes, UTF-8)
/// reaches the operation's error as it is, so name the call and the key in it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_failed(
    answer: *mut rs_answer,
    message: *const c_char,
    len: usize,
) -> bool {
    self::answer(answer, |a| {
        // SAFETY: the callback gives `len` readable bytes at `message`.
        let m = unsafe { self::message(message, len) }?;
        let all = [
            Call::Get,
            Call::Put,
            Call::Exists,
            Call::List,
            Call::Delete,
            Call::DeleteMany,
        ];
        give(a, "rs_answer_failed", &all, Given::Failed(m))
    })
}

/// Adds one object to a `list` answer: its key (`key_len` bytes of UTF-8, starting
/// with the listed prefix), its size and its last modification time by the bucket's
/// clock (`nanoseconds` below 10^9). Objects may come in any order; each key once.
/// End the listing with `rs_answer_ok`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_listed(
    answer: *mut rs_answer,
    key: *const c_char,
    key_len: usize,
    size: u64,
    seconds: i64,
    nanoseconds: u32,
) -> bool {
    self::answer(answer, |a| {
        if a.call != Call::List {
            return Err(format!(
                "rs_answer_listed does not answer a {} call",
                a.call.name()
            ));
        }
        if a.given.is_some() {
            return Err("rs_answer_listed came after the listing was ended".into());
        }
        // SAFETY: the callback gives `key_len` readable bytes at `key`.
        let key = unsafe { crate::args::text(key, key_len, "a listed key") }
            .map_err(|e| e.message().to_string())?;
        if !key.starts_with(&a.key) {
            return Err(format!(
                "it listed {}, which does not start with the prefix listed",
                messages::quote(key)
            ));
        }
        if nanoseconds >= 1_000_000_000 {
            return Err(format!(
                "it listed {} with {nanoseconds} nanoseconds, past a second",
                messages::quote(key)
            ));
        }
        a.listed.push(ObjectMeta {
            key: key.to_string(),
            size,
            modified: SyncTime {
                seconds,
                nanoseconds,
            },
        });
        Ok(())
    })
}

/// Answers key `index` of a `delete_many` with a result of its own, once.
fn answer_key(
    handle: *mut rs_answer,
    function: &str,
    index: usize,
    result: Result<(), BucketError>,
) -> bool {
    answer(handle, |a| {
        if a.call != Call::DeleteMany {
            return Err(format!(
                "{function} does not answer a {} call",
                a.call.name()
            ));
        }
        if a.given.is_some() {
            return Err(format!(
                "{function} came after the whole request was answered"
            ));
        }
        let count = a.each.len();
        let Some(slot) = a.each.get_mut(index) else {
            return Err(format!("{function} answered key {index} of {count}"));
        };
        if slot.is_some() {
            return Err(format!("{function} answered key {index} a second time"));
        }
        *slot = Some(result);
        Ok(())
    })
}

/// Answers key `index` of a `delete_many`: deleted, or absent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_key_ok(answer: *mut rs_answer, index: usize) -> bool {
    answer_key(answer, "rs_answer_key_ok", index, Ok(()))
}

/// Answers key `index` of a `delete_many`: refused, with `message` as it is.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_key_denied(
    answer: *mut rs_answer,
    index: usize,
    message: *const c_char,
    len: usize,
) -> bool {
    // SAFETY: the callback gives `len` readable bytes at `message`.
    match unsafe { self::message(message, len) } {
        Ok(m) => answer_key(
            answer,
            "rs_answer_key_denied",
            index,
            Err(BucketError::Denied(Denial::Given(m))),
        ),
        Err(why) => self::answer(answer, |_| Err(why)),
    }
}

/// Answers key `index` of a `delete_many`: the backend failed to delete it, with
/// `message` as it is.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_answer_key_failed(
    answer: *mut rs_answer,
    index: usize,
    message: *const c_char,
    len: usize,
) -> bool {
    // SAFETY: the callback gives `len` readable bytes at `message`.
    match unsafe { self::message(message, len) } {
        Ok(m) => answer_key(
            answer,
            "rs_answer_key_failed",
            index,
            Err(BucketError::Failed(m)),
        ),
        Err(why) => self::answer(answer, |_| Err(why)),
    }
}

/// A key as a callback receives it: its bytes with a NUL after them.
fn c_key(key: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.extend_from_slice(key.as_bytes());
    k.push(0);
    k
}

/// The caller's bucket, as the library's [`Bucket`].
pub(crate) struct CallbackBucket {
    table: Arc<Table>,
}

/// A release whose `get`s panic inside the library, for the tests of the boundary.
#[cfg(test)]
pub(crate) const PANIC_RELEASE: &str = "panics/in-get/";

impl CallbackBucket {
    pub(crate) fn new(table: Table) -> CallbackBucket {
        CallbackBucket {
            table: Arc::new(table),
        }
    }

    /// Runs one callback on the calling thread and returns its answer, checked.
    async fn ask(
        &self,
        answer: Answer,
        invoke: impl FnOnce(&rs_bucket, *mut rs_answer) + Send + 'static,
    ) -> Result<Given, BucketError> {
        let table = self.table.clone();
        let call = answer.call;
        let key = answer.key.clone();
        let finished = on_calling_thread(move || {
            let (id, cell) = answer.open();
            invoke(&table.0, id as *mut rs_answer);
            Answer::close(id, cell).finish()
        })
        .await;
        finished.unwrap_or_else(|| {
            Err(BucketError::Failed(messages::backend(
                call.name(),
                &key,
                "the bucket callback stopped before it answered",
            )))
        })
    }

    fn unexpected(call: &str, key: &str, given: Given) -> BucketError {
        // `give` lets through only the answers each call takes.
        BucketError::Failed(messages::backend(
            call,
            key,
            format!("the bucket callback answered {given:?}"),
        ))
    }
}

#[async_trait]
impl Bucket for CallbackBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        #[cfg(test)]
        if key.starts_with(PANIC_RELEASE) {
            panic!("a test asked the bucket to panic in get {key:?}");
        }
        let k = c_key(key);
        let answer = Answer::new(Call::Get, key, limit, 0);
        match self
            .ask(answer, move |t, a| {
                // SAFETY: a required callback of the caller's table, given its own
                // user_data, a key valid (NUL after it) until it returns, its handle.
                unsafe {
                    (t.get.expect("checked at open"))(
                        t.user_data,
                        k.as_ptr().cast(),
                        k.len() - 1,
                        limit,
                        a,
                    )
                }
            })
            .await?
        {
            Given::Bytes(b) => Ok(b),
            other => Err(Self::unexpected("get", key, other)),
        }
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        let k = c_key(key);
        let answer = Answer::new(Call::Put, key, 0, 0);
        match self
            .ask(answer, move |t, a| {
                // SAFETY: as in `get`; `value` lives until the callback returns.
                unsafe {
                    (t.put.expect("checked at open"))(
                        t.user_data,
                        k.as_ptr().cast(),
                        k.len() - 1,
                        value.as_ptr(),
                        value.len(),
                        a,
                    )
                }
            })
            .await?
        {
            Given::Ok => Ok(()),
            other => Err(Self::unexpected("put", key, other)),
        }
    }

    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        let k = c_key(key);
        let answer = Answer::new(Call::Exists, key, 0, 0);
        match self
            .ask(answer, move |t, a| {
                // SAFETY: as in `get`.
                unsafe {
                    (t.exists.expect("checked at open"))(
                        t.user_data,
                        k.as_ptr().cast(),
                        k.len() - 1,
                        a,
                    )
                }
            })
            .await
        {
            Ok(Given::Size(size)) => Ok(Some(size)),
            Err(BucketError::NotFound { .. }) => Ok(None),
            Ok(other) => Err(Self::unexpected("exists", key, other)),
            Err(e) => Err(e),
        }
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        let k = c_key(prefix);
        let answer = Answer::new(Call::List, prefix, 0, 0);
        let (id_listed, listed) = {
            // The listed objects come back through the answer; `finish` keeps them.
            let table = self.table.clone();
            let call_prefix = prefix.to_string();
            let done = on_calling_thread(move || {
                let (id, cell) = answer.open();
                // SAFETY: as in `get`.
                unsafe {
                    (table.0.list.expect("checked at open"))(
                        table.0.user_data,
                        k.as_ptr().cast(),
                        k.len() - 1,
                        id as *mut rs_answer,
                    )
                }
                let mut a = Answer::close(id, cell);
                let listed = std::mem::take(&mut a.listed);
                (a.finish(), listed)
            })
            .await;
            match done {
                Some(d) => d,
                None => {
                    return Err(BucketError::Failed(messages::backend(
                        "list",
                        &call_prefix,
                        "the bucket callback stopped before it answered",
                    )));
                }
            }
        };
        match id_listed? {
            Given::Ok => {}
            other => return Err(Self::unexpected("list", prefix, other)),
        }
        let mut listed = listed;
        listed.sort_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));
        if let Some(pair) = listed.windows(2).find(|w| w[0].key == w[1].key) {
            return Err(BucketError::Failed(messages::backend(
                "list",
                prefix,
                format!(
                    "the bucket's list callback answered wrongly: it listed {} twice",
                    messages::quote(&pair[0].key)
                ),
            )));
        }
        Ok(listed)
    }

    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        let k = c_key(key);
        let answer = Answer::new(Call::Delete, key, 0, 0);
        match self
            .ask(answer, move |t, a| {
                // SAFETY: as in `get`.
                unsafe {
                    (t.delete_key.expect("checked at open"))(
                        t.user_data,
                        k.as_ptr().cast(),
                        k.len() - 1,
                        a,
                    )
                }
            })
            .await?
        {
            Given::Ok | Given::NotFound => Ok(()),
            other => Err(Self::unexpected("delete", key, other)),
        }
    }

    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        if self.table.0.delete_many.is_none() {
            let mut answers = Vec::with_capacity(keys.len());
            for key in keys {
                answers.push(self.delete(key).await);
            }
            return Ok(answers);
        }
        let first = keys.first().cloned().unwrap_or_default();
        let owned: Vec<Vec<u8>> = keys.iter().map(|k| c_key(k)).collect();
        let answer = Answer::new(Call::DeleteMany, &first, 0, keys.len());
        let table = self.table.clone();
        let done = on_calling_thread(move || {
            let strs: Vec<rs_str> = owned
                .iter()
                .map(|k| rs_str {
                    data: k.as_ptr().cast(),
                    len: k.len() - 1,
                })
                .collect();
            let (id, cell) = answer.open();
            // SAFETY: the optional callback, checked present above, given the keys (each
            // with a NUL after it), valid until it returns.
            unsafe {
                (table.0.delete_many.expect("checked above"))(
                    table.0.user_data,
                    strs.as_ptr(),
                    strs.len(),
                    id as *mut rs_answer,
                )
            }
            let mut a = Answer::close(id, cell);
            if a.wrong.is_none() && a.given.is_none() {
                let missing = a.each.iter().filter(|r| r.is_none()).count();
                if missing == 0 {
                    return Ok(a
                        .each
                        .drain(..)
                        .map(|r| r.expect("every key answered"))
                        .collect());
                }
                if missing < a.each.len() {
                    let first = a.each.iter().position(Option::is_none).unwrap_or(0);
                    return Err(a.failed(format_args!(
                        "the bucket's delete-many callback left {missing} of {} keys \
                         unanswered (the first is key {first})",
                        a.each.len()
                    )));
                }
            }
            match a.finish() {
                Err(e) => Err(e),
                Ok(other) => Err(Self::unexpected("delete-many", &first, other)),
            }
        })
        .await;
        done.unwrap_or_else(|| {
            Err(BucketError::Failed(messages::backend(
                "delete-many",
                keys.first().map_or("", String::as_str),
                "the bucket callback stopped before it answered",
            )))
        })
    }
}
