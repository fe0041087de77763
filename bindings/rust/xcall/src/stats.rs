//! libxcall's counters.

/// Counters of one CPU, or summed over all: `struct xc_stats` itself, each field documented
/// there and in `xcall.h`. `later - earlier` is what happened between two readings
/// (`xc_stats_delta`: counter by counter, `poll_ns_now` the later reading's).
pub use xcall_sys::xc_stats as Stats;
