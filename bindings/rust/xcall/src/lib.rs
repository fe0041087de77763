//! Cross-CPU function calls in user space: run a closure on CPU N, on several, on all, with
//! the result (or the panic) carried back; built on libxcall, which this crate compiles from
//! source.
//!
//! A [`Runtime`] runs one worker thread pinned to each CPU. A call queues a closure to a CPU's
//! worker through a ring of the calling thread's own, and wakes the worker only when it
//! sleeps: a polling worker gets its calls with no system call at all.
//!
//! Every kind of call, once (`examples/in_brief.rs`, the README's first example):
//!
//! ```
#![doc = include_str!("../examples/in_brief.rs")]
//! ```
//!
//! # Who runs what where
//!
//! - [`Handle::call_on`] and [`Handle::call_on_many`] wait: their closures need only be
//!   `Send` (and `Sync` for many CPUs), and may borrow from the caller's stack, since the call
//!   returns only after the closure ran (or refuses it before queueing it).
//! - [`Handle::spawn_on`] returns before the closure runs: its closure is `Send + 'static`,
//!   boxed, and dropped on the target after it ran.
//! - [`Handle::call_on_async`] returns a [`CallFuture`] that holds the closure, the descriptor
//!   and the result itself, with no allocation; the call is queued at its first poll and the
//!   target wakes the task. Any executor polls it (the docs show `pollster`), or
//!   [`CallFuture::wait`] blocks a thread on it; dropping it in flight waits for the call
//!   (where no wait could end, see [`CallFuture`]: it lets the call finish alone, or serves it).
//! - A panic in a waiting call's closure is caught on the target and resumed in the caller. A
//!   panic in a `spawn_on` closure is reported by the panic hook, as on any thread, and
//!   contained: the worker goes on, the closure's captures are dropped, and
//!   [`spawn_panics`] counts it. No unwind ever crosses into libxcall's C code, not even
//!   from a panic payload whose own drop panics.
//! - No call of this crate uses `XC_URGENT`: a closure never runs inside a signal handler.
//!
//! # Threads of your own: attached workers
//!
//! A thread-per-core program makes its own thread the worker of its CPU with
//! [`Runtime::attach`], and runs the calls inside its event loop ([`Attached`]).
//!
//! # Per-CPU state
//!
//! [`Sharded<T>`] keeps one instance of `T` per CPU, built, used and dropped on its own CPU,
//! reached by calls with exclusive `&mut T` access and no lock; a nested access from a call
//! that comes back into the CPU's thread gets [`ErrorKind::Borrowed`] (see
//! [`Sharded`](Sharded#nesting-one-mut-t-per-cpu-at-a-time)).
//!
//! # Errors
//!
//! Every call returns [`Error`]: its [`ErrorKind`], one per errno of `xcall.h`, and the CPU
//! the call named, where it named one. Calls after the runtime shut down, and calls to a CPU
//! that is not one of the runtime's (whatever its number, `usize::MAX` included), return
//! [`ErrorKind::Unavailable`], as libxcall's `ENXIO`. Bad input never panics.
//!
//! # Examples
//!
//! Each is a file of `examples/` (clippy lints it, `cargo test` runs it, the README shows
//! it whole): `in_brief` above, `pollster_call` at [`CallFuture`], `sharded_counters` at
//! [`Sharded`], and `epoll_shards`, a
//! thread-per-core server of attached threads (`cargo run --example epoll_shards`).
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod attach;
mod borrow;
mod call;
mod cpuset;
mod error;
mod future;
mod post;
mod runtime;
mod sharded;
mod stats;
mod waker;

pub use attach::Attached;
pub use cpuset::CpuSet;
pub use error::{Error, ErrorKind};
pub use future::CallFuture;
pub use post::Message;
pub use runtime::{Builder, Poll, Runtime};
pub use sharded::{ShardFuture, Sharded};
pub use stats::Stats;

use call::{Many, Slot};
use error::{check, check_on};
use std::ffi::{c_int, c_void, CString};
use std::panic::resume_unwind;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// Calls into the process's runtime. `Copy`, `Send` and `Sync`: copy it into the closures and
/// threads that make calls. It does not keep the runtime up: once the [`Runtime`] is dropped,
/// its calls return [`ErrorKind::Unavailable`].
#[derive(Debug, Clone, Copy)]
pub struct Handle {
    _private: (),
}

