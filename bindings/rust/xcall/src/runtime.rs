//! The runtime: its options (`Builder`), its lifetime (`Runtime`), and the handle calls go through.

use crate::error::{check, Error};
use crate::{CpuSet, Handle};
use std::any::Any;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Whether a Runtime of this crate is up: the report hook is global, so a second builder
/// must be refused before it touches it (libxcall itself refuses a second xc_init too).
static UP: AtomicBool = AtomicBool::new(false);

type ReportFn = dyn Fn(&str) + Send + Sync;
/// `xc_opts.report` takes no argument: the hook in force lives here, one per process.
static REPORT: Mutex<Option<Arc<ReportFn>>> = Mutex::new(None);

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
    /// the strings xc_opts points into: they live as long as the runtime
    strings: Vec<CString>,
    hook: Option<Box<Hook>>,
    report: Option<Arc<ReportFn>>,
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
                ablate: 0,
                stuck_ms: 0,
                trace_file: std::ptr::null(),
                trace_events: 0,
                urgent_signal: 0,
                follow_os: 0,
                attach: std::ptr::null(),
                ring_entries: 0,
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
                self.fail(Error::InvalidArgument);
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
            _ => self.fail(Error::InvalidArgument),
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
                self.fail(Error::InvalidArgument);
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

    /// Whether workers follow the OS taking their CPU away (`XCALL_FOLLOW_OS`, default on).
    pub fn follow_os(mut self, follow: bool) -> Builder {
        self.opts.follow_os = if follow { 0 } else { xcall_sys::XC_FOLLOW_OS_OFF };
        self
    }

    /// Set any option by its environment variable's name and spelling, as `xc_opts_set` takes
    /// it: `option("XCALL_URGENT_SIGNAL", "SIGRTMIN+3")`. A bad name or value fails
    /// [`Builder::build`] with [`Error::InvalidArgument`], and `build` reports libxcall's
    /// reason, as `xc_init` reports a bad field (to the [`Builder::report`] hook, else stderr).
    pub fn option(mut self, var: &str, value: &str) -> Builder {
        let Ok(var) = CString::new(var) else {
            self.fail(Error::InvalidArgument);
            return self;
        };
        let value = self.keep(value.as_bytes());
        if value.is_null() {
            return self;
        }
        // xc_opts_set gives its reason to opts.report: here, to this thread's list for build
        let report = self.opts.report.replace(option_reason);
        // SAFETY: both strings are NUL-terminated; value lives in self.strings, then in the
        // Runtime, as long as the options may point to it.
        let r = unsafe { xcall_sys::xc_opts_set(&mut self.opts, var.as_ptr(), value) };
        self.opts.report = report;
        let why = OPTION_WHY.with(|w| std::mem::take(&mut *w.borrow_mut()));
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
    /// timeout goes on after `build` returned.
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
    pub fn report<F: Fn(&str) + Send + Sync + 'static>(mut self, hook: F) -> Builder {
        self.opts.report = Some(report_trampoline);
        self.report = Some(Arc::new(hook));
        self
    }

    /// Start the runtime: one pinned worker per CPU of the set but the attached ones.
    ///
    /// # Errors
    /// [`Error::Busy`] when a runtime is up already in the process; [`Error::InvalidArgument`]
    /// for a bad option or environment value, or a CPU the process may not run on;
    /// [`Error::OutOfMemory`]; [`Error::TimedOut`] when a worker did not report alive in time,
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
                        let _ = catch_unwind(AssertUnwindSafe(|| hook(line)));
                    }
                    None => eprintln!("xcall: {line}"),
                }
            }
            return Err(e);
        }
        if UP.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return Err(Error::Busy);
        }
        *REPORT.lock().unwrap_or_else(PoisonError::into_inner) = self.report.take();
        // SAFETY: opts is a valid xc_opts whose strings and hook argument live in self, and
        // then in the Runtime, until xc_exit (or for ever when the hook may outlive a failure).
        let r = check(unsafe { xcall_sys::xc_init(&self.opts) });
        let panic = self
            .hook
            .as_ref()
            .and_then(|h| h.panic.lock().unwrap_or_else(PoisonError::into_inner).take());
        match r {
            Ok(_) => Ok(Runtime { strings: std::mem::take(&mut self.strings), hook: self.hook.take(), down: false }),
            Err(e) => {
                *REPORT.lock().unwrap_or_else(PoisonError::into_inner) = None;
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
            hook.panic.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(p);
            -libc::EIO
        }
    }
}

thread_local! {
    /// The lines `xc_opts_set` reported while `Builder::option` ran on this thread.
    static OPTION_WHY: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

unsafe extern "C" fn option_reason(line: *const c_char) {
    if line.is_null() {
        return;
    }
    // SAFETY: libxcall passes a NUL-terminated line, valid during the call.
    let line = unsafe { CStr::from_ptr(line) }.to_string_lossy().into_owned();
    OPTION_WHY.with(|w| w.borrow_mut().push(line));
}

unsafe extern "C" fn report_trampoline(line: *const c_char) {
    if line.is_null() {
        return;
    }
    // SAFETY: libxcall passes a NUL-terminated line, valid during the call.
    let line = unsafe { CStr::from_ptr(line) }.to_string_lossy();
    let hook = REPORT.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if let Some(hook) = hook {
        let _ = catch_unwind(AssertUnwindSafe(|| hook(&line)));
    } else {
        eprintln!("{line}");
    }
}

/// The libxcall runtime of the process: one pinned worker thread per CPU.
///
/// There is one per process: building a second while one is up fails with [`Error::Busy`].
/// Dropping it runs everything still queued, then stops and joins the workers (`xc_exit`).
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
    strings: Vec<CString>,
    hook: Option<Box<Hook>>,
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
    /// # Errors
    /// [`Error::WouldDeadlock`] when called on a worker (inside a call): the runtime then
    /// stays up until the process ends; the errno of writing the trace file (the runtime is
    /// down all the same).
    pub fn shutdown(mut self) -> Result<(), Error> {
        self.exit()
    }

    fn exit(&mut self) -> Result<(), Error> {
        if self.down {
            return Ok(());
        }
        self.down = true;
        // SAFETY: xc_exit takes no argument; the options' strings are still alive.
        let r = check(unsafe { xcall_sys::xc_exit() });
        match r {
            Err(Error::WouldDeadlock) | Err(Error::Busy) => {
                // still up: what the options point to must stay valid while it is
                std::mem::forget(std::mem::take(&mut self.strings));
                std::mem::forget(self.hook.take());
            }
            _ => {
                *REPORT.lock().unwrap_or_else(PoisonError::into_inner) = None;
                UP.store(false, Ordering::Release);
            }
        }
        r.map(|_| ())
    }
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
