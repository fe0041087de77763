//! The trampolines: each runs a Rust closure as a libxcall call's function, catching its panic
//! so that no unwind ever crosses into C; and the one way this crate drops what it caught.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;

/// Panics contained on a target that no caller will see (see `crate::spawn_panics`).
pub(crate) static SPAWN_PANICS: AtomicU64 = AtomicU64::new(0);

/// Drop a caught panic's payload where no unwind may escape: inside a callback of libxcall
/// (an unwind into C aborts the process, or is undefined behaviour before Rust 1.81), or
/// while another payload waits to be resumed (a panic then would be a panic while
/// panicking). A payload's own drop may panic: that second panic is caught, and its payload
/// forgotten (leaked), since its drop may panic as well.
pub(crate) fn drop_payload(p: Box<dyn Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(p))) {
        std::mem::forget(again);
    }
}

/// Drop `v` where no unwind may escape, as [`drop_payload`]: a panic in its drop is contained.
/// Whether it panicked.
pub(crate) fn drop_contained<T>(v: T) -> bool {
    catch_unwind(AssertUnwindSafe(move || drop(v))).map_err(drop_payload).is_err()
}

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
        drop_payload(payload);
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{drop_contained, drop_payload};
    use std::panic::{catch_unwind, panic_any};

    /// A payload whose drop panics again, with a payload of no size: forgetting that one
    /// leaks nothing, so Miri's leak check stays on.
    struct Bomb;

    impl Drop for Bomb {
        fn drop(&mut self) {
            std::panic::resume_unwind(Box::new(()));
        }
    }

    #[test]
    fn a_payload_whose_drop_panics_is_contained() {
        let p = catch_unwind(|| panic_any(Bomb)).unwrap_err();
        drop_payload(p);
        assert!(drop_contained(Bomb), "the drop's panic, contained");
        assert!(drop_contained(Err::<(), _>(catch_unwind(|| panic_any(Bomb)).unwrap_err())));
        assert!(!drop_contained(vec![1, 2, 3]));
    }
}
