//! A call as a future, with no allocation: the closure, its result and the completion's state
//! live in the future itself. The call is a nowait call (`xc_call_single` without `XC_WAIT`)
//! whose argument is the future: libxcall keeps only that pointer, in the sender's ring, and
//! never reads or writes through it, so every touch of the future on the target is this
//! file's own code, in `run`, which completes the call and wakes the task.
//!
//! Who touches what, and the order of every atomic:
//!
//! - the poller (the thread that polls, waits or drops the future) queues the call once, then
//!   reads `out` only after it acquired `done`, and lets the future go (its memory may be
//!   freed or reused) only after it acquired `released`;
//! - the target's `run` takes `f` (written before the call was queued: libxcall's queueing
//!   orders it), writes `out`, releases `done`, takes the waker, and releases `released`: its
//!   last touch of the future; after it, only the futex wake of that address, which reads no
//!   memory, and the waker it took;
//! - `runner` names the thread running the closure, and `gone` points to a flag on that
//!   thread's stack: both are read as such only by that same thread (a drop inside the
//!   closure), so relaxed order suffices: program order is the only order needed.

use crate::call::{drop_contained, drop_payload, SPAWN_PANICS};
use crate::error::{check_on, Error, ErrorKind};
use crate::waker::AtomicWaker;
use std::cell::{Cell, UnsafeCell};
use std::ffi::{c_int, c_void};
use std::future::Future;
use std::marker::PhantomPinned;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::thread;

/// The result of [`Handle::call_on_async`](crate::Handle::call_on_async): a future of the
/// closure's result, which the target CPU completes, waking the task's [`Waker`](std::task::Waker)
/// from there.
///
/// **No allocation.** The closure, its result and the completion's state are fields of the
/// future, which libxcall queues as a nowait call: it keeps a pointer to the future in the
/// sender's ring and never touches the future itself; the call's function, on the target,
/// runs the closure, stores the result and wakes the task. A call costs no allocation of its
/// own, wherever the future lives (on a stack with [`std::pin::pin!`], in an executor's task).
///
/// **Queued at its first poll.** The target reaches the future by its address while the call
/// is in flight, so the future is `!Unpin`, and the call is queued when the future is first
/// polled, pinned. A future dropped before its first poll runs nothing. A refused call (a CPU
/// offline or absent, the runtime down) is the future's output: `Err`, with the CPU.
///
/// **Dropping it in flight waits.** Dropped while the call is in flight, the future waits
/// until the call has completed (its closure ran, and the target let go of the future), so
/// that nothing the target writes outlives it; on a worker (inside a call, or on an attached
/// thread) it serves its own CPU's calls meanwhile, as a waiting call does, so two CPUs
/// dropping each other's futures do not deadlock. Two places where such a wait could never
/// end are settled otherwise:
///
/// - *Dropped by its own closure* (on the target, the future taken from where it was kept):
///   the call completes only once this closure returned, so the drop does not wait; it
///   detaches the future: the drop returns at once, the closure runs on to its end, and its
///   result (or its panic's payload, counted by [`spawn_panics`](crate::spawn_panics)) is
///   dropped on the target, which touches the future no more.
/// - *Dropped on an attached thread inside its announced sleep* (between a
///   [`sleep_begin`](crate::Attached::sleep_begin) that said sleep and its
///   [`sleep_end`](crate::Attached::sleep_end)), where libxcall runs none of the CPU's calls
///   and the call may need this very thread: the drop ends the sleep, serves the CPU's calls
///   until its own call completed, and then announces the sleep again (serving what came
///   meanwhile), so that the loop's wait is kicked by the next call as before. Inside a call
///   that runs within the sleep (an inline call to the thread's own CPU) libxcall refuses to
///   announce it again: the thread then stays awake, and its loop's wait is not kicked;
///   drop such a future after `sleep_end` instead.
///
/// A drop in a signal handler that interrupted libxcall on a worker serves nothing (libxcall
/// refuses), and waits for ever if the call needs that worker: as any drop that frees memory,
/// keep it out of signal handlers.
///
/// **Any executor.** Nothing here depends on one: [`CallFuture::wait`] blocks a plain thread
/// on it (no waker, no allocation), and any executor polls it, for example `pollster`, the
/// smallest, which blocks on one future (`examples/pollster_call.rs`):
///
/// ```
#[doc = include_str!("../examples/pollster_call.rs")]
/// ```
///
/// A panic of the closure is caught on the target and resumed by the poll that finds it.
/// Polling again after the future returned `Ready` panics, as for most futures.
///
/// The future is ready once the closure returned and its result is stored: libxcall's own
/// bookkeeping of the call (its count in [`Stats`](crate::Stats)`::calls`, its trace event)
/// comes just after, on the target, before the CPU's next call; a waiting call to the CPU
/// returns once it is done.
#[must_use = "a future does nothing until polled: the call is queued at its first poll"]
pub struct CallFuture<F, R> {
    cpu: usize,
    /// The poller's own: NEW, then QUEUED, then FINISHED (output taken or refused).
    stage: AtomicU8,
    /// The poller's own: libxcall accepted the call (the target will release the future).
    accepted: AtomicBool,
    /// The target's: the result is in `out` (release; the poller acquires).
    done: AtomicBool,
    /// The target's last touch of the future: 1 once it will touch it no more (a futex word:
    /// the dropper and `wait` sleep on it).
    released: AtomicU32,
    /// The thread running the closure now ([`thread_token`]), else 0.
    runner: AtomicUsize,
    /// While `runner` is set: the running call's flag, on its stack, that the future is gone.
    gone: UnsafeCell<*const Cell<bool>>,
    waker: AtomicWaker,
    f: UnsafeCell<Option<F>>,
    out: UnsafeCell<Option<thread::Result<R>>>,
    _pinned: PhantomPinned,
}

