//! The errors of libxcall: one kind per errno that `xcall.h` documents, and the CPU it was
//! about, where there is one.

use std::fmt;

/// What a libxcall function refused, by the errno it returned, with the CPU the call named
/// where it named one ([`Error::cpu`]).
///
/// Compare the [`kind`](Error::kind) (an `Error` also equals its [`ErrorKind`]):
///
/// ```
/// use xcall::{ErrorKind, Runtime};
/// let rt = Runtime::new()?;
/// let e = rt.call_on(usize::MAX, || ()).unwrap_err();
/// assert_eq!(e, ErrorKind::Unavailable); // no such CPU: as for one that is offline
/// assert_eq!(e.cpu(), Some(usize::MAX));
/// assert_eq!(e.to_string(), format!("CPU {}: absent or offline, or runtime not up", usize::MAX));
/// # Ok::<(), xcall::Error>(())
/// ```
///
/// `xcall.h` documents, function by function, which of these each call may return; the
/// methods of this crate repeat it in their `# Errors` sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error {
    kind: ErrorKind,
    cpu: Option<usize>,
}

/// The errno of an [`Error`].
///
/// A CPU number that is not one of the runtime's, whatever its value (negative in C, past
/// `CPU_SETSIZE`, past the CPUs the machine may ever have), is [`ErrorKind::Unavailable`]
/// (`ENXIO`), never [`ErrorKind::InvalidArgument`], in libxcall and in this crate alike, as
/// the kernel's `smp_call_function_single()` answers a CPU past `nr_cpu_ids`: a CPU that is
/// absent is answered as one that is offline. [`CpuSet`](crate::CpuSet) is the exception
/// that proves it: a set cannot hold a CPU past [`CpuSet::CAPACITY`](crate::CpuSet::CAPACITY),
/// so inserting one is `InvalidArgument`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `EINVAL`: a bad argument or option (a malformed cpulist, a CPU not set aside for
    /// attaching, a thread not pinned to its CPU alone, a CPU already offline or online).
    InvalidArgument,
    /// `ENXIO`: the CPU is absent (not in the runtime's set, whatever its number) or
    /// offline, or the runtime is not up.
    Unavailable,
    /// `EBUSY`: a runtime is up already; the thread or the CPU has a worker already; a
    /// thread is still attached.
    Busy,
    /// `EDEADLK`: a wait that could never end (shutting down from a worker, taking one's own
    /// CPU offline, a waiting call from a loop between `sleep_begin` and `sleep_end`).
    WouldDeadlock,
    /// `ETIMEDOUT`: a worker did not report alive within the bringup timeout.
    TimedOut,
    /// `ENOMEM`: no memory (for a thread's ring to a CPU, for the runtime).
    OutOfMemory,
    /// `EAGAIN`: called from a signal handler that interrupted libxcall in the same thread.
    Reentered,
    /// `EMFILE`: the process has no file descriptor left (an attached thread's eventfd).
    ProcessFileLimit,
    /// `ENFILE`: the system has no file descriptor left.
    SystemFileLimit,
    /// `EIO`: a `cpu_init` hook failed without an errno of its own.
    Io,
    /// `ENOSPC`: a buffer was too small.
    NoSpace,
    /// `ELOOP`: a waiting call to a CPU whose worker's waits nest past its serve floor
    /// (three quarters of its stack used: an application's recursion of waiting calls went
    /// too deep), or a nowait call to such a CPU whose ring to it is full. The closure did
    /// not run on that CPU (on every other target of a many call, it was sent).
    NestedTooDeep,
    /// Not an errno of libxcall: a [`Sharded`](crate::Sharded) CPU's instance is held by a
    /// closure further up the same thread (a nested access: a call run inline, or served
    /// while that closure waits). The access did not happen; the holder goes on. Its
    /// [`errno`](ErrorKind::errno) is `EDEADLK`, what a lock would have done.
    Borrowed,
    /// Any other errno: one a `cpu_init` hook returned, or writing the trace file's.
    Os(i32),
}

impl ErrorKind {
    fn from_errno(err: i32) -> ErrorKind {
        match err.checked_abs().unwrap_or(0) {
            libc::EINVAL => ErrorKind::InvalidArgument,
            libc::ENXIO => ErrorKind::Unavailable,
            libc::EBUSY => ErrorKind::Busy,
            libc::EDEADLK => ErrorKind::WouldDeadlock,
            libc::ETIMEDOUT => ErrorKind::TimedOut,
            libc::ENOMEM => ErrorKind::OutOfMemory,
            libc::EAGAIN => ErrorKind::Reentered,
            libc::EMFILE => ErrorKind::ProcessFileLimit,
            libc::ENFILE => ErrorKind::SystemFileLimit,
            libc::EIO => ErrorKind::Io,
            libc::ENOSPC => ErrorKind::NoSpace,
            libc::ELOOP => ErrorKind::NestedTooDeep,
            e => ErrorKind::Os(e),
        }
    }

