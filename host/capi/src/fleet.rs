//! The fleet queries: questions about every release of a store at once.

use crate::args::{opt_text, out_buf, text};
use crate::call::block_on;
use crate::error::{guard, rs_error};
use crate::store::rs_store;
use crate::value::{rs_buf, rs_time};
use render_store::SyncTime;
use std::ffi::c_char;

/// Where each container image ran across the releases of the store (or of the namespace
/// `namespace`, `namespace_len` bytes; NULL: every namespace), and when, as the
/// histories record it: each image matching `pattern` (NULL: every image; a repository
/// `nginx`, a reference `nginx:1.25`, a digest `@sha256:HEX` or a glob `ghcr.io/org/*`;
/// a bad one is `RS_ERROR_INVALID_INPUT` before any call) with each interval during
/// which it was in a release's recorded render that meets the window from `*since`
/// until `*until` (each NULL: open). `*images` receives JSON text, what `render-store
/// images -o json` prints: `{"images":[{"image","namespace","name","from","until"
/// (null while open),"renderRefs"}],"complete":bool,"unlisted":[{"folder","error"}],
/// "unread":[{"namespace","name","error"}]}`, times RFC 3339. When `complete` is false
/// the answer says nothing of the folders and releases named: never read it as "not
/// there". Each release costs one listing of its history and one read of each render,
/// in the sandbox, 16 releases at once, within the store's deadline. Any thread.
///
/// # Safety
///
/// `store` is a store this library made, not freed; each text NULL with length 0 or
/// `len` bytes; `since` and `until` NULL or valid; `images` a buffer to fill.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_images(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    pattern: *const c_char,
    pattern_len: usize,
    since: *const rs_time,
    until: *const rs_time,
    images: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, namespace, pattern, since, until) = unsafe {
            (
                out_buf(images, "images")?,
                crate::store::get(store)?,
                opt_text(namespace, namespace_len, "namespace")?,
                opt_text(pattern, pattern_len, "pattern")?,
                since.as_ref().copied().map(SyncTime::from),
                until.as_ref().copied().map(SyncTime::from),
            )
        };
        let store = store.inner();
        let value = block_on(async {
            let found =
                render_store::fleet_images::images(store, namespace, pattern, since, until).await?;
            render_store::json_view::images(store.runtime(), &found).await
        })??;
        out.set_text(value.to_string());
        Ok(())
    })
}

/// Which entry of the release's history last changed each field of `object`
/// (`object_len` bytes: `KIND/NAME`, the kind in any case, or `NAMESPACE/KIND/NAME`), or
/// each field under `field` (NULL: every field; a path as the diff's hunk headers write
/// them), in the newest render that holds the object, values shown as `secrets`
/// (`RS_SECRETS_*`) says. `*blame` receives JSON text, what `render-store blame -o json`
/// prints: `{"object":ID,"fields":[{"path","value","entry" (its place, 0 the newest),
/// "syncedAt","renderRef","summary"}],"newest":N}`. `RS_ERROR_NOT_FOUND` when no render
/// of the history holds the object; `RS_ERROR_INVALID_INPUT` for an object name that is
/// none or names two objects, or a field the object lacks. Every render of the history
/// is read once, in the sandbox. Any thread.
///
/// # Safety
///
/// `store` is a store this library made, not freed; each text NULL with length 0 or
/// `len` bytes; `blame` a buffer to fill.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // the release, the object, the field: as the WIT takes them
pub unsafe extern "C" fn rs_store_blame(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    object: *const c_char,
    object_len: usize,
    field: *const c_char,
    field_len: usize,
    secrets: u32,
    blame: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, object, field, release) = unsafe {
            (
                out_buf(blame, "blame")?,
                crate::store::get(store)?,
                text(object, object_len, "object")?,
                opt_text(field, field_len, "field")?,
                crate::args::release(namespace, namespace_len, name, name_len)?,
            )
        };
        let secrets = crate::value::secrets(secrets)?;
        let store = store.inner();
        let value = block_on(async {
            let blame = store.blame_object(&release, object, field, secrets).await?;
            render_store::json_view::blame(store, &release, &blame).await
        })??;
        out.set_text(value.to_string());
        Ok(())
    })
}

