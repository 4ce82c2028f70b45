//! What one call may use: the limits every call gets, and the memory limiter that
//! holds one call to them.

use wasmtime::ResourceLimiter;

/// Per-call limits of the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest linear memory a call may grow to, in bytes.
    pub memory_bytes: usize,
    /// Fuel a call may burn (about one unit per WebAssembly instruction).
    pub fuel: u64,
    /// Calls that may run at once; more wait for a free instance slot.
    pub concurrent_calls: u32,
}

impl Limits {
    /// 1 GiB of memory: a 64 MiB render needs its objects, its canonical bytes and the
    /// decoded tree at once, several times its size.
    pub const DEFAULT_MEMORY_BYTES: usize = 1 << 30;
    /// 100 billion units: far more than canonicalizing hundreds of MiB takes, yet a
    /// guest stuck in a loop stops within a minute or so.
    pub const DEFAULT_FUEL: u64 = 100_000_000_000;
    /// 64 instance slots: each reserves address space (not memory) for a linear memory.
    pub const DEFAULT_CONCURRENT_CALLS: u32 = 64;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: Self::DEFAULT_MEMORY_BYTES,
            fuel: Self::DEFAULT_FUEL,
            concurrent_calls: Self::DEFAULT_CONCURRENT_CALLS,
        }
    }
}

/// The memory cap of one call, which also remembers the most memory the call asked for
/// and the largest growth it refused.
pub(super) struct CallLimiter {
    pub(super) memory_cap: usize,
    pub(super) peak: usize,
    /// The size the memory would have grown to, had the cap allowed it.
    pub(super) refused: Option<usize>,
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_cap {
            // `memory.grow` fails (answers -1) rather than trapping: the guest asks for
            // room ahead of work it can refuse with an error of its own (a YAML stream
            // whose aliases expand past the cap). An allocation it cannot do without
            // traps, and that trap is reported as the cap (`finish`).
            self.refused = Some(self.refused.map_or(desired, |r| r.max(desired)));
            return Ok(false);
        }
        self.peak = self.peak.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // The guest's tables hold its function pointers: a few thousand entries.
        Ok(desired <= 1 << 20)
    }
}
