//! Arguments from C, checked before use: a NULL pointer or a pointer with a length that
//! cannot be read is an `RS_ERROR_INVALID_ARGUMENT`, text that is not UTF-8 an
//! `RS_ERROR_INVALID_INPUT`. Every raw pointer the exported functions take goes through
//! here.
//!
//! Each function is `unsafe`: the caller (an entry point) vouches for what C cannot be
//! checked for, that a non-NULL pointer points to `len` readable bytes (or a writable
//! value) that stay valid, and unchanged by other threads, for the call.

use crate::error::{Result, rs_error};
use crate::value::rs_buf;
use render_store::Release;
use std::ffi::c_char;

/// `len` bytes at `ptr`; NULL with a length of 0 is the empty slice.
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8]> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(rs_error::argument(format!(
                "{what} is NULL with a length of {len}"
            )))
        };
    }
    if len > isize::MAX as usize {
        return Err(rs_error::argument(format!(
            "{what} has a length of {len}, past what memory can hold"
        )));
    }
    // SAFETY: the entry point's caller gives `len` readable bytes at a non-NULL `ptr`.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// UTF-8 text of `len` bytes at `ptr` (no NUL needed); NULL with 0 is "".
pub(crate) unsafe fn text<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<&'a str> {
    // SAFETY: passed on from the caller.
    let b = unsafe { bytes(ptr.cast(), len, what) }?;
    std::str::from_utf8(b).map_err(|e| rs_error::input(format!("{what} is not UTF-8: {e}")))
}

/// Text that may be absent: NULL (whatever `len`) is none, anything else [`text`].
pub(crate) unsafe fn opt_text<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: passed on from the caller.
    unsafe { text(ptr, len, what) }.map(Some)
}

/// A release from its namespace and name (checked by the library, not here).
pub(crate) unsafe fn release(
    namespace: *const c_char,
    namespace_len: usize,
    name: *const c_char,
    name_len: usize,
) -> Result<Release> {
    // SAFETY: passed on from the caller.
    let (namespace, name) = unsafe {
        (
            text(namespace, namespace_len, "namespace")?,
            text(name, name_len, "name")?,
        )
    };
    Ok(Release::new(namespace, name))
}

/// `count` values of `T` at `ptr`, which must be aligned for `T`.
pub(crate) unsafe fn array<'a, T>(ptr: *const T, count: usize, what: &str) -> Result<&'a [T]> {
    if ptr.is_null() {
        return if count == 0 {
            Ok(&[])
        } else {
            Err(rs_error::argument(format!(
                "{what} is NULL with a count of {count}"
            )))
        };
    }
    if !ptr.is_aligned() {
        return Err(rs_error::argument(format!("{what} is not aligned")));
    }
    if count
        .checked_mul(size_of::<T>())
        .is_none_or(|n| n > isize::MAX as usize)
    {
        return Err(rs_error::argument(format!(
            "{what} has a count of {count}, past what memory can hold"
        )));
    }
    // SAFETY: the entry point's caller gives `count` aligned values at a non-NULL `ptr`.
    Ok(unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// A list given as one buffer and where each item ends (`ends[i]` is the offset just
/// past item `i`): the form of every list this ABI takes, so a caller makes two flat
/// arrays, which cgo may pass as they are.
pub(crate) struct Joined<'a> {
    pub bytes: &'a [u8],
    pub ends: &'a [usize],
}

/// The list of `count` items in `bytes` ending at `ends`.
pub(crate) unsafe fn joined<'a>(
    bytes_ptr: *const u8,
    bytes_len: usize,
    ends_ptr: *const usize,
    count: usize,
    what: &str,
) -> Result<Joined<'a>> {
    // SAFETY: passed on from the caller.
    unsafe {
        Ok(Joined {
            bytes: bytes(bytes_ptr, bytes_len, what)?,
            ends: array(ends_ptr, count, &format!("the ends of {what}"))?,
        })
    }
}

impl<'a> Joined<'a> {
    /// The ends as the component takes them. One past 4 GiB cannot be a call's input.
    pub fn ends_u32(&self, what: &str) -> Result<Vec<u32>> {
        self.ends
            .iter()
            .map(|&e| {
                u32::try_from(e).map_err(|_| {
                    rs_error::input(format!(
                        "{what}: an end offset of {e} is past 4 GiB, more than one call \
                         can take"
                    ))
                })
            })
            .collect()
    }

    /// Each item, if the ends split the buffer: never decreasing, the last at its end.
    pub fn split(&self) -> Option<Vec<&'a [u8]>> {
        let mut start = 0;
        let mut items = Vec::with_capacity(self.ends.len());
        for &end in self.ends {
            if end < start || end > self.bytes.len() {
                return None;
            }
            items.push(&self.bytes[start..end]);
            start = end;
        }
        (start == self.bytes.len()).then_some(items)
    }

    /// Each item as text: a list of keys or renderRefs.
    pub fn texts(&self, what: &str) -> Result<Vec<String>> {
        let items = self.split().ok_or_else(|| {
            rs_error::input(format!(
                "{what}: the ends do not split the buffer (each at most the next, the last \
                 at its length)"
            ))
        })?;
        items
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                String::from_utf8(b.to_vec())
                    .map_err(|_| rs_error::input(format!("{what}: item {i} is not UTF-8")))
            })
            .collect()
    }
}

/// An out pointer, which must not be NULL.
pub(crate) unsafe fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: the entry point's caller gives NULL or a pointer valid for writes.
    unsafe { ptr.as_mut() }.ok_or_else(|| rs_error::argument(format!("{what} is NULL")))
}

/// An output buffer, set to empty before anything can fail, so a failed call leaves
/// nothing in it to free.
pub(crate) unsafe fn out_buf<'a>(ptr: *mut rs_buf, what: &str) -> Result<&'a mut rs_buf> {
    // SAFETY: passed on from the caller.
    let buf = unsafe { out(ptr, what) }?;
    *buf = rs_buf::EMPTY;
    Ok(buf)
}

/// An output buffer that may be NULL (not wanted).
pub(crate) unsafe fn opt_buf<'a>(ptr: *mut rs_buf) -> Option<&'a mut rs_buf> {
    // SAFETY: the entry point's caller gives NULL or a pointer valid for writes.
    let buf = unsafe { ptr.as_mut() }?;
    *buf = rs_buf::EMPTY;
    Some(buf)
}