    /// The positive errno this kind stands for (`EIO` for an `Os` value that is none).
    pub fn errno(&self) -> i32 {
        match *self {
            ErrorKind::InvalidArgument => libc::EINVAL,
            ErrorKind::Unavailable => libc::ENXIO,
            ErrorKind::Busy => libc::EBUSY,
            ErrorKind::WouldDeadlock => libc::EDEADLK,
            ErrorKind::TimedOut => libc::ETIMEDOUT,
            ErrorKind::OutOfMemory => libc::ENOMEM,
            ErrorKind::Reentered => libc::EAGAIN,
            ErrorKind::ProcessFileLimit => libc::EMFILE,
            ErrorKind::SystemFileLimit => libc::ENFILE,
            ErrorKind::Io => libc::EIO,
            ErrorKind::NoSpace => libc::ENOSPC,
            ErrorKind::NestedTooDeep => libc::ELOOP,
            ErrorKind::Borrowed => libc::EDEADLK,
            ErrorKind::Os(e) if e > 0 => e,
            ErrorKind::Os(_) => libc::EIO,
        }
    }
}

impl Error {
    /// The error for a negative errno as libxcall returns it (or a positive one), about no
    /// CPU in particular.
    pub fn from_errno(err: i32) -> Error {
        ErrorKind::from_errno(err).into()
    }

    /// What was refused.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The CPU the refused call named, where it named one: the target of a call, the CPU of
    /// an attach, an offline, an online or a stats reading. `None` for calls on a set of
    /// CPUs, the runtime's start and end, and errors of no CPU.
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// The same error, about `cpu`.
    pub fn on_cpu(self, cpu: usize) -> Error {
        Error { cpu: Some(cpu), ..self }
    }

    /// The positive errno this error stands for (`EIO` for an `Os` value that is none).
    pub fn errno(&self) -> i32 {
        self.kind.errno()
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error { kind, cpu: None }
    }
}

/// An error equals its kind, whatever CPU it names: `assert_eq!(e, ErrorKind::Busy)`.
impl PartialEq<ErrorKind> for Error {
    fn eq(&self, kind: &ErrorKind) -> bool {
        self.kind == *kind
    }
}

impl PartialEq<Error> for ErrorKind {
    fn eq(&self, e: &Error) -> bool {
        *self == e.kind
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::Unavailable => "absent or offline, or runtime not up",
            ErrorKind::Busy => "busy: a runtime, worker or attached thread is there already",
            ErrorKind::WouldDeadlock => "the wait could never end",
            ErrorKind::TimedOut => "a worker did not report alive in time",
            ErrorKind::OutOfMemory => "out of memory",
            ErrorKind::Reentered => "called from a signal handler that interrupted libxcall",
            ErrorKind::ProcessFileLimit => "no file descriptor left in the process",
            ErrorKind::SystemFileLimit => "no file descriptor left in the system",
            ErrorKind::Io => "a cpu_init hook failed",
            ErrorKind::NoSpace => "buffer too small",
            ErrorKind::NestedTooDeep => "the target's waits nest too deep (its stack is three quarters used)",
            ErrorKind::Borrowed => "instance held by a closure further up this thread (a nested Sharded access)",
            ErrorKind::Os(e) => return write!(f, "{}", std::io::Error::from_raw_os_error(*e)),
        };
        f.write_str(what)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.cpu, self.kind) {
            (Some(cpu), kind) => write!(f, "CPU {cpu}: {kind}"),
            (None, ErrorKind::Unavailable) => f.write_str("CPU absent or offline, or runtime not up"),
            (None, kind) => write!(f, "{kind}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> std::io::Error {
        std::io::Error::from_raw_os_error(e.errno())
    }
}

/// A libxcall return value: non-negative is success, negative an errno.
pub(crate) fn check(ret: i32) -> Result<i32, Error> {
    if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        Ok(ret)
    }
}

/// As [`check`], the error about `cpu`.
pub(crate) fn check_on(ret: i32, cpu: usize) -> Result<i32, Error> {
    check(ret).map_err(|e| e.on_cpu(cpu))
}
