//! The trampolines: each runs a Rust closure as a libxcall call's function, catching its panic
//! so that no unwind ever crosses into C.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;

pub(crate) static SPAWN_PANICS: AtomicU64 = AtomicU64::new(0);

/// A waiting call's closure and, once it ran, its result; on the caller's stack.
pub(crate) struct Slot<F, R> {
    pub(crate) f: Option<F>,
    pub(crate) out: Option<thread::Result<R>>,
}

pub(crate) unsafe extern "C" fn run_slot<F: FnOnce() -> R, R>(arg: *mut c_void) {
    // SAFETY: arg is the Slot<F, R> of a waiting call, on its caller's stack; the caller
    // touches it again only after the call returned, so this is its only reference now.
    let slot = unsafe { &mut *(arg as *mut Slot<F, R>) };
    if let Some(f) = slot.f.take() {
        slot.out = Some(catch_unwind(AssertUnwindSafe(f)));
    }
}

/// A nowait call's boxed closure: run once and freed here, on the target.
pub(crate) unsafe extern "C" fn run_boxed<F: FnOnce()>(arg: *mut c_void) {
    // SAFETY: arg is the Box<F> that spawn_on leaked for this call, which runs once.
    let f = unsafe { Box::from_raw(arg as *mut F) };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        SPAWN_PANICS.fetch_add(1, Ordering::Relaxed);
        // a payload whose drop panics again must not unwind into C either
        let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    }
}

/// A waiting call on several CPUs: the shared closure, and each CPU's result.
pub(crate) struct Many<'a, F, R> {
    pub(crate) f: &'a F,
    pub(crate) out: Mutex<Vec<(usize, thread::Result<R>)>>,
}

pub(crate) unsafe extern "C" fn run_many<F: Fn() -> R + Sync, R: Send>(arg: *mut c_void) {
    // SAFETY: arg is the Many of a waiting call on the caller's stack; every target only
    // reads f (Sync) and pushes under the mutex, until the call returns.
    let many = unsafe { &*(arg as *const Many<'_, F, R>) };
    let r = catch_unwind(AssertUnwindSafe(many.f));
    let cpu = crate::current_cpu().unwrap_or(usize::MAX);
    many.out.lock().unwrap_or_else(PoisonError::into_inner).push((cpu, r));
}
