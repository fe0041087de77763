//! The bench: each mode and Debian's `redis-server` under the same `redis-benchmark` loads,
//! alternated round by round, with the server's CPU time per request and what each mode's
//! shards counted; and the same comparison at 1, 2, 4, ... shards (`scale`).

use crate::server::{run_server, Counts, Mode, Report};
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use xcall::{CpuSet, Error};

/// What a bench runs.
#[derive(Clone, Debug)]
pub struct Plan {
    pub rounds: usize,
    /// requests per test, pipelined; unpipelined tests send a quarter as many (each costs
    /// about a round trip)
    pub requests: usize,
    pub clients: usize,
    pub pipelines: Vec<usize>,
    pub tests: Vec<String>,
    /// the shards' CPUs (redis-server's too), and the load generator's
    pub cpus: Vec<usize>,
    pub client_cpus: Vec<usize>,
    /// redis-benchmark --threads (1: its default, one thread)
    pub threads: usize,
    /// the shards' loops' poll for answers (`--await-us`)
    pub await_poll: Duration,
    /// redis-benchmark -r: keys drawn from this many (none: one key a test, its default)
    pub keyspace: Option<usize>,
}

impl Plan {
    pub fn requests_at(&self, pipeline: usize) -> usize {
        let n = if pipeline > 1 { self.requests } else { (self.requests / 4).max(1) };
        n.div_ceil(self.clients * pipeline) * self.clients * pipeline // a multiple of -c x -P
    }
}

/// One test's result: requests/s, latency (ms: avg, min, p50, p95, p99, max) and the
/// server's CPU per request (ns).
#[derive(Clone, Copy, Debug, Default)]
pub struct Row {
    pub rps: f64,
    pub lat: [f64; 6],
    pub cpu_ns: f64,
}

/// On-CPU time of some threads, ns (`/proc/PID/task/TID/schedstat`, the scheduler's own sum).
fn cpu_ns(pid: u32, tids: &[i32]) -> u64 {
    let read = |tid: String| std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok().and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok()).unwrap_or(0);
    if tids.is_empty() {
        // every thread of the process
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
        return dir.filter_map(|e| e.ok()).map(|e| read(e.file_name().to_string_lossy().into_owned())).sum();
    }
    tids.iter().map(|t| read(t.to_string())).sum()
}

