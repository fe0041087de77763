//! What the test files share. libxcall runs one runtime per process, and the harness runs a
//! file's tests on parallel threads: every test that builds a runtime holds `serial()`.
#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard, PoisonError};

static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The CPUs this process may run on, in order.
pub fn cpus() -> Vec<usize> {
    xcall::CpuSet::current_affinity().unwrap().iter().collect()
}

/// Whether there are `n` CPUs; says so when not, so that the test is skipped, not failed.
pub fn have_cpus(n: usize, what: &str) -> bool {
    let have = cpus().len();
    if have < n {
        eprintln!("skip: {what} needs {n} CPUs, this process has {have}");
    }
    have >= n
}

/// A waker that counts its wakes and allocates nothing (a static counter, a static vtable).
pub mod counting_waker {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{RawWaker, RawWakerVTable, Waker};

    pub static WAKES: AtomicUsize = AtomicUsize::new(0);

    const VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake, drop_it);

    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn wake(_: *const ()) {
        WAKES.fetch_add(1, Ordering::SeqCst);
    }
    fn drop_it(_: *const ()) {}

    pub fn waker() -> Waker {
        // SAFETY: the vtable's functions ignore the data pointer.
        unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
    }
}

/// Poll `f` once with a waker that does nothing but count: the call is queued then.
pub fn poll_once<F: std::future::Future>(f: std::pin::Pin<&mut F>) -> std::task::Poll<F::Output> {
    let w = counting_waker::waker();
    f.poll(&mut std::task::Context::from_waker(&w))
}
