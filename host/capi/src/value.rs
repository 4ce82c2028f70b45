//! The plain values that cross the boundary: buffers the library hands out, times, and
//! the small enumerations given as integers.

use crate::error::guard_void;
use render_store::{Grace, ObjectForm, SecretValues, SyncTime};

/// Bytes the library hands out: a render, a renderRef, a key, a JSON document.
///
/// The library owns `data` until the caller passes the buffer to [`rs_buf_free`], once;
/// nothing else frees it. A buffer a call documents as text is valid UTF-8 and followed
/// by a NUL byte that `len` does not count, so it can be printed as a C string; other
/// buffers (canonical renders) are bytes with no NUL after them. An empty buffer may
/// have a NULL `data`. A call sets its output buffers to empty first, so a buffer given
/// to a call that fails holds nothing to free (freeing it is harmless).
#[repr(C)]
#[derive(Debug)]
pub struct rs_buf {
    /// The first byte, or NULL when the buffer is empty.
    pub data: *mut u8,
    /// How many bytes.
    pub len: usize,
    /// The size of the allocation, for [`rs_buf_free`]; never change it.
    pub cap: usize,
}

impl rs_buf {
    /// The empty buffer, which owns nothing.
    pub(crate) const EMPTY: rs_buf = rs_buf {
        data: std::ptr::null_mut(),
        len: 0,
        cap: 0,
    };

    /// Hands `bytes` out as they are: no copy, whatever their capacity.
    pub(crate) fn set_bytes(&mut self, bytes: Vec<u8>) {
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        *self = if bytes.capacity() == 0 {
            rs_buf::EMPTY
        } else {
            rs_buf {
                data: bytes.as_mut_ptr(),
                len: bytes.len(),
                cap: bytes.capacity(),
            }
        };
    }

    /// Hands `text` out with a NUL after it that `len` leaves out.
    pub(crate) fn set_text(&mut self, text: String) {
        let mut bytes = text.into_bytes();
        let len = bytes.len();
        bytes.push(0);
        self.set_bytes(bytes);
        self.len = len;
    }
}

/// Frees what `buf` holds and sets it to empty. `buf` may be NULL, empty or already
/// freed by this function; it must not be a buffer the caller changed or copied and
/// freed before. Any thread may free any buffer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_buf_free(buf: *mut rs_buf) {
    guard_void(|| {
        if buf.is_null() {
            return;
        }
        // SAFETY: the caller passes a buffer this library filled (or one set to empty),
        // not freed since: `data` and `cap` describe a live `Vec<u8>` allocation.
        unsafe {
            let b = &mut *buf;
            if !b.data.is_null() && b.cap != 0 {
                drop(Vec::from_raw_parts(b.data, 0, b.cap));
            }
            *b = rs_buf::EMPTY;
        }
    })
}

/// A string the library lends a callback: `len` bytes of UTF-8 at `data`, followed by a
/// NUL byte `len` does not count. Valid until the callback returns.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rs_str {
    /// The first byte.
    pub data: *const std::ffi::c_char,
    /// How many bytes, the NUL after them not counted.
    pub len: usize,
}

/// A point in time: seconds since 1970-01-01T00:00:00Z (negative before) and
/// nanoseconds past them (0 to 999,999,999).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rs_time {
    /// Whole seconds since the Unix epoch.
    pub seconds: i64,
    /// Nanoseconds past `seconds`.
    pub nanoseconds: u32,
}

impl From<rs_time> for SyncTime {
    fn from(t: rs_time) -> SyncTime {
        SyncTime {
            seconds: t.seconds,
            nanoseconds: t.nanoseconds,
        }
    }
}

impl From<SyncTime> for rs_time {
    fn from(t: SyncTime) -> rs_time {
        rs_time {
            seconds: t.seconds,
            nanoseconds: t.nanoseconds,
        }
    }
}

/// GC's grace period given explicitly (CONTRACT.md §13): no render blob modified less
/// than `seconds` before `now` is deleted. A replay passes the recorded ones.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rs_grace {
    /// The time blob ages are judged against (the component has no clock).
    pub now: rs_time,
    /// The period in seconds; 0 deletes every unreferenced blob, whatever its age.
    pub seconds: u64,
}

impl From<rs_grace> for Grace {
    fn from(g: rs_grace) -> Grace {
        Grace {
            now: g.now.into(),
            seconds: g.seconds,
        }
    }
}

/// Diffs and shown objects write each object as YAML, as `kubectl get -o yaml` shows it.
pub const RS_FORM_YAML: u32 = 0;
/// Diffs and shown objects write each object as Go's `json.MarshalIndent` (two spaces).
pub const RS_FORM_JSON: u32 = 1;

/// Secret values in the forms made for people are replaced by kubectl diff's markers
/// (`***`, `*** (before)`, `*** (after)`): the default.
pub const RS_SECRETS_MASKED: u32 = 0;
/// Secret values are shown as stored: only for a user who asked.
pub const RS_SECRETS_SHOWN: u32 = 1;

/// The diffs' `context` as the CLI shows it: lines around each change, as diff(1)
/// (a literal, so the header can carry it; a test checks it is the library's).
pub const RS_DEFAULT_CONTEXT: u32 = 3;

/// `rs_parse_key`: the key is neither a render nor a history entry of the release.
pub const RS_KEY_OTHER: u32 = 0;
/// `rs_parse_key`: the key is a render blob's.
pub const RS_KEY_RENDER: u32 = 1;
/// `rs_parse_key`: the key is a history entry's.
pub const RS_KEY_HISTORY: u32 = 2;

pub(crate) fn form(value: u32) -> crate::error::Result<ObjectForm> {
    match value {
        RS_FORM_YAML => Ok(ObjectForm::Yaml),
        RS_FORM_JSON => Ok(ObjectForm::Json),
        other => Err(crate::error::rs_error::argument(format!(
            "form {other} is neither RS_FORM_YAML nor RS_FORM_JSON"
        ))),
    }
}

pub(crate) fn secrets(value: u32) -> crate::error::Result<SecretValues> {
    match value {
        RS_SECRETS_MASKED => Ok(SecretValues::Masked),
        RS_SECRETS_SHOWN => Ok(SecretValues::Shown),
        other => Err(crate::error::rs_error::argument(format!(
            "secrets {other} is neither RS_SECRETS_MASKED nor RS_SECRETS_SHOWN"
        ))),
    }
}
