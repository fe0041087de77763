//! The errors of libxcall: one variant per errno that `xcall.h` documents.

use std::fmt;

/// What a libxcall function refused, by the errno it returned.
///
/// `xcall.h` documents, function by function, which of these each call may return; the
/// methods of this crate repeat it in their `# Errors` sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// `EINVAL`: a bad argument or option (a malformed cpulist, a CPU not set aside for
    /// attaching, a thread not pinned to its CPU alone, a CPU already offline or online).
    InvalidArgument,
    /// `ENXIO`: the CPU is absent or offline, or the runtime is not up.
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
    /// Any other errno: one a `cpu_init` hook returned, or writing the trace file's.
    Os(i32),
}

impl Error {
    /// The error for a negative errno as libxcall returns it (or a positive one).
    pub fn from_errno(err: i32) -> Error {
        match err.checked_abs().unwrap_or(0) {
            libc::EINVAL => Error::InvalidArgument,
            libc::ENXIO => Error::Unavailable,
            libc::EBUSY => Error::Busy,
            libc::EDEADLK => Error::WouldDeadlock,
            libc::ETIMEDOUT => Error::TimedOut,
            libc::ENOMEM => Error::OutOfMemory,
            libc::EAGAIN => Error::Reentered,
            libc::EMFILE => Error::ProcessFileLimit,
            libc::ENFILE => Error::SystemFileLimit,
            libc::EIO => Error::Io,
            libc::ENOSPC => Error::NoSpace,
            e => Error::Os(e),
        }
    }

    /// The positive errno this error stands for (`EIO` for an `Os` value that is none).
    pub fn errno(&self) -> i32 {
        match *self {
            Error::InvalidArgument => libc::EINVAL,
            Error::Unavailable => libc::ENXIO,
            Error::Busy => libc::EBUSY,
            Error::WouldDeadlock => libc::EDEADLK,
            Error::TimedOut => libc::ETIMEDOUT,
            Error::OutOfMemory => libc::ENOMEM,
            Error::Reentered => libc::EAGAIN,
            Error::ProcessFileLimit => libc::EMFILE,
            Error::SystemFileLimit => libc::ENFILE,
            Error::Io => libc::EIO,
            Error::NoSpace => libc::ENOSPC,
            Error::Os(e) if e > 0 => e,
            Error::Os(_) => libc::EIO,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Error::InvalidArgument => "invalid argument",
            Error::Unavailable => "CPU absent or offline, or runtime not up",
            Error::Busy => "busy: a runtime, worker or attached thread is there already",
            Error::WouldDeadlock => "the wait could never end",
            Error::TimedOut => "a worker did not report alive in time",
            Error::OutOfMemory => "out of memory",
            Error::Reentered => "called from a signal handler that interrupted libxcall",
            Error::ProcessFileLimit => "no file descriptor left in the process",
            Error::SystemFileLimit => "no file descriptor left in the system",
            Error::Io => "a cpu_init hook failed",
            Error::NoSpace => "buffer too small",
            Error::Os(e) => return write!(f, "{}", std::io::Error::from_raw_os_error(*e)),
        };
        f.write_str(what)
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
