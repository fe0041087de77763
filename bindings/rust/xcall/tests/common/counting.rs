//! A global allocator that counts the allocations of the process, for the tests that check
//! where a call allocates (each runs its test in a child process of its own, so the count is
//! that test's). A test takes it with `#[path = "common/counting.rs"] mod counting;` and
//! `#[global_allocator] static ALLOC: counting::Counting = counting::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// System's allocator, with a count of allocations and reallocations in [`ALLOCS`].
pub struct Counting;

/// Allocations and reallocations so far.
pub static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: System's allocator, with a count.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: as the caller promised us.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised us.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: as the caller promised us.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
