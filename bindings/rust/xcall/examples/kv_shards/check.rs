//! The self-check, in each mode, and the tests `cargo test` runs: every reply checked by the
//! crate's own client; connections closed while their requests are out at other shards;
//! Redis's own tools (`redis-benchmark`, `redis-cli --pipe`) where installed.

use crate::client::{bulk_reply, Client, Reply};
use crate::server::{owner_of, run_server, Mode, Report, Running, AWAIT_POLL};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use xcall::{CpuSet, Error};

/// The CPUs the server runs on: the process's, at most `max`.
pub fn server_cpus(max: usize) -> Result<Vec<usize>, Error> {
    Ok(CpuSet::current_affinity()?.iter().take(max).collect())
}

/// One connection's script, every reply checked: single commands, inline ones, errors, and a
/// pipeline of `pipeline` requests over keys of every shard. Returns the INCRs it made of
/// `shared` (a key every connection bumps).
fn client_script(port: u16, id: usize, pipeline: usize, shared: &[u8]) -> Result<u64, String> {
    let mut c = Client::connect(port).map_err(|e| format!("connect: {e}"))?;
    let check = |what: &str, got: std::io::Result<Reply>, want: Reply| match got {
        Ok(g) if g == want => Ok(()),
        Ok(g) => Err(format!("client {id}: {what}: got {g:?}, want {want:?}")),
        Err(e) => Err(format!("client {id}: {what}: {e}")),
    };
    let ok = || Reply::Status("OK".into());
    check("PING", c.call(&[b"PING"]), Reply::Status("PONG".into()))?;
    check("PING msg", c.call(&[b"ping", b"hi there"]), bulk_reply(b"hi there"))?;
    check("ECHO", c.call(&[b"ECHO", b"a\r\nb\x00"]), bulk_reply(b"a\r\nb\x00"))?;
    c.send_raw(b"PING\r\n").map_err(|e| e.to_string())?;
    let r = c.reply();
    check("inline PING", r, Reply::Status("PONG".into()))?;
    let inline_key = format!("inline:{id}");
    c.send_raw(format!("  \r\nSET {inline_key}  value-1\r\nGET {inline_key}\n").as_bytes()).map_err(|e| e.to_string())?;
    let r = c.reply();
    check("inline SET", r, ok())?;
    let r = c.reply();
    check("inline GET", r, bulk_reply(b"value-1"))?;
    let r = c.call(&[b"CONFIG", b"GET", b"save"]);
    check("CONFIG GET", r, Reply::Array(vec![bulk_reply(b"save"), bulk_reply(b"")]))?;
    let r = c.call(&[b"FLUSHALL"]);
    check("unknown", r, Reply::Error("ERR unknown command 'FLUSHALL'".into()))?;
    let r = c.call(&[b"GET"]);
    check("GET arity", r, Reply::Error("ERR wrong number of arguments for 'get' command".into()))?;
    let r = c.call(&[b"DEL"]);
    check("DEL arity", r, Reply::Error("ERR wrong number of arguments for 'del' command".into()))?;
    let k = format!("c{id}:missing");
    check("GET missing", c.call(&[b"GET", k.as_bytes()]), Reply::Bulk(None))?;
    let k = format!("c{id}:text");
    check("SET text", c.call(&[b"SET", k.as_bytes(), b"abc"]), ok())?;
    let r = c.call(&[b"INCR", k.as_bytes()]);
    check("INCR text", r, Reply::Error("ERR value is not an integer or out of range".into()))?;
    // keys of every shard in one DEL and one EXISTS: each owner's part summed
    let keys: Vec<String> = (0..12).map(|i| format!("c{id}:multi{i}")).collect();
    for k in &keys[..8] {
        check("SET multi", c.call(&[b"SET", k.as_bytes(), b"1"]), ok())?;
    }
    let mut exists: Vec<&[u8]> = vec![b"EXISTS"];
    exists.extend(keys.iter().map(|k| k.as_bytes()));
    exists.push(keys[0].as_bytes()); // twice: counted twice, as Redis does
    check("EXISTS", c.call(&exists), Reply::Int(9))?;
    let mut del: Vec<&[u8]> = vec![b"DEL"];
    del.extend(keys.iter().map(|k| k.as_bytes()));
    del.push(keys[0].as_bytes()); // twice: deleted once
    check("DEL", c.call(&del), Reply::Int(8))?;
    check("EXISTS after DEL", c.call(&exists), Reply::Int(0))?;

    // a pipeline over many keys (so every shard's), written at once, replies in order
    let mut model: HashMap<String, i64> = HashMap::new();
    let mut out = Vec::new();
    let mut want = Vec::new();
    let mut shared_incrs = 0;
    for i in 0..pipeline {
        let key = format!("c{id}:k{}", i % 37);
        match i % 6 {
            0 => {
                let v = model.entry(key.clone()).or_insert(0);
                *v += 1;
                out.extend(Client::encode(&[b"INCR", key.as_bytes()]));
                want.push(Reply::Int(*v));
            }
            1 => {
                let v = (i as i64) * 3;
                model.insert(key.clone(), v);
                out.extend(Client::encode(&[b"SET", key.as_bytes(), v.to_string().as_bytes()]));
                want.push(ok());
            }
            2 => {
                out.extend(Client::encode(&[b"GET", key.as_bytes()]));
                want.push(match model.get(&key) {
                    Some(v) => bulk_reply(v.to_string().as_bytes()),
                    None => Reply::Bulk(None),
                });
            }
            3 => {
                let other = format!("c{id}:k{}", (i + 5) % 37);
                let n = i64::from(model.contains_key(&key)) + i64::from(model.contains_key(&other));
                out.extend(Client::encode(&[b"EXISTS", key.as_bytes(), other.as_bytes()]));
                want.push(Reply::Int(n));
            }
            4 if i % 5 == 0 => {
                out.extend(Client::encode(&[b"DEL", key.as_bytes()]));
                want.push(Reply::Int(i64::from(model.remove(&key).is_some())));
            }
            4 => {
                out.extend(Client::encode(&[b"ECHO", key.as_bytes()]));
                want.push(bulk_reply(key.as_bytes()));
            }
            _ => {
                out.extend(Client::encode(&[b"INCR", shared]));
                shared_incrs += 1;
                want.push(Reply::Int(-1)); // any count: other connections bump it too
            }
        }
    }
    c.send_raw(&out).map_err(|e| e.to_string())?;
    for (i, w) in want.into_iter().enumerate() {
        let got = c.reply().map_err(|e| format!("client {id}: pipeline reply {i}: {e}"))?;
        let ok = match (&w, &got) {
            (Reply::Int(-1), Reply::Int(n)) => *n >= 1,
            _ => got == w,
        };
        if !ok {
            return Err(format!("client {id}: pipeline reply {i}: got {got:?}, want {w:?}"));
        }
    }
    Ok(shared_incrs)
}

