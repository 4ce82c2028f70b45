//! The logic functions: decisions made in the component with no bucket. Each takes the
//! options whose limits it runs with (NULL: the defaults; the grace period is not used),
//! blocks the calling thread, and may run on any number of threads at once.

use crate::args::{self, out, out_buf, text};
use crate::call::block_on;
use crate::error::{Result, guard, rs_error};
use crate::json;
use crate::options::{rs_options, runtime_of};
use crate::value::{RS_KEY_HISTORY, RS_KEY_OTHER, RS_KEY_RENDER, rs_buf, rs_time};
use render_store::operation::Output;
use render_store::{ParsedKey, Runtime};
use std::ffi::c_char;
use std::sync::Arc;

/// The runtime for `options`.
fn rt(options: *const rs_options) -> Result<Arc<Runtime>> {
    // SAFETY: the header's rule for `options`: NULL or a readable rs_options.
    unsafe { runtime_of(options) }
}

macro_rules! release {
    ($ns:expr, $ns_len:expr, $name:expr, $name_len:expr) => {
        // SAFETY: the header's rules: each pointer NULL with length 0, or `len` bytes.
        unsafe { args::release($ns, $ns_len, $name, $name_len) }?
    };
}

/// The canonical bytes of a render (CONTRACT.md §4): for each object, Go's
/// `encoding/json` re-encoding, then a newline. Objects as for `rs_store_put_render`
/// (one buffer, `count` ends). `*canonical` receives the bytes (UTF-8, no NUL after).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_canonical(
    options: *const rs_options,
    objects: *const u8,
    objects_len: usize,
    ends: *const usize,
    count: usize,
    canonical: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, objects) = unsafe {
            (
                out_buf(canonical, "canonical")?,
                args::joined(objects, objects_len, ends, count, "objects")?,
            )
        };
        let ends = objects.ends_u32("objects")?;
        out.set_bytes(block_on(
            rt(options)?.canonical_joined(objects.bytes, &ends),
        )??);
        Ok(())
    })
}

/// The renderRef of a render (`sha256:` and 64 lowercase hex digits), the one a Go
/// controller computes. Objects as for `rs_canonical`. `*render_ref` is text.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_render_ref(
    options: *const rs_options,
    objects: *const u8,
    objects_len: usize,
    ends: *const usize,
    count: usize,
    render_ref: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, objects) = unsafe {
            (
                out_buf(render_ref, "render_ref")?,
                args::joined(objects, objects_len, ends, count, "objects")?,
            )
        };
        let ends = objects.ends_u32("objects")?;
        out.set_text(block_on(
            rt(options)?.render_ref_joined(objects.bytes, &ends),
        )??);
        Ok(())
    })
}

/// Checks that each object is a Kubernetes object as a person's or a tool's render must
/// be (CONTRACT.md §4): `apiVersion`, `kind`, and `metadata.name` or
/// `metadata.generateName`; a `List` or `*List` with `items` item by item; no Secret
/// holding the `***` markers of a masked view. Objects as for `rs_canonical`. The first
/// object that fails is `RS_ERROR_INVALID_OBJECT` (`rs_error_object_index` says which,
/// the message what and where). Storing does not check this: a controller stores what it
/// applied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_check_objects(
    options: *const rs_options,
    objects: *const u8,
    objects_len: usize,
    ends: *const usize,
    count: usize,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let objects = unsafe { args::joined(objects, objects_len, ends, count, "objects")? };
        let ends = objects.ends_u32("objects")?;
        block_on(rt(options)?.check_objects_joined(objects.bytes, &ends))??;
        Ok(())
    })
}

