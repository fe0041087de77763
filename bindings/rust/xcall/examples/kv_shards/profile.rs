//! Where a request's CPU goes, counted rather than timed: each configuration as a process of
//! its own under `perf stat` (every system call by kind, and context switches), under
//! `perf record` (its on-CPU time sampled with kernel call chains, put under the system call
//! or the kernel path it was spent in) and under `valgrind --tool=callgrind` (user-space
//! instructions), loaded by the same fixed `redis-benchmark` stream; an idle run of each
//! (started, stopped, no request) is taken off, so that what remains is per request.

use crate::bench::{json_str, Plan};
use std::io::Write;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The system calls counted, by their tracepoints.
const SYSCALLS: [&str; 12] =
    ["recvfrom", "sendto", "epoll_wait", "epoll_ctl", "read", "write", "futex", "membarrier", "sched_yield", "accept4", "close", "setsockopt"];

/// `perf record`'s sampling period on cpu-clock, in ns of the process's on-CPU time.
const SAMPLE_NS: f64 = 50_000.0;

/// Where an on-CPU sample was spent, by a frame of its kernel call chain: (the frame, the
/// class), the first in this order that the chain holds; a kernel chain with none of them
/// is an interrupt's or a fault's ("kernel, no system call"). A socket's sends and
/// receives by their TCP functions, whichever system call (redis-server writes and reads);
/// the epoll waits that slept by `schedule` (the switch away and back, where a VM's halted
/// vCPU is woken and its timers run); a kick by the eventfd write that wakes a shard; the
/// other system calls are mostly a connection's accept and close.
const PATHS: [(&str, &str); 11] = [
    ("eventfd_write", "eventfd write"),
    ("eventfd_read", "eventfd read"),
    ("__x64_sys_membarrier", "membarrier"),
    ("tcp_sendmsg", "socket send"),
    ("tcp_recvmsg", "socket receive"),
    ("__sys_sendto", "socket send"),
    ("__sys_recvfrom", "socket receive"),
    ("__x64_sys_futex", "futex"),
    ("schedule", "sleep and wake"),
    ("do_epoll_wait", "epoll, awake"),
    ("do_syscall_64", "other system calls"),
];

/// The classes of `PATHS` and user space, in a table's order.
const PATH_COLS: [&str; 11] = [
    "user space",
    "socket send",
    "socket receive",
    "epoll, awake",
    "sleep and wake",
    "eventfd write",
    "eventfd read",
    "membarrier",
    "futex",
    "other system calls",
    "kernel, no system call",
];

/// Whether `perf record` may sample this user's processes in the kernel: root, or
/// `kernel.perf_event_paranoid` at 1 or less. Without it every sample would be user space's.
fn kernel_samples_allowed() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    root || std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok().and_then(|v| v.trim().parse::<i32>().ok()).is_some_and(|v| v <= 1)
}

/// `perf script -F ip,sym` of a `perf record -g`: on-CPU ns by class (`PATHS`).
fn perf_paths(data: &str) -> Result<Vec<(String, f64)>, String> {
    let out = Command::new("perf")
        .args(["script", "-i", data, "-F", "ip,sym"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("perf script: {e}"))?;
    if !out.status.success() {
        return Err(format!("perf script -i {data} failed"));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut ns: Vec<(String, f64)> = PATH_COLS.iter().map(|c| (c.to_string(), 0.0)).collect();
    for sample in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let frames: Vec<&str> = sample.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let kernel = frames.iter().any(|f| f.starts_with("ffffffff"));
        let class = if !kernel {
            "user space"
        } else {
            PATHS
                .iter()
                .find(|(frame, _)| frames.iter().any(|f| f.split_whitespace().nth(1) == Some(*frame)))
                .map_or("kernel, no system call", |p| p.1)
        };
        if let Some(c) = ns.iter_mut().find(|(n, _)| n == class) {
            c.1 += SAMPLE_NS;
        }
    }
    Ok(ns)
}

/// A table's cell: `v` to `places` decimals, a value that rounds to zero shown as 0 (an idle
/// run taken off leaves small negatives: no "-0").
fn cell(v: f64, places: usize) -> String {
    let v = if (v * 10f64.powi(places as i32)).round() == 0.0 { 0.0 } else { v };
    format!("{v:.places$}")
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).map_err(|e| e.to_string())
}