/// Run `bin` (or the program `env` names) with `args` and `stdin`, for at most `limit`;
/// `Ok(None)` where it is not installed. Its output, stdout then stderr.
pub fn run_tool(env: &str, bin: &str, args: &[&str], stdin: &[u8], limit: Duration) -> Result<Option<String>, String> {
    let bin = std::env::var_os(env).unwrap_or_else(|| bin.into());
    let mut cmd = Command::new(&bin);
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", bin.to_string_lossy())),
    };
    let mut input = child.stdin.take().ok_or("no stdin")?;
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let mut out = child.stdout.take().ok_or("no stdout")?;
    let mut err = child.stderr.take().ok_or("no stderr")?;
    let reader = std::thread::spawn(move || {
        let mut o = Vec::new();
        let _ = out.read_to_end(&mut o);
        let mut e = Vec::new();
        let _ = err.read_to_end(&mut e);
        String::from_utf8_lossy(&o).into_owned() + &String::from_utf8_lossy(&e)
    });
    let t0 = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if t0.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} ran past {limit:?}", bin.to_string_lossy()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    };
    let _ = feeder.join();
    let text = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{} failed ({status}): {text}", bin.to_string_lossy()));
    }
    Ok(Some(text))
}

fn redis_benchmark(port: u16, args: &[&str], limit: Duration) -> Result<Option<String>, String> {
    let p = port.to_string();
    let mut all = vec!["-h", "127.0.0.1", "-p", &p];
    all.extend_from_slice(args);
    run_tool("REDIS_BENCHMARK", "redis-benchmark", &all, b"", limit)
}

