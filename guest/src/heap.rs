//! The component's allocator: dlmalloc over the linear memory from `__heap_base` up,
//! growing the memory only past its current end.
//!
//! std's dlmalloc on this target takes each new region from `memory.grow`, so it never
//! uses memory that already exists above what it owns. That is right in a new instance,
//! but a host may reuse an instance the way wasmtime's pooling allocator does: after a
//! call that returned normally it writes the memory back to its image right after
//! instantiation and zeroes everything above (the npm package does, because V8 takes
//! longer to instantiate than a small call takes to run). The allocator's state is back
//! to "nothing owned", but the memory keeps its size, and a grow-only allocator would
//! then take every later call's heap from above it: the memory would grow by each call's
//! peak, and so would the zeroing between calls. Handing out what lies between the heap's
//! start and the memory's end first keeps a reused instance at its largest call's size.
//!
//! Every region handed out is zero, as dlmalloc is told: a new instance's heap is zero
//! (no data segment lies above `__heap_base`), grown pages are zero, and a host that
//! reuses an instance must zero what lies above the image, as the npm package does.

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::{Cell, UnsafeCell};
use core::ptr;

const PAGE: usize = 64 * 1024;

unsafe extern "C" {
    /// The first byte after the static data and the stack (set by the linker).
    static __heap_base: u8;
}

/// The linear memory as dlmalloc's system: `top` is the end of what it has handed out
/// (0 before the first request).
struct LinearMemory {
    top: Cell<usize>,
}

// SAFETY: regions come from [__heap_base, memory end), each once, never overlapping:
// `top` only increases, and the memory is grown before a region past its end is handed
// out. Nothing is ever given back to the system.
unsafe impl dlmalloc::Allocator for LinearMemory {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let mut top = self.top.get() as u64;
        if top == 0 {
            // Only the symbol's address is taken (no read), which needs no unsafe.
            let base = ptr::addr_of!(__heap_base) as usize;
            top = (base as u64).next_multiple_of(16);
        }
        // In u64: a full 4 GiB memory's end does not fit in this target's usize. The
        // last bytes of it stay out, so that no pointer wraps around to 0.
        let limit = (1u64 << 32) - 16;
        let want = top + size as u64;
        let mut end = wasm32::memory_size(0) as u64 * PAGE as u64;
        if want > end {
            let pages = (want - end).div_ceil(PAGE as u64);
            if want > limit || wasm32::memory_grow(0, pages as usize) == usize::MAX {
                return (ptr::null_mut(), 0, 0);
            }
            end += pages * PAGE as u64;
        }
        // Everything up to the memory's end: dlmalloc merges it with the previous
        // region (they touch) and asks again only when it is used up.
        let end = end.min(limit);
        self.top.set(end as usize);
        (top as usize as *mut u8, (end - top) as usize, 0)
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _old: usize, _new: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

/// dlmalloc over [`LinearMemory`], as the global allocator.
struct Heap(UnsafeCell<dlmalloc::Dlmalloc<LinearMemory>>);

// SAFETY: the component is built without threads: one call runs at a time, on one
// thread, and the allocator is never entered again from inside itself.
unsafe impl Sync for Heap {}

impl Heap {
    #[allow(clippy::mut_from_ref)]
    fn get(&self) -> &mut dlmalloc::Dlmalloc<LinearMemory> {
        // SAFETY: single-threaded and not reentrant (above), so this is the only
        // reference while it lives.
        unsafe { &mut *self.0.get() }
    }
}

// SAFETY: each method passes the layout on to dlmalloc, which honours size and alignment.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the trait requires, layout has a non-zero size.
        unsafe { self.get().malloc(layout.size(), layout.align()) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe { self.get().calloc(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: ptr was allocated here with this layout (the trait's contract).
        unsafe { self.get().free(ptr, layout.size(), layout.align()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above, and new_size is non-zero.
        unsafe {
            self.get()
                .realloc(ptr, layout.size(), layout.align(), new_size)
        }
    }
}

#[global_allocator]
static HEAP: Heap = Heap(UnsafeCell::new(dlmalloc::Dlmalloc::new_with_allocator(
    LinearMemory { top: Cell::new(0) },
)));
