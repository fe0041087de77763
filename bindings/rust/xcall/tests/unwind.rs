//! No unwind crosses into libxcall's C code, nor starts while one is under way: panics whose
//! payload panics again when dropped ([`common::Bomb`]), in every place the crate drops a
//! payload it caught: a `CallFuture` waker's (woken on the target), a `spawn_on` closure's, the
//! `cpu_init` hook's on two CPUs (the second payload is dropped), `call_on_all`'s on two CPUs,
//! and `Sharded`'s instances' drops on two CPUs. (The report hook's: tests/report.rs; a
//! closure that drops its own future: tests/future.rs.) Each test runs in a child process of
//! its own: an abort ("panic in a function that cannot unwind", or a panic while panicking)
//! fails that test alone.

mod common;

use common::{cpus, defuse, have_cpus, in_child, throw_bomb};
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use xcall::{Runtime, Sharded};

/// A waker whose wake panics with a payload that panics on drop.
struct BombWaker;

impl Wake for BombWaker {
    fn wake(self: Arc<Self>) {
        throw_bomb();
    }
}

#[test]
fn waker_panic_whose_payload_panics_on_drop() {
    if !in_child("waker_panic_whose_payload_panics_on_drop") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let before = xcall::spawn_panics();
    let waker = Waker::from(Arc::new(BombWaker));
    let mut f = std::pin::pin!(rt.call_on_async(cpu, || 5));
    // registered before the call is queued: the target takes it and wakes it, even when it
    // completes the call before this first poll returns (then the poll is ready at once)
    let first = f.as_mut().poll(&mut Context::from_waker(&waker));
    while xcall::spawn_panics() == before {
        std::thread::yield_now();
    }
    assert_eq!(xcall::spawn_panics(), before + 1, "the waker's panic, contained on the target");
    let result = match first {
        Poll::Ready(r) => r,
        Poll::Pending => match f.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(r) => r,
            Poll::Pending => panic!("completed, but not ready"),
        },
    };
    assert_eq!(result.unwrap(), 5);
    assert_eq!(rt.call_on(cpu, || 1).unwrap(), 1, "the target goes on");
}

#[test]
fn spawn_on_panic_whose_payload_panics_on_drop() {
    if !in_child("spawn_on_panic_whose_payload_panics_on_drop") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let before = xcall::spawn_panics();
    rt.spawn_on(cpu, || throw_bomb()).unwrap();
    assert_eq!(rt.call_on(cpu, || 1).unwrap(), 1, "the target goes on");
    assert_eq!(xcall::spawn_panics(), before + 1);
}

/// Two CPUs' hooks panic: the first payload is resumed in `build`'s thread, the second
/// dropped on its worker, inside the hook's trampoline.
#[test]
fn cpu_init_panics_whose_payloads_panic_on_drop() {
    if !in_child("cpu_init_panics_whose_payloads_panic_on_drop") {
        return;
    }
    if !have_cpus(2, "two hooks panicking") {
        return;
    }
    let r = catch_unwind(|| Runtime::builder().cpu_init(|_| throw_bomb()).build());
    defuse(r.unwrap_err());
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.call_on(cpus()[0], || 1).unwrap(), 1, "a runtime may follow");
}

/// Two CPUs' closures panic: the first payload is resumed in the caller, the second dropped.
#[test]
fn call_on_all_panics_whose_payloads_panic_on_drop() {
    if !in_child("call_on_all_panics_whose_payloads_panic_on_drop") {
        return;
    }
    if !have_cpus(2, "two closures panicking") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let r = catch_unwind(AssertUnwindSafe(|| rt.call_on_all(|| throw_bomb())));
    defuse(r.unwrap_err());
    assert_eq!(rt.call_on_all(|| 1).unwrap().len(), cpus().len());
}

/// An instance whose drop panics with a payload that panics on drop.
struct Bomber;

impl Drop for Bomber {
    fn drop(&mut self) {
        throw_bomb();
    }
}

/// The last handle dropped: each CPU's instance panics in its drop; the first payload is
/// resumed in the dropping thread, the second dropped.
#[test]
fn sharded_drop_panics_whose_payloads_panic_on_drop() {
    if !in_child("sharded_drop_panics_whose_payloads_panic_on_drop") {
        return;
    }
    if !have_cpus(2, "two instances panicking") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let s: Sharded<Bomber> = Sharded::new(&rt, |_| Bomber).unwrap();
    let r = catch_unwind(AssertUnwindSafe(move || drop(s)));
    defuse(r.unwrap_err());
    assert_eq!(rt.call_on_all(|| 1).unwrap().len(), cpus().len());
}
