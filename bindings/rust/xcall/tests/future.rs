//! `CallFuture`: queued at its first poll, never before; woken from the target; ready at once
//! for a worker's own CPU; dropped in flight, its drop returns only once the call completed
//! (early drop from a plain thread), and on a worker it serves that CPU meanwhile (a call
//! in flight that needs the dropping worker's CPU completes, no deadlock); a refused call is
//! the future's `Err`, naming the CPU.

mod common;

use common::counting_waker::WAKES;
use common::{cpus, have_cpus, poll_once, serial};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
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
