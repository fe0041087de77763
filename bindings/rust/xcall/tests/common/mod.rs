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