static HANDLE: Handle = Handle { _private: () };

const WAIT: u32 = xcall_sys::XC_WAIT;

/// A CPU number as libxcall takes it. One past `c_int` is no CPU of the runtime's, as any
/// other outside its set: `Unavailable`, as libxcall answers (see [`ErrorKind`]).
pub(crate) fn cpu_arg(cpu: usize) -> Result<c_int, Error> {
    c_int::try_from(cpu).map_err(|_| Error::from(ErrorKind::Unavailable).on_cpu(cpu))
}

impl Handle {
    pub(crate) fn new() -> Handle {
        HANDLE
    }

    /// Run `f` on `cpu` and return its result, once it ran. On the calling worker's own CPU
    /// it runs at once, inline. Calls from one thread to one CPU run in the order made.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] for a CPU absent or offline, or the runtime down;
    /// [`ErrorKind::OutOfMemory`] for no memory for the thread's ring to the CPU;
    /// [`ErrorKind::WouldDeadlock`] from an attached thread between `sleep_begin` and
    /// `sleep_end`. The closure did not run then, and is dropped here.
    ///
    /// # Panics
    /// Resumes a panic of `f`, caught on the target.
    pub fn call_on<F, R>(&self, cpu: usize, f: F) -> Result<R, Error>
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        let c = cpu_arg(cpu)?;
        let mut slot = Slot { f: Some(f), out: None };
        // SAFETY: with XC_WAIT the call returns after run_slot ran on the target, or refuses
        // it unqueued: slot outlives every use of the pointer. F and R are Send.
        let r = unsafe {
            xcall_sys::xc_call_single(c, Some(call::run_slot::<F, R>), (&mut slot as *mut Slot<F, R>).cast(), WAIT)
        };
        check_on(r, cpu)?;
        match slot.out {
            Some(Ok(v)) => Ok(v),
            Some(Err(p)) => resume_unwind(p),
            None => Err(Error::from(ErrorKind::Io)),
        }
    }

    /// Queue `f` to run on `cpu` and return at once (a nowait call). The closure is boxed,
    /// runs once on the target and is freed there. A panic in it is contained there
    /// (see [`spawn_panics`]). Calls from one thread to one CPU run in the order made: a
    /// later waiting call to the same CPU returns after `f` ran.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] for a CPU absent or offline, or the runtime down;
    /// [`ErrorKind::OutOfMemory`]. The closure did not run then, and is dropped here.
    pub fn spawn_on<F>(&self, cpu: usize, f: F) -> Result<(), Error>
    where
        F: FnOnce() + Send + 'static,
    {
        let c = cpu_arg(cpu)?;
        let arg = Box::into_raw(Box::new(f));
        // SAFETY: run_boxed::<F> takes the box back, once, on the target; F is Send + 'static.
        let r = unsafe { xcall_sys::xc_call_single(c, Some(call::run_boxed::<F>), arg.cast(), 0) };
        if let Err(e) = check_on(r, cpu) {
            // SAFETY: refused: the call was never queued, so the box is still ours.
            drop(unsafe { Box::from_raw(arg) });
            return Err(e);
        }
        Ok(())
    }

    /// A future of `f`'s result on `cpu`, which the target completes, waking the task from
    /// there; the call is queued at the future's first poll. No allocation: the descriptor,
    /// the closure and the result are in the future. See [`CallFuture`].
    ///
    /// ```
    /// # let rt = xcall::Runtime::new()?;
    /// # let cpu = rt.online_cpus()?.iter().next().unwrap();
    /// let answer = rt.call_on_async(cpu, || 6 * 7).wait()?; // or .await in an async fn
    /// assert_eq!(answer, 42);
    /// # Ok::<(), xcall::Error>(())
    /// ```
    ///
    /// # Errors
    /// The future's output: [`ErrorKind::Unavailable`] for a CPU absent or offline, or the
    /// runtime down; [`ErrorKind::OutOfMemory`]; the closure did not run then, and was
    /// dropped.
    pub fn call_on_async<F, R>(&self, cpu: usize, f: F) -> CallFuture<F, R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        CallFuture::new(cpu, f)
    }

    /// Run `f` on every online CPU of `cpus`, the calling worker's own included, as one
    /// `xc_call_many`, and return each CPU's result, by CPU number. Offline CPUs are skipped.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for an empty set; [`ErrorKind::Unavailable`] for a CPU outside
    /// the runtime's set, or the runtime down; [`ErrorKind::OutOfMemory`].
    ///
    /// # Panics
    /// Resumes a panic of `f` (the first CPU's, by number), after every CPU ran it.
    pub fn call_on_many<F, R>(&self, cpus: &CpuSet, f: F) -> Result<Vec<(usize, R)>, Error>
    where
        F: Fn() -> R + Sync,
        R: Send,
    {
        self.many(Some(cpus), f)
    }

    /// Run `f` on every online CPU, the calling worker's own included, as one `xc_call_all`,
    /// and return each CPU's result, by CPU number.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] when the runtime is down; [`ErrorKind::OutOfMemory`].
    ///
    /// # Panics
    /// As [`Handle::call_on_many`].
    pub fn call_on_all<F, R>(&self, f: F) -> Result<Vec<(usize, R)>, Error>
    where
        F: Fn() -> R + Sync,
        R: Send,
    {
        self.many(None, f)
    }

    fn many<F, R>(&self, cpus: Option<&CpuSet>, f: F) -> Result<Vec<(usize, R)>, Error>
    where
        F: Fn() -> R + Sync,
        R: Send,
    {
        let many = Many { f: &f, out: Mutex::new(Vec::new()) };
        let arg = (&many as *const Many<'_, F, R>).cast_mut().cast::<c_void>();
        let flags = WAIT | xcall_sys::XC_RUN_LOCAL;
        let func = Some(call::run_many::<F, R> as unsafe extern "C" fn(*mut c_void));
        // SAFETY: with XC_WAIT the call returns after every target ran run_many, which only
        // shares many (F: Sync, R: Send); the set is a cpu_set_t.
        let r = unsafe {
            match cpus {
                Some(set) => xcall_sys::xc_call_many(set.as_raw(), func, arg, flags),
                None => xcall_sys::xc_call_all(func, arg, flags),
            }
        };
        check(r)?;
        let mut out = many.out.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        out.sort_by_key(|(cpu, _)| *cpu);
        let mut results = Vec::with_capacity(out.len());
        let mut panic = None;
        for (cpu, r) in out {
            match r {
                Ok(v) => results.push((cpu, v)),
                // the first CPU's payload is resumed; another's dropped, as the first waits
                Err(p) if panic.is_none() => panic = Some(p),
                Err(p) => call::drop_payload(p),
            }
        }
        if let Some(p) = panic {
            resume_unwind(p);
        }
        Ok(results)
    }

    /// Run `f` on one online CPU of `cpus`, the nearest: the calling worker's own, then one
    /// sharing its last-level cache, then one on its NUMA node, then any. Returns the CPU
    /// and the result.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for an empty set; [`ErrorKind::Unavailable`] when no CPU of the
    /// set is online; as [`Handle::call_on`].
    ///
    /// # Panics
    /// Resumes a panic of `f`.
    pub fn call_on_any<F, R>(&self, cpus: &CpuSet, f: F) -> Result<(usize, R), Error>
    where
        F: FnOnce() -> R + Send,
        R: Send,
    {
        let mut slot = Slot { f: Some(f), out: None };
        // SAFETY: as call_on: the waiting call returns after run_slot ran, or refuses it.
        let r = unsafe {
            xcall_sys::xc_call_any(
                cpus.as_raw(),
                Some(call::run_slot::<F, R>),
                (&mut slot as *mut Slot<F, R>).cast(),
                WAIT,
            )
        };
        let cpu = check(r)? as usize;
        match slot.out {
            Some(Ok(v)) => Ok((cpu, v)),
            Some(Err(p)) => resume_unwind(p),
            None => Err(Error::from(ErrorKind::Io)),
        }
    }

    /// The CPUs whose workers are online now.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] when the runtime is down.
    pub fn online_cpus(&self) -> Result<CpuSet, Error> {
        let mut set = CpuSet::new();
        // SAFETY: the set is a cpu_set_t.
        check(unsafe { xcall_sys::xc_online_mask(set.as_raw_mut()) })?;
        Ok(set)
    }

    /// One past the highest CPU id of the runtime's set: the length of a vector indexed by
    /// CPU id, for per-CPU data (`xc_cpu_max`). Fixed while the runtime is up.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] when the runtime is down.
    pub fn cpu_max(&self) -> Result<usize, Error> {
        // SAFETY: no argument; it only reads the runtime's set.
        let n = check(unsafe { xcall_sys::xc_cpu_max() })?;
        Ok(n as usize)
    }

    /// Stop new calls to `cpu` (they get [`ErrorKind::Unavailable`]), run what is queued there,
    /// then park its worker. Blocks until done.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] when it is offline already; [`ErrorKind::Unavailable`] for a CPU
    /// outside the set, or the runtime down; [`ErrorKind::WouldDeadlock`] from the CPU's own
    /// worker, or from a call on a CPU that the CPU's worker is waiting on.
    pub fn cpu_offline(&self, cpu: usize) -> Result<(), Error> {
        let c = cpu_arg(cpu)?;
        // SAFETY: no pointer is passed.
        check_on(unsafe { xcall_sys::xc_cpu_offline(c) }, cpu).map(|_| ())
    }

    /// Bring back a CPU taken offline by [`Handle::cpu_offline`].
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] when it is online, or offline for another reason (the OS,
    /// no thread attached); [`ErrorKind::Unavailable`] for a CPU the OS has taken or outside the
    /// set, or the runtime down.
    pub fn cpu_online(&self, cpu: usize) -> Result<(), Error> {
        let c = cpu_arg(cpu)?;
        // SAFETY: no pointer is passed.
        check_on(unsafe { xcall_sys::xc_cpu_online(c) }, cpu).map(|_| ())
    }

    /// The counters of one CPU.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] for a CPU outside the set, or the runtime down.
    pub fn stats(&self, cpu: usize) -> Result<Stats, Error> {
        self.stats_of(cpu_arg(cpu)?).map_err(|e| e.on_cpu(cpu))
    }

    /// The counters summed over every CPU.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] when the runtime is down.
    pub fn total_stats(&self) -> Result<Stats, Error> {
        self.stats_of(-1)
    }

    fn stats_of(&self, cpu: c_int) -> Result<Stats, Error> {
        let mut s = xcall_sys::xc_stats::default();
        // SAFETY: s is an xc_stats to write.
        check(unsafe { xcall_sys::xc_stats_get(cpu, &mut s) })?;
        Ok(s)
    }

    /// Write every event recorded so far as Chrome trace JSON (tracing is on with
    /// [`Builder::trace_file`]).
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] when tracing is off; [`ErrorKind::InvalidArgument`] for a path with
    /// a NUL byte; the errno of the write.
    pub fn trace_dump<P: AsRef<Path>>(&self, path: P) -> Result<(), Error> {
        use std::os::unix::ffi::OsStrExt;
        let p = CString::new(path.as_ref().as_os_str().as_bytes())
            .map_err(|_| Error::from(ErrorKind::InvalidArgument))?;
        // SAFETY: p is NUL-terminated.
        check(unsafe { xcall_sys::xc_trace_dump(p.as_ptr()) }).map(|_| ())
    }
}

