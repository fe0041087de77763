//! The runtime: its options (`Builder`), its lifetime (`Runtime`), and the handle calls go through.

use crate::call::drop_payload;
use crate::error::{check, Error, ErrorKind};
use crate::{CpuSet, Handle};
use std::any::Any;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Whether a Runtime of this crate is up: a second builder is refused before it starts
/// anything (libxcall itself refuses a second xc_init too).
static UP: AtomicBool = AtomicBool::new(false);

/// The report hook: boxed, its address `xc_opts.report_ctx`, owned by the Builder and then
/// by the Runtime until `xc_exit` (leaked where libxcall may still report).
type ReportFn = Box<dyn Fn(&str) + Send + Sync>;

/// The idle poll window of a worker with nothing to do (`XCALL_POLL_NS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poll {
    /// Grows after idle periods it could have covered, shrinks after longer ones (the default).
    Adaptive,
    /// Sleep at once.
    Never,
    /// Never sleep: the worker spins on its CPU.
    Forever,
    /// A fixed window.
    Window(Duration),
}

struct Hook {
    f: Box<dyn Fn(usize) -> Result<(), Error> + Send + Sync>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// The options of a [`Runtime`], each a field of `struct xc_opts` (see the README's options
/// table). An option left unset takes its `XCALL_*` environment variable, else the default.
///
/// ```
/// use xcall::{Poll, Runtime};
/// let rt = Runtime::builder().poll(Poll::Never).option("XCALL_RING_ENTRIES", "64").build()?;
/// assert!(rt.online_cpus()?.len() >= 1);
/// # Ok::<(), xcall::Error>(())
/// ```
pub struct Builder {
    opts: xcall_sys::xc_opts,
    /// the strings xc_opts points into: xc_init copies or parses every one, so they are
    /// freed when `build` returns
    strings: Vec<CString>,
    hook: Option<Box<Hook>>,
    report: Option<Box<ReportFn>>,
    error: Option<Error>,
    /// why `option` refused a value: libxcall's lines, reported by `build`
    why: Vec<String>,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            opts: xcall_sys::xc_opts {
                cpus: std::ptr::null(),
                serial_bringup: false,
                poll_ns: 0,
                cpu_init: None,
                cpu_init_arg: std::ptr::null_mut(),
                bringup_timeout_ms: 0,
                report: None,
                report_ctx: std::ptr::null_mut(),
                stuck_ms: 0,
                trace_file: std::ptr::null(),
                trace_events: 0,
                urgent_signal: 0,
                follow_os: 0,
                attach: std::ptr::null(),
                ring_entries: 0,
                stack_kb: 0,
            },
            strings: Vec::new(),
            hook: None,
            report: None,
            error: None,
            why: Vec::new(),
        }
    }

    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    fn keep(&mut self, bytes: &[u8]) -> *const c_char {
        match CString::new(bytes) {
            Ok(c) => {
                // a CString's bytes stay where they are when the CString moves
                let p = c.as_ptr();
                self.strings.push(c);
                p
            }
            Err(_) => {
                self.fail(Error::from(ErrorKind::InvalidArgument));
                std::ptr::null()
            }
        }
    }

    /// Run workers on these CPUs (`XCALL_CPUS`); default: the affinity the process started with.
    pub fn cpus(mut self, cpus: &CpuSet) -> Builder {
        self.opts.cpus = self.keep(cpus.to_string().as_bytes());
        self
    }

    /// CPUs of the set that get no libxcall thread: threads of the program attach to them
    /// with [`Runtime::attach`] (`XCALL_ATTACH`).
    pub fn attach(mut self, cpus: &CpuSet) -> Builder {
        self.opts.attach = self.keep(cpus.to_string().as_bytes());
        self
    }

    /// The idle poll window (`XCALL_POLL_NS`).
    pub fn poll(mut self, poll: Poll) -> Builder {
        self.opts.poll_ns = match poll {
            Poll::Adaptive => xcall_sys::XC_POLL_ADAPTIVE,
            Poll::Never => xcall_sys::XC_POLL_NONE,
            Poll::Forever => xcall_sys::XC_POLL_FOREVER,
            Poll::Window(d) => match i64::try_from(d.as_nanos()) {
                Ok(ns) if ns > 0 => ns,
                Ok(_) => xcall_sys::XC_POLL_NONE,
                Err(_) => xcall_sys::XC_POLL_FOREVER,
            },
        };
        self
    }

    /// Start workers one at a time (`XCALL_SERIAL_BRINGUP`).
    pub fn serial_bringup(mut self, serial: bool) -> Builder {
        self.opts.serial_bringup = serial;
        self
    }

    /// How long a worker may take to report alive (`XCALL_BRINGUP_TIMEOUT_MS`, default 10 s).
    pub fn bringup_timeout(mut self, timeout: Duration) -> Builder {
        match u32::try_from(timeout.as_millis()) {
            Ok(ms) if ms > 0 => self.opts.bringup_timeout_ms = ms,
            _ => self.fail(Error::from(ErrorKind::InvalidArgument)),
        }
        self
    }

    /// Report a waiting call not done after this long (`XCALL_STUCK_MS`, default 5 s);
    /// `None`: never.
    pub fn stuck_reports(mut self, after: Option<Duration>) -> Builder {
        self.opts.stuck_ms = match after.map(|d| c_int::try_from(d.as_millis())) {
            None => xcall_sys::XC_STUCK_OFF,
            Some(Ok(ms)) if ms > 0 => ms,
            Some(_) => {
                self.fail(Error::from(ErrorKind::InvalidArgument));
                0
            }
        };
        self
    }

    /// Record events and write them to this file as Chrome trace JSON when the runtime shuts
    /// down (`XCALL_TRACE`).
    pub fn trace_file<P: AsRef<Path>>(mut self, path: P) -> Builder {
        self.opts.trace_file = self.keep(path.as_ref().as_os_str().as_bytes());
        self
    }

    /// Calls a thread may have queued to one CPU before it waits for room
    /// (`XCALL_RING_ENTRIES`): a power of two, 16..65536.
    pub fn ring_entries(mut self, entries: u32) -> Builder {
        self.opts.ring_entries = entries;
        self
    }

    /// Stack of each worker thread in KiB (`XCALL_STACK_KB`), 64..1048576; calls that nest
    /// deeper than a quarter of it are refused with [`ErrorKind::NestedTooDeep`].
    pub fn stack_kb(mut self, kb: u32) -> Builder {
        self.opts.stack_kb = kb;
        self
    }

    /// Whether workers follow the OS taking their CPU away (`XCALL_FOLLOW_OS`, default on).
    pub fn follow_os(mut self, follow: bool) -> Builder {
        self.opts.follow_os = if follow { 0 } else { xcall_sys::XC_FOLLOW_OS_OFF };
        self
    }

    /// Set any option by its environment variable's name and spelling, as `xc_opts_set` takes
    /// it: `option("XCALL_URGENT_SIGNAL", "SIGRTMIN+3")`. A bad name or value fails
    /// [`Builder::build`] with [`ErrorKind::InvalidArgument`], and `build` reports libxcall's
    /// reason, as `xc_init` reports a bad field (to the [`Builder::report`] hook, else stderr).
    pub fn option(mut self, var: &str, value: &str) -> Builder {
        let Ok(var) = CString::new(var) else {
            self.fail(Error::from(ErrorKind::InvalidArgument));
            return self;
        };
        let value = self.keep(value.as_bytes());
        if value.is_null() {
            return self;
        }
        // xc_opts_set gives its reason to opts.report: here, to a list for build
        let mut why: Vec<String> = Vec::new();
        let report = self.opts.report.replace(option_reason);
        let ctx = std::mem::replace(&mut self.opts.report_ctx, (&mut why as *mut Vec<String>).cast());
        // SAFETY: both strings are NUL-terminated; value lives in self.strings until build
        // returns, which is as long as xc_init reads it; the hook's context is `why`, alive
        // through the call.
        let r = unsafe { xcall_sys::xc_opts_set(&mut self.opts, var.as_ptr(), value) };
        self.opts.report = report;
        self.opts.report_ctx = ctx;
        if let Err(e) = check(r) {
            self.why.extend(why);
            self.fail(e);
        }
        self
    }

    /// A hook run on each worker thread, pinned to its CPU, before the CPU goes online (and
    /// on an attaching thread). An error fails [`Builder::build`] (or the attach) with it; a
    /// panic fails it too, and is resumed in the thread that called `build`. When `build`
    /// fails, the hook is leaked with its captures: one still running past the bringup
    /// timeout goes on after `build` returned. At bringup no runtime is up until every hook
    /// has returned, so the hook makes no calls (libxcall refuses them with `ENXIO`, even
    /// from a hook left running beside a later runtime).
    pub fn cpu_init<F>(mut self, hook: F) -> Builder
    where
        F: Fn(usize) -> Result<(), Error> + Send + Sync + 'static,
    {
        let hook = Box::new(Hook { f: Box::new(hook), panic: Mutex::new(None) });
        self.opts.cpu_init = Some(cpu_init_trampoline);
        self.opts.cpu_init_arg = (&*hook as *const Hook).cast_mut().cast();
        self.hook = Some(hook);
        self
    }

    /// Receives every diagnostic line libxcall writes (stuck calls, CPUs the OS took away,
    /// bringup failures); default: stderr. A panic in it is contained.
    ///
    /// The hook is reached through `xc_opts.report_ctx`, with no lock and no allocation on
    /// the way (a line that is not UTF-8 is mended in a buffer on the stack): libxcall may
    /// report from inside a signal handler (a stuck report of a handler's waiting call), and
    /// a hook that may meet that keeps to async-signal-safe work itself.
    pub fn report<F: Fn(&str) + Send + Sync + 'static>(mut self, hook: F) -> Builder {
        let hook: Box<ReportFn> = Box::new(Box::new(hook));
        self.opts.report = Some(report_trampoline);
        self.opts.report_ctx = (&*hook as *const ReportFn).cast_mut().cast();
        self.report = Some(hook);
        self
    }

    /// Start the runtime: one pinned worker per CPU of the set but the attached ones.
    ///
    /// # Errors
    /// [`ErrorKind::Busy`] when a runtime is up already in the process; [`ErrorKind::InvalidArgument`]
    /// for a bad option or environment value, or a CPU the process may not run on;
    /// [`ErrorKind::OutOfMemory`]; [`ErrorKind::TimedOut`] when a worker did not report alive in time,
    /// even if another CPU's hook failed first; the error a `cpu_init` hook returned.
    /// libxcall's report hook says which CPU failed, and how.
    ///
    /// On every error of libxcall's start, the `cpu_init` closure is leaked, never dropped,
    /// with everything it captured: a hook that outlived the bringup timeout keeps running
    /// on its thread after `build` returned, and still reads them.
    ///
    /// # Panics
    /// Resumes a panic of the `cpu_init` hook.
    pub fn build(mut self) -> Result<Runtime, Error> {
        if let Some(e) = self.error {
            for line in &self.why {
                match &self.report {
                    Some(hook) => {
                        if let Err(p) = catch_unwind(AssertUnwindSafe(|| hook(line))) {
                            drop_payload(p);
                        }
                    }
                    None => eprintln!("xcall: {line}"),
                }
            }
            return Err(e);
        }
        if UP.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return Err(Error::from(ErrorKind::Busy));
        }
        // SAFETY: opts is a valid xc_opts; xc_init copies or parses its strings, which live in
        // self until it returns; the hooks and their arguments live in self, then in the
        // Runtime, until xc_exit (or for ever when a hook may outlive a failure).
        let r = check(unsafe { xcall_sys::xc_init(&self.opts) });
        let panic = self
            .hook
            .as_ref()
            .and_then(|h| h.panic.lock().unwrap_or_else(PoisonError::into_inner).take());
        match r {
            Ok(_) => Ok(Runtime { hook: self.hook.take(), report: self.report.take(), down: false }),
            Err(e) => {
                // the report hook too: a thread left behind by a timed-out bringup may still
                // read the options it started with
                std::mem::forget(self.report.take());
                // a cpu_init hook that outlived the timeout runs on in its thread after
                // xc_init returned, and may read its closure's captures at any time: the
                // closure must stay valid for ever. libxcall says so with ETIMEDOUT; leaking
                // on every error does not hang memory safety on which errno came back, and
                // costs one closure per failed build.
                std::mem::forget(self.hook.take());
                UP.store(false, Ordering::Release);
                if let Some(p) = panic {
                    resume_unwind(p);
                }
                Err(e)
            }
        }
    }
}