/// The objects of a multi-document Kubernetes YAML stream (CONTRACT.md §11), each the
/// compact JSON `sigs.k8s.io/yaml` writes, followed by a newline (compact JSON never
/// holds one): `*objects` is text, one object a line. A stream that is not a render is
/// `RS_ERROR_INVALID_YAML` (`rs_error_yaml` says where).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_yaml_objects(
    options: *const rs_options,
    yaml: *const u8,
    yaml_len: usize,
    objects: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, yaml) = unsafe {
            (
                out_buf(objects, "objects")?,
                args::bytes(yaml, yaml_len, "yaml")?,
            )
        };
        let objects = block_on(rt(options)?.yaml_objects(yaml))??;
        let mut lines = Vec::with_capacity(objects.iter().map(|o| o.len() + 1).sum::<usize>() + 1);
        for object in objects {
            lines.extend_from_slice(&object);
            lines.push(b'\n');
        }
        lines.push(0);
        let len = lines.len() - 1;
        out.set_bytes(lines);
        out.len = len;
        Ok(())
    })
}

/// The canonical bytes of a YAML stream's render, in one sandbox call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_yaml_canonical(
    options: *const rs_options,
    yaml: *const u8,
    yaml_len: usize,
    canonical: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, yaml) = unsafe {
            (
                out_buf(canonical, "canonical")?,
                args::bytes(yaml, yaml_len, "yaml")?,
            )
        };
        out.set_bytes(block_on(rt(options)?.yaml_canonical(yaml))??);
        Ok(())
    })
}

/// The renderRef of a YAML stream's render, as a Go controller computes it (text).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_yaml_render_ref(
    options: *const rs_options,
    yaml: *const u8,
    yaml_len: usize,
    render_ref: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, yaml) = unsafe {
            (
                out_buf(render_ref, "render_ref")?,
                args::bytes(yaml, yaml_len, "yaml")?,
            )
        };
        out.set_text(block_on(rt(options)?.yaml_render_ref(yaml))??);
        Ok(())
    })
}

/// Checks a renderRef: NULL (valid) or `RS_ERROR_INVALID_INPUT` saying what is wrong.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_validate_render_ref(
    options: *const rs_options,
    render_ref: *const c_char,
    render_ref_len: usize,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let r = unsafe { text(render_ref, render_ref_len, "render_ref") }?;
        Ok(block_on(rt(options)?.validate_render_ref(r))??)
    })
}

/// Checks a bucket key by the rule every bucket applies before it stores or deletes
/// (CONTRACT.md §2: a clean `/`-separated path): NULL when `key` is clean, else
/// `RS_ERROR_INVALID_INPUT` with the sentence a bucket answers `denied` with. For
/// buckets written over the callbacks, so they refuse exactly what the library's own
/// buckets refuse. Needs no runtime and never blocks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_check_key(key: *const c_char, key_len: usize) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let k = unsafe { text(key, key_len, "key") }?;
        render_store::check_key(k).map_err(|e| rs_error::input(e.to_string()))
    })
}

/// The 64 lowercase hex digits of SHA-256 over `bytes`, computed in the component
/// (text).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_sha256_hex(
    options: *const rs_options,
    bytes: *const u8,
    len: usize,
    hex: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, bytes) = unsafe { (out_buf(hex, "hex")?, args::bytes(bytes, len, "bytes")?) };
        out.set_text(block_on(rt(options)?.sha256_hex(bytes))??);
        Ok(())
    })
}

/// `<namespace>/<name>/`, the prefix of every key of the release, once both names are
/// checked (text).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_release_prefix(
    options: *const rs_options,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    prefix: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for the out pointer.
        let out = unsafe { out_buf(prefix, "prefix") }?;
        let release = release!(namespace, namespace_len, name, name_len);
        out.set_text(block_on(rt(options)?.release_prefix(&release))??);
        Ok(())
    })
}

/// `<namespace>/<name>/renders/<renderRef>` (text).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_render_key(
    options: *const rs_options,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    render_ref: *const c_char,
    render_ref_len: usize,
    key: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, r) = unsafe {
            (
                out_buf(key, "key")?,
                text(render_ref, render_ref_len, "render_ref")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        out.set_text(block_on(rt(options)?.render_key(&release, r))??);
        Ok(())
    })
}

