//! A thread of the program as its CPU's worker, running calls in its own event loop.

use crate::error::{check, check_on, Error};
use crate::Runtime;
use std::marker::PhantomData;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

/// The calling thread attached to its CPU as that CPU's worker, from [`Runtime::attach`].
///
/// Calls to the CPU run on this thread, inside [`Attached::poll`]. A loop that sleeps in its
/// own `epoll_wait` (or mio, or tokio's `AsyncFd`) watches the eventfd this guard exposes
/// through [`AsRawFd`] / [`AsFd`], and announces each sleep, so that senders write the
/// eventfd only while it really sleeps:
///
/// ```no_run
/// # fn wait_for_events(fd: std::os::fd::RawFd, timeout_ms: i32) {}
/// use std::os::fd::AsRawFd;
/// # fn shard(rt: &xcall::Runtime, cpu: usize) -> Result<(), xcall::Error> {
/// xcall::pin_current_thread(cpu)?;
/// let me = rt.attach(cpu)?;
/// loop {
///     me.poll()?; // the calls other threads sent to this CPU run here
///     // ... the loop's own ready events ...
///     let timeout = if me.sleep_begin()? { -1 } else { 0 };
///     wait_for_events(me.as_raw_fd(), timeout); // epoll_wait on a set holding the fd
///     me.sleep_end()?;
/// #   break;
/// }
/// # Ok(()) }
/// ```
///
/// Dropping the guard detaches the thread: everything queued runs first, then the CPU is
/// offline until a thread attaches again, and the eventfd is closed (take it out of the
/// loop's epoll set first). Where libxcall refuses the detach, the drop cannot say so (use
/// [`Attached::detach`] to see it): dropped inside a call on this thread (`WouldDeadlock`) or
/// inside libxcall's own code, such as the report hook (`Reentered`), the guard is gone but
/// the thread stays attached, its CPU's worker, until it exits (which detaches it); nothing is
/// freed that libxcall still uses, and the runtime refuses to shut down meanwhile (`Busy`,
/// its hooks kept). The guard belongs to its thread: it is neither `Send` nor `Sync`,
/// so dropping it on another thread is refused at compile time:
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// fn f(a: xcall::Attached<'static>) { needs_send(a) }
/// ```
pub struct Attached<'rt> {
    cpu: usize,
    fd: RawFd,
    _rt: PhantomData<&'rt Runtime>,
    _thread: PhantomData<*const ()>,
}

impl Runtime {
    /// Make the calling thread the worker of `cpu`, a CPU of the builder's
    /// [`attach`](crate::Builder::attach) set; the thread must be pinned to that CPU alone
    /// (see [`pin_current_thread`](crate::pin_current_thread)). The `cpu_init` hook runs here
    /// first.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) for a CPU outside the runtime's set; [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
    /// for a CPU not set aside for attaching, or a thread not pinned to it alone;
    /// [`ErrorKind::Busy`](crate::ErrorKind::Busy) when this thread is a worker already or another thread has the CPU;
    /// [`ErrorKind::ProcessFileLimit`](crate::ErrorKind::ProcessFileLimit), [`ErrorKind::SystemFileLimit`](crate::ErrorKind::SystemFileLimit), [`ErrorKind::OutOfMemory`](crate::ErrorKind::OutOfMemory) for
    /// no eventfd; the `cpu_init` hook's error.
    pub fn attach(&self, cpu: usize) -> Result<Attached<'_>, Error> {
        let c = crate::cpu_arg(cpu)?;
        // SAFETY: no pointer is passed; libxcall checks the thread and the CPU.
        check_on(unsafe { xcall_sys::xc_worker_attach(c) }, cpu)?;
        // SAFETY: the thread is attached: the call only reads its eventfd.
        let fd = check(unsafe { xcall_sys::xc_worker_fd() })?;
        Ok(Attached { cpu, fd, _rt: PhantomData, _thread: PhantomData })
    }
}

impl Attached<'_> {
    /// The CPU this thread is the worker of.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// Run the calls queued to this CPU, and its work items and offline requests: the CPU's
    /// task loop. Returns how many ran.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) if the thread is no longer attached; [`ErrorKind::WouldDeadlock`](crate::ErrorKind::WouldDeadlock)
    /// between a `sleep_begin` that said sleep and its `sleep_end` (the calls wait for the kick).
    pub fn poll(&self) -> Result<usize, Error> {
        // SAFETY: called on the attached thread (the guard is !Send), outside any call.
        check(unsafe { xcall_sys::xc_poll() }).map(|n| n as usize)
    }

    /// Announce a sleep in the loop's own wait: from now on senders write the eventfd.
    /// Returns `true` to sleep now, `false` when something came meanwhile: do not sleep (or
    /// only look, with a zero timeout), call [`Attached::poll`] and come back. Call
    /// [`Attached::sleep_end`] after every `sleep_begin`, whatever it returned.
    ///
    /// # Errors
    /// [`ErrorKind::WouldDeadlock`](crate::ErrorKind::WouldDeadlock) inside a call or work item.
    pub fn sleep_begin(&self) -> Result<bool, Error> {
        // SAFETY: called on the attached thread (the guard is !Send).
        check(unsafe { xcall_sys::xc_worker_sleep_begin() }).map(|r| r == 0)
    }

    /// The loop is awake: senders stop writing the eventfd, and a kick written is read.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) if the thread is no longer attached.
    pub fn sleep_end(&self) -> Result<(), Error> {
        // SAFETY: called on the attached thread (the guard is !Send).
        check(unsafe { xcall_sys::xc_worker_sleep_end() }).map(|_| ())
    }

    /// Detach now and say how it went; dropping the guard does the same and ignores it.
    ///
    /// # Errors
    /// The thread stays attached (until it exits) on either:
    /// [`ErrorKind::WouldDeadlock`](crate::ErrorKind::WouldDeadlock) inside a call or work
    /// item; [`ErrorKind::Reentered`](crate::ErrorKind::Reentered) inside libxcall's own code
    /// on this thread (the report hook, a signal handler that interrupted it).
    pub fn detach(self) -> Result<(), Error> {
        let me = std::mem::ManuallyDrop::new(self);
        me.detach_now()
    }

    fn detach_now(&self) -> Result<(), Error> {
        // SAFETY: called on the attached thread (the guard is !Send).
        check(unsafe { xcall_sys::xc_worker_detach() }).map(|_| ())
    }
}

impl AsRawFd for Attached<'_> {
    /// The eventfd that becomes readable when a sender kicks this thread asleep.
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl AsFd for Attached<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the eventfd stays open while the thread is attached, which it is for as
        // long as the guard lives (detach consumes it).
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }
}

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        let _ = self.detach_now();
    }
}

impl std::fmt::Debug for Attached<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attached").field("cpu", &self.cpu).field("fd", &self.fd).finish()
    }
}
