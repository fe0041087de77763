//! libxcall's counters.

/// libxcall's counters (`struct xc_stats`), of one CPU ([`Handle::stats`](crate::Handle::stats))
/// or summed over every CPU ([`Handle::total_stats`](crate::Handle::total_stats)); each field
/// is documented in `xcall.h` and in [`xcall_sys::xc_stats`].
///
/// `later - earlier` is what happened between two readings: counter by counter, with the
/// later reading's `poll_ns_now`, which is a value, not a count (`xc_stats_delta`).
pub type Stats = xcall_sys::xc_stats;