/// Start `cfg` on `port` under `wrap` (a tool and its arguments), pinned to `cpus`.
fn start(cfg: &str, port: u16, cpus: &str, wrap: &[String], await_us: u128) -> Result<Child, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut argv: Vec<String> = vec!["-c".into(), cpus.into()];
    argv.extend(wrap.iter().cloned());
    if cfg == "redis-server" {
        argv.extend(["redis-server", "--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"].map(String::from));
    } else {
        argv.extend([me.to_string_lossy().into_owned(), "serve".into(), "--mode".into(), cfg.into(), "--port".into(), port.to_string()]);
        argv.extend(["--await-us".into(), await_us.to_string()]);
    }
    let mut child = Command::new("taskset")
        .args(&argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("taskset {}: {e}", argv.join(" ")))?;
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t0.elapsed() > Duration::from_secs(120) || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{cfg} did not listen on {port} within 120 s"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(child)
}

/// Stop what `start` started: ours by closing its stdin, redis-server by `SHUTDOWN NOSAVE`;
/// the wrapping tool then writes its counts.
fn stop(cfg: &str, port: u16, mut child: Child) -> Result<(), String> {
    if cfg == "redis-server" {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.write_all(b"SHUTDOWN NOSAVE\r\n");
        }
    }
    drop(child.stdin.take());
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return Ok(()),
            Ok(None) if t0.elapsed() > Duration::from_secs(120) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{cfg} did not stop within 120 s"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// One run of `cfg` under `wrap`: loaded with `requests` of each test at `pipeline` deep,
