//! `Sharded<T>`: each instance built and dropped on its own CPU (on the dropping thread when
//! its CPU is offline or the runtime down), the calls on one, on all and map_reduce, a
//! 'static closure keeping the instances alive, and each way libxcall comes back into a
//! CPU's thread while a closure holds its `&mut T`: (a) inline, (b) a nowait call waiting for
//! room in a full ring and a waiting call, (c) a hotplug wait, (d) `xc_poll` inside a call
//! and `CallFuture::wait` on a worker. Each nested access gets `ErrorKind::Borrowed`.

mod common;

use common::{cpus, have_cpus, serial};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use xcall::{Error, ErrorKind, Handle, Runtime, Sharded};

/// (the instance's CPU, the CPU its drop ran on), one per drop
type DropLog = Arc<Mutex<Vec<(usize, Option<usize>)>>>;

/// An instance that says where it was built and where it was dropped.
struct Probe {
    cpu: usize,
    built_on: Option<usize>,
    count: u64,
    dropped: DropLog,
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.dropped.lock().unwrap().push((self.cpu, xcall::current_cpu()));
    }
}

fn probes(h: &Handle) -> (Sharded<Probe>, DropLog) {
    let dropped = Arc::new(Mutex::new(Vec::new()));
    let d = dropped.clone();
    let sh = Sharded::new(h, move |cpu| Probe { cpu, built_on: xcall::current_cpu(), count: 0, dropped: d.clone() }).unwrap();
    (sh, dropped)
}

fn sorted(v: &Mutex<Vec<(usize, Option<usize>)>>) -> Vec<(usize, Option<usize>)> {
    let mut v = v.lock().unwrap().clone();
    v.sort();
    v
}

#[test]
fn built_and_dropped_on_their_own_cpus() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let (sh, dropped) = probes(&rt);
    let online: Vec<usize> = rt.online_cpus().unwrap().iter().collect();
    let built = sh.invoke_on_all(|p| (p.cpu, p.built_on)).unwrap();
    assert_eq!(built, online.iter().map(|&c| (c, (c, Some(c)))).collect::<Vec<_>>());
    for &c in &online {
        assert!(sh.has_instance(c));
    }
    let other = sh.clone();
    drop(sh);
    assert!(dropped.lock().unwrap().is_empty(), "a handle is left");
    drop(other);
    assert_eq!(sorted(&dropped), online.iter().map(|&c| (c, Some(c))).collect::<Vec<_>>());
}

#[test]
fn dropped_here_when_offline_or_down() {
    let _s = serial();
    if !have_cpus(2, "a CPU offline beside a worker") {
        return;
    }
    let (a, b) = (cpus()[0], cpus()[1]);
    let rt = Runtime::new().unwrap();
    let (sh, dropped) = probes(&rt);
    rt.cpu_offline(b).unwrap();
    assert_eq!(sh.invoke_on(b, |p| p.cpu).unwrap_err(), ErrorKind::Unavailable);
    drop(sh);
    let d = sorted(&dropped);
    assert!(d.contains(&(a, Some(a))), "{d:?}");
    assert!(d.contains(&(b, None)), "B's instance on the dropping thread: {d:?}");
    rt.cpu_online(b).unwrap();

    // the runtime down: every instance here
    let (sh, dropped) = probes(&rt);
    drop(rt);
    drop(sh);
    assert!(sorted(&dropped).iter().all(|&(_, on)| on.is_none()));
    assert_eq!(dropped.lock().unwrap().len(), cpus().len());
}

