//! Attached threads: calls run inside the thread's own loop, an epoll sleep woken only by the
//! eventfd, detach on drop, and every errno of attach, sleep and detach.

mod common;

use common::{cpus, have_cpus, serial};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use xcall::{CpuSet, ErrorKind, Runtime};

fn attach_last() -> (Runtime, usize, usize) {
    let (first, last) = (cpus()[0], *cpus().last().unwrap());
    let rt = Runtime::builder().attach(&CpuSet::from_cpus([last]).unwrap()).build().unwrap();
    (rt, first, last)
}

#[test]
fn calls_run_in_the_loop_woken_through_epoll() {
    let _s = serial();
    if !have_cpus(2, "an attached CPU beside a worker") {
        return;
    }
    let (rt, first, last) = attach_last();
    // set aside: offline until a thread attaches
    assert_eq!((rt.call_on(last, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    let ready = Barrier::new(2);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let shard = s.spawn(|| {
            xcall::pin_current_thread(last).unwrap();
            let me = rt.attach(last).unwrap();
            assert_eq!(me.cpu(), last);
            assert_eq!(xcall::current_cpu(), Some(last));
            // SAFETY: plain epoll on descriptors this test owns.
            let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
            assert!(ep >= 0);
            let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 1 };
            // SAFETY: as above.
            assert_eq!(unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, me.as_raw_fd(), &mut ev) }, 0);
            ready.wait();
            let mut served = 0;
            loop {
                served += me.poll().unwrap();
                if stop.load(Ordering::SeqCst) {
                    break; // after the poll that ran the stop call: nothing will wake the wait
                }
                if me.sleep_begin().unwrap() {
                    let mut out = [libc::epoll_event { events: 0, u64: 0 }; 4];
                    // SAFETY: as above; no timeout: only the eventfd ends this wait.
                    let n = unsafe { libc::epoll_wait(ep, out.as_mut_ptr(), 4, -1) };
                    assert!(n >= 0 || std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted);
                }
                me.sleep_end().unwrap();
            }
            // SAFETY: as above.
            unsafe {
                libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, me.as_raw_fd(), std::ptr::null_mut());
                libc::close(ep);
            }
            served
        });
        ready.wait();
        for i in 0..200 {
            let tid = rt.call_on(last, || std::thread::current().id()).unwrap();
            assert_eq!(tid, shard.thread().id(), "the call ran on the attached thread");
            rt.spawn_on(last, move || assert_eq!(xcall::current_cpu(), Some(last))).unwrap();
            assert_eq!(rt.call_on_async(last, move || i).wait().unwrap(), i);
        }
        assert_eq!(rt.call_on_all(xcall::current_cpu).unwrap().len(), 2);
        let s0 = rt.stats(last).unwrap();
        assert!(s0.calls >= 600);
        rt.call_on(last, || stop.store(true, Ordering::SeqCst)).unwrap();
        assert!(shard.join().unwrap() >= 600);
    });
    // the guard dropped at the thread's end: detached, the CPU offline again
    assert_eq!((rt.call_on(last, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
    assert_eq!(rt.call_on(first, || 1).unwrap(), 1);
}

#[test]
fn errnos_of_attach() {
    let _s = serial();
    if !have_cpus(2, "an attached CPU beside a worker") {
        return;
    }
    let (rt, first, last) = attach_last();
    std::thread::scope(|s| {
        s.spawn(|| {
            // EINVAL: not pinned to the CPU alone
            assert_eq!(rt.attach(last).unwrap_err(), ErrorKind::InvalidArgument);
            xcall::pin_current_thread(last).unwrap();
            // EINVAL: a CPU not set aside; ENXIO: outside the set
            assert_eq!(rt.attach(first).unwrap_err(), ErrorKind::InvalidArgument);
            assert_eq!(rt.attach(CpuSet::CAPACITY - 1).unwrap_err(), ErrorKind::Unavailable);
            assert_eq!(rt.attach(usize::MAX).unwrap_err(), ErrorKind::Unavailable);
            let me = rt.attach(last).unwrap();
            // EBUSY: twice
            assert_eq!(rt.attach(last).unwrap_err(), ErrorKind::Busy);
            // EBUSY: another thread, the same CPU
            std::thread::scope(|s2| {
                s2.spawn(|| {
                    xcall::pin_current_thread(last).unwrap();
                    assert_eq!(rt.attach(last).unwrap_err(), ErrorKind::Busy);
                });
            });
            // EDEADLK: a waiting call between sleep_begin and sleep_end
            let _ = me.sleep_begin().unwrap();
            assert_eq!((rt.call_on(first, || ())).map_err(|e| e.kind()), Err(ErrorKind::WouldDeadlock));
            me.sleep_end().unwrap();
            assert_eq!(rt.call_on(first, || 3).unwrap(), 3);
            // EDEADLK: detaching inside a call (a nested guard is impossible to reach from a
            // closure, so the raw refusal is checked through its offline counterpart)
            let h = rt.handle();
            assert_eq!((rt.call_on(last, || h.cpu_offline(last)).unwrap()).map_err(|e| e.kind()), Err(ErrorKind::WouldDeadlock));
            // EBUSY: no shutdown while attached; the runtime stays up
            me.detach().unwrap();
            // EMFILE: no descriptor left for the eventfd
            assert_eq!((without_fds(|| rt.attach(last).map(drop))).map_err(|e| e.kind()), Err(ErrorKind::ProcessFileLimit));
            let again = rt.attach(last).unwrap();
            drop(again);
        });
    });
    assert_eq!((rt.call_on(last, || ())).map_err(|e| e.kind()), Err(ErrorKind::Unavailable));
}

/// Run f with every file descriptor of the process taken, under a lowered limit.
fn without_fds<R>(f: impl FnOnce() -> R) -> R {
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: plain rlimit and descriptor calls on the test's own process.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut old), 0);
        let low = libc::rlimit { rlim_cur: 256, rlim_max: old.rlim_max };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &low), 0);
        let mut taken = Vec::new();
        loop {
            let fd = libc::dup(0);
            if fd < 0 {
                break;
            }
            taken.push(fd);
        }
        let r = f();
        for fd in taken {
            libc::close(fd);
        }
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &old), 0);
        r
    }
}

#[test]
fn shutdown_while_attached_is_refused_until_detached() {
    let _s = serial();
    if !have_cpus(2, "an attached CPU beside a worker") {
        return;
    }
    // the guard borrows the runtime: dropping the runtime while attached does not compile;
    // a second runtime while one is up is refused
    let (rt, _first, last) = attach_last();
    std::thread::scope(|s| {
        s.spawn(|| {
            xcall::pin_current_thread(last).unwrap();
            let me = rt.attach(last).unwrap();
            assert_eq!(Runtime::new().unwrap_err(), ErrorKind::Busy);
            drop(me);
        });
    });
    rt.shutdown().unwrap();
}
