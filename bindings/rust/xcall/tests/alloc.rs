//! `call_on_async` allocates nothing: a counting global allocator sees 0 allocations per call
//! on the whole path (the future on the stack, queued at its first poll, run and completed on
//! the target, its waker woken from there, its result taken), with a waker that does not
//! allocate; `CallFuture::wait` likewise. `spawn_on`, which boxes its closure, is the control:
//! the counter sees its allocation. One test in this file: the count is the process's.

mod common;

use common::counting_waker::WAKES;
use common::{cpus, poll_once};
use std::sync::atomic::Ordering;
use std::task::Poll;
use xcall::Runtime;

#[path = "common/counting.rs"]
mod counting;
use counting::ALLOCS;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

const CALLS: usize = 2000;

/// One async call, polled to completion with the counting waker; its result.
fn one_async(rt: &Runtime, cpu: usize, i: usize) -> usize {
    let mut f = std::pin::pin!(rt.call_on_async(cpu, move || i * 2));
    loop {
        let wakes = WAKES.load(Ordering::SeqCst);
        match poll_once(f.as_mut()) {
            Poll::Ready(r) => return r.unwrap(),
            // the target wakes the waker once it completed the call
            Poll::Pending => {
                while WAKES.load(Ordering::SeqCst) == wakes {
                    std::hint::spin_loop();
                }
            }
        }
    }
}

#[test]
fn call_on_async_allocates_nothing() {
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    // warm up: the thread's ring to the CPU, thread-locals, the runtime's first calls
    for i in 0..100 {
        assert_eq!(one_async(&rt, cpu, i), i * 2);
        assert_eq!(rt.call_on_async(cpu, move || i).wait().unwrap(), i);
    }
    let wakes = WAKES.load(Ordering::SeqCst);
    let before = ALLOCS.load(Ordering::SeqCst);
    let mut sum = 0;
    for i in 0..CALLS {
        sum += one_async(&rt, cpu, i);
    }
    let polled = ALLOCS.load(Ordering::SeqCst) - before;
    for i in 0..CALLS {
        sum += rt.call_on_async(cpu, move || i).wait().unwrap();
    }
    let waited = ALLOCS.load(Ordering::SeqCst) - before - polled;
    let woken = WAKES.load(Ordering::SeqCst) - wakes;
    // the control: a boxed closure (not zero-sized) is one allocation each
    let before_spawn = ALLOCS.load(Ordering::SeqCst);
    for i in 0..10usize {
        rt.spawn_on(cpu, move || {
            std::hint::black_box(i);
        })
        .unwrap();
    }
    let spawned = ALLOCS.load(Ordering::SeqCst) - before_spawn;
    assert_eq!(sum, CALLS * (CALLS - 1) + CALLS * (CALLS - 1) / 2);
    assert_eq!(polled, 0, "allocations in {CALLS} polled call_on_async calls");
    assert_eq!(waited, 0, "allocations in {CALLS} waited call_on_async calls");
    // one wake per pending call; a registration that meets the completion wakes itself too
    assert!(woken <= 2 * CALLS, "{woken} wakes for {CALLS} calls");
    assert!(spawned >= 10, "the counter sees spawn_on's boxes: {spawned}");
}
