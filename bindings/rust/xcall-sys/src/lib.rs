//! Raw declarations of libxcall's `include/xcall.h`, and libxcall itself, built from the
//! repository's `src/` by the build script (no system install needed).
//!
//! Everything here is `unsafe` to use and follows the header's own rules, function by
//! function: read the kernel-doc comments in `xcall.h`. The safe API is the `xcall` crate.
//!
//! The structs are declared through one macro that also records their layout, so that the
//! `layout` test compares each struct's size, alignment and every field's offset and size with
//! a table the build script compiles from the header itself: a field added to `xcall.h`
//! without this crate following fails the test by name.
#![no_std]
#![allow(non_camel_case_types)]
#![deny(missing_docs)]

use core::ffi::{c_char, c_int, c_long, c_uint, c_void};
pub use libc::cpu_set_t;

/// The layout of one struct as Rust sees it.
#[derive(Debug)]
pub struct StructLayout {
    /// The struct's name in `xcall.h`, without `struct`.
    pub name: &'static str,
    /// `size_of`.
    pub size: usize,
    /// `align_of`.
    pub align: usize,
    /// Every field, in declaration order.
    pub fields: &'static [FieldLayout],
}

/// The layout of one field as Rust sees it.
#[derive(Debug)]
pub struct FieldLayout {
    /// The field's name in `xcall.h`.
    pub name: &'static str,
    /// `offset_of`.
    pub offset: usize,
    /// `size_of` the field's type.
    pub size: usize,
}

