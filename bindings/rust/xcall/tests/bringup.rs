//! Building a runtime: bad options, the cpu_init hook's error, panic and timeout, the report
//! hook, and their errnos; a hook that runs on after a failed build keeps its captures.

mod common;

use common::{cpus, have_cpus, serial};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use xcall::{CpuSet, ErrorKind, Poll, Runtime};

#[test]
fn bad_options() {
    let _s = serial();
    let r = |b: xcall::Builder| b.build().map(drop).unwrap_err();
    assert_eq!(r(Runtime::builder().option("XCALL_NO_SUCH", "1")), ErrorKind::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_POLL_NS", "sometimes")), ErrorKind::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_STUCK_MS", "0")), ErrorKind::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_URGENT_SIGNAL", "SIGUSR1")), ErrorKind::InvalidArgument);
    assert_eq!(r(Runtime::builder().option("XCALL_CPUS", "0\0")), ErrorKind::InvalidArgument);
    assert_eq!(r(Runtime::builder().ring_entries(100)), ErrorKind::InvalidArgument);
    assert_eq!(r(Runtime::builder().bringup_timeout(Duration::ZERO)), ErrorKind::InvalidArgument);
    let beyond = CpuSet::from_cpus([CpuSet::CAPACITY - 1]).unwrap();
    assert_eq!(r(Runtime::builder().cpus(&beyond)), ErrorKind::InvalidArgument);
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
    for e in [ErrorKind::Os(libc::E2BIG), ErrorKind::Io, ErrorKind::OutOfMemory] {
        let last = *cpus().last().unwrap();
        let r = Runtime::builder().cpu_init(move |cpu| if cpu == last { Err(e.into()) } else { Ok(()) }).build();
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
    assert_eq!(r.unwrap_err(), ErrorKind::TimedOut);
    // a worker the OS did not run before the timeout enters its hook later (no cancellation
    // point comes before it), once
    let t0 = Instant::now();
    while entered.load(Ordering::SeqCst) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(60), "the last CPU's hook never ran");
        std::thread::yield_now();
    }
    assert_eq!(entered.load(Ordering::SeqCst), 1);
    assert!(!lines.lock().unwrap().is_empty(), "the failure was reported through the hook");
    release.store(true, Ordering::SeqCst);
    // a runtime may follow (its hook thread leaves by itself)
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.call_on(last, || 2).unwrap(), 2);
}

/// The second CPU's hook spins until the test lets it go on; it then reads its captured Vec.
static SECOND_RELEASE: AtomicBool = AtomicBool::new(false);
/// What it read: the Vec's sum, once it did.
static SECOND_SUM: AtomicUsize = AtomicUsize::new(0);
static SECOND_DONE: AtomicBool = AtomicBool::new(false);

#[test]
fn bringup_first_fails_second_outlives_timeout() {
    let _s = serial();
    if !have_cpus(2, "a hook failing on one CPU while another runs on") {
        return;
    }
    // the first CPU's hook fails at once; the second's outlives the timeout (and its
    // cancellation: it reaches no cancellation point), and reads its captured Vec after
    // build() returned. The closure must outlive build() on any error: the Vec is large
    // enough to be unmapped when freed, so reading it freed is a SIGSEGV.
    let (first, second) = (cpus()[0], cpus()[1]);
    // the first CPU's thread must run its hook before the timeout: on a machine so loaded
    // that it did not, both CPUs timed out, and the build is tried again
    for _ in 0..5 {
        let data: Vec<usize> = vec![1; 5 << 20];
        let want = data.len();
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let l2 = lines.clone();
        SECOND_RELEASE.store(false, Ordering::SeqCst);
        SECOND_DONE.store(false, Ordering::SeqCst);
        let r = Runtime::builder()
            .bringup_timeout(Duration::from_secs(1))
            .report(move |line| l2.lock().unwrap().push(line.to_string()))
            .cpu_init(move |cpu| {
                if cpu == first {
                    return Err(ErrorKind::Io.into());
                }
                if cpu == second {
                    while !SECOND_RELEASE.load(Ordering::SeqCst) {
                        std::thread::yield_now(); // no cancellation point
                    }
                    SECOND_SUM.store(data.iter().sum(), Ordering::SeqCst);
                    SECOND_DONE.store(true, Ordering::SeqCst);
                }
                Ok(())
            })
            .build();
        let e = r.map(drop).unwrap_err();
        SECOND_RELEASE.store(true, Ordering::SeqCst);
        let start = Instant::now();
        while !SECOND_DONE.load(Ordering::SeqCst) {
            assert!(start.elapsed() < Duration::from_secs(60), "the second CPU's hook never returned");
            std::thread::yield_now();
        }
        assert_eq!(SECOND_SUM.load(Ordering::SeqCst), want);
        assert_eq!(e, ErrorKind::TimedOut);
        let lines = lines.lock().unwrap();
        let said = |what: String| lines.iter().any(|l| l.contains(&what));
        assert!(said(format!("CPU {second}: init hook still running")), "{lines:?}");
        if said(format!("CPU {first}: bringup failed")) {
            return;
        }
        assert!(said(format!("CPU {first}: did not report alive")), "{lines:?}");
    }
    panic!("the first CPU's hook never ran before the bringup timeout");
}
