//! Sharded<T> beside the ways a Rust program shares per-CPU state without it, on one workload:
//! a per-CPU u64 counter incremented (and its new value read back). Four ways:
//!
//! - `sharded`: a `Sharded<u64>`, `invoke_on` (one `xc_call` to the owner CPU's worker),
//!   `invoke_on_all` for 1 -> all;
//! - `mutex`: an `Arc<Vec<Mutex<u64>>>`, one padded mutex per CPU, locked by the caller;
//! - `atomic`: one padded `AtomicU64` per CPU, `fetch_add` by the caller;
//! - `actor`: one thread per CPU, pinned there, that owns the counter and answers each request
//!   (a crossbeam bounded channel; the reply on the caller's own bounded channel); for
//!   1 -> all the requests go out to every actor before the replies are read.
//!
//! Three shapes: 1 -> 1 (a thread pinned to the first CPU, shard on the second), N -> 1 (a
//! thread pinned to each CPU, all on the first CPU's shard), 1 -> all (a thread on the first
//! CPU, every shard once an operation). And 1 -> 1 and 1 -> all again from the first CPU's
//! worker (`w 1->1`, `w 1->all`: the spans run inside one `call_on` there), as the code of a
//! thread-per-core program runs: its own CPU's shard is then reached inline, and a call to
//! another goes from worker to worker.
//!
//! The statistic is calls.rs's: spans of back-to-back operations between two timestamps, one
//! sample (the span's time per operation) a span, per calling thread; the median and p90/p99
//! over spans. The cases alternate block by block.
//!
//!   cargo bench -p xcall --bench sharded -- [--blocks N] [--json FILE]
//!
//! It prints a table and writes an xcall-bench results file (bench "rust-sharded").

use crossbeam_channel as cb;
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;
use xcall::{CpuSet, Runtime, Sharded};

mod common;
use common::{json_str, quantile};

const SPAN: usize = 100; // operations between two timestamps
const SPANS_PER_BLOCK: usize = 10;
const CAPACITY: usize = 256; // an actor's request bound: libxcall's default ring per (thread, CPU)

/// One cache line (two, for the adjacent-line prefetcher) per shard, as a per-CPU layout has.
#[repr(align(128))]
struct Padded<T>(T);

/// A request to an actor: the channel its answer goes back on.
type Req = cb::Sender<u64>;

struct State {
    h: xcall::Handle,
    cpus: Vec<usize>,
    sharded: Sharded<u64>,
    mutexes: Arc<Vec<Padded<Mutex<u64>>>>,
    atomics: Arc<Vec<Padded<AtomicU64>>>,
    actors: Vec<cb::Sender<Req>>, // by CPU number; a closed sender where no actor runs
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Sharded,
    Mutex,
    Atomic,
    Actor,
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    OneToOne,
    NToOne,
    OneToAll,
    WorkerOneToOne,
    WorkerOneToAll,
}

const WAYS: [Way; 4] = [Way::Sharded, Way::Mutex, Way::Atomic, Way::Actor];
const SHAPES: [Shape; 5] = [Shape::OneToOne, Shape::NToOne, Shape::OneToAll, Shape::WorkerOneToOne, Shape::WorkerOneToAll];

fn way_name(w: Way) -> &'static str {
    match w {
        Way::Sharded => "sharded",
        Way::Mutex => "mutex",
        Way::Atomic => "atomic",
        Way::Actor => "actor",
    }
}

fn shape_name(s: Shape) -> &'static str {
    match s {
        Shape::OneToOne => "1->1",
        Shape::NToOne => "N->1",
        Shape::OneToAll => "1->all",
        Shape::WorkerOneToOne => "w 1->1",
        Shape::WorkerOneToAll => "w 1->all",
    }
}

/// One increment of `cpu`'s counter by `way`, its new value returned.
fn one(st: &State, way: Way, cpu: usize, reply: &(cb::Sender<u64>, cb::Receiver<u64>)) -> u64 {
    match way {
        Way::Sharded => st.sharded.invoke_on(cpu, |c| {
            *c += 1;
            *c
        })
        .expect("invoke_on"),
        Way::Mutex => {
            let mut c = st.mutexes[cpu].0.lock().expect("mutex");
            *c += 1;
            *c
        }
        Way::Atomic => st.atomics[cpu].0.fetch_add(1, Ordering::Relaxed) + 1,
        Way::Actor => {
            st.actors[cpu].send(reply.0.clone()).expect("actor alive");
            reply.1.recv().expect("actor alive")
        }
    }
}

