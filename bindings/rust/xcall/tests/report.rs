//! The report hook, which libxcall runs inside its own code: the runtime dropped inside it
//! stays up with its hooks (`xc_exit` answers EAGAIN there: nothing stopped), as does one shut
//! down while a thread is attached (EBUSY); an attached thread's guard dropped inside it stays
//! attached (`xc_worker_detach` answers EAGAIN); a panic in it whose payload panics again when
//! dropped is contained; and its delivery allocates nothing of its own (libxcall may report
//! from a signal handler). A report is made on demand by a trace dump to a path that cannot
//! be written. Each test runs in a child process of its own (`common::in_child`): a freed hook
//! called, or an unwind into C, fails that test alone.

mod common;

use common::{cpus, have_cpus, in_child, throw_bomb};
use std::cell::RefCell;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use xcall::{Attached, CpuSet, ErrorKind, Runtime};

#[path = "common/counting.rs"]
mod counting;
use counting::ALLOCS;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// Where a trace dump fails, and libxcall reports why, from inside `xc_trace_dump`.
const NOWHERE: &str = "/nonexistent-xcall-dir/trace.json";

/// Tracing on (a dump needs it); the runtime of these tests never writes it.
fn trace_file() -> PathBuf {
    std::env::temp_dir().join(format!("xcall-report-test-{}.json", std::process::id()))
}

static REPORTS: AtomicUsize = AtomicUsize::new(0);
/// How many hooks were dropped: captured witnesses say so.
static HOOKS_GONE: AtomicUsize = AtomicUsize::new(0);

/// Captured by a hook: dropping it says the hook was freed.
struct Witness;

impl Drop for Witness {
    fn drop(&mut self) {
        HOOKS_GONE.fetch_add(1, Ordering::SeqCst);
    }
}

static RT: Mutex<Option<Runtime>> = Mutex::new(None);

/// The runtime dropped by its own report hook: xc_exit answers EAGAIN inside libxcall, so it
/// stays up, and the hook libxcall points to stays alive: calls run, the next report reaches
/// the hook, and a second runtime is still refused.
#[test]
fn runtime_dropped_in_its_report_hook_stays_up() {
    if !in_child("runtime_dropped_in_its_report_hook_stays_up") {
        return;
    }
    let w = Witness;
    let rt = Runtime::builder()
        .trace_file(trace_file())
        .report(move |_| {
            let _keep = &w;
            REPORTS.fetch_add(1, Ordering::SeqCst);
            let rt = RT.lock().unwrap().take();
            drop(rt); // inside libxcall's own code
        })
        .build()
        .unwrap();
    let h = rt.handle();
    *RT.lock().unwrap() = Some(rt);
    assert!(h.trace_dump(NOWHERE).is_err());
    assert_eq!(REPORTS.load(Ordering::SeqCst), 1);
    assert!(RT.lock().unwrap().is_none(), "the hook took the runtime and dropped it");
    assert_eq!(HOOKS_GONE.load(Ordering::SeqCst), 0, "the report hook was freed while libxcall still holds it");
    let cpu = cpus()[0];
    assert_eq!(h.call_on(cpu, || 7).unwrap(), 7, "still up");
    assert_eq!(Runtime::new().unwrap_err(), ErrorKind::Busy);
    assert!(h.trace_dump(NOWHERE).is_err());
    assert_eq!(REPORTS.load(Ordering::SeqCst), 2, "the next report reaches the hook");
}

/// Shut down while a thread is attached (its guard forgotten): EBUSY, nothing stopped, and
/// the hooks stay.
#[test]
fn shutdown_while_attached_keeps_the_hooks() {
    if !in_child("shutdown_while_attached_keeps_the_hooks") {
        return;
    }
    if !have_cpus(2, "an attached CPU beside a worker") {
        return;
    }
    let (first, last) = (cpus()[0], *cpus().last().unwrap());
    let (w1, w2) = (Witness, Witness);
    let rt = Runtime::builder()
        .attach(&CpuSet::from_cpus([last]).unwrap())
        .report(move |_| {
            let _keep = &w1;
        })
        .cpu_init(move |_| {
            let _keep = &w2;
            Ok(())
        })
        .build()
        .unwrap();
    let h = rt.handle();
    *RT.lock().unwrap() = Some(rt);
    let (attached, shut) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let (a, s) = (attached.clone(), shut.clone());
    let shard = std::thread::spawn(move || {
        xcall::pin_current_thread(last).unwrap();
        std::mem::forget(RT.lock().unwrap().as_ref().unwrap().attach(last).unwrap());
        a.wait();
        s.wait(); // attached until the shutdown was refused; its exit detaches it
    });
    attached.wait();
    let rt = RT.lock().unwrap().take().unwrap();
    assert_eq!(rt.shutdown().unwrap_err(), ErrorKind::Busy);
    shut.wait();
    shard.join().unwrap();
    assert_eq!(HOOKS_GONE.load(Ordering::SeqCst), 0, "a hook was freed while the runtime is up");
    assert_eq!(h.call_on(first, || 1).unwrap(), 1, "still up");
}

