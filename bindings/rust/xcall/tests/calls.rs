//! Single, nowait, async, many, all and any calls: where they run, what comes back, the order
//! per thread and CPU, panics carried back or contained, and each errno.

mod common;

use common::{cpus, have_cpus, serial};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use xcall::{CpuSet, Error, ErrorKind, Runtime};

#[test]
fn call_on_runs_there_and_returns() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    assert_eq!(xcall::current_cpu(), None);
    let mut local = vec![1, 2, 3];
    for cpu in cpus() {
        let (ran_on, sum) = rt
            .call_on(cpu, || {
                local.push(4); // borrows the caller's stack: the call waits
                (xcall::current_cpu(), local.iter().sum::<i32>())
            })
            .unwrap();
        assert_eq!(ran_on, Some(cpu));
        assert!(sum >= 10);
    }
    assert_eq!(local.len(), 3 + cpus().len());
}

#[test]
fn spawn_on_runs_once_in_order() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    for i in 0..1000 {
        let log = log.clone();
        rt.spawn_on(cpu, move || log.lock().unwrap().push((i, xcall::current_cpu()))).unwrap();
    }
    // a waiting call returns after every earlier call of this thread to that CPU ran
    rt.call_on(cpu, || ()).unwrap();
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 1000);
    for (k, (i, on)) in log.iter().enumerate() {
        assert_eq!((*i, *on), (k, Some(cpu)));
    }
}

#[test]
fn many_all_any_are_one_call_each() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let online = rt.online_cpus().unwrap();
    let runs = AtomicUsize::new(0);
    let before = rt.total_stats().unwrap();
    let all = rt
        .call_on_all(|| {
            runs.fetch_add(1, Ordering::Relaxed);
            xcall::current_cpu().unwrap() * 10
        })
        .unwrap();
    assert_eq!(all.iter().map(|(c, _)| *c).collect::<Vec<_>>(), online.iter().collect::<Vec<_>>());
    assert!(all.iter().all(|(c, v)| *v == c * 10));
    assert_eq!(runs.load(Ordering::Relaxed), online.len());
    let delta = rt.total_stats().unwrap() - before;
    assert_eq!(delta.calls, online.len() as u64);

    let first = CpuSet::from_cpus([online.iter().next().unwrap()]).unwrap();
    let one = rt.call_on_many(&first, xcall::current_cpu).unwrap();
    assert_eq!(one, vec![(first.iter().next().unwrap(), first.iter().next())]);
    let (cpu, on) = rt.call_on_any(&online, xcall::current_cpu).unwrap();
    assert_eq!(on, Some(cpu));
    assert!(online.contains(cpu));

    // from a worker: its own CPU too, inline
    let c0 = online.iter().next().unwrap();
    let h = rt.handle();
    let inner = rt.call_on(c0, || h.call_on_all(xcall::current_cpu).unwrap()).unwrap();
    assert_eq!(inner.len(), online.len());
}

#[test]
fn async_calls_complete_from_the_target() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    for cpu in cpus() {
        let f = rt.call_on_async(cpu, move || (xcall::current_cpu(), cpu * 3));
        assert_eq!(f.wait().unwrap(), (Some(cpu), cpu * 3));
        let f = rt.call_on_async(cpu, move || cpu + 1);
        assert_eq!(pollster::block_on(f).unwrap(), cpu + 1);
    }
    // dropped before its first poll: never queued, never run; its closure dropped here
    let ran = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    struct Token(Arc<AtomicUsize>);
    impl Drop for Token {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let cpu = cpus()[0];
    for _ in 0..100 {
        let (r, d) = (ran.clone(), dropped.clone());
        let token = Token(d);
        drop(rt.call_on_async(cpu, move || {
            r.fetch_add(1, Ordering::SeqCst);
            token
        }));
    }
    rt.call_on(cpu, || ()).unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(dropped.load(Ordering::SeqCst), 100);
}

