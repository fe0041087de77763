//! `CallFuture`: queued at its first poll, never before; woken from the target; ready at once
//! for a worker's own CPU; dropped in flight, its drop returns only once the call completed
//! (early drop from a plain thread), and on a worker it serves that CPU meanwhile (a call
//! in flight that needs the dropping worker's CPU completes, no deadlock); where no wait could
//! end, dropped by its own closure (it detaches) or inside an attached thread's announced
//! sleep (it serves, and announces the sleep again), the drop returns (each in a child
//! process: a hang fails that test alone); a refused call is the future's `Err`, naming the CPU.

mod common;

use common::counting_waker::WAKES;
use common::{cpus, have_cpus, in_child, poll_once, serial};
use std::any::Any;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;
use xcall::{ErrorKind, Runtime};

#[test]
fn queued_at_first_poll_and_woken_from_the_target() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let f = rt.call_on_async(cpu, move || r.fetch_add(1, Ordering::SeqCst) + 10);
    rt.call_on(cpu, || ()).unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0, "not queued before its first poll");
    assert!(!f.is_finished());
    let mut f = std::pin::pin!(f);
    let wakes = WAKES.load(Ordering::SeqCst);
    let out = match poll_once(f.as_mut()) {
        Poll::Ready(r) => r,
        Poll::Pending => {
            while WAKES.load(Ordering::SeqCst) == wakes {
                std::thread::yield_now();
            }
            assert!(f.is_finished());
            match poll_once(f.as_mut()) {
                Poll::Ready(r) => r,
                Poll::Pending => panic!("woken, but not ready"),
            }
        }
    };
    assert_eq!(out.unwrap(), 10);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn own_cpu_is_inline() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let cpu = cpus()[0];
    let h = rt.handle();
    let ready = rt
        .call_on(cpu, || {
            let mut f = std::pin::pin!(h.call_on_async(cpu, xcall::current_cpu));
            matches!(poll_once(f.as_mut()), Poll::Ready(Ok(Some(c))) if c == cpu)
        })
        .unwrap();
    assert!(ready, "a worker's call to its own CPU completes in its first poll");
}

#[test]
fn refused_is_the_output() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    for bad in [xcall::CpuSet::CAPACITY + 1, usize::MAX] {
        let e = pollster::block_on(rt.call_on_async(bad, || ())).unwrap_err();
        assert_eq!((e.kind(), e.cpu()), (ErrorKind::Unavailable, Some(bad)));
    }
    let h = rt.handle();
    drop(rt);
    let e = h.call_on_async(cpus()[0], || ()).wait().unwrap_err();
    assert_eq!((e.kind(), e.cpu()), (ErrorKind::Unavailable, Some(cpus()[0])));
}

/// Dropped while its call runs: the drop returns only after the call completed.
#[test]
fn early_drop_waits_for_the_call() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    for _ in 0..20 {
        let gate = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicBool::new(false));
        let (g, fin) = (gate.clone(), finished.clone());
        let opener;
        {
            let mut f = std::pin::pin!(rt.call_on_async(cpu, move || {
                while !g.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                fin.store(true, Ordering::SeqCst);
                vec![1u8; 4096] // a result for the drop to free, after the target wrote it
            }));
            assert!(poll_once(f.as_mut()).is_pending());
            opener = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                gate.store(true, Ordering::SeqCst);
            });
        } // the future is dropped here, in flight
        assert!(finished.load(Ordering::SeqCst), "the drop returned before the call ran");
        opener.join().unwrap();
    }
}

/// Dropped on a worker while its call waits for that worker's CPU: the drop serves it.
#[test]
fn drop_on_a_worker_serves_its_cpu() {
    let _s = serial();
    if !have_cpus(2, "a future dropped on one worker for a call on another") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let (a, b) = (cpus()[0], cpus()[1]);
    let h = rt.handle();
    let served = rt
        .call_on(a, move || {
            let back = Arc::new(AtomicBool::new(false));
            let bk = back.clone();
            // B's call waits for a call to A, which only A's worker, dropping, can run
            {
                let mut f = std::pin::pin!(h.call_on_async(b, move || {
                    h.call_on(a, xcall::current_cpu).unwrap();
                    bk.store(true, Ordering::SeqCst);
                }));
                let _ = poll_once(f.as_mut());
            } // the future is dropped here, in flight
            back.load(Ordering::SeqCst)
        })
        .unwrap();
    assert!(served, "the drop returned before the call completed");
}

/// A value whose drop counts, for a result nobody takes.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Where a future waits to be taken by its own closure (type-erased: the closure's type is
/// part of the future's).
type Kept = Arc<Mutex<Option<Box<dyn Any + Send>>>>;

