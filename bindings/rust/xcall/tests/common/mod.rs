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

/// Run the calling test again in a child process of its own, alone: a body that may abort the
/// process (an unwind into C) or hang then fails this one test, with the child's output, not
/// the whole run. `test` is the test's name as the harness filters it (its path in the file).
///
/// In the child it returns true: run the body there. In the parent it returns false once the
/// child passed; a child that failed, died of a signal, or was still running after
/// `CHILD_LIMIT` (a hang) fails the test here.
pub fn in_child(test: &str) -> bool {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    const VAR: &str = "XCALL_TEST_CHILD";
    // generous: only a hang reaches it, and the test then fails rather than the run hanging
    const CHILD_LIMIT: Duration = Duration::from_secs(120);
    if std::env::var(VAR).as_deref() == Ok(test) {
        return true;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(VAR, test)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // drained as it comes: a full pipe must not stop the child
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > CHILD_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let tail = |s: &str| {
        let mut from = s.len().saturating_sub(4000);
        while !s.is_char_boundary(from) {
            from += 1;
        }
        s[from..].to_string()
    };
    match status {
        None => panic!("{test}: hung (its child still ran after {CHILD_LIMIT:?}, killed)\n{}\n{}", tail(&out), tail(&err)),
        Some(s) if !s.success() => panic!("{test}: its child failed: {s}\n{}\n{}", tail(&out), tail(&err)),
        // the filter matched the test itself, and it passed
        Some(_) => assert!(out.contains("1 passed"), "{test}: the child ran no test\n{}", tail(&out)),
    }
    false
}

/// A panic payload whose own drop panics again: code that drops a payload where no unwind may
/// escape (a callback of libxcall, a drop already unwinding) must contain that second panic.
/// A test that catches one forgets it (`std::mem::forget`) rather than drop it.
pub struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("a panic payload whose drop panics");
    }
}

/// Panic with a [`Bomb`] as the payload.
pub fn throw_bomb() -> ! {
    std::panic::panic_any(Bomb)
}

/// `p` is a [`Bomb`]: check it and forget it (dropping it would panic).
pub fn defuse(p: Box<dyn std::any::Any + Send>) {
    assert!(p.is::<Bomb>(), "the payload is the closure's own");
    std::mem::forget(p);
}