#[test]
fn panics_are_carried_back() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let p = catch_unwind(AssertUnwindSafe(|| rt.call_on(cpu, || -> u32 { panic!("boom on the target") })));
    let msg = p.unwrap_err();
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"boom on the target"));

    let p = catch_unwind(AssertUnwindSafe(|| {
        rt.call_on_all(|| {
            if xcall::current_cpu() == Some(cpu) {
                panic!("one CPU");
            }
        })
    }));
    assert_eq!(p.unwrap_err().downcast_ref::<&str>(), Some(&"one CPU"));

    let f = rt.call_on_async(cpu, || -> u32 { std::panic::panic_any(7u64) });
    let p = catch_unwind(AssertUnwindSafe(|| f.wait()));
    assert_eq!(p.unwrap_err().downcast_ref::<u64>(), Some(&7));

    // the workers go on
    assert_eq!(rt.call_on(cpu, || 5).unwrap(), 5);
}

#[test]
fn spawn_panics_are_contained_and_counted() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let before = xcall::spawn_panics();
    let (tx, rx) = mpsc::channel::<()>();
    rt.spawn_on(cpu, move || {
        let _keep = tx; // dropped on the target as the panic unwinds
        panic!("contained");
    })
    .unwrap();
    assert!(rx.recv().is_err(), "the closure's captures were dropped");
    rt.call_on(cpu, || ()).unwrap();
    assert_eq!(xcall::spawn_panics(), before + 1);
    assert_eq!(rt.call_on(cpu, xcall::current_cpu).unwrap(), Some(cpu));
}

