//! A call as a future, with no allocation: the descriptor, the closure and the result live in
//! the future itself, and libxcall's completion callback (`xc_call.on_done`) wakes the task.

use crate::error::{check_on, Error};
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::future::Future;
use std::marker::PhantomPinned;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::thread;

/// The result of [`Handle::call_on_async`](crate::Handle::call_on_async): a future of the
/// closure's result, which the target CPU completes, waking the task's [`Waker`] from there.
///
/// **No allocation.** The `xc_call` descriptor, the closure and its result are fields of the
/// future; libxcall's completion callback (`xc_call.on_done`, run on the target after
/// libxcall's last write to the descriptor) wakes the task. A call costs no allocation of
/// its own, wherever the future lives (on a stack with [`std::pin::pin!`], in an executor's
/// task).
///
/// **Queued at its first poll.** The descriptor must not move while libxcall holds it, so the
/// future is `!Unpin`, and the call is queued when the future is first polled, pinned. A
/// future dropped before its first poll runs nothing. A refused call (a CPU offline or
/// absent, the runtime down) is the future's output: `Err`, with the CPU.
///
/// **Dropping it waits.** Dropped while the call is in flight, the future waits until the
/// call has completed (its closure ran, its completion callback returned), so that nothing
/// libxcall or the target writes outlives it; on a worker (inside a call or an attached
/// thread's loop) it serves its own CPU's calls meanwhile, as a waiting call does, so two
/// CPUs dropping each other's futures do not deadlock.
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
#[must_use = "a future does nothing until polled: the call is queued at its first poll"]
pub struct CallFuture<F, R> {
    /// First: libxcall's while the call is in flight (64-byte aligned).
    call: UnsafeCell<xcall_sys::xc_call>,
    cpu: usize,
    /// The poller's own: NEW, then QUEUED, then FINISHED (output taken or refused).
    stage: AtomicU8,
    /// The poller's own: libxcall accepted the call (the target will release the future).
    accepted: AtomicBool,
    /// The target's: the result is in `out` (release; the poller acquires).
    done: AtomicBool,
    /// The target's last touch of the future: 1 once its callback will touch it no more
    /// (a futex word: the dropper and `wait` sleep on it).
    released: AtomicU32,
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
// (the result) and by queueing the call (the closure).
unsafe impl<F: Send, R: Send> Send for CallFuture<F, R> {}
// SAFETY: through &CallFuture only atomics are read (is_finished); poll needs Pin<&mut>.
unsafe impl<F: Send, R: Send> Sync for CallFuture<F, R> {}

impl<F, R> CallFuture<F, R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    pub(crate) fn new(cpu: usize, f: F) -> CallFuture<F, R> {
        CallFuture {
            // SAFETY: xc_call is plain data, all zero its documented initial state.
            call: UnsafeCell::new(unsafe { std::mem::zeroed() }),
            cpu,
            stage: AtomicU8::new(NEW),
            accepted: AtomicBool::new(false),
            done: AtomicBool::new(false),
            released: AtomicU32::new(0),
            waker: AtomicWaker::new(),
            f: UnsafeCell::new(Some(f)),
            out: UnsafeCell::new(None),
            _pinned: PhantomPinned,
        }
    }