/// Every shard's counts printed; false where an error was counted, or a request forwarded
/// was not served exactly once.
fn counts_add_up(report: &Report) -> bool {
    let mut ok = true;
    for (me, s) in report.shards.iter().enumerate() {
        println!(
            "shard {me}: connections {}, requests {}, ops {} ({} on other shards' keys), forwarded {} in {} batches, served {}, orphans {}, errors {}",
            s.conns, s.requests, s.ops, s.remote, s.forwarded, s.batches, s.served, s.orphans, s.errors
        );
        ok &= s.errors == 0;
    }
    let t = report.total();
    if t.forwarded != t.served {
        eprintln!("kv_shards: {} ops forwarded, {} served", t.forwarded, t.served);
        ok = false;
    }
    if t.ops != report.ops {
        eprintln!("kv_shards: {} ops read, {} run by the stores", t.ops, report.ops);
        ok = false;
    }
    ok
}

/// The self-check: true when every reply was right and the counts add up.
pub fn check(mode: Mode, cpus: &[usize], clients: usize, pipeline: usize, await_poll: Duration) -> Result<bool, Error> {
    println!("kv_shards: {} mode, {} shards, loops polling {await_poll:?} for answers", mode.name(), cpus.len());
    let shared = b"shared:counter";
    let ((ok, bench), report) = run_server(mode, cpus, 0, await_poll, |run: &Running<'_>| {
        let port = run.port;
        let mut ok = true;
        // every connection at once: SO_REUSEPORT spreads them over the shards
        let results: Vec<Result<u64, String>> = std::thread::scope(|sc| {
            let ts: Vec<_> = (0..clients).map(|id| sc.spawn(move || client_script(port, id, pipeline, shared))).collect();
            ts.into_iter().map(|t| t.join().unwrap_or_else(|_| Err("client panicked".into()))).collect()
        });
        let mut incrs = 0;
        for r in results {
            match r {
                Ok(n) => incrs += n,
                Err(e) => {
                    eprintln!("kv_shards: {e}");
                    ok = false;
                }
            }
        }
        let mut c = Client::connect(port).expect("connect");
        let got = c.call(&[b"GET", shared]).ok();
        if got != Some(bulk_reply(incrs.to_string().as_bytes())) {
            eprintln!("kv_shards: {incrs} INCRs of the shared key, GET says {got:?}");
            ok = false;
        }
        // redis-benchmark, briefly: -n a multiple of -c x -P, INCR without -r (one key)
        let before = run.server.store_counts().map(|c| c.0).unwrap_or(0);
        let n = 16 * 8 * 25;
        let n_arg = n.to_string();
        let args = ["-c", "16", "-P", "8", "-n", &n_arg, "-t", "ping_inline,ping_mbulk,set,get,incr", "-q"];
        let bench = match redis_benchmark(port, &args, Duration::from_secs(120)) {
            Ok(None) => Some("skipped: redis-benchmark is not installed (Debian's redis-tools; make deps-rust)".to_string()),
            Ok(Some(text)) => {
                let after = run.server.store_counts().map(|c| c.0).unwrap_or(0);
                let got = c.call(&[b"GET", b"counter:__rand_int__"]).ok();
                if after - before != n as u64 || got != Some(bulk_reply(n.to_string().as_bytes())) {
                    eprintln!("kv_shards: redis-benchmark sent {n} INCRs; the server counted {}; GET says {got:?}", after - before);
                    ok = false;
                }
                // -q rewrites a progress line with \r: the last part of each is the result
                let lines = text.lines().filter_map(|l| l.rsplit('\r').next()).filter(|l| l.contains("requests per second"));
                Some(lines.map(str::trim).collect::<Vec<_>>().join("; "))
            }
            Err(e) => {
                eprintln!("kv_shards: {e}");
                ok = false;
                None
            }
        };
        (ok, bench)
    })?;
    let ok = counts_add_up(&report) && ok;
    println!("store: {} commands on keys, {} INCRs", report.ops, report.incrs);
    if let Some(b) = bench {
        println!("redis-benchmark: {b}");
    }
    Ok(ok)
}

/// Keys `prefix0`, `prefix1`, ... owned by no shard but `owner`'s (of `shards`), `n` of them.
fn keys_of(owner: usize, shards: usize, prefix: &str, n: usize) -> Vec<String> {
    (0..).map(|i| format!("{prefix}{i}")).filter(|k| owner_of(k.as_bytes(), shards) == owner).take(n).collect()
}

/// INCRs read from reset connections, INCRs of the others, and keys whose count is wrong
/// (got, sent).
type Closing = (u64, u64, HashMap<String, (u64, u64)>);