/// The CPU of the calling worker (inside a call, or on an attached thread), or `None` on any
/// other thread (`xc_this_cpu`).
pub fn current_cpu() -> Option<usize> {
    // SAFETY: no argument; it only reads the calling thread's state.
    let c = unsafe { xcall_sys::xc_this_cpu() };
    usize::try_from(c).ok()
}

/// How many panics this process contained on a target where no caller will see them: a
/// `spawn_on` closure's, a [`CallFuture`]'s waker's, and the closure's of a `CallFuture`
/// dropped by that very closure. Such a panic is reported by the panic hook as on any thread
/// and contained on the target: the worker goes on with its next call.
pub fn spawn_panics() -> u64 {
    call::SPAWN_PANICS.load(Ordering::Relaxed)
}

/// Pin the calling thread to `cpu` alone, as [`Runtime::attach`] needs.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] for a CPU number too large or one the process may not use.
pub fn pin_current_thread(cpu: usize) -> Result<(), Error> {
    let mut set = CpuSet::new();
    set.insert(cpu).map_err(|e| e.on_cpu(cpu))?;
    // SAFETY: the set is a cpu_set_t of the size passed.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<CpuSet>(), set.as_raw()) };
    if r != 0 {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL);
        return Err(Error::from_errno(errno).on_cpu(cpu));
    }
    Ok(())
}