unsafe extern "C" fn cpu_init_trampoline(cpu: c_int, arg: *mut c_void) -> c_int {
    // SAFETY: arg is the Hook that Builder::cpu_init boxed; the Builder, then the Runtime,
    // keeps it until xc_exit, or leaks it when xc_init fails (a hook may still run then).
    let hook = unsafe { &*(arg as *const Hook) };
    match catch_unwind(AssertUnwindSafe(|| (hook.f)(usize::try_from(cpu).unwrap_or(0)))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => -e.errno(),
        Err(p) => {
            // the first CPU's payload is resumed by build; another's is dropped here, where
            // its drop must not unwind into C
            let extra = {
                let mut first = hook.panic.lock().unwrap_or_else(PoisonError::into_inner);
                if first.is_none() {
                    *first = Some(p);
                    None
                } else {
                    Some(p)
                }
            };
            if let Some(p) = extra {
                drop_payload(p);
            }
            -libc::EIO
        }
    }
}

/// `xc_opts_set`'s reasons, into the Vec<String> that `Builder::option` passes as context.
unsafe extern "C" fn option_reason(ctx: *mut c_void, line: *const c_char) {
    if line.is_null() || ctx.is_null() {
        return;
    }
    // SAFETY: libxcall passes a NUL-terminated line, valid during the call, and ctx is the
    // Vec of Builder::option, alive and not otherwise borrowed during xc_opts_set.
    let (line, why) = unsafe { (CStr::from_ptr(line), &mut *ctx.cast::<Vec<String>>()) };
    why.push(line.to_string_lossy().into_owned());
}

