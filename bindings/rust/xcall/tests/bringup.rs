//! Building a runtime: bad options, the cpu_init hook's error, panic and timeout, the report
//! hook, and their errnos.

mod common;

use common::{cpus, serial};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xcall::{CpuSet, Error, Poll, Runtime};

#[test]
fn bad_options() {
    let _s = serial();
    let r = |b: xcall::Builder| b.build().map(drop).unwrap_err();
    assert_eq!(r(Runtime::builder().option("XCALL_NO_SUCH", "1")), Error::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_POLL_NS", "sometimes")), Error::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_STUCK_MS", "0")), Error::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_URGENT_SIGNAL", "SIGUSR1")), Error::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_CPUS", "0\0")), Error::InvalidArgument);
    assert_eq!(r(Runtime::builder().ring_entries(100)), Error::InvalidArgument);
    assert_eq!(r(Runtime::builder().bringup_timeout(Duration::ZERO)), Error::InvalidArgument);
    let beyond = CpuSet::from_cpus([CpuSet::CAPACITY - 1]).unwrap();
    assert_eq!(r(Runtime::builder().cpus(&beyond)), Error::InvalidArgument);
    // nothing was left up by the refusals
    let rt = Runtime::builder()
        .poll(Poll::Window(Duration::from_micros(20)))
        .stuck_reports(None)
        .follow_os(true)
        .serial_bringup(true)
        .option("XCALL_RING_ENTRIES", "64")
        .build()
        .unwrap();
    assert_eq!(rt.online_cpus().unwrap().len(), cpus().len());
}

#[test]
fn cpu_init_hook() {
    let _s = serial();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let rt = Runtime::builder()
        .cpu_init(move |cpu| {
            s2.lock().unwrap().push((cpu, xcall::current_cpu()));
            Ok(())
        })
        .build()
        .unwrap();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen.iter().map(|(c, _)| *c).collect::<Vec<_>>(), cpus());
    drop(rt);

    // its error fails the build with it; so does EIO
    for e in [Error::Os(libc::E2BIG), Error::Io, Error::OutOfMemory] {
        let last = *cpus().last().unwrap();
        let r = Runtime::builder().cpu_init(move |cpu| if cpu == last { Err(e) } else { Ok(()) }).build();
        assert_eq!(r.unwrap_err(), e);
    }
    // its panic is resumed in the builder's thread
    let p = catch_unwind(AssertUnwindSafe(|| Runtime::builder().cpu_init(|_| panic!("hook")).build()));
    assert_eq!(p.unwrap_err().downcast_ref::<&str>(), Some(&"hook"));
    Runtime::new().unwrap();
}

#[test]
fn bringup_timeout() {
    let _s = serial();
    // the hook holds its worker until released: no report in time, ETIMEDOUT; the hook's
    // closure must outlive build(), since its thread runs it on after the failure
    let release = Arc::new(AtomicBool::new(false));
    let (rel, entered) = (release.clone(), Arc::new(AtomicUsize::new(0)));
    let ent = entered.clone();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let l2 = lines.clone();
    let last = *cpus().last().unwrap();
    let r = Runtime::builder()
        .bringup_timeout(Duration::from_millis(100))
        .report(move |line| l2.lock().unwrap().push(line.to_string()))
        .cpu_init(move |cpu| {
            if cpu == last {
                ent.fetch_add(1, Ordering::SeqCst);
                while !rel.load(Ordering::SeqCst) {
                    std::thread::yield_now(); // no cancellation point: it outlives the timeout
                }
            }
            Ok(())
        })
        .build();
    assert_eq!(r.unwrap_err(), Error::TimedOut);
    assert_eq!(entered.load(Ordering::SeqCst), 1);
    assert!(!lines.lock().unwrap().is_empty(), "the failure was reported through the hook");
    release.store(true, Ordering::SeqCst);
    // a runtime may follow (its hook thread leaves by itself)
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.call_on(last, || 2).unwrap(), 2);
}