/// `<namespace>/<name>/history/<time>-<renderRef>`, the time in the 26-character
/// layout `YYYYMMDDTHHMMSS.nnnnnnnnnZ` (text).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_history_key(
    options: *const rs_options,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    synced_at: rs_time,
    render_ref: *const c_char,
    render_ref_len: usize,
    key: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, r) = unsafe {
            (
                out_buf(key, "key")?,
                text(render_ref, render_ref_len, "render_ref")?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        out.set_text(block_on(rt(options)?.history_key(
            &release,
            synced_at.into(),
            r,
        ))??);
        Ok(())
    })
}

/// What a key of the release is: `*kind` is `RS_KEY_RENDER` (`*render_ref` set),
/// `RS_KEY_HISTORY` (`*render_ref` and `*synced_at` set) or `RS_KEY_OTHER` (neither:
/// a foreign or staging file, another release's key). `synced_at` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_parse_key(
    options: *const rs_options,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    key: *const c_char,
    key_len: usize,
    kind: *mut u32,
    render_ref: *mut rs_buf,
    synced_at: *mut rs_time,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (ref_out, kind, key, synced_at) = unsafe {
            (
                out_buf(render_ref, "render_ref")?,
                out(kind, "kind")?,
                text(key, key_len, "key")?,
                synced_at.as_mut(),
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        match block_on(rt(options)?.parse_key(&release, key))?? {
            None => *kind = RS_KEY_OTHER,
            Some(ParsedKey::Render(r)) => {
                *kind = RS_KEY_RENDER;
                ref_out.set_text(r);
            }
            Some(ParsedKey::History(h)) => {
                *kind = RS_KEY_HISTORY;
                ref_out.set_text(h.render_ref);
                if let Some(t) = synced_at {
                    *t = h.synced_at.into();
                }
            }
        }
        Ok(())
    })
}

/// `t` as a history entry's `syncedAt`: RFC 3339 in UTC with nanoseconds, trailing
/// zeros trimmed (Go's `time.RFC3339Nano`); years outside 0000–9999 are
/// `RS_ERROR_INVALID_INPUT` (text).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_format_synced_at(
    options: *const rs_options,
    t: rs_time,
    text: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rule for the out pointer.
        let out = unsafe { out_buf(text, "text") }?;
        out.set_text(block_on(rt(options)?.format_synced_at(t.into()))??);
        Ok(())
    })
}

/// Parses RFC 3339 (`text_len` bytes) to a UTC time: `*t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_parse_synced_at(
    options: *const rs_options,
    text: *const c_char,
    text_len: usize,
    t: *mut rs_time,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, s) = unsafe { (out(t, "t")?, self::text(text, text_len, "text")?) };
        *out = block_on(rt(options)?.parse_synced_at(s))??.into();
        Ok(())
    })
}

/// The GC decision from listings alone, with no bucket (CONTRACT.md §5): the release's
/// history keys and render keys (each a list in one buffer with its ends, as the
/// objects of `rs_store_put_render`), the protected renderRefs and `now`, the time GC
/// runs at, in; the plan out, in the JSON of `rs_store_gc`. Entries dated more than
/// the component's tolerance (300 s) after `now` are listed in `futureHistory`, entries
/// whose render `render_keys` lacks in `danglingHistory`: neither counts toward `keep`
/// nor is deleted. No grace period applies (`recentRenders` is empty).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_plan_gc(
    options: *const rs_options,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    keep: i64,
    history_keys: *const u8,
    history_keys_len: usize,
    history_keys_ends: *const usize,
    history_keys_count: usize,
    render_keys: *const u8,
    render_keys_len: usize,
    render_keys_ends: *const usize,
    render_keys_count: usize,
    protected: *const u8,
    protected_len: usize,
    protected_ends: *const usize,
    protected_count: usize,
    now: rs_time,
    plan: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, history, renders, protected) = unsafe {
            (
                out_buf(plan, "plan")?,
                args::joined(
                    history_keys,
                    history_keys_len,
                    history_keys_ends,
                    history_keys_count,
                    "history_keys",
                )?,
                args::joined(
                    render_keys,
                    render_keys_len,
                    render_keys_ends,
                    render_keys_count,
                    "render_keys",
                )?,
                args::joined(
                    protected,
                    protected_len,
                    protected_ends,
                    protected_count,
                    "protected",
                )?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let (history, renders, protected) = (
            history.texts("history_keys")?,
            renders.texts("render_keys")?,
            protected.texts("protected")?,
        );
        let rt = rt(options)?;
        let text = block_on(async {
            let plan = rt
                .plan_gc(&release, keep, &history, &renders, &protected, now.into())
                .await?;
            json::output(&rt, &Output::Plan(plan)).await
        })??;
        out.set_text(text);
        Ok(())
    })
}