/// The report hook's trampoline: no lock, no allocation (see `Builder::report`).
unsafe extern "C" fn report_trampoline(ctx: *mut c_void, line: *const c_char) {
    if line.is_null() || ctx.is_null() {
        return;
    }
    // SAFETY: ctx is the boxed hook of Builder::report, kept by the Runtime until xc_exit
    // (or leaked); libxcall passes a NUL-terminated line, valid during the call.
    let (hook, bytes) = unsafe { (&*ctx.cast_const().cast::<ReportFn>(), CStr::from_ptr(line).to_bytes()) };
    let mut buf = [0u8; 2048];
    let line = utf8_lossy_in(bytes, &mut buf);
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| hook(line))) {
        drop_payload(p);
    }
}

/// `bytes` as text: itself when it is UTF-8, else mended into `buf` (each bad sequence
/// replaced by U+FFFD, cut where `buf` is full), with no allocation.
fn utf8_lossy_in<'a>(bytes: &'a [u8], buf: &'a mut [u8]) -> &'a str {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s;
    }
    let mut len = 0;
    let mut rest = bytes;
    while !rest.is_empty() {
        let (good, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s.len(), 0),
            Err(e) => (e.valid_up_to(), e.error_len().unwrap_or(rest.len() - e.valid_up_to())),
        };
        let add = good.min(buf.len() - len);
        buf[len..len + add].copy_from_slice(&rest[..add]);
        len += add;
        if add < good || bad == 0 {
            break;
        }
        let mark = "\u{fffd}".as_bytes();
        if buf.len() - len < mark.len() {
            break;
        }
        buf[len..len + mark.len()].copy_from_slice(mark);
        len += mark.len();
        rest = &rest[good + bad..];
    }
    // cut on a character's boundary: valid UTF-8 up to len by construction
    std::str::from_utf8(&buf[..len]).unwrap_or("")
}

