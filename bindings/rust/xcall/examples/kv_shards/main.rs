//! A key-value server on 127.0.0.1 that speaks enough of Redis's protocol for
//! `redis-benchmark` and `redis-cli --pipe`: thread-per-core, one shard thread per CPU, each
//! libxcall's attached worker of its CPU with its own `SO_REUSEPORT` listener and epoll loop
//! (as `epoll_shards.rs`), and the store split over the shards in a `Sharded<Store>`.
//!
//! A key belongs to the shard its hash names. A pass of a shard's loop reads each readable
//! connection once, and puts every request on a key into a batch for the key's owner; at the
//! pass's end it runs its own batch (`invoke_on` to its own CPU: inline, one borrow of its
//! instance) and sends each other one as a single nowait call (`post_on`: the batch's own box
//! is the call's argument, nothing allocated). The owner runs it in its loop under its
//! `&mut Store` and sends the same box back with the answers, which go into each
//! connection's reply order. A loop that sleeps is woken by libxcall's kick only when it
//! really sleeps; one that awaits answers may first poll for them (`--await-us`, off by
//! default: on the 2-vCPU machine it bought nothing, README). No loop blocks on a round
//! trip, no lock is taken, and once the buffers have grown a request allocates nothing.
//!
//! It speaks RESP arrays and inline commands: `PING`, `ECHO`, `SET key value`, `GET key`,
//! `INCR key`, `DEL key...`, `EXISTS key...` (each key run by its owner, the counts summed:
//! not atomic across shards), pipelined; `CONFIG GET` of `save` and `appendonly` answers as
//! a server that saves nothing (`redis-benchmark` asks); anything else `-ERR`. Replies go
//! out in request order per connection; a client that closes its side still gets every
//! reply to what it sent before.
//!
//! Two other ways a Rust user would share the store run the same loops, parser and batches,
//! for the bench: `mutex` (one `Mutex<Store>` per shard: the reading shard runs each batch
//! itself under its owner's lock, no forwarding) and `channel` (batches forwarded through a
//! crossbeam channel per shard, whose loop an eventfd wakes while it sleeps).
//!
//!   cargo run --example kv_shards                      # the self-check below, every mode
//!   cargo run --example kv_shards -- serve [--mode M] [--port P]   # until stdin closes
//!   cargo run --release --example kv_shards -- bench [--json FILE] # see --help
//!   cargo run --release --example kv_shards -- scale [--json FILE] # 1, 2, 4, ... shards
//!
//! The check, in each mode: the crate's own client checks every reply (RESP and inline,
//! pipelined, keys of every shard, 8 connections at once and a counter they share); then,
//! where `redis-benchmark` (Debian's redis-tools) is installed, it loads the server briefly
//! and `GET` of its INCR key must equal the INCRs the server counted. The tests (`cargo
//! test`) add connections closed while their requests are out at other shards, and
//! `redis-cli --pipe` of 10,000 SETs.

mod allocs;
mod batch;
mod bench;
mod check;
mod client;
mod conn;
mod profile;
mod resp;
mod server;
mod store;

use bench::Plan;
use server::{run_server, Mode};
use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

#[global_allocator]
static ALLOC: allocs::Counting = allocs::Counting;

const USAGE: &str = "usage: kv_shards [check]            the self-check, every mode
       kv_shards serve [--mode M] [--port P] [--shards N] [--await-us U]
                                       serve on 127.0.0.1:P (6380) until stdin closes, then
                                       print what the shards counted; M: xcall (default),
                                       mutex or channel
       kv_shards bench [options]       every mode and redis-server under redis-benchmark,
                                       alternated round by round
       kv_shards scale [options]       the same at 1, 2, 4, ... shards (a many-core machine)
       kv_shards profile [options] [--dir D]
                                       each configuration as a process under perf stat (system
                                       calls by kind), perf record (on-CPU time by kernel path)
                                       and callgrind (instructions), a fixed redis-benchmark
                                       stream (--requests 40000), per request
