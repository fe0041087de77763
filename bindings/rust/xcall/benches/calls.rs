//! spawn_on and call_on beside crossbeam-channel and std::sync::mpsc, between two pinned
//! threads: the caller on one CPU, the runtime's worker (or the channel's consumer thread) on
//! another. One-way: a boxed closure sent and run there (spawn_on; a bounded channel of boxed
//! closures). Round trip: a closure run there and its result back (call_on; a request on the
//! channel and the reply on a second one).
//!
//! The statistic is xcall-bench's: spans of back-to-back operations between two timestamps,
//! one sample (the span's time per operation) a span; the median and p90/p99 over spans. The
//! cases alternate block by block, so that a drift of the machine falls on all of them alike.
//!
//!   cargo bench -p xcall --bench calls -- [--blocks N] [--json FILE]
//!
//! It prints a table and the ratios, and writes an xcall-bench results file (bench
//! "rust-calls") that xcall-report compares and draws.

use crossbeam_channel as cb;
use std::hint::black_box;
use std::sync::mpsc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use xcall::{CpuSet, Handle, Runtime};

mod common;
use common::{json_str, quantile};

const SPAN: usize = 100; // operations between two timestamps: the clock is under 1% of a span
const SPANS_PER_BLOCK: usize = 20;
const CAPACITY: usize = 256; // a channel's bound: libxcall's default ring per (thread, CPU)

/// What the caller sends a channel's consumer: a closure to run, or one whose result it wants.
enum Msg {
    One(Box<dyn FnOnce() + Send>),
    Req(Box<dyn FnOnce() -> u64 + Send>),
}

/// The two channel libraries behind one face.
trait Chan {
    fn send(&self, m: Msg);
    fn reply(&self) -> u64;
}

struct Crossbeam(cb::Sender<Msg>, cb::Receiver<u64>);
struct Mpsc(mpsc::SyncSender<Msg>, mpsc::Receiver<u64>);

impl Chan for Crossbeam {
    fn send(&self, m: Msg) {
        self.0.send(m).expect("consumer alive");
    }
    fn reply(&self) -> u64 {
        self.1.recv().expect("consumer alive")
    }
}

impl Chan for Mpsc {
    fn send(&self, m: Msg) {
        self.0.send(m).expect("consumer alive");
    }
    fn reply(&self) -> u64 {
        self.1.recv().expect("consumer alive")
    }
}