#[test]
fn errnos_of_calls() {
    let _s = serial();
    // ENXIO: nothing is up
    let h = {
        let rt = Runtime::new().unwrap();
        rt.handle()
    };
    assert_eq!((h.call_on(0, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!((h.spawn_on(0, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!(h.call_on_all(|| ()).unwrap_err(), ErrorKind::Unavailable);
    assert_eq!((h.online_cpus()).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!((h.total_stats()).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));

    let rt = Runtime::builder().cpus(&CpuSet::from_cpus([cpus()[0]]).unwrap()).build().unwrap();
    // EBUSY: a second runtime
    assert_eq!(Runtime::new().unwrap_err(), ErrorKind::Busy);
    // ENXIO: outside the set
    let outside = CpuSet::CAPACITY - 1;
    assert_eq!((rt.call_on(outside, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!((rt.call_on(usize::MAX, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!((rt.spawn_on(outside, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    let e = rt.call_on_async(outside, || ()).wait().unwrap_err();
    assert_eq!((e.kind(), e.cpu()), (ErrorKind::Unavailable, Some(outside)));
    // the error names the CPU where the call named one
    assert_eq!(rt.call_on(outside, || ()).unwrap_err().cpu(), Some(outside));
    assert_eq!(rt.call_on(usize::MAX, || ()).unwrap_err().cpu(), Some(usize::MAX));
    assert_eq!(rt.spawn_on(outside, || ()).unwrap_err().cpu(), Some(outside));
    assert_eq!(rt.stats(outside).unwrap_err().cpu(), Some(outside));
    assert_eq!(rt.cpu_offline(usize::MAX).unwrap_err().cpu(), Some(usize::MAX));
    let e = rt.call_on(outside, || ()).unwrap_err();
    assert_eq!(e.to_string(), format!("CPU {outside}: absent or offline, or runtime not up"));
    assert_eq!((rt.stats(outside)).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!((rt.cpu_offline(outside)).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    let far = CpuSet::from_cpus([outside]).unwrap();
    assert_eq!(rt.call_on_many(&far, || ()).unwrap_err(), ErrorKind::Unavailable);
    assert_eq!(rt.call_on_any(&far, || ()).unwrap_err(), ErrorKind::Unavailable);
    // EINVAL: an empty set
    assert_eq!(rt.call_on_many(&CpuSet::new(), || ()).unwrap_err(), ErrorKind::InvalidArgument);
    assert_eq!(rt.call_on_any(&CpuSet::new(), || ()).unwrap_err(), ErrorKind::InvalidArgument);
    // ENXIO: tracing is off
    assert_eq!((rt.trace_dump("/nonexistent/x.json")).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!((rt.trace_dump("a\0b")).map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
    // EINVAL: a CPU online already
    assert_eq!((rt.cpu_online(cpus()[0])).map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
    drop(rt);
    assert!(xcall::pin_current_thread(CpuSet::CAPACITY).is_err());
}

#[test]
fn hotplug_and_its_errnos() {
    let _s = serial();
    if !have_cpus(2, "taking a CPU offline") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let (a, b) = (cpus()[0], cpus()[1]);
    rt.cpu_offline(b).unwrap();
    assert!(!rt.online_cpus().unwrap().contains(b));
    assert_eq!((rt.cpu_offline(b)).map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
    assert_eq!((rt.call_on(b, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    // many and all skip an offline CPU
    assert_eq!(rt.call_on_all(|| ()).unwrap().len(), rt.online_cpus().unwrap().len());
    // EDEADLK: a CPU's own worker taking it offline
    let h = rt.handle();
    assert_eq!((rt.call_on(a, || h.cpu_offline(a)).unwrap()).map_err(|e| e.kind()), Err(ErrorKind::WouldDeadlock));
    rt.cpu_online(b).unwrap();
    assert_eq!(rt.call_on(b, xcall::current_cpu).unwrap(), Some(b));
}

#[test]
fn cpusets_and_errors() {
    assert_eq!(CpuSet::parse("0-3,8").unwrap().to_string(), "0-3,8");
    assert_eq!((CpuSet::parse("x")).map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
    assert_eq!((CpuSet::parse("0\u{0}1")).map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
    assert_eq!((CpuSet::parse("")).map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
    let mut s = CpuSet::new();
    assert_eq!((s.insert(CpuSet::CAPACITY)).map_err(|e| e.kind()), Err(ErrorKind::InvalidArgument));
    s.insert(5).unwrap();
    assert!(s.contains(5) && !s.contains(4) && !s.contains(usize::MAX));
    assert_eq!(s.len(), 1);
    s.remove(5);
    assert!(s.is_empty());
    for e in [-libc::EINVAL, -libc::ENXIO, -libc::EBUSY, -libc::EDEADLK, -libc::ETIMEDOUT, -libc::ENOMEM,
        -libc::EAGAIN, -libc::EMFILE, -libc::ENFILE, -libc::EIO, -libc::ENOSPC, -libc::E2BIG]
    {
        let err = Error::from_errno(e);
        assert_eq!(err.errno(), -e, "{err}");
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Runtime>();
    send_sync::<xcall::Handle>();
    send_sync::<xcall::CallFuture<fn() -> String, String>>();
    send_sync::<CpuSet>();
    send_sync::<Error>();
}

extern "C" {
    fn pthread_setattr_default_np(attr: *const libc::pthread_attr_t) -> libc::c_int;
}

/// One level of a recursion of waiting calls between CPUs `a` and `b`: the deepest level's
/// depth, where the next call was refused.
fn level(h: xcall::Handle, a: usize, b: usize, depth: usize) -> usize {
    let next = if xcall::current_cpu() == Some(a) { b } else { a };
    match h.call_on(next, move || level(h, a, b, depth + 1)) {
        Ok(deepest) => deepest,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::NestedTooDeep, "{e}");
            assert_eq!(e.kind().errno(), libc::ELOOP);
            depth
        }
    }
}

#[test]
fn a_recursion_of_waiting_calls_ends_with_nested_too_deep() {
    if !have_cpus(2, "a recursion between two CPUs") || !common::in_child("a_recursion_of_waiting_calls_ends_with_nested_too_deep") {
        return;
    }
    // 1 MiB worker stacks, for the whole process (hence the child): the limit comes within
    // some hundred levels, where the stack would overflow without it
    unsafe {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        assert_eq!(libc::pthread_attr_init(attr.as_mut_ptr()), 0);
        assert_eq!(libc::pthread_attr_setstacksize(attr.as_mut_ptr(), 1 << 20), 0);
        assert_eq!(pthread_setattr_default_np(attr.as_ptr()), 0);
    }
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let (a, b) = (cpus()[0], cpus()[1]);
    let h = rt.handle();
    let deepest = rt.call_on(a, move || level(h, a, b, 0)).unwrap();
    eprintln!("a recursion of waiting calls on 1 MiB stacks: refused at level {}", deepest + 1);
    assert!(deepest >= 50, "refused at level {deepest}");
}
