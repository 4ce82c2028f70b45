//! The bucket under a store, called directly: the calls of CONTRACT.md §2 on the
//! store's own bucket (a URL-opened backend, or the caller's callbacks), outside any
//! store operation and outside the sandbox.
//!
//! They are for tools that check or copy a store key by key (a bucket conformance
//! suite, a migration) and answer exactly as the bucket answered: the component's
//! release scope does not apply, the bucket's own key rule does. A failed call returns
//! an error of kind `RS_ERROR_NOT_FOUND` (get of an absent key), `RS_ERROR_DENIED`,
//! `RS_ERROR_TOO_LARGE` or `RS_ERROR_BACKEND`, its message the bucket's.

use crate::args::{bytes, joined, out, out_buf, text};
use crate::call::block_on;
use crate::error::{Result, guard, rs_error};
use crate::store::rs_store;
use crate::value::rs_buf;
use render_store::{Bucket, BucketError, RenderStore};
use serde_json::json;
use std::ffi::c_char;
use std::sync::Arc;

/// The bucket of `store`, and the store whose deadline and cancellation bound its calls.
///
/// SAFETY (for callers): `store` is NULL or a store this library made, not freed.
unsafe fn bucket<'a>(store: *const rs_store) -> Result<(&'a RenderStore, &'a Arc<dyn Bucket>)> {
    // SAFETY: as the caller promises.
    unsafe { store.as_ref() }
        .map(|s| (s.inner(), s.inner().bucket()))
        .ok_or_else(|| rs_error::argument("store is NULL"))
}

/// The key argument of a bucket call.
///
/// SAFETY (for callers): the header's rule for a text argument.
unsafe fn key<'a>(ptr: *const c_char, len: usize) -> Result<&'a str> {
    // SAFETY: passed on from the caller.
    unsafe { text(ptr, len, "key") }
}

/// Runs a bucket call within the store's deadline and cancellation: its result, its
/// error as the kind that says what the bucket meant.
fn answered<T>(
    store: &RenderStore,
    call: impl std::future::Future<Output = Result<T, BucketError>>,
) -> Result<T> {
    block_on(store.within(call))??.map_err(|e| Box::new(rs_error::of_bucket(&e)))
}

/// The whole content of `key` (call: `get`) into `*value` (bytes, no NUL after them),
/// if it is at most `limit` bytes: `RS_ERROR_TOO_LARGE` otherwise, refused before the
/// content is read; `RS_ERROR_NOT_FOUND` for an absent key.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_bucket_get(
    store: *const rs_store,
    key: *const c_char,
    key_len: usize,
    limit: u64,
    value: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, (store, bucket), key) = unsafe {
            (
                out_buf(value, "value")?,
                bucket(store)?,
                self::key(key, key_len)?,
            )
        };
        out.set_bytes(answered(store, bucket.get(key, limit))?);
        Ok(())
    })
}

/// Stores the `value_len` bytes at `value` under `key`, atomically (call: `put`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_bucket_put(
    store: *const rs_store,
    key: *const c_char,
    key_len: usize,
    value: *const u8,
    value_len: usize,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let ((store, bucket), key, value) = unsafe {
            (
                bucket(store)?,
                self::key(key, key_len)?,
                bytes(value, value_len, "value")?,
            )
        };
        answered(store, bucket.put(key, value.to_vec()))
    })
}

/// Whether `key` exists (call: `exists`, a metadata request): `*found`, and its size in
/// `*size` (0 when absent). `size` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_bucket_exists(
    store: *const rs_store,
    key: *const c_char,
    key_len: usize,
    found: *mut bool,
    size: *mut u64,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (found, size, (store, bucket), key) = unsafe {
            let found = out(found, "found")?;
            *found = false;
            let size = size.as_mut();
            (found, size, bucket(store)?, self::key(key, key_len)?)
        };
        let answer = answered(store, bucket.exists(key))?;
        *found = answer.is_some();
        if let Some(size) = size {
            *size = answer.unwrap_or(0);
        }
        Ok(())
    })
}