options of bench and scale:
  --rounds R          rounds (bench 3, scale 1)
  --requests N        requests a pipelined test (200000); unpipelined tests send N/4
  --clients C         redis-benchmark -c (50)
  --pipelines LIST    redis-benchmark -P values (16,1)
  --tests LIST        redis-benchmark -t tests (set,get,incr)
  --keyspace K        redis-benchmark -r K: random keys of K (bench: none, one key a test;
                      scale: 1000000)
  --shards N          bench: shards on the first N CPUs (all); scale: a list (1,2,4,...)
  --client-cpus LIST  where redis-benchmark runs (bench: the last CPU; scale: the last
                      quarter of the CPUs, none of them a shard's)
  --threads T         redis-benchmark --threads (1; scale: one per client CPU)
  --json FILE         the results (docs/results-format.md)
  --markdown FILE     the tables, in markdown
  --await-us U        (serve too) how long a shard that awaits answers from others polls
                      for them before it sleeps, microseconds (0)";

/// The options of `cmd` as (name, value) pairs, each one it takes; else the error line.
fn options(cmd: &str, rest: &[String]) -> Result<Vec<(String, String)>, String> {
    let bench = ["--await-us", "--keyspace", "--rounds", "--requests", "--clients", "--pipelines", "--tests", "--shards", "--client-cpus", "--threads", "--json", "--markdown"];
    let takes: &[&str] = match cmd {
        "serve" => &["--mode", "--port", "--shards", "--await-us"],
        "bench" | "scale" => &bench,
        "profile" => &["--keyspace", "--requests", "--clients", "--pipelines", "--tests", "--client-cpus", "--json", "--markdown", "--dir", "--await-us"],
        _ => &[],
    };
    let mut out = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if !takes.contains(&a.as_str()) {
            return Err(format!("{cmd}: no option {a}"));
        }
        let v = it.next().ok_or_else(|| format!("{cmd}: {a} needs a value"))?;
        out.push((a.clone(), v.clone()));
    }
    Ok(out)
}

/// A list of positive numbers, `1,2,4` or a cpulist `0-3,8`.
fn numbers(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let bad = || format!("{text}: want numbers or ranges (1,2,4 or 0-3)");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(out)
}

/// Serve on `port` until stdin closes; print what the shards counted.
fn serve(mode: Mode, cpus: &[usize], port: u16, await_poll: Duration) -> Result<(), String> {
    let ((), report) = run_server(mode, cpus, port, await_poll, |run| {
        println!("kv_shards: {} mode, {} shards, serving on 127.0.0.1:{}; close stdin to stop", mode.name(), cpus.len(), run.port);
        let _ = std::io::stdout().flush();
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
    })
    .map_err(|e| e.to_string())?;
    for (i, s) in report.shards.iter().enumerate() {
        println!(
            "shard {i}: requests {} remote {} forwarded {} batches {} served {} passes {} sleeps {} reads {} writes {}",
            s.requests, s.remote, s.forwarded, s.batches, s.served, s.passes, s.sleeps, s.reads, s.writes
        );
    }
    let t = report.total();
    println!(
        "requests {} ops {} remote {} forwarded {} batches {} passes {} sleeps {} reads {} writes {} epoll_waits {} epoll_ctls {} inbox_wakes {} allocs {}",
        t.requests, t.ops, t.remote, t.forwarded, t.batches, t.passes, t.sleeps, t.reads, t.writes, t.waits, t.ctls, t.wakes, t.allocs
    );
    if let Some(x) = report.xc {
        println!(
            "libxcall calls {} kicks_sent {} kicks_elided {} kicks_coalesced {} free_rides {} sleeps {} wakeups {} barriers {}",
            x.calls, x.kicks_sent, x.kicks_elided, x.kicks_coalesced, x.free_rides, x.sleeps, x.wakeups, x.barriers
        );
    }
    Ok(())
}