/// The closure of a future kept in `kept`: it takes the future and drops it, on the target,
/// while it runs. No wait could end there (the call completes only once this closure
/// returned): the drop detaches, the closure runs on, and its result is dropped there.
fn drops_its_own_future(kept: &Kept, after: &Arc<AtomicBool>) -> impl FnOnce() + Send + 'static {
    let (kept, after) = (kept.clone(), after.clone());
    move || {
        let f = loop {
            if let Some(f) = kept.lock().unwrap().take() {
                break f;
            }
            std::thread::yield_now(); // the poller puts it there after its first poll
        };
        drop(f);
        after.store(true, Ordering::SeqCst);
    }
}

#[test]
fn dropped_by_its_own_closure() {
    if !in_child("dropped_by_its_own_closure") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let kept: Kept = Arc::default();
    let after = Arc::new(AtomicBool::new(false));
    let results = Arc::new(AtomicUsize::new(0));
    let (take_and_drop, r) = (drops_its_own_future(&kept, &after), results.clone());
    let mut f = Box::pin(rt.call_on_async(cpu, move || {
        take_and_drop();
        Counted(r)
    }));
    assert!(poll_once(f.as_mut()).is_pending());
    *kept.lock().unwrap() = Some(Box::new(f));
    // calls from one thread to one CPU run in order: this one runs after the closure returned
    assert_eq!(rt.call_on(cpu, || 1).unwrap(), 1, "the worker goes on");
    assert!(after.load(Ordering::SeqCst), "the drop returned inside the closure");
    assert_eq!(results.load(Ordering::SeqCst), 1, "the result was dropped on the target");
}

/// As above, and the closure then panics with a payload that panics on drop: it is dropped
/// on the target, contained, and counted as a panic no caller sees.
#[test]
fn dropped_by_its_own_closure_that_then_panics() {
    if !in_child("dropped_by_its_own_closure_that_then_panics") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let kept: Kept = Arc::default();
    let after = Arc::new(AtomicBool::new(false));
    let take_and_drop = drops_its_own_future(&kept, &after);
    let before = xcall::spawn_panics();
    let mut f = Box::pin(rt.call_on_async(cpu, move || {
        take_and_drop();
        common::throw_bomb()
    }));
    assert!(poll_once(f.as_mut()).is_pending());
    *kept.lock().unwrap() = Some(Box::new(f));
    assert_eq!(rt.call_on(cpu, || 1).unwrap(), 1, "the worker goes on");
    assert!(after.load(Ordering::SeqCst));
    assert_eq!(xcall::spawn_panics(), before + 1);
}

/// Dropped on an attached thread inside its announced sleep (between `sleep_begin` that said
/// sleep and `sleep_end`), where libxcall runs none of the CPU's calls and only this thread
/// may run the future's: the drop ends the sleep, serves the call, and announces the sleep
/// again, so that the loop's wait is kicked by the next call as before.
#[test]
fn dropped_in_an_attached_threads_announced_sleep() {
    if !in_child("dropped_in_an_attached_threads_announced_sleep") {
        return;
    }
    if !have_cpus(2, "an attached CPU beside a worker") {
        return;
    }
    let last = *cpus().last().unwrap();
    let rt = Runtime::builder().attach(&xcall::CpuSet::from_cpus([last]).unwrap()).build().unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let later = Arc::new(AtomicBool::new(false));
    let (asleep_tx, asleep) = std::sync::mpsc::channel::<()>();
    let (future_tx, future) = std::sync::mpsc::channel::<Box<dyn Any + Send>>();
    let (dropped_tx, dropped) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let (rt, ran) = (&rt, &ran);
        let shard = s.spawn(move || {
            xcall::pin_current_thread(last).unwrap();
            let me = rt.attach(last).unwrap();
            assert!(me.sleep_begin().unwrap(), "nothing pending: the sleep is announced");
            asleep_tx.send(()).unwrap();
            let f = future.recv().unwrap(); // the loop's own wait, for this test's purpose
            assert_eq!(me.poll().unwrap_err(), ErrorKind::WouldDeadlock, "in the announced sleep");
            drop(f);
            assert_eq!(ran.load(Ordering::SeqCst), 1, "the drop served the call");
            dropped_tx.send(()).unwrap();
            // announced again: the next call kicks the eventfd, which this wait needs
            let mut fd = libc::pollfd { fd: me.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one pollfd of a descriptor the guard keeps open; no timeout.
            while unsafe { libc::poll(&mut fd, 1, -1) } != 1 {}
            me.sleep_end().unwrap();
            me.poll().unwrap();
        });
        asleep.recv().unwrap();
        let r = ran.clone();
        let mut f = Box::pin(rt.call_on_async(last, move || {
            r.fetch_add(1, Ordering::SeqCst);
        }));
        assert!(poll_once(f.as_mut()).is_pending(), "only the sleeping shard runs it");
        future_tx.send(Box::new(f)).unwrap();
        dropped.recv().unwrap();
        let l = later.clone();
        rt.spawn_on(last, move || l.store(true, Ordering::SeqCst)).unwrap();
        shard.join().unwrap();
    });
    assert!(later.load(Ordering::SeqCst), "the later call ran in the loop's poll");
}