/// One increment of every CPU's counter, the sum of the new values returned.
fn all(st: &State, way: Way, reply: &(cb::Sender<u64>, cb::Receiver<u64>)) -> u64 {
    match way {
        Way::Sharded => st
            .sharded
            .map_reduce(
                |c| {
                    *c += 1;
                    *c
                },
                0,
                |a, v| a + v,
            )
            .expect("map_reduce"),
        Way::Actor => {
            for &cpu in &st.cpus {
                st.actors[cpu].send(reply.0.clone()).expect("actor alive");
            }
            st.cpus.iter().map(|_| reply.1.recv().expect("actor alive")).sum()
        }
        w => st.cpus.iter().map(|&cpu| one(st, w, cpu, reply)).sum(),
    }
}

/// SPANS_PER_BLOCK spans of one (way, shape) from the calling thread, each span's ns per op.
fn spans(st: &State, way: Way, shape: Shape, target: usize, out: &mut Vec<f64>) {
    let reply = cb::bounded::<u64>(st.cpus.len());
    for _ in 0..SPANS_PER_BLOCK {
        let t0 = Instant::now();
        for _ in 0..SPAN {
            black_box(match shape {
                Shape::OneToAll | Shape::WorkerOneToAll => all(st, way, &reply),
                _ => one(st, way, target, &reply),
            });
        }
        out.push(t0.elapsed().as_nanos() as f64 / SPAN as f64);
    }
}

/// One block: for N -> 1 a thread pinned to each CPU, started together; else the caller.
fn block(st: &State, way: Way, shape: Shape, out: &mut Vec<f64>) {
    let (first, second) = (st.cpus[0], st.cpus[1]);
    match shape {
        Shape::OneToOne => spans(st, way, shape, second, out),
        Shape::OneToAll => spans(st, way, shape, first, out),
        Shape::WorkerOneToOne | Shape::WorkerOneToAll => {
            let target = if shape == Shape::WorkerOneToOne { second } else { first };
            let got = st
                .h
                .call_on(first, || {
                    let mut v = Vec::new();
                    spans(st, way, shape, target, &mut v);
                    v
                })
                .expect("the spans on the first CPU's worker");
            out.extend(got);
        }
        Shape::NToOne => {
            let go = Barrier::new(st.cpus.len());
            let got: Vec<Vec<f64>> = std::thread::scope(|s| {
                let ts: Vec<_> = st
                    .cpus
                    .iter()
                    .map(|&cpu| {
                        let go = &go;
                        s.spawn(move || {
                            xcall::pin_current_thread(cpu).expect("pin a caller");
                            let mut v = Vec::new();
                            go.wait();
                            spans(st, way, shape, first, &mut v);
                            v
                        })
                    })
                    .collect();
                ts.into_iter().map(|t| t.join().expect("caller")).collect()
            });
            out.extend(got.into_iter().flatten());
        }
    }
}



fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (blocks, json) = common::args("sharded", 20, "rust-sharded.json");
    let cpus: Vec<usize> = CpuSet::current_affinity().expect("affinity").iter().collect();
    if cpus.len() < 2 {
        eprintln!("sharded: needs 2 CPUs, this process has {}: nothing measured", cpus.len());
        return;
    }
    let set = CpuSet::from_cpus(cpus.iter().copied()).expect("cpus");
    let rt = Runtime::builder().cpus(&set).build().expect("runtime");
    let h = rt.handle();
    let n = cpus.iter().max().expect("a cpu") + 1;
    let sharded = Sharded::new(&h, |_| 0u64).expect("sharded");
    let mut actors: Vec<cb::Sender<Req>> = (0..n).map(|_| cb::bounded(1).0).collect();
    let mut threads = Vec::new();
    for &cpu in &cpus {
        let (tx, rx) = cb::bounded::<Req>(CAPACITY);
        actors[cpu] = tx;
        threads.push(std::thread::spawn(move || {
            xcall::pin_current_thread(cpu).expect("pin an actor");
            let mut counter = 0u64;
            while let Ok(reply) = rx.recv() {
                counter += 1;
                let _ = reply.send(counter);
            }
        }));
    }
    let st = State {
        h,
        cpus: cpus.clone(),
        sharded,
        mutexes: Arc::new((0..n).map(|_| Padded(Mutex::new(0))).collect()),
        atomics: Arc::new((0..n).map(|_| Padded(AtomicU64::new(0))).collect()),
        actors,
    };
    xcall::pin_current_thread(cpus[0]).expect("pin the caller");

    let cases: Vec<(Shape, Way)> = SHAPES.iter().flat_map(|&s| WAYS.iter().map(move |&w| (s, w))).collect();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for &(s, w) in &cases {
        block(&st, w, s, &mut Vec::new()); // warm every path
    }
    let t0 = Instant::now();
    for b in 0..blocks {
        for j in 0..cases.len() {
            let k = (j + b) % cases.len();
            block(&st, cases[k].1, cases[k].0, &mut samples[k]);
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let State { sharded, actors, .. } = st;
    drop(actors);
    for t in threads {
        t.join().expect("actor");
    }
    drop(sharded);
    drop(rt);

    println!(
        "rust-sharded: CPUs {cpus:?}; 1->1 from CPU {} (w: its worker) to shard {}, N->1 to shard {}; {blocks} alternating blocks of {SPANS_PER_BLOCK} spans of {SPAN} operations ({wall:.1} s)",
        cpus[0], cpus[1], cpus[0]
    );
    println!("{:<8} {:<8} {:>8} {:>10} {:>10} {:>10}", "shape", "way", "n", "p50 ns", "p90 ns", "p99 ns");
    let mut recs = Vec::new();
    for (k, &(s, w)) in cases.iter().enumerate() {
        let mut v = samples[k].clone();
        v.sort_by(f64::total_cmp);
        let (p50, p90, p99) = (quantile(&v, 0.5), quantile(&v, 0.9), quantile(&v, 0.99));
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
        let name = format!("{} {}", shape_name(s), way_name(w));
        println!("{:<8} {:<8} {:>8} {:>10.1} {:>10.1} {:>10.1}", shape_name(s), way_name(w), v.len() * SPAN, p50, p90, p99);
        let mut r = String::new();
        let _ = write!(
            r,
            "    {{\"bench\": \"rust-sharded\", \"case\": {}, \"unit\": \"ns\", \"n\": {}, \"mean\": {mean:.3}, \
             \"stddev\": {sd:.3}, \"p50\": {p50:.3}, \"p90\": {p90:.3}, \"p99\": {p99:.3}, \"max\": {:.3}, \"min\": {:.3}, \
             \"repeat\": 0, \"cpus\": [{}], \"params\": {{\"timing\": \"spans of {SPAN} back-to-back operations, one sample a span and calling thread\", \"blocks\": {blocks}}}, \"better\": \"lower\"}}",
            json_str(&name),
            v.len() * SPAN,
            v[v.len() - 1],
            v[0],
            cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
        );
        recs.push(r);
    }
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split(':').nth(1)).map(|m| m.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let cmd: Vec<String> = args.iter().map(|a| json_str(a)).collect();
    let doc = format!(
        "{{\n  \"schema_version\": 1,\n  \"tool\": \"xcall-rust-bench\",\n  \"tool_version\": \"{}\",\n  \"command\": [{}],\n  \"host\": {{\"cpu_model\": {}, \"cpus_online\": {}}},\n  \"results\": [\n{}\n  ]\n}}\n",
        env!("CARGO_PKG_VERSION"),
        cmd.join(", "),
        json_str(&model),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        recs.join(",\n")
    );
    match std::fs::write(&json, doc) {
        Ok(()) => println!("wrote {json}"),
        Err(e) => {
            eprintln!("sharded: {json}: {e}");
            std::process::exit(1);
        }
    }
}