/// The libxcall runtime of the process: one pinned worker thread per CPU.
///
/// There is one per process: building a second while one is up fails with [`ErrorKind::Busy`].
/// Dropping it runs everything still queued, then stops and joins the workers (`xc_exit`);
/// where libxcall refuses (on a worker, inside the report hook, while a thread is attached)
/// it stays up until the process ends, its hooks kept (see [`Runtime::shutdown`]).
/// Calls are made through its [`Handle`], which it dereferences to, and which closures can
/// copy to make calls of their own.
///
/// ```
/// let rt = xcall::Runtime::new()?;
/// let cpus = rt.online_cpus()?;
/// let first = cpus.iter().next().unwrap();
/// assert_eq!(rt.call_on(first, || xcall::current_cpu())?, Some(first));
/// # Ok::<(), xcall::Error>(())
/// ```
pub struct Runtime {
    hook: Option<Box<Hook>>,
    report: Option<Box<ReportFn>>,
    down: bool,
}

impl Runtime {
    /// Options for a runtime.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// A runtime with every option at its default (or its `XCALL_*` environment variable).
    ///
    /// # Errors
    /// As [`Builder::build`].
    pub fn new() -> Result<Runtime, Error> {
        Builder::new().build()
    }

    /// The handle calls go through, to copy into closures and threads.
    pub fn handle(&self) -> Handle {
        Handle::new()
    }

