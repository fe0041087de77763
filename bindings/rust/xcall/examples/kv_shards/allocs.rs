//! The example's global allocator: the system's, counting each thread's allocations, so
//! that a run can say how many a request cost (a thread-local count: no shared line).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub struct Counting;

thread_local! {
    // const, no destructor: usable inside the allocator, at any point of a thread's life
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn one() {
    let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: System's allocator, with a count.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        one();
        // SAFETY: as the caller promised us.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        one();
        // SAFETY: as the caller promised us.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised us.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        one();
        // SAFETY: as the caller promised us.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (and reallocations) the calling thread has made.
pub fn this_thread() -> u64 {
    ALLOCS.with(Cell::get)
}
