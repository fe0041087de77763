//! libxcall's counters.

/// Counters of one CPU, or summed over all (`struct xc_stats`); see the README's glossary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Call functions run on the CPU (inline self-calls included).
    pub calls: u64,
    /// Futex wakes (eventfd writes, for an attached thread) issued to the CPU's worker.
    pub kicks_sent: u64,
    /// Kicks skipped because the worker was polling or running.
    pub kicks_elided: u64,
    /// Enqueues that needed no kick because the queue was not empty.
    pub kicks_coalesced: u64,
    /// Kicks skipped because another sender's wakeup was under way.
    pub free_rides: u64,
    /// Times the worker went to sleep.
    pub sleeps: u64,
    /// Times it came back from such a sleep.
    pub wakeups: u64,
    /// Work items run.
    pub work_run: u64,
    /// The current idle poll window, in ns (a value, not a count).
    pub poll_ns_now: u64,
    /// Urgent calls run.
    pub urgent_calls: u64,
    /// Signals sent to interrupt the CPU's busy worker.
    pub signals_sent: u64,
    /// Stuck-call reports about calls waiting on the CPU.
    pub stuck_reports: u64,
    /// Trace events overwritten before they were written out.
    pub trace_drops: u64,
    /// Calls and work items that ran with the worker displaced from its CPU by the OS.
    pub displaced: u64,
    /// membarrier(2) calls the CPU's worker made.
    pub barriers: u64,
}

impl From<xcall_sys::xc_stats> for Stats {
    fn from(s: xcall_sys::xc_stats) -> Stats {
        Stats {
            calls: s.calls,
            kicks_sent: s.kicks_sent,
            kicks_elided: s.kicks_elided,
            kicks_coalesced: s.kicks_coalesced,
            free_rides: s.free_rides,
            sleeps: s.sleeps,
            wakeups: s.wakeups,
            work_run: s.work_run,
            poll_ns_now: s.poll_ns_now,
            urgent_calls: s.urgent_calls,
            signals_sent: s.signals_sent,
            stuck_reports: s.stuck_reports,
            trace_drops: s.trace_drops,
            displaced: s.displaced,
            barriers: s.barriers,
        }
    }
}

impl std::ops::Sub for Stats {
    type Output = Stats;

    /// What happened between two readings, counter by counter (`xc_stats_delta`);
    /// `poll_ns_now` is the later reading's.
    fn sub(self, earlier: Stats) -> Stats {
        let d = |a: u64, b: u64| a.wrapping_sub(b);
        Stats {
            calls: d(self.calls, earlier.calls),
            kicks_sent: d(self.kicks_sent, earlier.kicks_sent),
            kicks_elided: d(self.kicks_elided, earlier.kicks_elided),
            kicks_coalesced: d(self.kicks_coalesced, earlier.kicks_coalesced),
            free_rides: d(self.free_rides, earlier.free_rides),
            sleeps: d(self.sleeps, earlier.sleeps),
            wakeups: d(self.wakeups, earlier.wakeups),
            work_run: d(self.work_run, earlier.work_run),
            poll_ns_now: self.poll_ns_now,
            urgent_calls: d(self.urgent_calls, earlier.urgent_calls),
            signals_sent: d(self.signals_sent, earlier.signals_sent),
            stuck_reports: d(self.stuck_reports, earlier.stuck_reports),
            trace_drops: d(self.trace_drops, earlier.trace_drops),
            displaced: d(self.displaced, earlier.displaced),
            barriers: d(self.barriers, earlier.barriers),
        }
    }
}