/// Connections that close while their requests are out at other shards, beside ones that
/// do not: nothing is lost or run twice, and no answer reaches the wrong connection. Each
/// closer sends `per_conn` INCRs over keys of its own, owned by every shard, then either
/// half-closes (it must still get every reply, in order, then the server's close) or
/// resets the connection without reading (each INCR the server read ran once: the keys
/// sum to what the server read). A steady client meanwhile checks every reply of its
/// pipelines, on connections that reuse the closed ones' slots.
pub fn check_closing(mode: Mode, cpus: &[usize], closers: usize, per_conn: usize, await_poll: Duration) -> Result<bool, String> {
    let shards = cpus.len();
    let keys_per_shard = 3;
    let keys = |who: &str, id: usize| -> Vec<String> { (0..shards).flat_map(|o| keys_of(o, shards, &format!("{who}{id}:"), keys_per_shard)).collect() };
    let run = run_server(mode, cpus, 0, await_poll, |run: &Running<'_>| -> Result<Closing, String> {
        let port = run.port;
        let sent: Vec<Result<HashMap<String, u64>, String>> = std::thread::scope(|sc| {
            let steady = sc.spawn(move || -> Result<HashMap<String, u64>, String> {
                // several connections one after another: their slots are the closed ones'
                let mut model = HashMap::new();
                for round in 0..6 {
                    let mut c = Client::connect(port).map_err(|e| e.to_string())?;
                    let ks = keys("steady", round);
                    let mut out = Vec::new();
                    let mut want = Vec::new();
                    for i in 0..per_conn {
                        let k = &ks[i % ks.len()];
                        let v = model.entry(k.clone()).or_insert(0u64);
                        *v += 1;
                        out.extend(Client::encode(&[b"INCR", k.as_bytes()]));
                        want.push(Reply::Int(*v as i64));
                    }
                    c.send_raw(&out).map_err(|e| e.to_string())?;
                    for (i, w) in want.into_iter().enumerate() {
                        let got = c.reply().map_err(|e| format!("steady {round}: reply {i}: {e}"))?;
                        if got != w {
                            return Err(format!("steady {round}: reply {i}: got {got:?}, want {w:?}"));
                        }
                    }
                }
                Ok(model)
            });
            let ts: Vec<_> = (0..closers)
                .map(|id| {
                    sc.spawn(move || -> Result<HashMap<String, u64>, String> {
                        let ks = keys(if id % 2 == 0 { "half" } else { "reset" }, id);
                        let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
                        s.set_read_timeout(Some(Duration::from_secs(20))).map_err(|e| e.to_string())?;
                        let mut model = HashMap::new();
                        let mut out = Vec::new();
                        let mut want = Vec::new();
                        for i in 0..per_conn {
                            let k = &ks[(i * 7) % ks.len()];
                            let v = model.entry(k.clone()).or_insert(0u64);
                            *v += 1;
                            out.extend(Client::encode(&[b"INCR", k.as_bytes()]));
                            want.extend(format!(":{v}\r\n").into_bytes());
                        }
                        s.write_all(&out).map_err(|e| e.to_string())?;
                        if id % 2 == 1 {
                            // reset: close at once, unread replies and all (SO_LINGER 0: RST)
                            let l = libc::linger { l_onoff: 1, l_linger: 0 };
                            // SAFETY: a setsockopt on our socket with a linger struct.
                            unsafe {
                                use std::os::fd::AsRawFd;
                                libc::setsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_LINGER, (&l as *const libc::linger).cast(), std::mem::size_of::<libc::linger>() as u32)
                            };
                            drop(s);
                            return Ok(model);
                        }
                        s.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
                        let mut got = Vec::new();
                        s.read_to_end(&mut got).map_err(|e| format!("half-closed {id}: {e} after {} bytes", got.len()))?;
                        if got != want {
                            let n = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
                            return Err(format!("half-closed {id}: {} replies of {per_conn} before the close, or not in order", n(&got)));
                        }
                        Ok(model)
                    })
                })
                .collect();
            let mut all: Vec<_> = ts.into_iter().map(|t| t.join().unwrap_or_else(|_| Err("client panicked".into()))).collect();
            all.push(steady.join().unwrap_or_else(|_| Err("steady client panicked".into())));
            all
        });
        let mut models = Vec::new();
        for s in sent {
            models.push(s?);
        }
        // what the store holds now: half-closed and steady keys exactly as sent; reset
        // keys at most as sent
        let mut c = Client::connect(port).map_err(|e| e.to_string())?;
        let mut read_by_resets = 0;
        let mut exact = 0;
        let mut wrong = HashMap::new();
        for (i, m) in models.iter().enumerate() {
            let reset = i < closers && i % 2 == 1;
            for (k, &n) in m {
                let got = match c.call(&[b"GET", k.as_bytes()]).map_err(|e| e.to_string())? {
                    Reply::Bulk(None) => 0,
                    Reply::Bulk(Some(v)) => String::from_utf8_lossy(&v).parse().unwrap_or(u64::MAX),
                    r => return Err(format!("GET {k}: {r:?}")),
                };
                if reset && got <= n {
                    read_by_resets += got;
                } else if !reset && got == n {
                    exact += got;
                } else {
                    wrong.insert(k.clone(), (got, n));
                }
            }
        }
        Ok((read_by_resets, exact, wrong))
    });
    let (r, report) = run.map_err(|e| e.to_string())?;
    let (read_by_resets, exact, wrong) = r?;
    let mut ok = counts_add_up(&report);
    if !wrong.is_empty() {
        eprintln!("kv_shards: keys whose count is not what was sent (got, sent): {wrong:?}");
        ok = false;
    }
    // every INCR the server read ran once: the stores' count is the keys' sum
    if report.incrs != read_by_resets + exact {
        eprintln!("kv_shards: the stores ran {} INCRs; the keys sum to {}", report.incrs, read_by_resets + exact);
        ok = false;
    }
    let t = report.total();
    println!(
        "{} mode: {} INCRs read from reset connections, {exact} from the others; {} answers for closed connections dropped",
        mode.name(),
        read_by_resets,
        t.orphans
    );
    Ok(ok)
}