const NEW: u8 = 0;
const QUEUED: u8 = 1;
const FINISHED: u8 = 2;

// SAFETY: the future hands F to the target CPU's thread and R back (both Send); everything
// else it shares with that thread is atomic, or handed over by the release/acquire of `done`
// (the result) and by queueing the call (the closure); `gone` is read and written by the
// running thread alone.
unsafe impl<F: Send, R: Send> Send for CallFuture<F, R> {}
// SAFETY: through &CallFuture only atomics are read (is_finished, cpu); poll needs Pin<&mut>.
unsafe impl<F: Send, R: Send> Sync for CallFuture<F, R> {}

thread_local! {
    /// Its address names the thread ([`thread_token`]).
    static TOKEN: u8 = const { 0 };
}

/// A number of the calling thread, unique among live threads, never 0: the address of a
/// thread-local (const-initialised, without a destructor: always there).
fn thread_token() -> usize {
    TOKEN.with(|t| t as *const u8 as usize)
}

impl<F, R> CallFuture<F, R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    pub(crate) fn new(cpu: usize, f: F) -> CallFuture<F, R> {
        CallFuture {
            cpu,
            stage: AtomicU8::new(NEW),
            accepted: AtomicBool::new(false),
            done: AtomicBool::new(false),
            released: AtomicU32::new(0),
            runner: AtomicUsize::new(0),
            gone: UnsafeCell::new(ptr::null()),
            waker: AtomicWaker::new(),
            f: UnsafeCell::new(Some(f)),
            out: UnsafeCell::new(None),
            _pinned: PhantomPinned,
        }
    }

    /// Queue the call, pinned at last. Err: refused, and the closure dropped.
    fn queue(self: Pin<&mut Self>) -> Result<(), Error> {
        let me: &Self = &self;
        // relaxed: the poller's own
        me.stage.store(QUEUED, Ordering::Relaxed);
        let r = match c_int::try_from(me.cpu) {
            // SAFETY: the future is pinned, and its Drop waits until the target released it
            // (or the target is told it is gone): it stays where it is for as long as run
            // may reach it. libxcall only passes the pointer back to run. F and R are Send +
            // 'static.
            Ok(c) => check_on(
                unsafe { xcall_sys::xc_call_single(c, Some(run::<F, R>), (me as *const Self).cast_mut().cast(), 0) },
                me.cpu,
            ),
            Err(_) => Err(Error::from(ErrorKind::Unavailable).on_cpu(me.cpu)),
        };
        if let Err(e) = r {
            me.stage.store(FINISHED, Ordering::Relaxed);
            // SAFETY: refused: the call never ran and never will (xcall.h), so the closure
            // is still ours alone.
            drop(unsafe { (*me.f.get()).take() });
            return Err(e);
        }
        // relaxed: the poller's own
        me.accepted.store(true, Ordering::Relaxed);
        Ok(())
    }
}