thread_local! {
    static GUARD: RefCell<Option<Attached<'static>>> = const { RefCell::new(None) };
}

/// An attached thread's guard dropped by a report hook on that thread: xc_worker_detach
/// answers EAGAIN inside libxcall, and the thread stays attached (its CPU's worker), with
/// nothing freed under libxcall; libxcall's own detach then succeeds.
#[test]
fn attached_guard_dropped_in_the_report_hook_stays_attached() {
    if !in_child("attached_guard_dropped_in_the_report_hook_stays_attached") {
        return;
    }
    if !have_cpus(2, "an attached CPU beside a worker") {
        return;
    }
    let last = *cpus().last().unwrap();
    let rt: &'static Runtime = Box::leak(Box::new(
        Runtime::builder()
            .attach(&CpuSet::from_cpus([last]).unwrap())
            .trace_file(trace_file())
            .report(|_| {
                REPORTS.fetch_add(1, Ordering::SeqCst);
                drop(GUARD.with(|g| g.borrow_mut().take())); // inside libxcall's own code
            })
            .build()
            .unwrap(),
    ));
    std::thread::spawn(move || {
        xcall::pin_current_thread(last).unwrap();
        GUARD.with(|g| *g.borrow_mut() = Some(rt.attach(last).unwrap()));
        assert!(rt.trace_dump(NOWHERE).is_err());
        assert_eq!(REPORTS.load(Ordering::SeqCst), 1);
        assert!(GUARD.with(|g| g.borrow().is_none()), "the hook dropped the guard");
        assert_eq!(xcall::current_cpu(), Some(last), "still the CPU's worker");
        // SAFETY: the calling thread is attached, outside any call.
        assert_eq!(unsafe { xcall_sys::xc_worker_detach() }, 0);
        assert_eq!(xcall::current_cpu(), None);
    })
    .join()
    .unwrap();
    assert_eq!(rt.call_on(last, || ()).unwrap_err(), ErrorKind::Unavailable, "detached: offline");
}

/// A report hook that panics with a payload whose drop panics again: contained, the dump
/// returns its error, and the process goes on.
#[test]
fn report_hook_panic_whose_payload_panics_on_drop() {
    if !in_child("report_hook_panic_whose_payload_panics_on_drop") {
        return;
    }
    let rt = Runtime::builder()
        .trace_file(trace_file())
        .report(|_| {
            REPORTS.fetch_add(1, Ordering::SeqCst);
            throw_bomb();
        })
        .build()
        .unwrap();
    assert!(rt.trace_dump(NOWHERE).is_err());
    assert_eq!(REPORTS.load(Ordering::SeqCst), 1);
    assert_eq!(rt.call_on(cpus()[0], || 3).unwrap(), 3);
}

static ALLOCS_AT_HOOK: AtomicUsize = AtomicUsize::new(usize::MAX);
static MENDED: AtomicBool = AtomicBool::new(false);

/// From libxcall's report to the hook's first instruction, nothing is allocated: not for a
/// line that is not UTF-8 either (mended on the stack). What the hook itself does is its own.
#[test]
fn report_delivery_allocates_nothing() {
    if !in_child("report_delivery_allocates_nothing") {
        return;
    }
    let rt = Runtime::builder()
        .trace_file(trace_file())
        .report(|line| {
            ALLOCS_AT_HOOK.store(ALLOCS.load(Ordering::SeqCst), Ordering::SeqCst);
            MENDED.store(line.contains('\u{fffd}'), Ordering::SeqCst);
        })
        .build()
        .unwrap();
    // libxcall's line names the path: a byte that is not UTF-8 in it
    let path = CString::new(b"/nonexistent-xcall-dir/\xff.json".to_vec()).unwrap();
    let before = ALLOCS.load(Ordering::SeqCst);
    // SAFETY: a NUL-terminated path; tracing is on.
    let r = unsafe { xcall_sys::xc_trace_dump(path.as_ptr()) };
    assert!(r < 0);
    assert_eq!(ALLOCS_AT_HOOK.load(Ordering::SeqCst), before, "allocations between libxcall and the hook");
    assert!(MENDED.load(Ordering::SeqCst), "the line's bad byte reached the hook mended");
    drop(rt);
}