/// Every history entry of the store's releases (of the namespace `namespace`,
/// `namespace_len` bytes, alone when not NULL) synced from `*since` until `*until` (each
/// NULL: open), newest first, each with what changed against the entry before it in its
/// release: objects added, removed and changed, container images (old → new), and the
/// keys of Secrets whose values changed (names only, never values). `*changes`
/// receives JSON text, what `render-store changes -o json` prints:
/// `{"entries":[{"namespace","name","entry","syncedAt","summary","renderRef",
/// "previousRenderRef","added","removed","changed","images":[{"object","container",
/// "old","new"}],"secretKeys":[{"secret","key"}]}],"complete":bool,"unlisted":
/// [{"folder","error"}],"unread":[{"namespace","name","error"}]}`. A folder that cannot
/// be listed, or a release whose entries or renders do not read, makes `complete` false
/// and is named in `unlisted` or `unread`; the other releases' entries are still given.
/// Any thread.
///
/// # Safety
///
/// `store` is a store this library made, not freed; `namespace` NULL with length 0 or
/// `namespace_len` bytes; `since` and `until` NULL or valid; `changes` a buffer to fill.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_changes(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    since: *const rs_time,
    until: *const rs_time,
    changes: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, namespace, since, until) = unsafe {
            (
                out_buf(changes, "changes")?,
                crate::store::get(store)?,
                opt_text(namespace, namespace_len, "namespace")?,
                since.as_ref().copied().map(SyncTime::from),
                until.as_ref().copied().map(SyncTime::from),
            )
        };
        let store = store.inner();
        let value = block_on(async {
            let found =
                render_store::fleet_changes::fleet_changes(store, namespace, since, until).await?;
            render_store::json_view::changes(store.runtime(), &found).await
        })??;
        out.set_text(value.to_string());
        Ok(())
    })
}

/// Brings the release index of the release (CONTRACT.md §3: what each render of its
/// history holds, one blob a release, which `rs_store_images` reads in place of every
/// render) up to date with its history: with `read_missing`, the renders it does not
/// name are read and indexed (what a controller does after a record-history that added
/// an entry); without, it only drops what the history no longer names (after a GC that
/// deleted something). The blob is written only when it changes, sealed under the
/// keyring's first key when there is one; an empty history leaves none. `*report`
/// receives JSON text: `{"namespace","name","renders","indexed","read","pruned",
/// "unreadable":["REF: WHY"],"replaced":WHY|null,"written":bool}`. The index is a
/// cache: a failure here loses nothing and a caller may log it and go on. Calls: one
/// listing of the history, one read of the index, one read of each render it lacks, at
/// most one write. Any thread.
///
/// # Safety
///
/// `store` is a store this library made, not freed; each text `len` bytes; `report` a
/// buffer to fill.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_index_release(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    read_missing: bool,
    report: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, release) = unsafe {
            (
                out_buf(report, "report")?,
                crate::store::get(store)?,
                crate::args::release(namespace, namespace_len, name, name_len)?,
            )
        };
        let done = block_on(store.inner().index_release(&release, read_missing))??;
        out.set_text(render_store::json_view::index_report(&release, &done).to_string());
        Ok(())
    })
}

/// Brings the release index of every release of the store (or of the namespace
/// `namespace`, `namespace_len` bytes; NULL: every namespace) up to date, reading the
/// renders each lacks, 16 releases at once, within the store's deadline (what
/// `render-store reindex` does). `*result` receives JSON text, what `render-store
/// reindex -o json` prints: `{"releases":[…as rs_store_index_release…],"complete":bool,
/// "unlisted":[{"folder","error"}],"failed":[{"namespace","name","error"}]}`. Any
/// thread.
///
/// # Safety
///
/// `store` is a store this library made, not freed; the text NULL with length 0 or
/// `len` bytes; `result` a buffer to fill.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_store_reindex(
    store: *const rs_store,
    namespace: *const c_char,
    namespace_len: usize,
    result: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, store, namespace) = unsafe {
            (
                out_buf(result, "result")?,
                crate::store::get(store)?,
                opt_text(namespace, namespace_len, "namespace")?,
            )
        };
        let done = block_on(render_store::fleet_index::reindex(
            store.inner(),
            namespace,
            false,
        ))??;
        out.set_text(render_store::json_view::reindex(&done).to_string());
        Ok(())
    })
}