/// The bench's or scale's plan from the options; `shards` the shard counts (scale) or count.
fn plan(cmd: &str, opt: &dyn Fn(&str) -> Option<String>) -> Result<(Plan, Vec<usize>), String> {
    let all = bench::all_cpus().map_err(|e| e.to_string())?;
    let num = |name: &str, d: usize| -> Result<usize, String> {
        match opt(name) {
            None => Ok(d),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("{name} {v}: want a positive number")),
            },
        }
    };
    let list = |name: &str| opt(name).map(|v| numbers(&v)).transpose();
    let scale = cmd == "scale";
    let requests = if cmd == "profile" { 40_000 } else { 200_000 };
    let client_cpus = match list("--client-cpus")? {
        Some(l) => l,
        None if scale => all[all.len() - (all.len() / 4).max(1)..].to_vec(),
        None => all[all.len() - 1..].to_vec(),
    };
    if let Some(c) = client_cpus.iter().find(|c| !all.contains(c)) {
        return Err(format!("--client-cpus: CPU {c} is not this process's"));
    }
    let shard_cpus: Vec<usize> = if scale { all.iter().copied().filter(|c| !client_cpus.contains(c)).collect() } else { all.clone() };
    if shard_cpus.is_empty() {
        return Err("no CPU left for the shards beside the client's".into());
    }
    let shards = match list("--shards")? {
        Some(l) => l,
        None if scale => {
            let mut v: Vec<usize> = (0..).map(|i| 1usize << i).take_while(|&n| n <= shard_cpus.len()).collect();
            if v.last() != Some(&shard_cpus.len()) {
                v.push(shard_cpus.len());
            }
            v
        }
        None => vec![shard_cpus.len()],
    };
    if let Some(&n) = shards.iter().find(|&&n| n == 0 || n > shard_cpus.len()) {
        return Err(format!("--shards {n}: want 1 to {} (the CPUs for shards)", shard_cpus.len()));
    }
    let plan = Plan {
        rounds: num("--rounds", if scale { 1 } else { 3 })?,
        requests: num("--requests", requests)?,
        clients: num("--clients", 50)?,
        pipelines: list("--pipelines")?.unwrap_or_else(|| vec![16, 1]),
        tests: opt("--tests").unwrap_or_else(|| "set,get,incr".into()).split(',').map(str::to_string).collect(),
        cpus: shard_cpus,
        threads: num("--threads", if scale { client_cpus.len() } else { 1 })?,
        client_cpus,
        await_poll: await_us(opt)?,
        keyspace: match opt("--keyspace") {
            Some(_) => Some(num("--keyspace", 1)?),
            None if scale => Some(1_000_000),
            None => None,
        },
    };
    if plan.pipelines.contains(&0) {
        return Err("--pipelines: want positive numbers".into());
    }
    Ok((plan, shards))
}