    /// Run everything still queued, then stop and join every worker, and say how it went.
    /// Dropping the runtime does the same and ignores the result.
    ///
    /// Where libxcall refuses to stop, nothing was stopped: the runtime stays up until the
    /// process ends (calls go on), and the hooks it points to are kept (leaked), never freed
    /// under it; no second runtime can be built.
    ///
    /// # Errors
    /// Refused, the runtime still up: [`ErrorKind::WouldDeadlock`] on a worker (inside a call,
    /// or on an attached thread); [`ErrorKind::Busy`] while a thread is attached (an
    /// [`Attached`](crate::Attached) guard forgotten, or dropped where it could not detach);
    /// [`ErrorKind::Reentered`] inside libxcall's own code on this thread (the report hook, or
    /// a signal handler that interrupted libxcall). Down all the same: the errno of writing
    /// the trace file.
    pub fn shutdown(mut self) -> Result<(), Error> {
        self.exit()
    }

    fn exit(&mut self) -> Result<(), Error> {
        if self.down {
            return Ok(());
        }
        self.down = true;
        // SAFETY: xc_exit takes no argument; the hooks are still alive.
        let r = unsafe { xcall_sys::xc_exit() };
        // SAFETY: no argument; a read that libxcall allows inside its own code too.
        if exit_left_up(r, || unsafe { xcall_sys::xc_cpu_max() } != -libc::ENXIO) {
            // still up: the hooks the options point to must stay valid while it is
            std::mem::forget(self.hook.take());
            std::mem::forget(self.report.take());
        } else {
            UP.store(false, Ordering::Release);
        }
        check(r).map(|_| ())
    }
}

/// Whether `xc_exit`'s answer `ret` leaves the runtime up, by xcall.h: -EDEADLK (called on a
/// worker), -EBUSY (a thread still attached: nothing was stopped) and -EAGAIN (inside
/// libxcall's own code on this thread: a report hook, a signal handler that interrupted it)
/// stop nothing; 0, -ENXIO (not up) and a trace file's write error ("down all the same") leave
/// it down. A write's errno may be any number, one of those three too: `up` (whether
/// libxcall still answers as up) settles those.
fn exit_left_up(ret: c_int, up: impl FnOnce() -> bool) -> bool {
    matches!(-ret, libc::EDEADLK | libc::EBUSY | libc::EAGAIN) && up()
}

impl std::ops::Deref for Runtime {
    type Target = Handle;

    fn deref(&self) -> &Handle {
        &crate::HANDLE
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = self.exit();
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("down", &self.down).finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    /// Every answer xcall.h gives xc_exit, mapped to down or up.
    #[test]
    fn exit_answers_leave_it_down_or_up() {
        use super::exit_left_up;
        let (up, down) = (|| true, || false);
        for still_up in [-libc::EDEADLK, -libc::EBUSY, -libc::EAGAIN] {
            assert!(exit_left_up(still_up, up), "{still_up}: nothing was stopped");
            assert!(!exit_left_up(still_up, down), "{still_up}: a trace write's errno, down");
        }
        for gone in [0, -libc::ENXIO, -libc::EIO, -libc::ENOSPC, -libc::EACCES, -libc::ENOENT, -libc::EROFS] {
            assert!(!exit_left_up(gone, up), "{gone}: down");
        }
    }

    #[test]
    fn lossy_without_allocation() {
        let mut buf = [0u8; 16];
        assert_eq!(super::utf8_lossy_in(b"plain", &mut buf), "plain");
        assert_eq!(super::utf8_lossy_in(b"a\xffb", &mut buf), "a\u{fffd}b");
        let mut small = [0u8; 4];
        assert_eq!(super::utf8_lossy_in(b"abc\xff\xffdef", &mut small), "abc");
    }
}