/// or idle (`requests` 0).
fn run(plan: &Plan, cfg: &str, wrap: &[String], pipeline: usize, requests: usize) -> Result<(), String> {
    let port = free_port()?;
    let cpus = plan.cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let child = start(cfg, port, &cpus, wrap, plan.await_poll.as_micros())?;
    if requests > 0 {
        let client = plan.client_cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let (c, p, n, port_s) = (plan.clients.to_string(), pipeline.to_string(), requests.to_string(), port.to_string());
        let tests = plan.tests.join(",");
        let mut args = vec!["-c", &client, "redis-benchmark", "-h", "127.0.0.1", "-p", &port_s, "-c", &c, "-P", &p, "-n", &n, "-t", &tests, "-q"];
        let keyspace = plan.keyspace.map(|k| k.to_string());
        if let Some(k) = &keyspace {
            args.extend(["-r", k]);
        }
        let out = Command::new("taskset")
            .args(&args)
            .output()
            .map_err(|e| format!("redis-benchmark: {e}"))?;
        if !out.status.success() {
            let _ = stop(cfg, port, child);
            return Err(format!("redis-benchmark: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    stop(cfg, port, child)
}

/// `perf stat -x,` output: counts by event name.
fn perf_counts(path: &str) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let v = f.first()?.parse::<f64>().ok()?;
            let name = f.get(2)?.rsplit(':').next()?.trim_start_matches("sys_enter_").to_string();
            Some((name, v))
        })
        .collect()
}

/// callgrind's total of instructions.
fn callgrind_total(path: &str) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| l.strip_prefix("summary: ").or_else(|| l.strip_prefix("totals: "))).and_then(|v| v.split_whitespace().next()?.parse().ok())
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Every configuration, pipelined and not: per request, system calls by kind and context
/// switches (perf), instructions (callgrind). Records and a markdown table.
pub fn profile(plan: &Plan, configs: &[&str], dir: &str) -> Result<(Vec<String>, String), String> {
    let perf = have("perf");
    let valgrind = have("valgrind");
    if !perf && !valgrind {
        return Err("neither perf nor valgrind is installed (Debian's linux-perf, valgrind)".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let record = perf && kernel_samples_allowed();
    if perf && !record {
        println!("kv_shards profile: no on-CPU table: perf may not sample the kernel for this user (kernel.perf_event_paranoid over 1; run as root)");
    }
    let mut records = Vec::new();
    let mut rows = Vec::new();
    for &pipeline in &plan.pipelines {
        let requests = plan.requests_at(pipeline);
        let sent = (requests * plan.tests.len()) as f64;
        for &cfg in configs {
            let mut cells: Vec<(String, f64)> = Vec::new();
            if perf {
                let events: Vec<String> = ["task-clock".to_string(), "context-switches".into(), "raw_syscalls:sys_enter".into()]
                    .into_iter()
                    .chain(SYSCALLS.iter().map(|s| format!("syscalls:sys_enter_{s}")))
                    .collect();
                let mut counts = Vec::new();
                for n in [requests, 0] {
                    let out = format!("{dir}/perf-{cfg}-P{pipeline}-{n}.txt");
                    let wrap: Vec<String> = ["perf", "stat", "-x,", "-o", &out, "-e", &events.join(",")].map(String::from).to_vec();
                    run(plan, cfg, &wrap, pipeline, n)?;
                    counts.push(perf_counts(&out));
                }
                for (name, loaded) in &counts[0] {
                    let idle = counts[1].iter().find(|(n, _)| n == name).map_or(0.0, |c| c.1);
                    let key = if name == "sys_enter" { "syscalls".to_string() } else { name.clone() };
                    // task-clock is in ms: per request in ns
                    let scale = if name == "task-clock" { 1e6 } else { 1.0 };
                    cells.push((key, (loaded - idle) * scale / sent));
                }
            }
            if record {
                let mut paths = Vec::new();
                for n in [requests, 0] {
                    let out = format!("{dir}/perf-record-{cfg}-P{pipeline}-{n}.data");
                    let period = format!("{SAMPLE_NS}");
                    let wrap: Vec<String> = ["perf", "record", "-q", "-e", "cpu-clock", "-c", &period, "-g", "-o", &out].map(String::from).to_vec();
                    run(plan, cfg, &wrap, pipeline, n)?;
                    paths.push(perf_paths(&out)?);
                }
                for ((name, loaded), (_, idle)) in paths[0].iter().zip(&paths[1]) {
                    cells.push((format!("on-CPU {name}"), (loaded - idle) / sent));
                }
            }
            if valgrind {
                let mut ir = Vec::new();
                for n in [requests, 0] {
                    let out = format!("{dir}/callgrind-{cfg}-P{pipeline}-{n}.out");
                    let wrap: Vec<String> = ["valgrind", "--tool=callgrind", "-q", &format!("--callgrind-out-file={out}")].map(String::from).to_vec();
                    run(plan, cfg, &wrap, pipeline, n)?;
                    ir.push(callgrind_total(&out).ok_or_else(|| format!("{out}: no callgrind total"))?);
                }
                cells.push(("instructions".into(), (ir[0] - ir[1]) / sent));
            }
            let params = format!(
                "\"clients\": {}, \"pipeline\": {pipeline}, \"requests\": {}, \"tests\": {}, \"cpus\": {}, \"client_cpus\": {}, \"source\": \"perf stat and callgrind, an idle run taken off\"",
                plan.clients,
                requests * plan.tests.len(),
                json_str(&plan.tests.join(",")),
                json_str(&plan.cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",")),
                json_str(&plan.client_cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(","))
            );
            for (name, v) in &cells {
                records.push(format!(
                    "    {{\"bench\": \"kv-profile\", \"case\": {}, \"unit\": \"per request\", \"n\": {sent}, \"mean\": {v:.4}, \"p50\": {v:.4}, \"p90\": {v:.4}, \"p99\": {v:.4}, \"max\": {v:.4}, \"min\": {v:.4}, \"repeat\": 0, \"params\": {{{params}}}, \"better\": \"lower\"}}",
                    json_str(&format!("{cfg} P{pipeline} {name}"))
                ));
            }
            println!("kv_shards profile: {cfg} -P {pipeline}: {}", cells.iter().map(|(n, v)| format!("{n} {v:.3}")).collect::<Vec<_>>().join(", "));
            rows.push((cfg.to_string(), pipeline, cells));
        }
    }
    let cols = ["task-clock", "instructions", "syscalls", "recvfrom", "sendto", "epoll_wait", "epoll_ctl", "read", "write", "futex", "membarrier", "context-switches"];
    let mut md = format!(
        "Per request ({} of each of {} at -c {}), an idle run of each taken off; task-clock in ns (perf, the server process), instructions in user space (callgrind), the rest counts (perf tracepoints):\n\n| config | -P | {} |\n|---|--:|{}\n",
        plan.requests,
        plan.tests.join(", "),
        plan.clients,
        cols.join(" | "),
        "--:|".repeat(cols.len())
    );
    for (cfg, p, cells) in &rows {
        let v: Vec<String> = cols
            .iter()
            .map(|c| match cells.iter().find(|(n, _)| n == c) {
                Some((_, v)) if *c == "task-clock" || *c == "instructions" => cell(*v, 0),
                Some((_, v)) => cell(*v, 3),
                None => "-".into(),
            })
            .collect();
        md.push_str(&format!("| {cfg} | {p} | {} |\n", v.join(" | ")));
    }
    if rows.iter().any(|(_, _, cells)| cells.iter().any(|(n, _)| n.starts_with("on-CPU "))) {
        md.push_str(&format!(
            "\nOn-CPU time per request in ns by where it was spent (perf record, cpu-clock every {} us, kernel call chains; an idle run taken off):\n\n| config | -P | {} |\n|---|--:|{}\n",
            SAMPLE_NS / 1000.0,
            PATH_COLS.join(" | "),
            "--:|".repeat(PATH_COLS.len())
        ));
        for (cfg, p, cells) in &rows {
            let v: Vec<String> = PATH_COLS
                .iter()
                .map(|c| cells.iter().find(|(n, _)| n.strip_prefix("on-CPU ") == Some(c)).map_or("-".into(), |(_, v)| cell(*v, 0)))
                .collect();
            md.push_str(&format!("| {cfg} | {p} | {} |\n", v.join(" | ")));
        }
    }
    Ok((records, md))
}