/// The consumer: pinned to its CPU, runs what comes until the channel closes.
fn consume(cpu: usize, next: impl Fn() -> Option<Msg>, reply: impl Fn(u64)) {
    xcall::pin_current_thread(cpu).expect("pin the consumer");
    while let Some(m) = next() {
        match m {
            Msg::One(f) => f(),
            Msg::Req(f) => reply(f()),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Case {
    SpawnOn,
    CrossbeamOneWay,
    MpscOneWay,
    CallOn,
    CrossbeamRoundTrip,
    MpscRoundTrip,
}

impl Case {
    const ALL: [Case; 6] = [
        Case::SpawnOn,
        Case::CrossbeamOneWay,
        Case::MpscOneWay,
        Case::CallOn,
        Case::CrossbeamRoundTrip,
        Case::MpscRoundTrip,
    ];

    fn name(self) -> &'static str {
        match self {
            Case::SpawnOn => "xcall-spawn_on",
            Case::CrossbeamOneWay => "crossbeam-one-way",
            Case::MpscOneWay => "mpsc-one-way",
            Case::CallOn => "xcall-call_on",
            Case::CrossbeamRoundTrip => "crossbeam-round-trip",
            Case::MpscRoundTrip => "mpsc-round-trip",
        }
    }
}

struct Ctx<'a> {
    h: Handle,
    target: usize,
    crossbeam: &'a Crossbeam,
    mpsc: &'a Mpsc,
}

/// One block of one case: SPANS_PER_BLOCK spans, each span's time per operation in ns. A
/// one-way block ends with a round trip, so that nothing it queued spills into the next case.
fn block(c: &Ctx<'_>, case: Case, out: &mut Vec<f64>) {
    let one_way = |ch: &dyn Chan, out: &mut Vec<f64>| {
        for _ in 0..SPANS_PER_BLOCK {
            let t0 = Instant::now();
            for i in 0..SPAN {
                ch.send(Msg::One(Box::new(move || {
                    black_box(i);
                })));
            }
            out.push(t0.elapsed().as_nanos() as f64 / SPAN as f64);
        }
        ch.send(Msg::Req(Box::new(|| 0)));
        ch.reply();
    };
    let round_trip = |ch: &dyn Chan, out: &mut Vec<f64>| {
        for _ in 0..SPANS_PER_BLOCK {
            let t0 = Instant::now();
            for i in 0..SPAN {
                ch.send(Msg::Req(Box::new(move || black_box(i as u64))));
                black_box(ch.reply());
            }
            out.push(t0.elapsed().as_nanos() as f64 / SPAN as f64);
        }
    };
    match case {
        Case::SpawnOn => {
            for _ in 0..SPANS_PER_BLOCK {
                let t0 = Instant::now();
                for i in 0..SPAN {
                    c.h.spawn_on(c.target, move || {
                        black_box(i);
                    })
                    .expect("spawn_on");
                }
                out.push(t0.elapsed().as_nanos() as f64 / SPAN as f64);
            }
            c.h.call_on(c.target, || ()).expect("call_on");
        }
        Case::CallOn => {
            for _ in 0..SPANS_PER_BLOCK {
                let t0 = Instant::now();
                for i in 0..SPAN {
                    black_box(c.h.call_on(c.target, move || black_box(i as u64)).expect("call_on"));
                }
                out.push(t0.elapsed().as_nanos() as f64 / SPAN as f64);
            }
        }
        Case::CrossbeamOneWay => one_way(c.crossbeam, out),
        Case::MpscOneWay => one_way(c.mpsc, out),
        Case::CrossbeamRoundTrip => round_trip(c.crossbeam, out),
        Case::MpscRoundTrip => round_trip(c.mpsc, out),
    }
}

struct Summary {
    n: usize,
    mean: f64,
    min: f64,
    max: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    stddev: f64,
}


fn summarise(samples: &[f64]) -> Summary {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / s.len() as f64;
    Summary {
        n: s.len() * SPAN,
        mean,
        min: s[0],
        max: s[s.len() - 1],
        p50: quantile(&s, 0.5),
        p90: quantile(&s, 0.9),
        p99: quantile(&s, 0.99),
        stddev: var.sqrt(),
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}


/// The date as xcall-bench writes it, in UTC, from the Unix time.
fn utc_now() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // civil from days (Howard Hinnant's algorithm)
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

fn record(
    case: &str,
    unit: &str,
    s: &Summary,
    cpus: (usize, usize),
    params: &str,
    better: &str,
) -> String {
    format!(
        "    {{\"bench\": \"rust-calls\", \"case\": {}, \"unit\": \"{unit}\", \"n\": {}, \"mean\": {:.3}, \
         \"stddev\": {:.3}, \"p50\": {:.3}, \"p90\": {:.3}, \"p99\": {:.3}, \"max\": {:.3}, \"min\": {:.3}, \
         \"repeat\": 0, \"cpus\": [{}, {}], \"params\": {{{params}}}, \"better\": \"{better}\"}}",
        json_str(case),
        s.n,
        s.mean,
        s.stddev,
        s.p50,
        s.p90,
        s.p99,
        s.max,
        s.min,
        cpus.0,
        cpus.1
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (blocks, json) = common::args("calls", 50, "rust-calls.json");
    let cpus: Vec<usize> = CpuSet::current_affinity().expect("affinity").iter().collect();
    if cpus.len() < 2 {
        eprintln!("calls: needs 2 CPUs, this process has {}: nothing measured", cpus.len());
        return;
    }
    let (caller, target) = (cpus[0], cpus[1]);
    let rt = Runtime::builder().cpus(&CpuSet::from_cpus([target]).expect("cpu")).build().expect("runtime");

    let (cb_tx, cb_rx) = cb::bounded::<Msg>(CAPACITY);
    let (cb_rtx, cb_rrx) = cb::bounded::<u64>(CAPACITY);
    let (mp_tx, mp_rx) = mpsc::sync_channel::<Msg>(CAPACITY);
    let (mp_rtx, mp_rrx) = mpsc::sync_channel::<u64>(CAPACITY);
    let consumers = [
        std::thread::spawn(move || consume(target, || cb_rx.recv().ok(), |v| cb_rtx.send(v).expect("reply"))),
        std::thread::spawn(move || consume(target, || mp_rx.recv().ok(), |v| mp_rtx.send(v).expect("reply"))),
    ];
    xcall::pin_current_thread(caller).expect("pin the caller");
    let (crossbeam, mpsc_) = (Crossbeam(cb_tx, cb_rrx), Mpsc(mp_tx, mp_rrx));
    let ctx = Ctx { h: rt.handle(), target, crossbeam: &crossbeam, mpsc: &mpsc_ };

    // warm every path, then alternate the cases block by block
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); Case::ALL.len()];
    for &case in &Case::ALL {
        block(&ctx, case, &mut Vec::new());
    }
    let t0 = Instant::now();
    for b in 0..blocks {
        // a rotating start, so that no case always follows the same one
        for j in 0..Case::ALL.len() {
            let k = (j + b) % Case::ALL.len();
            block(&ctx, Case::ALL[k], &mut samples[k]);
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    drop((crossbeam, mpsc_));
    for c in consumers {
        c.join().expect("consumer");
    }
    let stats: Vec<Summary> = samples.iter().map(|s| summarise(s)).collect();
    drop(rt);

    println!(
        "rust-calls: caller on CPU {caller}, target CPU {target}; {blocks} alternating blocks of {SPANS_PER_BLOCK} spans of {SPAN} operations ({wall:.1} s)"
    );
    println!("{:<22} {:>10} {:>10} {:>10} {:>10}", "case", "n", "p50 ns", "p90 ns", "p99 ns");
    for (case, s) in Case::ALL.iter().zip(&stats) {
        println!("{:<22} {:>10} {:>10.1} {:>10.1} {:>10.1}", case.name(), s.n, s.p50, s.p90, s.p99);
    }
    let p50 = |c: Case| stats[Case::ALL.iter().position(|&x| x == c).unwrap()].p50;
    let ratios = [
        ("crossbeam-one-way / xcall-spawn_on", Case::CrossbeamOneWay, Case::SpawnOn),
        ("mpsc-one-way / xcall-spawn_on", Case::MpscOneWay, Case::SpawnOn),
        ("crossbeam-round-trip / xcall-call_on", Case::CrossbeamRoundTrip, Case::CallOn),
        ("mpsc-round-trip / xcall-call_on", Case::MpscRoundTrip, Case::CallOn),
    ];
    println!("ratios of p50 (above 1: xcall is faster):");
    let mut ratio_records = Vec::new();
    for (name, other, ours) in ratios {
        let r = p50(other) / p50(ours);
        println!("  {name:<38} {r:>6.2}x");
        let s = Summary { n: 1, mean: r, min: r, max: r, p50: r, p90: r, p99: r, stddev: 0.0 };
        ratio_records.push(record(name, "ratio", &s, (caller, target), "\"statistic\": \"p50\"", "higher"));
    }

    let host = format!(
        "{{\"hostname\": {}, \"cpu_model\": {}, \"cpus_online\": {}, \"kernel\": {}}}",
        json_str(read("/proc/sys/kernel/hostname").trim()),
        json_str(
            read("/proc/cpuinfo")
                .lines()
                .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split(':').nth(1)))
                .unwrap_or("unknown")
                .trim()
        ),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        json_str(read("/proc/sys/kernel/osrelease").trim()),
    );
    let mut recs: Vec<String> = Case::ALL
        .iter()
        .zip(&stats)
        .map(|(c, s)| {
            let params = format!(
                "\"timing\": \"spans of {SPAN} back-to-back operations, one sample a span\", \"blocks\": {blocks}, \"capacity\": {CAPACITY}"
            );
            record(c.name(), "ns", s, (caller, target), &params, "lower")
        })
        .collect();
    recs.extend(ratio_records);
    let cmd: Vec<String> = args.iter().map(|a| json_str(a)).collect();
    let doc = format!(
        "{{\n  \"schema_version\": 1,\n  \"tool\": \"xcall-rust-bench\",\n  \"tool_version\": \"{}\",\n  \"created\": \"{}\",\n  \"command\": [{}],\n  \"host\": {host},\n  \"results\": [\n{}\n  ]\n}}\n",
        env!("CARGO_PKG_VERSION"),
        utc_now(),
        cmd.join(", "),
        recs.join(",\n")
    );
    match std::fs::write(&json, doc) {
        Ok(()) => println!("wrote {json}"),
        Err(e) => {
            eprintln!("calls: {json}: {e}");
            std::process::exit(1);
        }
    }
}