/// `redis-cli --pipe` of `n` SETs (Redis's bulk loader: it ends its stream with an ECHO and
/// waits for that reply), then every key there with its value. `Ok(None)`: no redis-cli.
pub fn check_pipe(mode: Mode, cpus: &[usize], n: usize) -> Result<Option<bool>, String> {
    let mut input = Vec::new();
    for i in 0..n {
        input.extend(Client::encode(&[b"SET", format!("pipe:{i}").as_bytes(), format!("value {i}\r\n").as_bytes()]));
    }
    let (r, report) = run_server(mode, cpus, 0, AWAIT_POLL, |run: &Running<'_>| -> Result<Option<bool>, String> {
        let p = run.port.to_string();
        let out = match run_tool("REDIS_CLI", "redis-cli", &["-h", "127.0.0.1", "-p", &p, "--pipe"], &input, Duration::from_secs(60))? {
            None => return Ok(None),
            Some(o) => o,
        };
        let want = format!("errors: 0, replies: {n}");
        if !out.contains(&want) {
            eprintln!("kv_shards: redis-cli --pipe said {out:?}, not {want:?}");
            return Ok(Some(false));
        }
        let mut c = Client::connect(run.port).map_err(|e| e.to_string())?;
        let keys: Vec<String> = (0..n).map(|i| format!("pipe:{i}")).collect();
        let mut exists: Vec<&[u8]> = vec![b"EXISTS"];
        exists.extend(keys.iter().map(|k| k.as_bytes()));
        let got = c.call(&exists).map_err(|e| e.to_string())?;
        if got != Reply::Int(n as i64) {
            eprintln!("kv_shards: EXISTS of the {n} keys: {got:?}");
            return Ok(Some(false));
        }
        for i in (0..n).step_by(97) {
            let got = c.call(&[b"GET", keys[i].as_bytes()]).map_err(|e| e.to_string())?;
            if got != bulk_reply(format!("value {i}\r\n").as_bytes()) {
                eprintln!("kv_shards: GET {}: {got:?}", keys[i]);
                return Ok(Some(false));
            }
        }
        Ok(Some(true))
    })
    .map_err(|e| e.to_string())?;
    Ok(r?.map(|ok| counts_add_up(&report) && ok))
}