/// A release's history as one listing of `<prefix>history/` shows it, from those keys
/// alone (a list in one buffer with its ends, as the objects of `rs_store_put_render`):
/// `*summary` is JSON text, `{"entries":N,"newest":{"renderRef":…,"syncedAt":
/// {"nanoseconds":N,"seconds":N}} or null}`. Keys that are not the release's entries are
/// not counted. What the observer's release list shows, with no entry read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_summarize_history(
    options: *const rs_options,
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
    history_keys: *const u8,
    history_keys_len: usize,
    history_keys_ends: *const usize,
    history_keys_count: usize,
    summary: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, keys) = unsafe {
            (
                out_buf(summary, "summary")?,
                args::joined(
                    history_keys,
                    history_keys_len,
                    history_keys_ends,
                    history_keys_count,
                    "history_keys",
                )?,
            )
        };
        let release = release!(namespace, namespace_len, name, name_len);
        let keys = keys.texts("history_keys")?;
        let s = block_on(rt(options)?.summarize_history(&release, &keys))??;
        out.set_text(json::summary(&s));
        Ok(())
    })
}

/// The difference between two canonical renders (`old` to `new`), changed objects'
/// lines in `form` with `context` lines around each change, Secret values as `secrets`
/// says; `*diff` as for `rs_store_diff`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_diff_renders(
    options: *const rs_options,
    old: *const u8,
    old_len: usize,
    new: *const u8,
    new_len: usize,
    form: u32,
    secrets: u32,
    context: u32,
    diff: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, old, new) = unsafe {
            (
                out_buf(diff, "diff")?,
                args::bytes(old, old_len, "old")?,
                args::bytes(new, new_len, "new")?,
            )
        };
        let (form, secrets) = (crate::value::form(form)?, crate::value::secrets(secrets)?);
        let diff = block_on(rt(options)?.diff_renders(old, new, form, secrets, context))??;
        out.set_text(json::diff(&diff));
        Ok(())
    })
}

/// Every object of a canonical render, in order, for people: `*shown` is JSON text, an
/// array of `{"apiVersion","kind","name","namespace","text"}`, `text` the whole object
/// in `form` with Secret values as `secrets` says (the text the diffs compare).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_show_objects(
    options: *const rs_options,
    canonical: *const u8,
    canonical_len: usize,
    form: u32,
    secrets: u32,
    shown: *mut rs_buf,
) -> *mut rs_error {
    guard(|| {
        // SAFETY: the header's rules for every pointer argument.
        let (out, canonical) = unsafe {
            (
                out_buf(shown, "shown")?,
                args::bytes(canonical, canonical_len, "canonical")?,
            )
        };
        let (form, secrets) = (crate::value::form(form)?, crate::value::secrets(secrets)?);
        let objects = block_on(rt(options)?.show_objects(canonical, form, secrets))??;
        out.set_text(json::shown(&objects));
        Ok(())
    })
}