    /// Queue the call, pinned at last. Err: refused, and the closure dropped.
    fn queue(self: Pin<&mut Self>) -> Result<(), Error> {
        let me: &Self = &self;
        let Ok(c) = c_int::try_from(me.cpu) else {
            me.stage.store(FINISHED, Ordering::Relaxed);
            // SAFETY: not queued: the closure is still ours alone.
            drop(unsafe { (*me.f.get()).take() });
            return Err(Error::from(crate::ErrorKind::Unavailable).on_cpu(me.cpu));
        };
        let this = (me as *const Self).cast_mut().cast::<c_void>();
        // SAFETY: not queued yet: the descriptor is ours alone.
        let call = unsafe { &mut *me.call.get() };
        call.fn_ = Some(run::<F, R>);
        call.arg = this;
        call.on_done.fn_ = Some(completed::<F, R>);
        call.on_done.arg = this;
        me.stage.store(QUEUED, Ordering::Relaxed);
        // SAFETY: the future is pinned, and its Drop waits until the call released it: the
        // descriptor and the closure stay where they are for as long as libxcall and the
        // target use them. F and R are Send + 'static.
        let r = check_on(unsafe { xcall_sys::xc_call_async(c, me.call.get()) }, me.cpu);
        if let Err(e) = r {
            me.stage.store(FINISHED, Ordering::Relaxed);
            // SAFETY: refused: libxcall never ran the call, and never calls on_done.
            drop(unsafe { (*me.f.get()).take() });
            return Err(e);
        }
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
    /// else sleeping on the futex word.
    fn wait_released(&self) {
        let mut spins = 0u32;
        while self.released.load(Ordering::Acquire) == 0 {
            // SAFETY: no argument; it only reads the calling thread's state.
            if unsafe { xcall_sys::xc_this_cpu() } >= 0 {
                // a worker: the call may wait for one of ours (xc_poll refuses harmlessly
                // where it may not run them)
                // SAFETY: no argument; libxcall checks where it is called from.
                unsafe { xcall_sys::xc_poll() };
                thread::yield_now();
            } else if spins < 64 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                futex_wait(&self.released, 0);
            }
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
    /// future, which the target wakes. On a worker it serves its CPU's calls meanwhile.
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
        me.wait_released();
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
        // accepted by libxcall: the target touches the future until its callback releases it
        if self.accepted.load(Ordering::Relaxed) {
            self.wait_released();
        }
    }
}

/// The call's function, on the target: the closure, its panic caught, the result stored.
unsafe extern "C" fn run<F: FnOnce() -> R, R>(arg: *mut c_void) {
    // SAFETY: arg is the pinned CallFuture that queued this call; until its callback
    // releases it, the future waits in its Drop; the closure and out are the target's now.
    let me = unsafe { &*(arg as *const CallFuture<F, R>) };
    // SAFETY: as above: the poller touches f and out only before queueing and after done.
    if let Some(f) = unsafe { (*me.f.get()).take() } {
        let r = catch_unwind(AssertUnwindSafe(f));
        // SAFETY: as above.
        unsafe { *me.out.get() = Some(r) };
    }
}

/// The completion callback, on the target, after libxcall's last write to the descriptor:
/// the result published, the waker taken, the future released (the last touch of it), then
/// the waker woken, and the dropper's or waiter's futex.
unsafe extern "C" fn completed<F, R>(arg: *mut c_void) {
    let me = arg as *const CallFuture<F, R>;
    // SAFETY: the future waits for `released` before it goes: it is alive up to that store.
    let (waker, released) = unsafe {
        (*me).done.store(true, Ordering::Release);
        let waker = (*me).waker.take();
        let released: *const AtomicU32 = &(*me).released;
        (*released).store(1, Ordering::Release);
        (waker, released)
    };
    // the future may be gone from here: a futex wake of its address is harmless then
    futex_wake(released);
    if let Some(w) = waker {
        // a waker's panic must not unwind into libxcall, nor its payload's drop
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| w.wake())) {
            crate::call::SPAWN_PANICS.fetch_add(1, Ordering::Relaxed);
            crate::call::drop_payload(p);
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

/// One task's waker, registered by the poller and taken by the target, lock-free on both
/// sides (the protocol of the `atomic-waker` crate): a registration that meets a take wakes
/// itself, so no completion goes unseen.
struct AtomicWaker {
    state: AtomicU8,
    waker: UnsafeCell<Option<Waker>>,
}

const WAITING: u8 = 0;
const REGISTERING: u8 = 1;
const WAKING: u8 = 2;

impl AtomicWaker {
    const fn new() -> AtomicWaker {
        AtomicWaker { state: AtomicU8::new(WAITING), waker: UnsafeCell::new(None) }
    }

    /// The poller's side (one poller at a time: poll takes Pin<&mut>).
    fn register(&self, w: &Waker) {
        match self.state.compare_exchange(WAITING, REGISTERING, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => {
                // SAFETY: REGISTERING: the taker keeps off the slot.
                let slot = unsafe { &mut *self.waker.get() };
                match slot {
                    Some(old) if old.will_wake(w) => {}
                    _ => *slot = Some(w.clone()),
                }
                if self
                    .state
                    .compare_exchange(REGISTERING, WAITING, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    // a take came meanwhile and left it to us: wake now
                    let w = slot.take();
                    self.state.swap(WAITING, Ordering::AcqRel);
                    if let Some(w) = w {
                        w.wake();
                    }
                }
            }
            // a take under way: it may miss this waker, so wake it ourselves
            Err(_) => w.wake_by_ref(),
        }
    }

    /// The target's side: the waker, if one is registered and not being registered.
    fn take(&self) -> Option<Waker> {
        match self.state.fetch_or(WAKING, Ordering::AcqRel) {
            WAITING => {
                // SAFETY: WAKING set from WAITING: the registrar keeps off the slot.
                let w = unsafe { (*self.waker.get()).take() };
                self.state.fetch_and(!WAKING, Ordering::Release);
                w
            }
            _ => None,
        }
    }
}

/// A waker that does nothing, for polls whose thread sleeps on the futex instead.
#[allow(dead_code)]
pub(crate) fn noop_waker() -> Waker {
    const VTABLE: RawWakerVTable = RawWakerVTable::new(|_| RAW, |_| {}, |_| {}, |_| {});
    const RAW: RawWaker = RawWaker::new(ptr::null(), &VTABLE);
    // SAFETY: every function of the vtable ignores its data pointer.
    unsafe { Waker::from_raw(RAW) }
}

impl<F, R> std::fmt::Debug for CallFuture<F, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallFuture")
            .field("cpu", &self.cpu)
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}