impl<F, R> CallFuture<F, R> {
    /// Whether the call has run (its result is waiting for the next poll), or was refused.
    /// `false` before the first poll.
    pub fn is_finished(&self) -> bool {
        self.done.load(Ordering::Acquire) || self.stage.load(Ordering::Relaxed) == FINISHED
    }

    /// The CPU the call goes to.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// The result, once `done`. The poller's side.
    fn take(&self) -> Result<R, Error> {
        self.stage.store(FINISHED, Ordering::Relaxed);
        // SAFETY: done was acquired: the target wrote out before it and touches it no more.
        match unsafe { (*self.out.get()).take() } {
            Some(Ok(r)) => Ok(r),
            Some(Err(p)) => resume_unwind(p),
            None => unreachable!("xcall::CallFuture: done without a result"),
        }
    }

    /// Wait until the target released the future: serving this CPU's calls on a worker,
    /// else sleeping on the futex word. False where no wait can end: the closure runs
    /// further up this very thread; the target is then told that the future is gone, and
    /// touches it no more once the closure returned.
    fn settle(&self) -> bool {
        let me = thread_token();
        let mut spins = 0u32;
        let mut slept = false;
        let released = loop {
            // acquire: the target's last touch of the future happens before what follows
            if self.released.load(Ordering::Acquire) != 0 {
                break true;
            }
            // relaxed: equal only where this thread itself stored it (see the file's head)
            if self.runner.load(Ordering::Relaxed) == me {
                // SAFETY: runner is this thread: run stored gone before it, on this thread,
                // and its frame is below us on this stack, alive.
                unsafe { (**self.gone.get()).set(true) };
                break false;
            }
            // SAFETY: no argument; it only reads the calling thread's state.
            if unsafe { xcall_sys::xc_this_cpu() } >= 0 {
                // a worker: the call may wait for one of ours
                // SAFETY: no argument; libxcall checks where it is called from.
                match unsafe { xcall_sys::xc_poll() } {
                    r if r == -libc::EDEADLK && !slept => {
                        // an attached thread's announced sleep: libxcall serves nothing
                        // there. End it, serve, and announce it again once released.
                        // SAFETY: no argument; on an attached thread it only ends the sleep.
                        slept = unsafe { xcall_sys::xc_worker_sleep_end() } == 0;
                    }
                    _ => thread::yield_now(),
                }
            } else if spins < 64 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                futex_wait(&self.released, 0);
            }
        };
        if slept {
            sleep_again();
        }
        released
    }
}

/// Announce again the sleep that a wait ended to serve its CPU, as the loop had announced it:
/// until libxcall says sleep, serving what came meanwhile. An error (inside a call, where
/// libxcall refuses an announcement) leaves the thread awake.
fn sleep_again() {
    // SAFETY: no argument; on the attached thread whose sleep was ended, or refused.
    while unsafe { xcall_sys::xc_worker_sleep_begin() } == 1 {
        // something came: the sleep was not announced; end this try (as after every
        // sleep_begin), and run it
        // SAFETY: as above.
        unsafe {
            xcall_sys::xc_worker_sleep_end();
            xcall_sys::xc_poll();
        }
    }
}

impl<F, R> CallFuture<F, R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    /// Queue the call (if it was not yet) and block the calling thread until it has run;
    /// return its result. Allocates nothing: the thread sleeps on a futex word in the
    /// future, which the target wakes. On a worker it serves its CPU's calls meanwhile (on
    /// an attached thread inside its announced sleep too, as a drop does).
    ///
    /// # Errors
    /// As [`Handle::call_on_async`](crate::Handle::call_on_async): the call was refused.
    ///
    /// # Panics
    /// Resumes a panic of the closure.
    pub fn wait(self) -> Result<R, Error> {
        let mut me = std::pin::pin!(self);
        if me.stage.load(Ordering::Relaxed) == NEW {
            me.as_mut().queue()?;
        }
        if !me.settle() {
            // only a closure that runs on this thread could make it so: not one this
            // future, pinned here, can reach
            return Err(Error::from(ErrorKind::WouldDeadlock).on_cpu(me.cpu));
        }
        debug_assert!(me.done.load(Ordering::Acquire));
        me.take()
    }
}

