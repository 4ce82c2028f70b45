//! The options a store is opened with, and the runtimes (the compiled component with
//! its limits) they select.

use crate::error::{Result, guard_void, rs_error};
use render_store::{ClientSettings, Grace, Limits, Runtime};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Options of a store (and, for the logic functions, of a call): the sandbox's limits,
/// GC's grace period and how a cloud backend's client waits and retries.
///
/// Sized, so it can grow: fill it with [`rs_options_init`] (which sets `size` and every
/// default), then change the fields wanted. The library reads only the first `size`
/// bytes and takes the defaults for fields past them, so a caller built against an
/// older, shorter header keeps working. The library only reads it, during the call it
/// is given to.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rs_options {
    /// `sizeof(rs_options)` of the caller's header.
    pub size: usize,
    /// The most linear memory one sandboxed call may use, in bytes (default 1 GiB). A
    /// bucket object larger than this is refused before it is read.
    pub memory_bytes: u64,
    /// The fuel (about one unit per WebAssembly instruction) one call may burn
    /// (default 10^11).
    pub fuel: u64,
    /// GC's grace period in seconds (default 600): `rs_store_gc` without an explicit
    /// grace never deletes a render blob younger than this. 0: none.
    pub gc_grace_seconds: u64,
    /// Sandboxed calls that may run at once, over every store with the same limits;
    /// more wait for a free slot (default 64).
    pub concurrent_calls: u32,
    /// The most one HTTP request of a cloud backend (`s3://`, `gs://`, `azblob://`) may
    /// take, in milliseconds (default 30,000); the URL's `timeout` wins. `rs_store_open`
    /// alone reads this and the next three.
    pub request_timeout_ms: u64,
    /// The most connecting may take, in milliseconds (default 5,000); the URL's
    /// `connect_timeout` wins.
    pub connect_timeout_ms: u64,
    /// How many times a cloud request that failed in a way worth retrying is made again
    /// (default 3; 0: never); the URL's `retries` wins.
    pub max_retries: u32,
    /// No retry starts later than this after a request's first attempt, in
    /// milliseconds (default 15,000); the URL's `retry_timeout` wins.
    pub retry_timeout_ms: u64,
}

impl rs_options {
    const DEFAULT: rs_options = rs_options {
        size: size_of::<rs_options>(),
        memory_bytes: Limits::DEFAULT_MEMORY_BYTES as u64,
        fuel: Limits::DEFAULT_FUEL,
        gc_grace_seconds: Grace::DEFAULT.as_secs(),
        concurrent_calls: Limits::DEFAULT_CONCURRENT_CALLS,
        request_timeout_ms: ClientSettings::DEFAULT.request_timeout.as_millis() as u64,
        connect_timeout_ms: ClientSettings::DEFAULT.connect_timeout.as_millis() as u64,
        max_retries: ClientSettings::DEFAULT.max_retries,
        retry_timeout_ms: ClientSettings::DEFAULT.retry_timeout.as_millis() as u64,
    };

    /// The options at `ptr` (NULL: the defaults), the fields past its `size` defaulted.
    ///
    /// SAFETY (for callers): `ptr` is NULL or points to at least `size` readable bytes,
    /// `size` being its first field.
    pub(crate) unsafe fn read(ptr: *const rs_options) -> Result<rs_options> {
        let mut options = rs_options::DEFAULT;
        if ptr.is_null() {
            return Ok(options);
        }
        if !ptr.is_aligned() {
            return Err(rs_error::argument("options is not aligned"));
        }
        // SAFETY: `size` is the first field, which every version of the struct has.
        let size = unsafe { (*ptr).size };
        let smallest = std::mem::offset_of!(rs_options, memory_bytes);
        if size < smallest {
            return Err(rs_error::argument(format!(
                "options.size is {size}: set it with rs_options_init"
            )));
        }
        let n = size.min(size_of::<rs_options>());
        // SAFETY: the caller's struct has `size` readable bytes, `n` of which are copied
        // over a whole default struct; every bit pattern is a valid value of its fields.
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.cast::<u8>(),
                (&mut options as *mut rs_options).cast::<u8>(),
                n,
            );
        }
        options.size = size_of::<rs_options>();
        Ok(options)
    }

    pub(crate) fn limits(&self) -> Result<Limits> {
        let memory_bytes = usize::try_from(self.memory_bytes).map_err(|_| {
            rs_error::argument(format!(
                "options.memory_bytes {} does not fit this machine's addresses",
                self.memory_bytes
            ))
        })?;
        Ok(Limits {
            memory_bytes,
            fuel: self.fuel,
            concurrent_calls: self.concurrent_calls,
        })
    }

    pub(crate) fn gc_grace(&self) -> Duration {
        Duration::from_secs(self.gc_grace_seconds)
    }

    /// The cloud client's settings. A zero timeout is taken as the default: a request
    /// that may never end is what they exist to prevent.
    pub(crate) fn client_settings(&self) -> ClientSettings {
        let d = ClientSettings::DEFAULT;
        let ms = |v: u64, default: Duration| {
            if v == 0 {
                default
            } else {
                Duration::from_millis(v)
            }
        };
        ClientSettings {
            request_timeout: ms(self.request_timeout_ms, d.request_timeout),
            connect_timeout: ms(self.connect_timeout_ms, d.connect_timeout),
            max_retries: self.max_retries,
            retry_timeout: ms(self.retry_timeout_ms, d.retry_timeout),
        }
    }
}

/// Sets the first `size` bytes of `*options` to the defaults, `size` itself to what was
/// set. Pass `sizeof(rs_options)`. Any thread; `options` NULL is ignored.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rs_options_init(options: *mut rs_options, size: usize) {
    guard_void(|| {
        if options.is_null() || !options.is_aligned() {
            return;
        }
        let n = size.min(size_of::<rs_options>());
        let mut defaults = rs_options::DEFAULT;
        defaults.size = n;
        // SAFETY: the caller's struct has at least `size` writable bytes, and `n` bytes
        // are written.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&defaults as *const rs_options).cast::<u8>(),
                options.cast::<u8>(),
                n,
            );
        }
    })
}

/// The runtime for `limits`: the library's process-wide one for the defaults (the one
/// the CLI uses), otherwise one made on first use of those limits and kept for the life
/// of the process, so stores and logic calls with the same limits share one compiled
/// component and one pool of instance slots.
pub(crate) fn runtime(limits: Limits) -> Result<Arc<Runtime>> {
    if limits == Limits::default() {
        return Ok(Runtime::shared()?);
    }
    static MADE: Mutex<Vec<Arc<Runtime>>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = made.iter().find(|rt| rt.limits() == limits) {
        return Ok(rt.clone());
    }
    let rt = Arc::new(Runtime::new(limits)?);
    made.push(rt.clone());
    Ok(rt)
}

/// The runtime for the options at `ptr` (NULL: the defaults).
///
/// SAFETY (for callers): as for [`rs_options::read`].
pub(crate) unsafe fn runtime_of(ptr: *const rs_options) -> Result<Arc<Runtime>> {
    // SAFETY: passed on from the caller.
    let options = unsafe { rs_options::read(ptr) }?;
    runtime(options.limits()?)
}