/// `profile`: count, print the table, write the files.
fn run_profile(opt: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    let (plan, _) = plan("profile", opt)?;
    let dir = opt("--dir").unwrap_or_else(|| std::env::temp_dir().join("kv_shards-profile").to_string_lossy().into_owned());
    println!("kv_shards profile: shards on CPUs {:?}, redis-benchmark on CPUs {:?}; counts in {dir}; load {:.2}", plan.cpus, plan.client_cpus, bench::load1());
    let (records, md) = profile::profile(&plan, &["xcall", "mutex", "channel", "redis-server"], &dir)?;
    println!("{md}");
    if let Some(path) = opt("--json") {
        bench::write_json(&path, &records)?;
        println!("wrote {path}");
    }
    if let Some(path) = opt("--markdown") {
        std::fs::write(&path, md).map_err(|e| format!("{path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(true)
}

/// `--await-us`: how long a loop that awaits answers polls before it sleeps.
fn await_us(opt: &dyn Fn(&str) -> Option<String>) -> Result<Duration, String> {
    match opt("--await-us") {
        None => Ok(server::AWAIT_POLL),
        Some(v) => v.parse::<u64>().map(Duration::from_micros).map_err(|_| format!("--await-us {v}: want microseconds")),
    }
}

/// `bench` or `scale`: run, print the tables, write the files.
fn run_bench(cmd: &str, opt: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    let (base, shards) = plan(cmd, opt)?;
    let configs = ["xcall", "mutex", "channel", "redis-server"];
    let mut records = Vec::new();
    let mut tables = String::new();
    let mut ok = true;
    for &n in &shards {
        let plan = Plan { cpus: base.cpus[..n].to_vec(), ..base.clone() };
        let label = format!("kv_shards {cmd}");
        let load = bench::load1();
        println!("{label}: {n} shards on CPUs {:?}, redis-benchmark on CPUs {:?}; load {load:.2}", plan.cpus, plan.client_cpus);
        if load > 0.5 {
            eprintln!("{label}: load {load:.2}: other work shares the CPUs, and the rates will show it; rerun when the machine is quiet");
        }
        let (r, md, good) = bench::bench(&plan, &configs, &label);
        println!("{md}");
        records.extend(r);
        tables.push_str(&md);
        tables.push('\n');
        ok &= good;
    }
    if let Some(path) = opt("--json") {
        bench::write_json(&path, &records)?;
        println!("wrote {path}");
    }
    if let Some(path) = opt("--markdown") {
        std::fs::write(&path, tables).map_err(|e| format!("{path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(ok)
}

fn self_check() -> Result<bool, String> {
    let cpus = check::server_cpus(8).map_err(|e| e.to_string())?;
    let mut ok = true;
    for mode in Mode::ALL {
        ok &= check::check(mode, &cpus, 8, 2000, server::AWAIT_POLL).map_err(|e| e.to_string())?;
        if cpus.len() > 1 {
            ok &= check::check_closing(mode, &cpus, 16, 2000, server::AWAIT_POLL)?;
        }
        let (allocs, requests) = check::count_allocs(mode, &cpus, 40, 500)?;
        println!("{} mode: {allocs} allocations in {requests} requests on keys that exist", mode.name());
        ok &= allocs * 1000 < requests;
        match check::check_pipe(mode, &cpus, 10_000)? {
            None => println!("redis-cli --pipe: skipped: redis-cli is not installed (Debian's redis-tools)"),
            Some(good) => {
                println!("redis-cli --pipe of 10000 SETs: {}", if good { "ok" } else { "FAILED" });
                ok &= good;
            }
        }
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let cmd = args.first().map(String::as_str).unwrap_or("check");
    let opts = match options(cmd, args.get(1..).unwrap_or(&[])) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("kv_shards: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let opt = |name: &str| opts.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let r = match cmd {
        "serve" => (|| {
            let port = match opt("--port").map(|p| p.parse::<u16>()) {
                None => 6380,
                Some(Ok(p)) if p > 0 => p,
                Some(_) => return Err(format!("--port {}: want 1-65535", opt("--port").unwrap_or_default())),
            };
            let mode = match opt("--mode") {
                None => Mode::Xcall,
                Some(m) => Mode::by_name(&m).ok_or_else(|| format!("no mode {m}: xcall, mutex or channel"))?,
            };
            let all = bench::all_cpus().map_err(|e| e.to_string())?;
            let n = match opt("--shards").map(|v| v.parse::<usize>()) {
                None => all.len(),
                Some(Ok(n)) if (1..=all.len()).contains(&n) => n,
                Some(_) => return Err(format!("--shards {}: want 1 to {}", opt("--shards").unwrap_or_default(), all.len())),
            };
            serve(mode, &all[..n], port, await_us(&opt)?).map(|()| true)
        })(),
        "bench" | "scale" => run_bench(cmd, &opt),
        "profile" => run_profile(&opt),
        "check" => self_check(),
        other => {
            eprintln!("kv_shards: no command {other}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match r {
        Ok(true) => {
            println!("kv_shards: ok");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("kv_shards: FAILED");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("kv_shards: {e}");
            ExitCode::from(2)
        }
    }
}