#[test]
fn every_form_of_call() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let (sh, _dropped) = probes(&rt);
    let online: Vec<usize> = rt.online_cpus().unwrap().iter().collect();
    let c = *online.last().unwrap();
    let mut borrowed_from_caller = 0;
    let on = sh
        .invoke_on(c, |p| {
            p.count += 1;
            borrowed_from_caller += 1;
            xcall::current_cpu()
        })
        .unwrap();
    assert_eq!((on, borrowed_from_caller), (Some(c), 1));

    // nowait: 'static, keeps the instances alive, in order with the thread's later calls
    let runs = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let runs = runs.clone();
        sh.invoke_on_nowait(c, move |p| {
            p.unwrap().count += 1;
            runs.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    }
    assert_eq!(sh.invoke_on(c, |p| p.count).unwrap(), 101);
    assert_eq!(runs.load(Ordering::Relaxed), 100);

    // async: waited, and polled by an executor
    assert_eq!(sh.invoke_on_async(c, |p| p.count * 2).wait().unwrap(), 202);
    let f = sh.invoke_on_async(c, |p| (p.cpu, xcall::current_cpu()));
    assert_eq!(f.cpu(), c);
    assert_eq!(pollster::block_on(f).unwrap(), (c, Some(c)));

    // on all and map_reduce: one xc_call_all each. A future is ready once its closure
    // returned, and libxcall counts the call just after: a waiting call to the CPU returns
    // only once the calls before it are counted
    sh.invoke_on(c, |_| ()).unwrap();
    let before = rt.total_stats().unwrap();
    let all = sh.invoke_on_all(|p| p.cpu).unwrap();
    assert_eq!(all.iter().map(|&(c, v)| (c, v)).collect::<Vec<_>>(), online.iter().map(|&c| (c, c)).collect::<Vec<_>>());
    let sum = sh.map_reduce(|p| p.count, 0, |a, b| a + b).unwrap();
    assert_eq!(sum, 101);
    assert_eq!((rt.total_stats().unwrap() - before).calls, 2 * online.len() as u64);

    // refused: no such CPU
    assert_eq!(sh.invoke_on(usize::MAX, |_| ()).unwrap_err(), ErrorKind::Unavailable);
    assert_eq!(sh.invoke_on_async(usize::MAX, |_| ()).wait().unwrap_err(), ErrorKind::Unavailable);
    assert_eq!(sh.invoke_on_nowait(usize::MAX, |_| ()).unwrap_err(), ErrorKind::Unavailable);

    // a panic is carried back; the flag is released, the instance stays
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.invoke_on(c, |_| panic!("in the closure"))));
    assert!(r.is_err());
    assert_eq!(sh.invoke_on(c, |p| p.count).unwrap(), 101);

    // a 'static closure outlives the caller's handles
    let (sh2, dropped2) = probes(&rt);
    let (go, gone) = std::sync::mpsc::channel::<()>();
    let keep = sh2.clone();
    let t = std::thread::spawn(move || {
        gone.recv().unwrap();
        keep.invoke_on(c, |p| p.count += 1).unwrap();
        // the last handle drops here, and the instances with it
    });
    drop(sh2);
    assert!(dropped2.lock().unwrap().is_empty(), "the thread's handle keeps the instances");
    go.send(()).unwrap();
    t.join().unwrap();
    assert_eq!(dropped2.lock().unwrap().len(), online.len());
}

#[test]
fn a_inline_nesting_is_refused() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let sh: Sharded<u64> = Sharded::new(&rt, |_| 0).unwrap();
    let online: Vec<usize> = rt.online_cpus().unwrap().iter().collect();
    let a = online[0];
    let inner = sh
        .invoke_on(a, |v| {
            *v += 1;
            (
                sh.invoke_on(a, |v| *v += 100),
                sh.invoke_on_all(|v| *v),
                sh.map_reduce(|v| *v, 0, |x, y| x + y),
                sh.invoke_on_async(a, |v| *v).wait(),
            )
        })
        .unwrap();
    let want = Error::from(ErrorKind::Borrowed).on_cpu(a);
    assert_eq!(inner.0, Err(want));
    assert_eq!(inner.1, Err(want));
    assert_eq!(inner.2, Err(want));
    assert_eq!(inner.3, Err(want));
    assert!(want.to_string().contains("nested"), "{want}");
    // the first access went on undisturbed; the nested ones did nothing
    assert_eq!(sh.invoke_on(a, |v| *v).unwrap(), 1);
    // another CPU's instance, and another Sharded, are other flags
    if online.len() > 1 {
        let b = online[1];
        let other: Sharded<u64> = Sharded::new(&rt, |_| 7).unwrap();
        let r = sh.invoke_on(a, |_| (sh.invoke_on(b, |v| *v + 1), other.invoke_on(a, |v| *v))).unwrap();
        assert_eq!(r, (Ok(1), Ok(7)));
    }
}