impl<F, R> Future for CallFuture<F, R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    type Output = Result<R, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<R, Error>> {
        match self.stage.load(Ordering::Relaxed) {
            NEW => {
                // registered before the call is queued: a target that completes it at once
                // (inline, on this worker's own CPU) finds the waker
                self.waker.register(cx.waker());
                if let Err(e) = self.as_mut().queue() {
                    return Poll::Ready(Err(e));
                }
            }
            FINISHED => panic!("xcall::CallFuture polled after it returned Ready"),
            _ => {}
        }
        if self.done.load(Ordering::Acquire) {
            return Poll::Ready(self.take());
        }
        self.waker.register(cx.waker());
        // again: a completion between the look above and the registration took no waker
        if self.done.load(Ordering::Acquire) {
            return Poll::Ready(self.take());
        }
        Poll::Pending
    }
}

impl<F, R> Drop for CallFuture<F, R> {
    fn drop(&mut self) {
        // accepted by libxcall: the target touches the future until it releases it
        if self.accepted.load(Ordering::Relaxed) {
            self.settle();
        }
    }
}

/// The call's function, on the target: the closure run, its panic caught, the result stored,
/// the future released, the task woken. No unwind leaves it.
unsafe extern "C" fn run<F: FnOnce() -> R, R>(arg: *mut c_void) {
    let me = arg as *const CallFuture<F, R>;
    let gone = Cell::new(false);
    // SAFETY: arg is the pinned CallFuture that queued this call, alive until we release it
    // (its Drop waits for that) or until its drop on this thread sets `gone`; f, out and
    // gone are ours until then (the poller wrote f before queueing the call).
    let f = unsafe {
        *(*me).gone.get() = &gone;
        // relaxed: read as ours by this thread alone
        (*me).runner.store(thread_token(), Ordering::Relaxed);
        (*(*me).f.get()).take()
    };
    let r = f.map(|f| catch_unwind(AssertUnwindSafe(f)));
    if gone.get() {
        // dropped by its own closure: the future's memory may be gone; what it would have
        // held is dropped here, where no unwind may leave
        match r {
            Some(Ok(v)) => {
                drop_contained(v);
            }
            Some(Err(p)) => {
                SPAWN_PANICS.fetch_add(1, Ordering::Relaxed);
                drop_payload(p);
            }
            None => {}
        }
        return;
    }
    // SAFETY: not gone, and not released yet: the future is alive, and out is ours.
    let (waker, released) = unsafe {
        (*me).runner.store(0, Ordering::Relaxed);
        *(*me).out.get() = r;
        // release: out is written before done
        (*me).done.store(true, Ordering::Release);
        let waker = (*me).waker.take();
        let released: *const AtomicU32 = &(*me).released;
        // release: every touch of the future above happens before the poller lets it go
        (*released).store(1, Ordering::Release);
        (waker, released)
    };
    // the future may be gone from here: a futex wake of its address is harmless then
    futex_wake(released);
    if let Some(w) = waker {
        // a waker's panic must not unwind into libxcall
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| w.wake())) {
            SPAWN_PANICS.fetch_add(1, Ordering::Relaxed);
            drop_payload(p);
        }
    }
}

fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: a private futex wait on a live word of ours; it returns on a wake, a change
    // of the word, a signal or spuriously, and the callers look again.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ptr::null::<libc::timespec>(),
        );
    }
}

fn futex_wake(word: *const AtomicU32) {
    // SAFETY: FUTEX_WAKE only hashes the address: the kernel reads no memory there, so the
    // word may already be freed (as after any unlock that wakes).
    unsafe {
        libc::syscall(libc::SYS_futex, word, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}

impl<F, R> std::fmt::Debug for CallFuture<F, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallFuture")
            .field("cpu", &self.cpu)
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}