fn cpulist(cpus: &[usize]) -> String {
    cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// `redis-benchmark --csv` of one test, the client pinned (taskset): its row.
fn load(plan: &Plan, port: u16, pipeline: usize, test: &str) -> Result<[f64; 7], String> {
    let n = plan.requests_at(pipeline).to_string();
    let (c, p, port, threads) = (plan.clients.to_string(), pipeline.to_string(), port.to_string(), plan.threads.to_string());
    let mut args = vec!["-c", "", "redis-benchmark", "-h", "127.0.0.1", "-p", &port, "-c", &c, "-P", &p, "-n", &n, "-t", test, "--csv"];
    let list = cpulist(&plan.client_cpus);
    args[1] = &list;
    if plan.threads > 1 {
        args.extend(["--threads", &threads]);
    }
    let keyspace = plan.keyspace.map(|k| k.to_string());
    if let Some(k) = &keyspace {
        args.extend(["-r", k]);
    }
    let out = Command::new("taskset").args(&args).output().map_err(|e| format!("taskset: {e}"))?;
    if !out.status.success() {
        return Err(format!("redis-benchmark: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split(',').map(|x| x.trim_matches('"')).collect();
        if f.len() != 8 || f[0] == "test" {
            continue;
        }
        let mut v = [0.0; 7];
        if f[1..].iter().zip(v.iter_mut()).all(|(t, x)| t.parse().map(|p| *x = p).is_ok()) {
            return Ok(v);
        }
    }
    Err("redis-benchmark wrote no results".into())
}

/// Each test of `pipeline` against the server on `port`, whose threads `tids` of process
/// `pid` are measured around each.
fn load_all(plan: &Plan, port: u16, pipeline: usize, pid: u32, tids: &[i32]) -> Result<Vec<(String, Row)>, String> {
    let mut rows = Vec::new();
    for test in &plan.tests {
        let t0 = cpu_ns(pid, tids);
        let v = load(plan, port, pipeline, test)?;
        let cpu = cpu_ns(pid, tids) - t0;
        let row = Row { rps: v[0], lat: [v[1], v[2], v[3], v[4], v[5], v[6]], cpu_ns: cpu as f64 / plan.requests_at(pipeline) as f64 };
        rows.push((test.to_uppercase(), row));
    }
    Ok(rows)
}

/// One of the modes, started for one pipeline depth: its rows and report.
fn measure_mode(plan: &Plan, mode: Mode, pipeline: usize) -> Result<(Vec<(String, Row)>, Report), String> {
    let (rows, report) = run_server(mode, &plan.cpus, 0, plan.await_poll, |run| load_all(plan, run.port, pipeline, std::process::id(), &run.tids)).map_err(|e| e.to_string())?;
    Ok((rows?, report))
}

/// Debian's redis-server on its own port (pinned to the shards' CPUs), loaded the same way.
fn measure_redis(plan: &Plan, pipeline: usize) -> Result<Vec<(String, Row)>, String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| e.to_string())?.port();
    let list = cpulist(&plan.cpus);
    let mut child = Command::new("taskset")
        .args(["-c", &list, "redis-server", "--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("redis-server: {e}"))?;
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t0.elapsed() > Duration::from_secs(10) || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            return Err("redis-server did not listen within 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // taskset execs redis-server: the child's pid is the server's
    let rows = load_all(plan, port, pipeline, child.id(), &[]);
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let _ = child.wait();
    rows
}

pub fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A Unix time as xcall-bench writes dates, in UTC.
pub fn utc(secs: u64) -> String {
    let (days, rem) = ((secs / 86400) as i64, secs % 86400);
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

/// The 1-minute load average.
pub fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| s.split_whitespace().next()?.parse().ok()).unwrap_or(-1.0)
}

fn host_json() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split(':').nth(1)).map(|m| m.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let virt = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default().lines().any(|l| l.starts_with("flags") && l.contains(" hypervisor"));
    format!(
        "{{\"hostname\": {}, \"cpu_model\": {}, \"cpus_online\": {}, \"kernel\": {}, \"virtualised\": {virt}}}",
        json_str(std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim()),
        json_str(&model),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        json_str(std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim()),
    )
}

/// A results file (docs/results-format.md) of these records.
pub fn write_json(path: &str, records: &[String]) -> Result<(), String> {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let cmd: Vec<String> = std::env::args().map(|a| json_str(&a)).collect();
    let doc = format!(
        "{{\n  \"schema_version\": 1,\n  \"tool\": \"xcall-rust-bench\",\n  \"tool_version\": \"{}\",\n  \"created\": \"{}\",\n  \"command\": [{}],\n  \"host\": {},\n  \"results\": [\n{}\n  ]\n}}\n",
        env!("CARGO_PKG_VERSION"),
        utc(secs),
        cmd.join(", "),
        host_json(),
        records.join(",\n")
    );
    std::fs::write(path, doc).map_err(|e| format!("{path}: {e}"))
}

/// A record whose every statistic is `v`; `tail` its params (and counters).
fn single(case: &str, unit: &str, n: usize, v: f64, repeat: usize, tail: &str, better: &str) -> String {
    format!(
        "    {{\"bench\": \"kv\", \"case\": {}, \"unit\": \"{unit}\", \"n\": {n}, \"mean\": {v:.1}, \"p50\": {v:.1}, \"p90\": {v:.1}, \"p99\": {v:.1}, \"max\": {v:.1}, \"min\": {v:.1}, \"repeat\": {repeat}, {tail}, \"better\": \"{better}\"}}",
        json_str(case)
    )
}

/// What a mode's shards counted over one server run, as results counters: per run, so that
/// a reader divides by `requests`.
fn counters(t: &Counts, xc: Option<&xcall::Stats>, requests: usize) -> String {
    let mut c = vec![
        ("requests", requests as u64),
        ("requests_read", t.requests),
        ("ops", t.ops),
        ("ops_remote", t.remote),
        ("ops_forwarded", t.forwarded),
        ("batches", t.batches),
        ("passes", t.passes),
        ("sleeps", t.sleeps),
        ("reads", t.reads),
        ("writes", t.writes),
        ("epoll_waits", t.waits),
        ("epoll_ctls", t.ctls),
        ("inbox_wakes", t.wakes),
        ("allocs", t.allocs),
    ];
    if let Some(x) = xc {
        c.extend([
            ("xc_calls", x.calls),
            ("xc_kicks_sent", x.kicks_sent),
            ("xc_kicks_elided", x.kicks_elided),
            ("xc_kicks_coalesced", x.kicks_coalesced),
            ("xc_free_rides", x.free_rides),
            ("xc_sleeps", x.sleeps),
            ("xc_wakeups", x.wakeups),
            ("xc_barriers", x.barriers),
        ]);
    }
    let body: Vec<String> = c.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
    format!(", \"counters\": {{{}}}", body.join(", "))
}

/// Medians over rounds.
fn median(mut x: Vec<f64>) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    x.sort_by(f64::total_cmp);
    x[x.len() / 2]
}

/// Run the plan: every configuration, alternated round by round (the order reversed every
/// other round); the records for a results file, and a table of medians (markdown).
pub fn bench(plan: &Plan, configs: &[&str], label: &str) -> (Vec<String>, String, bool) {
    let mut records = Vec::new();
    // (config, pipeline, test) -> rows over rounds; (config, pipeline) -> per-request counts
    let mut rows: BTreeMap<(String, usize, String), Vec<Row>> = BTreeMap::new();
    let mut profile: BTreeMap<(String, usize), Vec<[f64; 10]>> = BTreeMap::new();
    let mut ok = true;
    let mut loads = Vec::new();
    let shards = plan.cpus.len();
    for round in 0..plan.rounds {
        loads.push(load1());
        let order: Vec<&str> = if round % 2 == 0 { configs.to_vec() } else { configs.iter().rev().copied().collect() };
        for &cfg in &order {
            for &pipeline in &plan.pipelines {
                let got = match Mode::by_name(cfg) {
                    Some(mode) => measure_mode(plan, mode, pipeline).map(|(r, rep)| (r, Some(rep))),
                    None => measure_redis(plan, pipeline).map(|r| (r, None)),
                };
                let params = format!(
                    "\"shards\": {shards}, \"clients\": {}, \"pipeline\": {pipeline}, \"requests\": {}, \"keyspace\": {}, \"client_cpus\": {}, \"threads\": {}, \"await_us\": {}, \"load1\": {:.2}, \"source\": \"redis-benchmark --csv\"",
                    plan.clients,
                    plan.requests_at(pipeline),
                    plan.keyspace.unwrap_or(1),
                    json_str(&cpulist(&plan.client_cpus)),
                    plan.threads,
                    plan.await_poll.as_micros(),
                    load1()
                );
                let (got, report) = match got {
                    Ok(g) => g,
                    Err(e) => {
                        eprintln!("kv_shards {label}: {cfg} -P {pipeline}: skipped: {e}");
                        let why: String = e.chars().take(60).collect();
                        records.push(single(&format!("{cfg} P{pipeline} skipped"), "ns", 0, 0.0, round, &format!("\"params\": {{\"skipped\": {}}}", json_str(&why)), "lower"));
                        ok &= cfg == "redis-server";
                        continue;
                    }
                };
                let n = plan.requests_at(pipeline);
                for (test, r) in &got {
                    let case = format!("{cfg} {test} P{pipeline}");
                    records.push(single(&format!("{case} rate"), "ops/s", n, r.rps, round, &format!("\"params\": {{{params}}}"), "higher"));
                    let ms = 1e6;
                    let [avg, min, p50, p95, p99, max] = r.lat.map(|x| x * ms);
                    records.push(format!(
                        "    {{\"bench\": \"kv\", \"case\": {}, \"unit\": \"ns\", \"n\": {n}, \"mean\": {avg:.0}, \"p50\": {p50:.0}, \"p90\": {p95:.0}, \"p99\": {p99:.0}, \"max\": {max:.0}, \"min\": {min:.0}, \"repeat\": {round}, \"params\": {{{params}, \"p90_is\": \"redis-benchmark's p95\"}}, \"better\": \"lower\"}}",
                        json_str(&format!("{case} latency"))
                    ));
                    let what = "the server threads' on-CPU time (schedstat) over the test's requests";
                    records.push(single(&format!("{case} cpu per request"), "ns", n, r.cpu_ns, round, &format!("\"params\": {{{params}, \"cpu\": \"{what}\"}}"), "lower"));
                    rows.entry((cfg.to_string(), pipeline, test.clone())).or_default().push(*r);
                }
                if let Some(rep) = report {
                    let t = rep.total();
                    let sent = n * got.len();
                    records.push(single(
                        &format!("{cfg} P{pipeline} counts"),
                        "ratio",
                        sent,
                        t.forwarded as f64 / t.batches.max(1) as f64,
                        round,
                        &format!("\"params\": {{{params}, \"value\": \"ops per batch; counters over the server's run\"}}{}", counters(&t, rep.xc.as_ref(), sent)),
                        "higher",
                    ));
                    let per = |v: u64| v as f64 / sent as f64;
                    let (kicks, barriers, calls) = rep.xc.map_or((t.wakes, 0, 0), |x| (x.kicks_sent, x.barriers, x.calls));
                    profile.entry((cfg.to_string(), pipeline)).or_default().push([
                        per(t.reads + t.writes + t.waits + t.ctls + kicks + barriers),
                        per(t.waits),
                        per(t.sleeps),
                        per(kicks),
                        per(barriers),
                        per(t.allocs),
                        per(calls),
                        t.forwarded as f64 / t.batches.max(1) as f64,
                        per(t.remote),
                        per(t.passes),
                    ]);
                }
            }
        }
    }
    // the table: medians over the rounds
    let mut md = String::new();
    let loads_txt = loads.iter().map(|l| format!("{l:.2}")).collect::<Vec<_>>().join(", ");
    md.push_str(&format!(
        "{label}: {shards} shards on CPUs {}, redis-benchmark on CPUs {} (-c {}, --threads {}, {}), medians of {} rounds, load at each round's start {loads_txt}\n\n",
        cpulist(&plan.cpus),
        cpulist(&plan.client_cpus),
        plan.clients,
        plan.threads,
        plan.keyspace.map_or("one key a test".to_string(), |k| format!("-r {k}")),
        plan.rounds
    ));
    md.push_str("| config | -P | test | requests/s | p50 ms | p99 ms | server CPU per request |\n|---|--:|---|--:|--:|--:|--:|\n");
    for &pipeline in &plan.pipelines {
        for test in &plan.tests {
            for &cfg in configs {
                if let Some(v) = rows.get(&(cfg.to_string(), pipeline, test.to_uppercase())) {
                    let m = |f: fn(&Row) -> f64| median(v.iter().map(f).collect());
                    md.push_str(&format!(
                        "| {cfg} | {pipeline} | {} | {:.0}k | {:.3} | {:.3} | {:.0} ns |\n",
                        test.to_uppercase(),
                        m(|r| r.rps) / 1000.0,
                        m(|r| r.lat[2]),
                        m(|r| r.lat[4]),
                        m(|r| r.cpu_ns)
                    ));
                }
            }
        }
    }
    // the goal, as ratios of medians within this run
    let med = |cfg: &str, p: usize, t: &str, f: fn(&Row) -> f64| rows.get(&(cfg.to_string(), p, t.to_uppercase())).map(|v| median(v.iter().map(f).collect()));
    if configs.contains(&"xcall") && configs.contains(&"mutex") {
        md.push_str("\nxcall against the others, medians of this run (rate: higher is better; CPU: lower):\n\n| -P | test | rate / mutex | rate / redis-server | rate / channel | CPU / mutex | CPU / channel |\n|--:|---|--:|--:|--:|--:|--:|\n");
        for &pipeline in &plan.pipelines {
            for test in &plan.tests {
                let x = |cfg: &str, f: fn(&Row) -> f64| -> String {
                    match (med("xcall", pipeline, test, f), med(cfg, pipeline, test, f)) {
                        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                        _ => "-".into(),
                    }
                };
                md.push_str(&format!(
                    "| {pipeline} | {} | {} | {} | {} | {} | {} |\n",
                    test.to_uppercase(),
                    x("mutex", |r| r.rps),
                    x("redis-server", |r| r.rps),
                    x("channel", |r| r.rps),
                    x("mutex", |r| r.cpu_ns),
                    x("channel", |r| r.cpu_ns)
                ));
            }
        }
    }
    md.push_str("\nPer request, over each server run (medians of the rounds): system calls the shards made (reads, writes, epoll waits and ctls, eventfd kicks, membarriers), epoll waits and those that slept, kicks, membarriers, allocations, libxcall calls run, ops per forwarded batch, ops on other shards' keys, loop passes:\n\n");
    md.push_str("| config | -P | syscalls | epoll waits | sleeps | kicks | membarriers | allocations | xc calls | ops per batch | remote ops | passes |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for &pipeline in &plan.pipelines {
        for &cfg in configs {
            if let Some(v) = profile.get(&(cfg.to_string(), pipeline)) {
                let m = |i: usize| median(v.iter().map(|r| r[i]).collect());
                md.push_str(&format!(
                    "| {cfg} | {pipeline} | {:.3} | {:.3} | {:.3} | {:.4} | {:.4} | {:.3} | {:.3} | {:.1} | {:.2} | {:.3} |\n",
                    m(0),
                    m(1),
                    m(2),
                    m(3),
                    m(4),
                    m(5),
                    m(6),
                    m(7),
                    m(8),
                    m(9)
                ));
            }
        }
    }
    (records, md, ok)
}

/// The CPUs of this process.
pub fn all_cpus() -> Result<Vec<usize>, Error> {
    Ok(CpuSet::current_affinity()?.iter().collect())
}