macro_rules! c_structs {
    ($layouts:ident; $( $(#[$m:meta])* pub struct $name:ident { $( $(#[$fm:meta])* pub $f:ident : $t:ty ),* $(,)? } )*) => {
        $(
            $(#[$m])*
            #[repr(C)]
            pub struct $name { $( $(#[$fm])* pub $f: $t ),* }
        )*
        /// Structs this crate declares, as Rust lays them out (the layout test's input).
        pub const $layouts: &[StructLayout] = &[ $(
            StructLayout {
                name: stringify!($name),
                size: core::mem::size_of::<$name>(),
                align: core::mem::align_of::<$name>(),
                fields: &[ $( FieldLayout {
                    name: stringify!($f),
                    offset: core::mem::offset_of!($name, $f),
                    size: core::mem::size_of::<$t>(),
                } ),* ],
            }
        ),* ];
    };
}

macro_rules! c_consts {
    ($( $(#[$m:meta])* $name:ident : $t:ty = $v:expr; )*) => {
        $( $(#[$m])* pub const $name: $t = $v; )*
        /// Every constant this crate declares, by its name in `xcall.h` (the layout test's input).
        pub const CONSTANTS: &[(&str, i64)] = &[ $( (stringify!($name), $name as i64) ),* ];
    };
}

/// `xc_func_t`: a call's or work item's function.
pub type xc_func_t = Option<unsafe extern "C" fn(arg: *mut c_void)>;
/// `xc_cond_t`: `xc_call_cond()`'s predicate.
pub type xc_cond_t = Option<unsafe extern "C" fn(cpu: c_int, arg: *mut c_void) -> bool>;

c_consts! {
    /// Return only after fn ran on every target.
    XC_WAIT: c_uint = 1 << 0;
    /// many/all/cond: also run fn on the calling worker's CPU.
    XC_RUN_LOCAL: c_uint = 1 << 1;
    /// Interrupt a busy worker: fn runs in a signal handler.
    XC_URGENT: c_uint = 1 << 2;
    /// Every call flag.
    XC_FLAGS_ALL: c_uint = XC_WAIT | XC_RUN_LOCAL | XC_URGENT;
    /// `xc_opts.stuck_ms`: no stuck-call reports.
    XC_STUCK_OFF: c_int = -1;
    /// `xc_opts.follow_os`: workers never look whether the OS took their CPU.
    XC_FOLLOW_OS_OFF: c_int = -1;
    /// Idle poll window grows after short sleeps, shrinks after long ones.
    XC_POLL_ADAPTIVE: c_long = 0;
    /// Sleep at once.
    XC_POLL_NONE: c_long = -1;
    /// Never sleep.
    XC_POLL_FOREVER: c_long = -2;
}

c_structs! {
    DECLARED_LAYOUTS;
    /// `struct xc_opts`: runtime options; all zero means every default.
    #[derive(Debug, Clone, Copy)]
    pub struct xc_opts {
        /// cpulist such as "0-3,8"; NULL = the CPUs the process may run on.
        pub cpus: *const c_char,
        /// Start workers one at a time.
        pub serial_bringup: bool,
        /// `XC_POLL_*` or a fixed idle poll window in ns.
        pub poll_ns: c_long,
        /// Runs on each worker, pinned, before it goes online.
        pub cpu_init: Option<unsafe extern "C" fn(cpu: c_int, arg: *mut c_void) -> c_int>,
        /// Passed to `cpu_init`.
        pub cpu_init_arg: *mut c_void,
        /// How long a worker may take to report alive; 0 = 10000.
        pub bringup_timeout_ms: c_uint,
        /// Receives every diagnostic line, with `report_ctx`; NULL = stderr.
        pub report: Option<unsafe extern "C" fn(ctx: *mut c_void, line: *const c_char)>,
        /// Passed to `report` as it is.
        pub report_ctx: *mut c_void,
        /// Stuck-call report delay in ms; 0 = 5000, `XC_STUCK_OFF` = never.
        pub stuck_ms: c_int,
        /// Chrome trace JSON written here at `xc_exit()`; NULL = no tracing.
        pub trace_file: *const c_char,
        /// Trace ring size in events; 0 = 65536.
        pub trace_events: c_uint,
        /// The urgent signal; 0 = SIGRTMIN + 2.
        pub urgent_signal: c_int,
        /// 0 = follow the OS taking CPUs away; `XC_FOLLOW_OS_OFF` = never look.
        pub follow_os: c_int,
        /// cpulist of CPUs that application threads attach to; NULL = none.
        pub attach: *const c_char,
        /// Ring size per (thread, CPU); 0 = 256.
        pub ring_entries: c_uint,
        /// Worker thread stack in KiB; 0 = the process's default.
        pub stack_kb: c_uint,
    }

    /// `struct xc__link` (private).
    #[derive(Debug)]
    pub struct xc__link {
        /// Next in a list.
        pub next: *mut xc__link,
    }

    /// `struct xc__completion` (private).
    #[derive(Debug, Clone, Copy)]
    pub struct xc__completion {
        /// Atomic in C.
        pub word: u32,
        /// The sleeping waiter.
        pub waiter: *mut c_void,
    }

    /// `struct xc_call_on_done`: an async call's completion callback.
    #[derive(Debug, Clone, Copy)]
    pub struct xc_call_on_done {
        /// Run on the target after libxcall's last write to the descriptor; NULL = none.
        pub fn_: xc_func_t,
        /// Its argument.
        pub arg: *mut c_void,
    }

    /// `struct xc_call`: a caller-owned descriptor for `xc_call_async()`; zero it first.
    /// `on_done` shares its room with the private `_done` of waited descriptors, which
    /// this crate never uses (see [`SHARED_ROOM`]).
    #[derive(Debug)]
    #[repr(align(64))]
    pub struct xc_call {
        /// The function.
        pub fn_: xc_func_t,
        /// Its argument.
        pub arg: *mut c_void,
        /// Private.
        pub _link: xc__link,
        /// Private (atomic in C).
        pub _flags: u16,
        /// Private.
        pub _src_cpu: i16,
        /// Private.
        pub _trace_id: u32,
        /// Private.
        pub _completion: *mut xc__completion,
        /// Private.
        pub _owner: *mut c_void,
        /// The completion callback (async descriptors only).
        pub on_done: xc_call_on_done,
    }

    /// `struct xc_work`: a deferred per-CPU work item; zero it first.
    #[derive(Debug)]
    pub struct xc_work {
        /// The function.
        pub fn_: xc_func_t,
        /// Its argument.
        pub arg: *mut c_void,
        /// Private.
        pub _link: xc__link,
        /// Private (atomic in C).
        pub _flags: c_uint,
        /// Private.
        pub _src_cpu: c_int,
        /// Private.
        pub _trace_id: u32,
    }
}

// `struct xc_stats`, generated by the build script from the header's XC_STATS_COUNTERS list
// (a field, with its meaning as its doc, per counter), so that a counter added there is here.
include!(concat!(env!("OUT_DIR"), "/xc_stats.rs"));

/// Every struct this crate declares, as Rust lays it out (the layout test's input).
pub const LAYOUTS: [&[StructLayout]; 2] = [DECLARED_LAYOUTS, STATS_LAYOUTS];

extern "C" {
    /// Start one worker per CPU; `opts_size` is `size_of::<xc_opts>()` ([`xc_init`]).
    pub fn xc_init_sz(opts: *const xc_opts, opts_size: usize) -> c_int;
    /// Run what is queued, stop and join every worker.
    pub fn xc_exit() -> c_int;
    /// Run fn(arg) on one CPU.
    pub fn xc_call_single(cpu: c_int, fn_: xc_func_t, arg: *mut c_void, flags: c_uint) -> c_int;
    /// Run fn(arg) on every online CPU of a mask.
    pub fn xc_call_many(mask: *const cpu_set_t, fn_: xc_func_t, arg: *mut c_void, flags: c_uint) -> c_int;
    /// `xc_call_many()` on the CPUs for which cond(cpu, arg) holds.
    pub fn xc_call_cond(
        mask: *const cpu_set_t,
        cond: xc_cond_t,
        fn_: xc_func_t,
        arg: *mut c_void,
        flags: c_uint,
    ) -> c_int;
    /// Run fn(arg) on every online CPU.
    pub fn xc_call_all(fn_: xc_func_t, arg: *mut c_void, flags: c_uint) -> c_int;
    /// Run fn(arg) on the nearest online CPU of a mask; returns it.
    pub fn xc_call_any(mask: *const cpu_set_t, fn_: xc_func_t, arg: *mut c_void, flags: c_uint) -> c_int;
    /// Run call->fn(call->arg) on cpu, with the caller's descriptor.
    pub fn xc_call_async(cpu: c_int, call: *mut xc_call) -> c_int;
    /// True once an async call's function has returned.
    pub fn xc_call_done(call: *const xc_call) -> bool;
    /// Queue a work item to a CPU's task context.
    pub fn xc_queue_work(cpu: c_int, work: *mut xc_work) -> c_int;
    /// True while a work item is queued and has not started.
    pub fn xc_work_pending(work: *const xc_work) -> bool;
    /// Run the calls queued to the calling worker's CPU.
    pub fn xc_poll() -> c_int;
    /// Make the calling thread a CPU's worker.
    pub fn xc_worker_attach(cpu: c_int) -> c_int;
    /// The calling thread is no longer its CPU's worker.
    pub fn xc_worker_detach() -> c_int;
    /// The attached thread's eventfd.
    pub fn xc_worker_fd() -> c_int;
    /// The attached thread is about to sleep in its own wait.
    pub fn xc_worker_sleep_begin() -> c_int;
    /// The attached thread is awake.
    pub fn xc_worker_sleep_end() -> c_int;
    /// Take a CPU offline.
    pub fn xc_cpu_offline(cpu: c_int) -> c_int;
    /// Bring a CPU back online.
    pub fn xc_cpu_online(cpu: c_int) -> c_int;
    /// The calling worker's CPU, or -1.
    pub fn xc_this_cpu() -> c_int;
    /// One past the highest CPU id of the runtime's set, or -ENXIO.
    pub fn xc_cpu_max() -> c_int;
    /// The CPUs whose workers are online.
    pub fn xc_online_mask(out: *mut cpu_set_t) -> c_int;
    /// Read one CPU's counters, or (cpu = -1) their sum, into `size` bytes ([`xc_stats_get`]).
    pub fn xc_stats_get_sz(cpu: c_int, out: *mut xc_stats, size: usize) -> c_int;
    /// out = later - earlier ([`xc_stats_delta`]).
    pub fn xc_stats_delta_sz(out: *mut xc_stats, earlier: *const xc_stats, later: *const xc_stats, size: usize);
    /// sum += add ([`xc_stats_add`]).
    pub fn xc_stats_add_sz(sum: *mut xc_stats, add: *const xc_stats, size: usize);
    /// Write the recorded events as Chrome trace JSON.
    pub fn xc_trace_dump(path: *const c_char) -> c_int;
    /// Parse a cpulist.
    pub fn xc_cpulist_parse(list: *const c_char, out: *mut cpu_set_t) -> c_int;
    /// Set an option from its environment spelling ([`xc_opts_set`]).
    pub fn xc_opts_set_sz(o: *mut xc_opts, opts_size: usize, var: *const c_char, value: *const c_char) -> c_int;
    /// Spell an option back ([`xc_opts_get`]).
    pub fn xc_opts_get_sz(o: *const xc_opts, opts_size: usize, var: *const c_char, buf: *mut c_char, size: usize)
        -> c_int;
    /// Write a set as a cpulist.
    pub fn xc_cpulist_format(set: *const cpu_set_t, buf: *mut c_char, size: usize) -> c_int;
}

/// Members of `xcall.h` that share an anonymous union with a member declared here, and are
/// not declared themselves: (struct, the undeclared private member, the declared member).
/// The layout test checks each has the declared member's offset and size.
pub const SHARED_ROOM: &[(&str, &str, &str)] = &[("xc_call", "_done", "on_done")];

/// One row of the build script's C table (see the crate docs).
#[doc(hidden)]
#[repr(C)]
pub struct CLayoutRow {
    /// Struct or constant name; NULL ends the table.
    pub item: *const c_char,
    /// Field name; NULL for the struct itself; "#define" for a constant.
    pub field: *const c_char,
    /// Size, offset or value.
    pub a: i64,
    /// Alignment or field size.
    pub b: i64,
}

// xcall.h's macros over the sized functions (its ABI note): each passes the size of the struct
// as this crate declares it, which the layout test holds to the header's.

/// Start one worker per CPU (`xc_init`).
///
/// # Safety
/// `opts` is NULL or points to a valid `xc_opts`, as `xc_init` requires.
pub unsafe fn xc_init(opts: *const xc_opts) -> c_int {
    // SAFETY: the caller's; the size is the struct's own
    unsafe { xc_init_sz(opts, core::mem::size_of::<xc_opts>()) }
}

/// Read one CPU's counters, or (cpu = -1) their sum (`xc_stats_get`).
///
/// # Safety
/// `out` is NULL or points to a writable `xc_stats`.
pub unsafe fn xc_stats_get(cpu: c_int, out: *mut xc_stats) -> c_int {
    // SAFETY: the caller's; the size is the struct's own
    unsafe { xc_stats_get_sz(cpu, out, core::mem::size_of::<xc_stats>()) }
}

/// out = later - earlier (`xc_stats_delta`).
///
/// # Safety
/// Each points to a valid `xc_stats`; `out` may be either of the others.
pub unsafe fn xc_stats_delta(out: *mut xc_stats, earlier: *const xc_stats, later: *const xc_stats) {
    // SAFETY: the caller's; the size is the struct's own
    unsafe { xc_stats_delta_sz(out, earlier, later, core::mem::size_of::<xc_stats>()) }
}

/// sum += add (`xc_stats_add`).
///
/// # Safety
/// Both point to valid `xc_stats`.
pub unsafe fn xc_stats_add(sum: *mut xc_stats, add: *const xc_stats) {
    // SAFETY: the caller's; the size is the struct's own
    unsafe { xc_stats_add_sz(sum, add, core::mem::size_of::<xc_stats>()) }
}

/// Set an option from its environment spelling (`xc_opts_set`).
///
/// # Safety
/// `o` points to a valid `xc_opts`; `var` and `value` are NULL or NUL-terminated.
pub unsafe fn xc_opts_set(o: *mut xc_opts, var: *const c_char, value: *const c_char) -> c_int {
    // SAFETY: the caller's; the size is the struct's own
    unsafe { xc_opts_set_sz(o, core::mem::size_of::<xc_opts>(), var, value) }
}

/// Spell an option back (`xc_opts_get`).
///
/// # Safety
/// `o` points to a valid `xc_opts`, `var` is NUL-terminated, `buf` holds `size` bytes.
pub unsafe fn xc_opts_get(o: *const xc_opts, var: *const c_char, buf: *mut c_char, size: usize) -> c_int {
    // SAFETY: the caller's; the size is the struct's own
    unsafe { xc_opts_get_sz(o, core::mem::size_of::<xc_opts>(), var, buf, size) }
}

extern "C" {
    /// The table the build script compiled from the header.
    #[doc(hidden)]
    pub static xcsys_layout: [CLayoutRow; 0];
}

/// What happened between two readings, counter by counter; `poll_ns_now` is the later
/// reading's (libxcall's own `xc_stats_delta`).
impl core::ops::Sub for xc_stats {
    type Output = xc_stats;

    fn sub(self, earlier: xc_stats) -> xc_stats {
        let mut out = xc_stats::default();
        // SAFETY: three valid xc_stats; xc_stats_delta only reads the last two and writes the first.
        unsafe { xc_stats_delta(&mut out, &earlier, &self) };
        out
    }
}