/// Fails the test rather than hanging it: CPU B's blocker is let go whatever happens.
struct Release(Arc<AtomicBool>);
impl Drop for Release {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn until(what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

/// CPU A's closure holds its instance and then `waits` (a wait that serves A's calls, on
/// CPU B, which is held busy meanwhile); a nowait access to A's instance sent from here is
/// served inside that wait, and must get `Borrowed`. Returns what it got.
fn served_inside(rt: &Runtime, waits: impl FnOnce(Handle, usize) + Send) -> Result<(), Error> {
    let (a, b) = (cpus()[0], cpus()[1]);
    let h = rt.handle();
    let sh: Sharded<u64> = Sharded::new(rt, |_| 0).unwrap();
    let go = Arc::new(AtomicBool::new(false));
    let release = Release(go.clone());
    // B busy until let go. A's calls to B must find B inside this one: calls from different
    // senders carry no order between them, so B could serve A's first. Wait until it is inside.
    let (g, busy) = (go.clone(), Arc::new(AtomicBool::new(false)));
    let on_b = busy.clone();
    h.spawn_on(b, move || {
        on_b.store(true, Ordering::SeqCst);
        while !g.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
    })
    .unwrap();
    until("B's busy call", || busy.load(Ordering::SeqCst));
    let inside = AtomicBool::new(false);
    let nested: Arc<Mutex<Option<Result<(), Error>>>> = Arc::new(Mutex::new(None));
    std::thread::scope(|s| {
        let holder = s.spawn(|| {
            sh.invoke_on(a, |v| {
                *v += 1;
                inside.store(true, Ordering::SeqCst);
                waits(h, b);
                *v += 1;
            })
        });
        until("A's closure", || inside.load(Ordering::SeqCst));
        let n = nested.clone();
        sh.invoke_on_nowait(a, move |v| *n.lock().unwrap() = Some(v.map(|_| ()))).unwrap();
        // the nowait call can run only inside the wait: the wait cannot end before B is free
        until("the nested access", || nested.lock().unwrap().is_some());
        drop(release);
        holder.join().unwrap().unwrap();
    });
    assert_eq!(sh.invoke_on(a, |v| *v).unwrap(), 2, "the holder went on undisturbed");
    let got = nested.lock().unwrap().take().unwrap();
    if let Err(e) = got {
        assert_eq!(e.cpu(), Some(a));
    }
    got
}

#[test]
fn b_a_full_ring_serves_and_is_refused() {
    let _s = serial();
    if !have_cpus(2, "a ring to a busy CPU") {
        return;
    }
    let rt = Runtime::builder().ring_entries(16).build().unwrap();
    let got = served_inside(&rt, |h, b| {
        // 16 entries: the 17th nowait call waits for room, serving A's calls
        for _ in 0..64 {
            h.spawn_on(b, || ()).unwrap();
        }
    });
    assert_eq!(got, Err(Error::from(ErrorKind::Borrowed).on_cpu(cpus()[0])));
}

#[test]
fn b_a_waiting_call_serves_and_is_refused() {
    let _s = serial();
    if !have_cpus(2, "a waiting call to a busy CPU") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let got = served_inside(&rt, |h, b| h.call_on(b, || ()).unwrap());
    assert_eq!(got.unwrap_err(), ErrorKind::Borrowed);
}

#[test]
fn c_a_hotplug_wait_serves_and_is_refused() {
    let _s = serial();
    if !have_cpus(2, "taking a busy CPU offline") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let got = served_inside(&rt, |h, b| h.cpu_offline(b).unwrap());
    assert_eq!(got.unwrap_err(), ErrorKind::Borrowed);
    rt.cpu_online(cpus()[1]).unwrap();
}

#[test]
fn d_a_call_future_waited_on_a_worker_serves_and_is_refused() {
    let _s = serial();
    if !have_cpus(2, "a future on a busy CPU") {
        return;
    }
    let rt = Runtime::new().unwrap();
    let got = served_inside(&rt, |h, b| h.call_on_async(b, || ()).wait().unwrap());
    assert_eq!(got.unwrap_err(), ErrorKind::Borrowed);
}

#[test]
fn d_xc_poll_inside_a_call_is_refused() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let a = cpus()[0];
    let sh: Sharded<u64> = Sharded::new(&rt, |_| 0).unwrap();
    let (inside, queued) = (AtomicBool::new(false), AtomicBool::new(false));
    let nested: Arc<Mutex<Option<Result<(), Error>>>> = Arc::new(Mutex::new(None));
    std::thread::scope(|s| {
        let holder = s.spawn(|| {
            sh.invoke_on(a, |v| {
                *v += 1;
                inside.store(true, Ordering::SeqCst);
                until("the nowait call", || queued.load(Ordering::SeqCst));
                // SAFETY: inside a call on a worker: libxcall runs the CPU's queued calls
                let ran = unsafe { xcall_sys::xc_poll() };
                assert!(ran >= 1, "xc_poll ran {ran}");
                *v += 1;
            })
        });
        until("A's closure", || inside.load(Ordering::SeqCst));
        let n = nested.clone();
        sh.invoke_on_nowait(a, move |v| *n.lock().unwrap() = Some(v.map(|_| ()))).unwrap();
        queued.store(true, Ordering::SeqCst);
        holder.join().unwrap().unwrap();
    });
    assert_eq!(sh.invoke_on(a, |v| *v).unwrap(), 2);
    assert_eq!(nested.lock().unwrap().take().unwrap(), Err(Error::from(ErrorKind::Borrowed).on_cpu(a)));
}

/// `has_instance` from another thread, in a loop, while calls use the instance: it looks
/// without taking the flag, so no call gets `Borrowed` (which means a nested access only).
#[test]
fn has_instance_elsewhere_never_refuses_a_call() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let cpu = *cpus().last().unwrap();
    let counts: Sharded<u64> = Sharded::new(&rt, |_| 0).unwrap();
    let stop = AtomicBool::new(false);
    let looks = AtomicU64::new(0);
    let mut extra = 0u64;
    const CALLS: u64 = 20_000;
    std::thread::scope(|s| {
        let looker = s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                assert!(counts.has_instance(cpu));
                looks.fetch_add(1, Ordering::Relaxed);
            }
        });
        let mut borrowed = 0;
        for _ in 0..CALLS {
            match counts.invoke_on(cpu, |v| *v += 1) {
                Ok(()) => {}
                Err(e) if e == ErrorKind::Borrowed => borrowed += 1,
                Err(e) => panic!("invoke_on: {e}"),
            }
        }
        // on a busy machine the looker may not have run yet: the calls go on until it has looked
        while looks.load(Ordering::Relaxed) == 0 {
            match counts.invoke_on(cpu, |v| *v += 1) {
                Ok(()) => extra += 1,
                Err(e) if e == ErrorKind::Borrowed => borrowed += 1,
                Err(e) => panic!("invoke_on: {e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        looker.join().unwrap();
        assert_eq!(borrowed, 0, "{borrowed} of {CALLS} calls refused with Borrowed, none nested");
    });
    assert_eq!(counts.invoke_on(cpu, |v| *v).unwrap(), CALLS + extra);
}