/// The shards' allocations over `rounds` pipelines of `pipeline` requests (GET, SET and INCR
/// over keys of every shard, all set before), after as many to warm up: `(allocations,
/// requests)`. A request that allocates shows here once per request.
pub fn count_allocs(mode: Mode, cpus: &[usize], rounds: usize, pipeline: usize) -> Result<(u64, u64), String> {
    let shards = cpus.len();
    let (r, _) = run_server(mode, cpus, 0, AWAIT_POLL, |run: &Running<'_>| -> Result<(u64, u64), String> {
        let mut c = Client::connect(run.port).map_err(|e| e.to_string())?;
        let keys: Vec<String> = (0..shards).flat_map(|o| keys_of(o, shards, "alloc:", 4)).collect();
        let mut out = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            out.extend(Client::encode(&[b"SET", k.as_bytes(), format!("{}", 1000 + i).as_bytes()]));
        }
        for _ in 0..pipeline {
            out.extend(Client::encode(&[b"GET", keys[0].as_bytes()]));
        }
        let mut stream = Vec::new();
        for i in 0..pipeline {
            let k = keys[i % keys.len()].as_bytes();
            stream.extend(match i % 3 {
                0 => Client::encode(&[b"GET", k]),
                1 => Client::encode(&[b"INCR", k]),
                _ => Client::encode(&[b"SET", k, b"12345"]),
            });
        }
        let mut go = |bytes: &[u8], n: usize| -> Result<(), String> {
            c.send_raw(bytes).map_err(|e| e.to_string())?;
            for i in 0..n {
                match c.reply().map_err(|e| e.to_string())? {
                    Reply::Error(e) => return Err(format!("reply {i}: -{e}")),
                    _ => continue,
                }
            }
            Ok(())
        };
        go(&out, keys.len() + pipeline)?;
        let allocs = |srv: &crate::server::Server| -> Result<u64, String> {
            (0..shards).map(|me| srv.call(me, crate::allocs::this_thread).map_err(|e| e.to_string())).sum()
        };
        for _ in 0..rounds {
            go(&stream, pipeline)?; // the buffers grow to their size here
        }
        let before = allocs(run.server)?;
        for _ in 0..rounds {
            go(&stream, pipeline)?;
        }
        Ok((allocs(run.server)? - before, (rounds * pipeline) as u64))
    })
    .map_err(|e| e.to_string())?;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Mutex, MutexGuard, PoisonError};

    /// A poll for answers long enough to meet most of them.
    const POLLING: Duration = Duration::from_micros(200);

    /// libxcall runs one runtime per process, and every server pins threads: one at a time.
    fn serial() -> MutexGuard<'static, ()> {
        static SERIAL: Mutex<()> = Mutex::new(());
        SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn every_reply_checked_and_redis_benchmark_counts() {
        let _g = serial();
        let cpus = server_cpus(8).unwrap();
        for mode in Mode::ALL {
            assert_eq!(check(mode, &cpus, 8, 1000, AWAIT_POLL), Ok(true), "{mode:?}");
        }
        // the loops' other wait: polling for answers before they sleep
        for mode in [Mode::Xcall, Mode::Channel] {
            assert_eq!(check(mode, &cpus, 8, 1000, POLLING), Ok(true), "{mode:?} polling");
        }
    }

    #[test]
    fn connections_closed_mid_batch_lose_and_repeat_nothing() {
        let _g = serial();
        let cpus = server_cpus(8).unwrap();
        if cpus.len() < 2 {
            eprintln!("skip: forwarding needs 2 CPUs, this process has {}", cpus.len());
            return;
        }
        for mode in Mode::ALL {
            assert_eq!(check_closing(mode, &cpus, 16, 2000, AWAIT_POLL), Ok(true), "{mode:?}");
        }
        for mode in [Mode::Xcall, Mode::Channel] {
            assert_eq!(check_closing(mode, &cpus, 16, 2000, POLLING), Ok(true), "{mode:?} polling");
        }
    }

    #[test]
    fn a_request_allocates_nothing() {
        let _g = serial();
        let cpus = server_cpus(8).unwrap();
        for mode in Mode::ALL {
            let (allocs, requests) = count_allocs(mode, &cpus, 40, 500).unwrap();
            // a few as a buffer meets a bigger batch than before; none per request
            assert!(allocs * 1000 < requests, "{mode:?}: {allocs} allocations in {requests} requests");
        }
    }

    #[test]
    fn redis_cli_pipe_loads_10000_sets() {
        let _g = serial();
        let cpus = server_cpus(8).unwrap();
        for mode in Mode::ALL {
            match check_pipe(mode, &cpus, 10_000) {
                Ok(None) => {
                    eprintln!("skip: redis-cli is not installed (Debian's redis-tools; make deps-rust)");
                    return;
                }
                r => assert_eq!(r, Ok(Some(true)), "{mode:?}"),
            }
        }
    }
}