/// Every object whose key starts with `prefix` (call: `list`), sorted by key bytes, as
/// JSON text in `*listing`:
/// `[{"key":"…","size":N,"modified":{"seconds":S,"nanoseconds":NS}},…]`. A listing that
/// cannot be complete is an error, never a shorter listing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_bucket_list(
    store: *const rs_store,
    prefix: *const c_char,
    prefix_len: usize,
    listing: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, (store, bucket), prefix) = unsafe {
            (
                out_buf(listing, "listing")?,
                bucket(store)?,
                text(prefix, prefix_len, "prefix")?,
            )
        };
        let objects = answered(store, bucket.list(prefix))?;
        let items: Vec<_> = objects.iter().map(object_json).collect();
        out.set_text(serde_json::Value::Array(items).to_string());
        Ok(())
    })
}

/// What lies directly under the folder `prefix` (empty, or ending in `/`): the bucket's
/// delimiter listing (one request a page where the backend has one; the plain listing
/// folded where it has not, as for a store over callbacks), as JSON text in
/// `*listing`: `{"folders":["…/",…],"objects":[{"key":"…","size":N,"modified":
/// {"seconds":S,"nanoseconds":NS}},…]}`, each sorted by bytes. A prefix that names no
/// folder is `RS_ERROR_DENIED`; a listing that cannot be complete is an error, never a
/// shorter listing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_bucket_list_delimited(
    store: *const rs_store,
    prefix: *const c_char,
    prefix_len: usize,
    listing: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, (store, bucket), prefix) = unsafe {
            (
                out_buf(listing, "listing")?,
                bucket(store)?,
                text(prefix, prefix_len, "prefix")?,
            )
        };
        let listed = answered(store, bucket.list_delimited(prefix))?;
        let objects: Vec<_> = listed.objects.iter().map(object_json).collect();
        out.set_text(json!({"folders": listed.folders, "objects": objects}).to_string());
        Ok(())
    })
}

/// An object of a listing as the JSON of `rs_store_bucket_list`.
fn object_json(o: &render_store::ObjectMeta) -> serde_json::Value {
    json!({
        "key": o.key,
        "size": o.size,
        "modified": {
            "seconds": o.modified.seconds,
            "nanoseconds": o.modified.nanoseconds,
        },
    })
}

/// Deletes `key` (call: `delete`); an absent key is not an error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_bucket_delete(
    store: *const rs_store,
    key: *const c_char,
    key_len: usize,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let ((store, bucket), key) = unsafe { (bucket(store)?, self::key(key, key_len)?) };
        answered(store, bucket.delete(key))
    })
}

/// Deletes `count` keys, given joined (`keys_len` bytes at `keys`, key `i` ending at
/// `ends[i]`), in one request where the backend has one (call: `delete-many`; at most
/// 1,000 keys). The returned error is that of the whole request (any key may or may
/// not be gone then). Otherwise `*each` is JSON text, one item per key in order: `null`
/// for a key deleted or absent, or `{"kind":K,"message":"…"}` with `K` an error kind
/// (`RS_ERROR_DENIED`, `RS_ERROR_BACKEND`, …).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_bucket_delete_many(
    store: *const rs_store,
    keys: *const u8,
    keys_len: usize,
    ends: *const usize,
    count: usize,
    each: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, (store, bucket), keys) = unsafe {
            (
                out_buf(each, "each")?,
                bucket(store)?,
                joined(keys, keys_len, ends, count, "keys")?,
            )
        };
        let keys = keys.texts("keys")?;
        if keys.len() > 1000 {
            return Err(rs_error::argument(format!(
                "{} keys given to rs_store_bucket_delete_many; one request takes at most 1000",
                keys.len()
            )));
        }
        let answers = answered(store, bucket.delete_many(&keys))?;
        let items: Vec<_> = answers
            .iter()
            .map(|a| match a {
                Ok(()) => serde_json::Value::Null,
                Err(e) => {
                    let e = rs_error::of_bucket(e);
                    json!({ "kind": e.kind(), "message": e.message() })
                }
            })
            .collect();
        out.set_text(serde_json::Value::Array(items).to_string());
        Ok(())
    })
}
