//! A key-value server on 127.0.0.1 that speaks enough of Redis's protocol for
//! `redis-benchmark`: thread-per-core, one shard thread per CPU, each libxcall's attached
//! worker of its CPU with its own `SO_REUSEPORT` listener and epoll loop (as
//! `epoll_shards.rs`), and the store split over the shards in a `Sharded<Store>`.
//!
//! A key belongs to the shard its hash names. A shard reads its connections' requests; a key
//! of its own it serves at once (`invoke_on` to its own CPU runs inline); another shard's key
//! goes there as a nowait call, which runs in the owner's loop, serves it under the owner's
//! `&mut Store` (inline again), and, once that borrow has ended, sends the answer back with a
//! nowait call to the asking shard, which puts it in the connection's reply order. No loop
//! ever blocks on a round trip, and no lock is taken.
//!
//! It speaks RESP arrays and inline commands: `PING`, `SET key value`, `GET key`,
//! `INCR key`, pipelined; `CONFIG GET ...` gets an empty array (`redis-benchmark` asks);
//! anything else `-ERR`. Replies go out in request order per connection.
//!
//! Two other ways a Rust user would share the store run the same loops, for the bench:
//! `mutex` (one `Mutex<Store>` per shard, no forwarding) and `channel` (forwarding through a
//! crossbeam channel per shard, woken by an eventfd).
//!
//!   cargo run --example kv_shards                      # the self-check below, every mode
//!   cargo run --example kv_shards -- serve [--mode M] [--port P]   # until stdin closes
//!   cargo run --release --example kv_shards -- bench [--rounds R] [--requests N] [--json FILE]
//!
//! The bench loads each mode and Debian's `redis-server` with `redis-benchmark --csv`
//! (pinned to the last CPU), alternated, and writes requests/s, p50/p99 and the server's CPU
//! time per request in the results format `xcall-report` reads.
//!
//! The check, in each mode: the crate's own client checks every reply (RESP and inline, pipelined, keys of
//! every shard, 8 connections at once and a counter they share); then, where `redis-benchmark`
//! (Debian's redis-tools) is installed, it loads the server briefly and `GET` of its INCR key
//! must equal the INCRs the server counted.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex, PoisonError};
use std::time::{Duration, Instant};
use xcall::{Attached, CpuSet, Error, ErrorKind, Handle, Runtime, Sharded};

const MAX_SHARDS: usize = 8;
const READ_BUDGET: usize = 256 * 1024; // bytes read from one connection per event
/// Requests a shard keeps in flight to one other shard, the rest queued in order until
/// answers come back: with the answers going the other way, a thread's ring to a CPU (256
/// entries) then never fills, so a nowait call never waits for room, and a loop never
/// serves calls nested inside its own sends.
const IN_FLIGHT: usize = 64;
const TOK_EVENTFD: u64 = 0;
const TOK_LISTENER: u64 = 1;

/// One shard's part of the store: the instance `Sharded` keeps on its CPU.
#[derive(Default)]
struct Store {
    map: HashMap<Vec<u8>, Vec<u8>>,
    incrs: u64,
    ops: u64,
}

/// A command on a key, served by the key's owner.
#[derive(Debug)]
enum Cmd {
    Get(Vec<u8>),
    Set(Vec<u8>, Vec<u8>),
    Incr(Vec<u8>),
}

impl Cmd {
    fn key(&self) -> &[u8] {
        match self {
            Cmd::Get(k) | Cmd::Set(k, _) | Cmd::Incr(k) => k,
        }
    }

    /// On the owner, under its `&mut Store`.
    fn exec(self, s: &mut Store) -> Vec<u8> {
        s.ops += 1;
        match self {
            Cmd::Get(k) => match s.map.get(&k) {
                Some(v) => bulk(v),
                None => b"$-1\r\n".to_vec(),
            },
            Cmd::Set(k, v) => {
                s.map.insert(k, v);
                b"+OK\r\n".to_vec()
            }
            Cmd::Incr(k) => {
                let v = s.map.entry(k).or_insert_with(|| b"0".to_vec());
                match std::str::from_utf8(v).ok().and_then(|t| t.parse::<i64>().ok()).and_then(|n| n.checked_add(1)) {
                    Some(n) => {
                        *v = n.to_string().into_bytes();
                        s.incrs += 1;
                        format!(":{n}\r\n").into_bytes()
                    }
                    None => b"-ERR value is not an integer or out of range\r\n".to_vec(),
                }
            }
        }
    }
}

fn bulk(v: &[u8]) -> Vec<u8> {
    let mut out = format!("${}\r\n", v.len()).into_bytes();
    out.extend_from_slice(v);
    out.extend_from_slice(b"\r\n");
    out
}

/// What a request asks: a command for the key's owner, or an answer known at once.
enum Req {
    Keyed(Cmd),
    Now(Vec<u8>),
}

/// The request made of a command's words; `None` for an empty inline line.
fn request(args: Vec<Vec<u8>>) -> Option<Req> {
    let name = args.first()?.to_ascii_uppercase();
    let n = args.len();
    let mut a = args.into_iter().skip(1);
    let wrong = |c: &str| Req::Now(format!("-ERR wrong number of arguments for '{}' command\r\n", c.to_lowercase()).into_bytes());
    Some(match name.as_slice() {
        b"PING" if n == 1 => Req::Now(b"+PONG\r\n".to_vec()),
        b"PING" if n == 2 => Req::Now(bulk(&a.next()?)),
        b"PING" => wrong("ping"),
        b"GET" if n == 2 => Req::Keyed(Cmd::Get(a.next()?)),
        b"GET" => wrong("get"),
        b"SET" if n == 3 => Req::Keyed(Cmd::Set(a.next()?, a.next()?)),
        b"SET" if n > 3 => Req::Now(b"-ERR syntax error\r\n".to_vec()),
        b"SET" => wrong("set"),
        b"INCR" if n == 2 => Req::Keyed(Cmd::Incr(a.next()?)),
        b"INCR" => wrong("incr"),
        b"CONFIG" if n >= 3 && a.next()?.eq_ignore_ascii_case(b"GET") => Req::Now(b"*0\r\n".to_vec()),
        _ => {
            let shown: String = String::from_utf8_lossy(&name).chars().filter(|c| !c.is_control()).take(64).collect();
            Req::Now(format!("-ERR unknown command '{shown}'\r\n").into_bytes())
        }
    })
}

/// One request's words from the front of `buf`: `Ok(None)` while incomplete, `Err` for a
/// protocol error (the connection is closed after an `-ERR`).
#[allow(clippy::type_complexity)]
fn parse(buf: &[u8]) -> Result<Option<(Vec<Vec<u8>>, usize)>, &'static str> {
    fn line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
        let end = buf[at..].windows(2).position(|w| w == b"\r\n")?;
        Some((&buf[at..at + end], at + end + 2))
    }
    fn number(l: &[u8]) -> Result<i64, &'static str> {
        std::str::from_utf8(l).ok().and_then(|t| t.parse().ok()).ok_or("Protocol error: invalid length")
    }
    if buf.is_empty() {
        return Ok(None);
    }
    if buf[0] != b'*' {
        // inline: words separated by spaces, up to the end of the line
        let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
            return if buf.len() > 64 * 1024 { Err("Protocol error: too big inline request") } else { Ok(None) };
        };
        let text = buf[..nl].strip_suffix(b"\r").unwrap_or(&buf[..nl]);
        let words = text.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).map(<[u8]>::to_vec).collect();
        return Ok(Some((words, nl + 1)));
    }
    let Some((head, mut at)) = line(buf, 1) else { return Ok(None) };
    let n = number(head)?;
    if !(0..=1024 * 1024).contains(&n) {
        return Err("Protocol error: invalid multibulk length");
    }
    let mut words = Vec::with_capacity(n as usize);
    for _ in 0..n {
        if at >= buf.len() {
            return Ok(None);
        }
        if buf[at] != b'$' {
            return Err("Protocol error: expected '$'");
        }
        let Some((len, start)) = line(buf, at + 1) else { return Ok(None) };
        let len = number(len)?;
        if !(0..=512 * 1024 * 1024).contains(&len) {
            return Err("Protocol error: invalid bulk length");
        }
        let end = start + len as usize;
        if buf.len() < end + 2 {
            return Ok(None);
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Err("Protocol error: bad bulk string end");
        }
        words.push(buf[start..end].to_vec());
        at = end + 2;
    }
    Ok(Some((words, at)))
}

/// Which shard owns a key (FNV-1a).
fn owner_of(key: &[u8], shards: usize) -> usize {
    let h = key.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3));
    (h % shards as u64) as usize
}

/// How the shards share the store (the bench compares them; the check runs `Xcall`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// a `Sharded` store; requests forwarded to the key's owner with libxcall nowait calls
    Xcall,
    /// one `Mutex<Store>` per shard: the shard that read a request locks the key's owner's
    /// map itself, no forwarding
    Mutex,
    /// each shard's store its thread's own; requests and answers forwarded as boxed closures
    /// through a crossbeam channel per shard, whose loop an eventfd wakes
    Channel,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Xcall => "xcall",
            Mode::Mutex => "mutex",
            Mode::Channel => "channel",
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// A shard's inbox in the modes without libxcall: a channel of closures, the eventfd that
/// wakes its loop, and `woken`, which makes one eventfd write serve every job sent until the
/// loop drains.
///
/// Sender: send the job, then `woken.swap(true)`; the one whose swap read false writes the
/// eventfd. Loop, at its top: `woken.swap(false)`, then drain. A job whose sender's swap read
/// true follows a swap that read false with no swap of the loop between them (else its own
/// would have read false): that sender's write wakes the loop, whose next swap reads the true
/// this job's sender stored, so the drain after it sees the job. SeqCst on both sides, one
/// order on the flag. (Writing only when the channel's length reads 1, as this did before,
/// loses the wake when two senders both read 2.)
struct Inbox {
    tx: crossbeam_channel::Sender<Job>,
    efd: OwnedFd,
    woken: Arc<AtomicBool>,
}

/// The loop's end of an inbox.
struct InboxRx {
    rx: crossbeam_channel::Receiver<Job>,
    efd: RawFd,
    woken: Arc<AtomicBool>,
}

impl Inbox {
    fn post(&self, job: Job) -> Result<(), Error> {
        self.push(job)?;
        self.wake();
        Ok(())
    }

    /// The sender's two steps, apart so that a test can interleave two senders.
    fn push(&self, job: Job) -> Result<(), Error> {
        self.tx.send(job).map_err(|_| Error::from(ErrorKind::Unavailable))
    }

    fn wake(&self) {
        if !self.woken.swap(true, Ordering::SeqCst) {
            let one = 1u64.to_ne_bytes();
            // SAFETY: a write of 8 bytes to an eventfd we own.
            unsafe { libc::write(self.efd.as_raw_fd(), one.as_ptr().cast(), 8) };
        }
    }
}

impl InboxRx {
    /// Run every job the inbox holds (see `Inbox`).
    fn drain(&self) {
        self.woken.swap(false, Ordering::SeqCst);
        while let Ok(job) = self.rx.try_recv() {
            job();
        }
    }
}

#[derive(Clone)]
enum Backend {
    Xcall(Handle, Sharded<Store>),
    Mutex(Arc<Vec<Mutex<Store>>>),
    Channel,
}

/// The server as every shard sees it.
#[derive(Clone)]
struct Server {
    cpus: [usize; MAX_SHARDS],
    n: usize,
    backend: Backend,
    /// Mutex and Channel modes: each shard's inbox (Channel's requests and answers, and
    /// both modes' control)
    inboxes: Arc<Vec<Inbox>>,
}

impl Server {
    /// Queue `f` to run in `shard`'s loop, without waiting.
    fn send(&self, shard: usize, f: impl FnOnce() + Send + 'static) -> Result<(), Error> {
        if let Backend::Xcall(h, _) = &self.backend {
            return h.spawn_on(self.cpus[shard], f);
        }
        self.inboxes[shard].post(Box::new(f))
    }

    /// Run `f` in `shard`'s loop and wait for its result (control, not requests).
    fn call<R: Send + 'static>(&self, shard: usize, f: impl FnOnce() -> R + Send + 'static) -> Result<R, Error> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.send(shard, move || {
            let _ = tx.send(f());
        })?;
        rx.recv().map_err(|_| Error::from(ErrorKind::Unavailable))
    }

    /// The INCRs the store has counted, summed over the shards.
    fn incrs(&self) -> u64 {
        match &self.backend {
            Backend::Xcall(_, st) => st.map_reduce(|st| st.incrs, 0, |a, b| a + b).unwrap_or(0),
            Backend::Mutex(v) => v.iter().map(|m| m.lock().unwrap_or_else(PoisonError::into_inner).incrs).sum(),
            Backend::Channel => (0..self.n).filter_map(|me| self.call(me, || OWN_STORE.with_borrow(|st| st.incrs)).ok()).sum(),
        }
    }

    /// A command on a key of shard `me`'s, on `me`'s thread (Xcall: under `invoke_on`, inline).
    fn exec_own(&self, me: usize, cmd: Cmd) -> Vec<u8> {
        match &self.backend {
            Backend::Xcall(_, st) => st.invoke_on(self.cpus[me], |st| cmd.exec(st)).unwrap_or_else(|e| format!("-ERR {e}\r\n").into_bytes()),
            Backend::Mutex(v) => cmd.exec(&mut v[me].lock().unwrap_or_else(PoisonError::into_inner)),
            Backend::Channel => OWN_STORE.with_borrow_mut(|st| cmd.exec(st)),
        }
    }
}

/// A client connection, owned by the shard whose listener accepted it.
struct Conn {
    stream: TcpStream,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    /// the next request's number; the next reply to write
    next_seq: u64,
    next_out: u64,
    /// replies that came back before an earlier one
    early: BTreeMap<u64, Vec<u8>>,
    writing: bool,
}

/// What a shard counts.
#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    conns: u64,
    requests: u64,
    local: u64,
    forwarded: u64,
    served: u64,
    errors: u64,
    /// the shard thread's CPU time, user and system (RUSAGE_THREAD at its end)
    cpu_us: u64,
}

thread_local! {
    static SERVER: RefCell<Option<Server>> = const { RefCell::new(None) };
    static ME: Cell<usize> = const { Cell::new(0) };
    static EP: Cell<RawFd> = const { Cell::new(-1) };
    static LISTENER: RefCell<Option<OwnedFd>> = const { RefCell::new(None) };
    static CONNS: RefCell<HashMap<u64, Conn>> = RefCell::new(HashMap::new());
    static DIRTY: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    static NEXT_TOKEN: Cell<u64> = const { Cell::new(2) };
    static COUNTS: Cell<Counts> = const { Cell::new(Counts { conns: 0, requests: 0, local: 0, forwarded: 0, served: 0, errors: 0, cpu_us: 0 }) };
    static STOP: Cell<bool> = const { Cell::new(false) };
    static CLOSE: Cell<bool> = const { Cell::new(false) };
    /// per owner: requests forwarded and not yet answered, and those waiting their turn
    static SENT: RefCell<[usize; MAX_SHARDS]> = const { RefCell::new([0; MAX_SHARDS]) };
    static BACKLOG: RefCell<Vec<VecDeque<(u64, u64, Cmd)>>> = RefCell::new((0..MAX_SHARDS).map(|_| VecDeque::new()).collect());
    /// Channel mode: the shard's store, and its inbox's receiving end
    static OWN_STORE: RefCell<Store> = RefCell::new(Store::default());
    static INBOX: RefCell<Option<InboxRx>> = const { RefCell::new(None) };
}

fn count(f: impl FnOnce(&mut Counts)) {
    let mut c = COUNTS.get();
    f(&mut c);
    COUNTS.set(c);
}

/// The server, borrowed (shared borrows nest: a call served inside a call may look too;
/// only the loop's top, which holds none, sets it).
fn with_server<R>(f: impl FnOnce(&Server) -> R) -> Option<R> {
    SERVER.with_borrow(|s| s.as_ref().map(f))
}

/// A reply for request `seq` of connection `tok`, on the connection's shard: written in
/// request order. No borrow of the shard's tables is held across a call, since a call that
/// waits (for room in a full ring) runs this shard's calls, these among them.
fn complete(tok: u64, seq: u64, reply: Vec<u8>) {
    CONNS.with_borrow_mut(|conns| {
        let Some(c) = conns.get_mut(&tok) else { return }; // closed meanwhile
        if seq != c.next_out {
            c.early.insert(seq, reply);
            return;
        }
        c.out.extend_from_slice(&reply);
        c.next_out += 1;
        while let Some(r) = c.early.remove(&c.next_out) {
            c.out.extend_from_slice(&r);
            c.next_out += 1;
        }
        DIRTY.with_borrow_mut(|d| d.push(tok));
    });
}

/// On the key's owner: serve it under the owner's `&mut Store` (inline: a call to one's own
/// CPU), and only then send the answer back.
fn serve_forwarded(origin: usize, tok: u64, seq: u64, cmd: Cmd) {
    with_server(|s| {
        let me = ME.get();
        count(|c| c.served += 1);
        let reply = s.exec_own(me, cmd);
        if s.send(origin, move || answered(me, tok, seq, reply)).is_err() {
            count(|c| c.errors += 1);
        }
    });
}

fn dispatch(s: &Server, tok: u64, seq: u64, req: Req) {
    count(|c| c.requests += 1);
    let cmd = match req {
        Req::Now(reply) => return complete(tok, seq, reply),
        Req::Keyed(cmd) => cmd,
    };
    let me = ME.get();
    let owner = owner_of(cmd.key(), s.n);
    if owner == me {
        count(|c| c.local += 1);
        return complete(tok, seq, s.exec_own(me, cmd));
    }
    if let Backend::Mutex(v) = &s.backend {
        // no forwarding: the owner's lock, taken here
        count(|c| c.local += 1);
        return complete(tok, seq, cmd.exec(&mut v[owner].lock().unwrap_or_else(PoisonError::into_inner)));
    }
    count(|c| c.forwarded += 1);
    BACKLOG.with_borrow_mut(|b| b[owner].push_back((tok, seq, cmd)));
    pump(s, owner);
}

/// Send what waits for `owner`, up to `IN_FLIGHT` unanswered.
fn pump(s: &Server, owner: usize) {
    let me = ME.get();
    loop {
        let next = SENT.with_borrow_mut(|sent| {
            if sent[owner] >= IN_FLIGHT {
                return None;
            }
            let r = BACKLOG.with_borrow_mut(|b| b[owner].pop_front());
            if r.is_some() {
                sent[owner] += 1;
            }
            r
        });
        let Some((tok, seq, cmd)) = next else { return };
        // no borrow held across the call
        if let Err(e) = s.send(owner, move || serve_forwarded(me, tok, seq, cmd)) {
            count(|c| c.errors += 1);
            SENT.with_borrow_mut(|sent| sent[owner] -= 1);
            complete(tok, seq, format!("-ERR {e}\r\n").into_bytes());
        }
    }
}

/// An answer from `owner`, on the asking shard: its turn in the connection's reply order;
/// the next request waiting for that owner goes at the loop's top.
fn answered(owner: usize, tok: u64, seq: u64, reply: Vec<u8>) {
    SENT.with_borrow_mut(|sent| sent[owner] -= 1);
    complete(tok, seq, reply);
}

fn pump_all() {
    with_server(|s| {
        for owner in 0..s.n {
            pump(s, owner);
        }
    });
}

/// Read what a connection sent and dispatch each whole request.
fn readable(s: &Server, tok: u64) {
    let mut reqs = Vec::new();
    let mut close = false;
    CONNS.with_borrow_mut(|conns| {
        let Some(c) = conns.get_mut(&tok) else { return };
        let mut chunk = [0u8; 16 * 1024];
        let mut got = 0;
        while got < READ_BUDGET {
            match c.stream.read(&mut chunk) {
                Ok(0) => {
                    close = true;
                    break;
                }
                Ok(n) => {
                    c.inbuf.extend_from_slice(&chunk[..n]);
                    got += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    close = true;
                    break;
                }
            }
        }
        let mut at = 0;
        loop {
            match parse(&c.inbuf[at..]) {
                Ok(Some((words, used))) => {
                    at += used;
                    if let Some(r) = request(words) {
                        reqs.push((c.next_seq, r));
                        c.next_seq += 1;
                    }
                }
                Ok(None) => break,
                Err(why) => {
                    reqs.push((c.next_seq, Req::Now(format!("-ERR {why}\r\n").into_bytes())));
                    c.next_seq += 1;
                    at = c.inbuf.len();
                    close = true;
                    break;
                }
            }
        }
        c.inbuf.drain(..at);
    });
    // no borrow held from here: a call may run this shard's calls while it waits
    for (seq, r) in reqs {
        dispatch(s, tok, seq, r);
    }
    if close {
        flush(tok);
        drop_conn(tok);
    }
}

fn drop_conn(tok: u64) {
    if let Some(c) = CONNS.with_borrow_mut(|conns| conns.remove(&tok)) {
        // SAFETY: epoll on a descriptor of this thread's, still open.
        unsafe { libc::epoll_ctl(EP.get(), libc::EPOLL_CTL_DEL, c.stream.as_raw_fd(), std::ptr::null_mut()) };
    }
}

/// Write what a connection has ready; watch for room when the socket is full.
fn flush(tok: u64) {
    let mut broken = false;
    CONNS.with_borrow_mut(|conns| {
        let Some(c) = conns.get_mut(&tok) else { return };
        let mut done = 0;
        while done < c.out.len() {
            match c.stream.write(&c.out[done..]) {
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    broken = true;
                    break;
                }
            }
        }
        c.out.drain(..done);
        let want = !c.out.is_empty();
        if want != c.writing {
            c.writing = want;
            let events = libc::EPOLLIN as u32 | if want { libc::EPOLLOUT as u32 } else { 0 };
            let mut ev = libc::epoll_event { events, u64: tok };
            // SAFETY: as in drop_conn.
            unsafe { libc::epoll_ctl(EP.get(), libc::EPOLL_CTL_MOD, c.stream.as_raw_fd(), &mut ev) };
        }
    });
    if broken {
        drop_conn(tok);
    }
}

fn flush_dirty() {
    loop {
        let dirty = DIRTY.take();
        if dirty.is_empty() {
            return;
        }
        for tok in dirty {
            flush(tok);
        }
    }
}

fn accept_all() {
    let Some(lfd) = LISTENER.with_borrow(|l| l.as_ref().map(|l| l.as_raw_fd())) else { return };
    loop {
        // SAFETY: accept on our listener; the new descriptor is owned by the TcpStream.
        let fd = unsafe { libc::accept4(lfd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
        if fd < 0 {
            return; // EAGAIN, or an error the next readiness shows again
        }
        // SAFETY: fd is a new socket of ours.
        let stream = unsafe { TcpStream::from_raw_fd(fd) };
        let _ = stream.set_nodelay(true);
        let tok = NEXT_TOKEN.get();
        NEXT_TOKEN.set(tok + 1);
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tok };
        // SAFETY: as in drop_conn.
        if unsafe { libc::epoll_ctl(EP.get(), libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
            continue;
        }
        count(|c| c.conns += 1);
        let conn = Conn {
            stream,
            inbuf: Vec::new(),
            out: Vec::new(),
            next_seq: 0,
            next_out: 0,
            early: BTreeMap::new(),
            writing: false,
        };
        CONNS.with_borrow_mut(|conns| conns.insert(tok, conn));
    }
}

/// The listeners, one per shard, all on one port with `SO_REUSEPORT`: the kernel spreads
/// connections over them.
fn listeners(n: usize, port: u16) -> std::io::Result<(Vec<OwnedFd>, u16)> {
    let mut out = Vec::new();
    let mut port = port;
    for _ in 0..n {
        // SAFETY: plain socket calls on a descriptor we own from here on.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let owned = OwnedFd::from_raw_fd(fd);
            let one: libc::c_int = 1;
            for opt in [libc::SO_REUSEADDR, libc::SO_REUSEPORT] {
                let p = (&one as *const libc::c_int).cast();
                if libc::setsockopt(fd, libc::SOL_SOCKET, opt, p, std::mem::size_of::<libc::c_int>() as u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            let mut sa: libc::sockaddr_in = std::mem::zeroed();
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_port = port.to_be();
            sa.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            if libc::bind(fd, (&sa as *const libc::sockaddr_in).cast(), len) != 0 || libc::listen(fd, 1024) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if port == 0 {
                let mut got: libc::sockaddr_in = std::mem::zeroed();
                let mut l = len;
                if libc::getsockname(fd, (&mut got as *mut libc::sockaddr_in).cast(), &mut l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                port = u16::from_be(got.sin_port);
            }
            out.push(owned);
        }
    }
    Ok((out, port))
}

/// A shard thread: pinned (and attached in Xcall mode), then the loop, until told to stop.
fn shard_main(
    rt: Option<&Runtime>,
    cpu: usize,
    me: usize,
    listener: OwnedFd,
    inbox: Option<InboxRx>,
    started: &Barrier,
) -> Result<Counts, Error> {
    let opened = (|| {
        xcall::pin_current_thread(cpu)?;
        let att = match rt {
            Some(rt) => Some(rt.attach(cpu)?),
            None => None,
        };
        // SAFETY: a new epoll set of this thread's.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if ep < 0 {
            return Err(Error::from(ErrorKind::Io));
        }
        // the attached CPU's eventfd, or the inbox's: either wakes the loop
        let wake_fd = match (&att, &inbox) {
            (Some(att), _) => att.as_raw_fd(),
            (None, Some(inbox)) => inbox.efd,
            (None, None) => return Err(Error::from(ErrorKind::InvalidArgument)),
        };
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: TOK_EVENTFD };
        // SAFETY: the eventfd stays open while attached (the inbox's while the server runs).
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, wake_fd, &mut ev) } != 0 {
            return Err(Error::from(ErrorKind::Io));
        }
        Ok((att, ep, wake_fd))
    })();
    ME.set(me);
    LISTENER.set(Some(listener));
    let efd = inbox.as_ref().map(|inbox| inbox.efd);
    INBOX.set(inbox);
    // calls to this CPU are refused until its thread attached: everyone waits here
    started.wait();
    let (att, ep, wake_fd) = opened?;
    EP.set(ep);
    let r = shard_loop(att.as_ref(), efd, ep);
    // the detach closes the eventfd: out of the epoll set first; calls still queued run there
    // SAFETY: as above.
    unsafe {
        libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, wake_fd, std::ptr::null_mut());
    }
    CONNS.with_borrow_mut(HashMap::clear);
    if let Some(att) = att {
        att.detach()?;
    }
    // SAFETY: our epoll set, closed once.
    unsafe { libc::close(ep) };
    LISTENER.set(None);
    INBOX.set(None);
    r?;
    // SAFETY: getrusage fills the struct.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        ru
    };
    count(|c| c.cpu_us = tv_us(ru.ru_utime) + tv_us(ru.ru_stime));
    Ok(COUNTS.get())
}

fn tv_us(t: libc::timeval) -> u64 {
    t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64
}

/// Channel and Mutex modes: run what the inbox holds.
fn run_inbox() {
    INBOX.with_borrow(|inbox| inbox.as_ref().map(InboxRx::drain));
}

fn shard_loop(att: Option<&Attached<'_>>, efd: Option<RawFd>, ep: RawFd) -> Result<(), Error> {
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
    loop {
        match att {
            Some(att) => {
                att.poll()?; // requests and answers from other shards
            }
            None => run_inbox(),
        }
        pump_all();
        flush_dirty();
        if STOP.get() {
            return Ok(());
        }
        if CLOSE.take() {
            SERVER.set(None); // no borrow of it is held here
        }
        let timeout = match att {
            Some(att) if !att.sleep_begin()? => 0,
            _ => -1,
        };
        // SAFETY: our epoll set and buffer.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, timeout) };
        if let Some(att) = att {
            att.sleep_end()?;
        }
        with_server(|s| {
            for ev in &events[..n.max(0) as usize] {
                match ev.u64 {
                    TOK_EVENTFD => {
                        if let Some(efd) = efd {
                            // read before the inbox is drained at the loop's top
                            let mut v = [0u8; 8];
                            // SAFETY: an 8-byte read of our eventfd.
                            unsafe { libc::read(efd, v.as_mut_ptr().cast(), 8) };
                        }
                    }
                    TOK_LISTENER => accept_all(),
                    tok => {
                        if ev.events & (libc::EPOLLIN | libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0 {
                            readable(s, tok);
                        }
                        if ev.events & libc::EPOLLOUT as u32 != 0 {
                            DIRTY.with_borrow_mut(|d| d.push(tok));
                        }
                    }
                }
            }
        });
        if with_server(|_| ()).is_none() {
            // before the server is set, only the wake descriptor is watched
            if let Some(efd) = efd {
                let mut v = [0u8; 8];
                // SAFETY: as above (nonblocking: EAGAIN when nothing was written).
                unsafe { libc::read(efd, v.as_mut_ptr().cast(), 8) };
            }
        }
        flush_dirty();
    }
}

/// On each shard, once the store is built: the server, and its listener in the loop.
fn open_shard(s: Server) {
    SERVER.set(Some(s));
    if let Some(lfd) = LISTENER.with_borrow(|l| l.as_ref().map(|l| l.as_raw_fd())) {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: TOK_LISTENER };
        // SAFETY: the listener stays open until the thread ends.
        unsafe { libc::epoll_ctl(EP.get(), libc::EPOLL_CTL_ADD, lfd, &mut ev) };
    }
}

/// What a run of the server reports at its end.
#[derive(Debug)]
struct Report {
    shards: Vec<Counts>,
    incrs: u64,
    ops: u64,
}

/// Run the server in `mode` on `port` (0: any) while `work(port, &server)` runs, then stop it.
fn run_server<R>(mode: Mode, port: u16, work: impl FnOnce(u16, &Server) -> R) -> Result<(R, Report), Error> {
    let all: Vec<usize> = CpuSet::current_affinity()?.iter().take(MAX_SHARDS).collect();
    let set = CpuSet::from_cpus(all.iter().copied())?;
    // Xcall: every CPU is a shard's, libxcall starts no thread of its own
    let rt = match mode {
        Mode::Xcall => Some(Runtime::builder().cpus(&set).attach(&set).build()?),
        _ => None,
    };
    let (lfds, port) = listeners(all.len(), port).map_err(|e| Error::from_errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
    let mut inboxes = Vec::new();
    let mut receivers = Vec::new();
    if rt.is_none() {
        for _ in 0..all.len() {
            let (tx, rx) = crossbeam_channel::unbounded::<Job>();
            // SAFETY: a new eventfd, owned from here on.
            let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            if efd < 0 {
                return Err(Error::from(ErrorKind::Io));
            }
            // SAFETY: as above.
            let efd = unsafe { OwnedFd::from_raw_fd(efd) };
            let woken = Arc::new(AtomicBool::new(false));
            receivers.push(Some(InboxRx { rx, efd: efd.as_raw_fd(), woken: woken.clone() }));
            inboxes.push(Inbox { tx, efd, woken });
        }
    } else {
        receivers.resize_with(all.len(), || None);
    }
    let inboxes = Arc::new(inboxes);
    let started = Barrier::new(all.len() + 1);
    std::thread::scope(|sc| {
        let threads: Vec<_> = lfds
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(me, (lfd, inbox))| {
                let (rt, started, cpu) = (rt.as_ref(), &started, all[me]);
                sc.spawn(move || shard_main(rt, cpu, me, lfd, inbox, started))
            })
            .collect();
        started.wait();
        let mut cpus = [0; MAX_SHARDS];
        cpus[..all.len()].copy_from_slice(&all);
        let mut stopper = Server { cpus, n: all.len(), backend: Backend::Channel, inboxes: inboxes.clone() };
        if let Some(rt) = &rt {
            stopper.backend = Backend::Xcall(rt.handle(), Sharded::new(rt, |_| Store::default())?);
        }
        let run = || -> Result<_, Error> {
            // the store: Xcall's built in the shards' loops, one instance on each CPU
            let backend = match mode {
                Mode::Xcall => stopper.backend.clone(),
                Mode::Mutex => Backend::Mutex(Arc::new((0..all.len()).map(|_| Mutex::new(Store::default())).collect())),
                Mode::Channel => Backend::Channel,
            };
            let server = Server { cpus, n: all.len(), backend, inboxes: inboxes.clone() };
            for me in 0..all.len() {
                let s = server.clone();
                stopper.call(me, move || open_shard(s))?;
            }
            let out = work(port, &server);
            let (mut incrs, mut ops) = (0, 0);
            match &server.backend {
                Backend::Xcall(_, st) => {
                    (incrs, ops) = st.map_reduce(|st| (st.incrs, st.ops), (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))?;
                }
                Backend::Mutex(v) => {
                    for m in v.iter() {
                        let st = m.lock().unwrap_or_else(PoisonError::into_inner);
                        (incrs, ops) = (incrs + st.incrs, ops + st.ops);
                    }
                }
                Backend::Channel => {
                    for me in 0..all.len() {
                        let (i, o) = server.call(me, || OWN_STORE.with_borrow(|st| (st.incrs, st.ops)))?;
                        (incrs, ops) = (incrs + i, ops + o);
                    }
                }
            }
            // the shards' handles first (each loop drops its own at its top, before it runs
            // the second call), then ours: Xcall's instances dropped on their CPUs
            for me in 0..all.len() {
                stopper.call(me, || CLOSE.set(true))?;
                stopper.call(me, || ())?;
            }
            drop(server);
            Ok((out, incrs, ops))
        };
        let r = run();
        // the stopper's store (Xcall: the last handle) dropped while the loops still run
        let stop = Server { backend: Backend::Channel, ..stopper.clone() };
        if let Backend::Xcall(h, _) = stopper.backend {
            drop(stopper);
            for &cpu in &all {
                let _ = h.spawn_on(cpu, || STOP.set(true));
            }
        } else {
            for me in 0..all.len() {
                let _ = stop.send(me, || STOP.set(true));
            }
        }
        let mut shards = Vec::new();
        for t in threads {
            shards.push(t.join().map_err(|_| Error::from(ErrorKind::Io))?);
        }
        let (out, incrs, ops) = r?;
        let shards = shards.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok((out, Report { shards, incrs, ops }))
    })
}

/// The crate's own client: RESP requests out, replies parsed.
struct Client {
    s: TcpStream,
    buf: Vec<u8>,
}

#[derive(Debug, PartialEq, Eq, Clone)]
enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

impl Client {
    fn connect(port: u16) -> std::io::Result<Client> {
        let s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.set_nodelay(true)?;
        Ok(Client { s, buf: Vec::new() })
    }

    fn encode(args: &[&[u8]]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(&bulk(a));
        }
        out
    }

    fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.s.write_all(bytes)
    }

    fn call(&mut self, args: &[&[u8]]) -> std::io::Result<Reply> {
        self.send_raw(&Self::encode(args))?;
        self.reply()
    }

    fn reply(&mut self) -> std::io::Result<Reply> {
        loop {
            if let Some((r, used)) = Self::parse_reply(&self.buf) {
                self.buf.drain(..used);
                return Ok(r);
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.s.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn parse_reply(b: &[u8]) -> Option<(Reply, usize)> {
        let end = b.windows(2).position(|w| w == b"\r\n")?;
        let text = std::str::from_utf8(&b[1..end]).ok()?;
        let at = end + 2;
        Some(match *b.first()? {
            b'+' => (Reply::Status(text.to_string()), at),
            b'-' => (Reply::Error(text.to_string()), at),
            b':' => (Reply::Int(text.parse().ok()?), at),
            b'$' => {
                let len: i64 = text.parse().ok()?;
                if len < 0 {
                    (Reply::Bulk(None), at)
                } else {
                    let e = at + len as usize;
                    if b.len() < e + 2 {
                        return None;
                    }
                    (Reply::Bulk(Some(b[at..e].to_vec())), e + 2)
                }
            }
            b'*' => {
                let n: usize = text.parse().ok()?;
                let mut items = Vec::new();
                let mut at = at;
                for _ in 0..n {
                    let (r, used) = Self::parse_reply(&b[at..])?;
                    items.push(r);
                    at += used;
                }
                (Reply::Array(items), at)
            }
            _ => (Reply::Error(format!("unparsable reply {:?}", &b[..end])), at),
        })
    }
}

fn bulk_reply(v: &[u8]) -> Reply {
    Reply::Bulk(Some(v.to_vec()))
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
    check("PING", c.call(&[b"PING"]), Reply::Status("PONG".into()))?;
    check("PING msg", c.call(&[b"ping", b"hi there"]), bulk_reply(b"hi there"))?;
    c.send_raw(b"PING\r\n").map_err(|e| e.to_string())?;
    let r = c.reply();
    check("inline PING", r, Reply::Status("PONG".into()))?;
    c.send_raw(b"  \r\nSET inline:key  value-1\r\nGET inline:key\n").map_err(|e| e.to_string())?;
    let r = c.reply();
    check("inline SET", r, Reply::Status("OK".into()))?;
    let r = c.reply();
    check("inline GET", r, bulk_reply(b"value-1"))?;
    check("CONFIG GET", c.call(&[b"CONFIG", b"GET", b"save"]), Reply::Array(vec![]))?;
    let r = c.call(&[b"FLUSHALL"]);
    check("unknown", r, Reply::Error("ERR unknown command 'FLUSHALL'".into()))?;
    let r = c.call(&[b"GET"]);
    check("GET arity", r, Reply::Error("ERR wrong number of arguments for 'get' command".into()))?;
    let k = format!("c{id}:missing");
    check("GET missing", c.call(&[b"GET", k.as_bytes()]), Reply::Bulk(None))?;
    let k = format!("c{id}:text");
    check("SET text", c.call(&[b"SET", k.as_bytes(), b"abc"]), Reply::Status("OK".into()))?;
    let r = c.call(&[b"INCR", k.as_bytes()]);
    check("INCR text", r, Reply::Error("ERR value is not an integer or out of range".into()))?;

    // a pipeline over many keys (so every shard's), written at once, replies in order
    let mut model: HashMap<String, i64> = HashMap::new();
    let mut out = Vec::new();
    let mut want = Vec::new();
    let mut shared_incrs = 0;
    for i in 0..pipeline {
        let key = format!("c{id}:k{}", i % 37);
        match i % 4 {
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
                want.push(Reply::Status("OK".into()));
            }
            2 => {
                out.extend(Client::encode(&[b"GET", key.as_bytes()]));
                want.push(match model.get(&key) {
                    Some(v) => bulk_reply(v.to_string().as_bytes()),
                    None => Reply::Bulk(None),
                });
            }
            _ => {
                out.extend(Client::encode(&[b"INCR", shared]));
                shared_incrs += 1;
                want.push(Reply::Int(0)); // any count: other connections bump it too
            }
        }
    }
    c.send_raw(&out).map_err(|e| e.to_string())?;
    for (i, w) in want.into_iter().enumerate() {
        let got = c.reply().map_err(|e| format!("client {id}: pipeline reply {i}: {e}"))?;
        let ok = match (&w, &got) {
            (Reply::Int(0), Reply::Int(n)) => *n >= 1,
            _ => got == w,
        };
        if !ok {
            return Err(format!("client {id}: pipeline reply {i}: got {got:?}, want {w:?}"));
        }
    }
    Ok(shared_incrs)
}

/// Run `redis-benchmark` (or `$REDIS_BENCHMARK`) against the server; `Ok(None)` where it is
/// not installed.
fn redis_benchmark(port: u16, args: &[&str], limit: Duration) -> Result<Option<String>, String> {
    let bin = std::env::var_os("REDIS_BENCHMARK").unwrap_or_else(|| "redis-benchmark".into());
    let mut cmd = std::process::Command::new(bin);
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string()]).args(args);
    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("redis-benchmark: {e}")),
    };
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if t0.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("redis-benchmark ran past {limit:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("redis-benchmark failed ({}): {text}", out.status));
    }
    Ok(Some(text))
}

/// The self-check: true when every reply was right and the counts add up.
fn check(mode: Mode, clients: usize, pipeline: usize) -> Result<bool, Error> {
    println!("kv_shards: {} mode", mode.name());
    let shared = b"shared:counter";
    let ((ok, bench), report) = run_server(mode, 0, |port, server| {
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
            eprintln!("kv_shards: {} INCRs of the shared key, GET says {got:?}", incrs);
            ok = false;
        }
        // redis-benchmark, briefly: -n a multiple of -c x -P, INCR without -r (one key)
        let before = server.incrs();
        let n = 16 * 8 * 25;
        let n_arg = n.to_string();
        let args = ["-c", "16", "-P", "8", "-n", &n_arg, "-t", "ping_inline,ping_mbulk,set,get,incr", "-q"];
        let bench = match redis_benchmark(port, &args, Duration::from_secs(120)) {
            Ok(None) => Some("skipped: redis-benchmark is not installed (Debian's redis-tools; make deps-rust)".to_string()),
            Ok(Some(text)) => {
                let after = server.incrs();
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
    let mut ok = ok;
    for (me, s) in report.shards.iter().enumerate() {
        println!(
            "shard {me}: connections {}, requests {}, local {}, forwarded {}, served {}, errors {}",
            s.conns, s.requests, s.local, s.forwarded, s.served, s.errors
        );
        ok &= s.errors == 0;
    }
    // every forwarded request was served once, by another shard
    let fwd: u64 = report.shards.iter().map(|s| s.forwarded).sum();
    let served: u64 = report.shards.iter().map(|s| s.served).sum();
    if fwd != served {
        eprintln!("kv_shards: {fwd} requests forwarded, {served} served");
        ok = false;
    }
    println!("store: {} commands on keys, {} INCRs", report.ops, report.incrs);
    if let Some(b) = bench {
        println!("redis-benchmark: {b}");
    }
    Ok(ok)
}

/// Serve on `port` until stdin closes; print the counts and the shards' CPU time.
fn serve(mode: Mode, port: u16) -> Result<(), Error> {
    let ((), report) = run_server(mode, port, |port, _| {
        println!("kv_shards: {} mode, serving on 127.0.0.1:{port}; close stdin to stop", mode.name());
        let _ = std::io::stdout().flush();
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
    })?;
    let requests: u64 = report.shards.iter().map(|s| s.requests).sum();
    let cpu_us: u64 = report.shards.iter().map(|s| s.cpu_us).sum();
    println!("requests {requests} shard_cpu_us {cpu_us}");
    Ok(())
}

/// One configuration under `redis-benchmark`: its CSV rows (test, rps, avg, min, p50, p95,
/// p99, max) and the server's CPU time in microseconds.
type Measured = (Vec<(String, [f64; 7])>, u64);

fn parse_csv(text: &str) -> Vec<(String, [f64; 7])> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(',').map(|x| x.trim_matches('"')).collect();
        if f.len() != 8 || f[0] == "test" {
            continue;
        }
        let mut v = [0.0; 7];
        if f[1..].iter().zip(v.iter_mut()).all(|(t, x)| t.parse().map(|p| *x = p).is_ok()) {
            rows.push((f[0].to_string(), v));
        }
    }
    rows
}

/// `redis-benchmark --csv`, the client pinned to `client_cpu` (taskset).
fn load(port: u16, client_cpu: usize, load_args: &[String]) -> Result<Vec<(String, [f64; 7])>, String> {
    let mut args: Vec<String> = vec!["-c".into(), client_cpu.to_string(), "redis-benchmark".into()];
    args.extend(["-h", "127.0.0.1", "-p"].map(String::from));
    args.push(port.to_string());
    args.extend(load_args.iter().cloned());
    args.push("--csv".into());
    let out = std::process::Command::new("taskset").args(&args).output().map_err(|e| format!("taskset: {e}"))?;
    if !out.status.success() {
        return Err(format!("redis-benchmark: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let rows = parse_csv(&String::from_utf8_lossy(&out.stdout));
    if rows.is_empty() {
        return Err("redis-benchmark wrote no results".into());
    }
    Ok(rows)
}

/// Debian's redis-server on its own port, loaded the same way; its CPU time from wait4.
fn measure_redis(client_cpu: usize, load_args: &[String]) -> Result<Measured, String> {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        l.local_addr().map_err(|e| e.to_string())?.port()
    };
    let mut child = std::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("redis-server: {e}"))?;
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if t0.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("redis-server did not listen within 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let rows = load(port, client_cpu, load_args);
    let pid = child.id() as libc::pid_t;
    // SAFETY: signal and reap our own child; wait4 fills the rusage.
    let ru = unsafe {
        libc::kill(pid, libc::SIGTERM);
        let mut status = 0;
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &mut status, 0, &mut ru);
        ru
    };
    Ok((rows?, tv_us(ru.ru_utime) + tv_us(ru.ru_stime)))
}

fn json_str(s: &str) -> String {
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

/// The four configurations under the same `redis-benchmark` load, alternated round by
/// round; a table, and the records in the results format `xcall-report` reads.
fn bench(rounds: usize, requests: usize, clients: usize, pipeline: usize, json: Option<&str>) -> Result<bool, Error> {
    let cpus: Vec<usize> = CpuSet::current_affinity()?.iter().take(MAX_SHARDS).collect();
    let client_cpu = *cpus.last().unwrap_or(&0);
    let requests = requests.div_ceil(clients * pipeline) * clients * pipeline; // a multiple of -c x -P
    let tests = "set,get,incr";
    let load_args: Vec<String> = ["-c", &clients.to_string(), "-P", &pipeline.to_string(), "-n", &requests.to_string(), "-t", tests]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let sent = (requests * tests.split(',').count()) as f64;
    println!(
        "kv_shards bench: shards on CPUs {cpus:?}, redis-benchmark pinned to CPU {client_cpu}, -c {clients} -P {pipeline} -n {requests} -t {tests}, {rounds} rounds"
    );
    let configs = ["xcall", "mutex", "channel", "redis-server"];
    let mut records = Vec::new();
    let mut table: BTreeMap<(String, String), Vec<[f64; 4]>> = BTreeMap::new();
    let mut ok = true;
    for round in 0..rounds {
        let order: Vec<&str> = if round % 2 == 0 { configs.to_vec() } else { configs.iter().rev().copied().collect() };
        for cfg in order {
            let measured: Result<Measured, String> = match cfg {
                "redis-server" => measure_redis(client_cpu, &load_args),
                _ => {
                    let mode = match cfg {
                        "xcall" => Mode::Xcall,
                        "mutex" => Mode::Mutex,
                        _ => Mode::Channel,
                    };
                    match run_server(mode, 0, |port, _| load(port, client_cpu, &load_args)) {
                        Ok((rows, report)) => rows.map(|r| (r, report.shards.iter().map(|s| s.cpu_us).sum())),
                        Err(e) => Err(e.to_string()),
                    }
                }
            };
            let (rows, cpu_us) = match measured {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("kv_shards bench: {cfg}: skipped: {e}");
                    let why: String = e.chars().take(60).collect();
                    records.push(format!(
                        "    {{\"bench\": \"kv\", \"case\": {}, \"unit\": \"ns\", \"n\": 0, \"mean\": 0, \"p50\": 0, \"p90\": 0, \"p99\": 0, \"max\": 0, \"repeat\": {round}, \"params\": {{\"skipped\": {}}}, \"better\": \"lower\"}}",
                        json_str(&format!("{cfg} cpu per request")),
                        json_str(&why)
                    ));
                    if cfg != "redis-server" {
                        ok = false;
                    }
                    continue;
                }
            };
            let cpu_ns = cpu_us as f64 * 1000.0 / sent;
            let params = format!(
                "\"clients\": {clients}, \"pipeline\": {pipeline}, \"requests\": {requests}, \"client_cpu\": {client_cpu}, \"source\": \"redis-benchmark --csv\""
            );
            let cpu_list = cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
            for (test, v) in &rows {
                let [rps, avg, min, p50, p95, p99, max] = *v;
                let ms = 1e6; // ms to ns
                records.push(format!(
                    "    {{\"bench\": \"kv\", \"case\": {}, \"unit\": \"ops/s\", \"n\": {requests}, \"mean\": {rps:.1}, \"p50\": {rps:.1}, \"p90\": {rps:.1}, \"p99\": {rps:.1}, \"max\": {rps:.1}, \"min\": {rps:.1}, \"repeat\": {round}, \"cpus\": [{cpu_list}], \"params\": {{{params}}}, \"better\": \"higher\"}}",
                    json_str(&format!("{cfg} {test} rate"))
                ));
                records.push(format!(
                    "    {{\"bench\": \"kv\", \"case\": {}, \"unit\": \"ns\", \"n\": {requests}, \"mean\": {:.0}, \"p50\": {:.0}, \"p90\": {:.0}, \"p99\": {:.0}, \"max\": {:.0}, \"min\": {:.0}, \"repeat\": {round}, \"cpus\": [{cpu_list}], \"params\": {{{params}, \"p90_is\": \"redis-benchmark's p95\"}}, \"better\": \"lower\"}}",
                    json_str(&format!("{cfg} {test} latency")),
                    avg * ms, p50 * ms, p95 * ms, p99 * ms, max * ms, min * ms
                ));
                table.entry((cfg.to_string(), test.clone())).or_default().push([rps, p50, p99, cpu_ns]);
            }
            records.push(format!(
                "    {{\"bench\": \"kv\", \"case\": {}, \"unit\": \"ns\", \"n\": 1, \"mean\": {cpu_ns:.0}, \"p50\": {cpu_ns:.0}, \"p90\": {cpu_ns:.0}, \"p99\": {cpu_ns:.0}, \"max\": {cpu_ns:.0}, \"min\": {cpu_ns:.0}, \"repeat\": {round}, \"cpus\": [{cpu_list}], \"params\": {{{params}, \"cpu\": \"the server's user + system time (getrusage) over the requests sent\"}}, \"better\": \"lower\"}}",
                json_str(&format!("{cfg} cpu per request"))
            ));
        }
    }
    println!("{:<14} {:<6} {:>12} {:>9} {:>9} {:>14}", "config", "test", "requests/s", "p50 ms", "p99 ms", "server CPU/req");
    for ((cfg, test), v) in &table {
        let med = |i: usize| {
            let mut x: Vec<f64> = v.iter().map(|r| r[i]).collect();
            x.sort_by(f64::total_cmp);
            x[x.len() / 2]
        };
        println!("{cfg:<14} {test:<6} {:>12.0} {:>9.3} {:>9.3} {:>11.0} ns", med(0), med(1), med(2), med(3));
    }
    println!("(medians over the rounds; CPU per request counts the whole run, every test)");
    if let Some(path) = json {
        let host = format!(
            "{{\"hostname\": {}, \"cpu_model\": {}, \"cpus_online\": {}, \"kernel\": {}}}",
            json_str(std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim()),
            json_str(
                &std::fs::read_to_string("/proc/cpuinfo")
                    .unwrap_or_default()
                    .lines()
                    .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split(':').nth(1)).map(|m| m.trim().to_string()))
                    .unwrap_or_else(|| "unknown".into())
            ),
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            json_str(std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim()),
        );
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let cmd: Vec<String> = std::env::args().map(|a| json_str(&a)).collect();
        let doc = format!(
            "{{\n  \"schema_version\": 1,\n  \"tool\": \"xcall-rust-bench\",\n  \"tool_version\": \"{}\",\n  \"created\": \"{}\",\n  \"command\": [{}],\n  \"host\": {host},\n  \"results\": [\n{}\n  ]\n}}\n",
            env!("CARGO_PKG_VERSION"),
            utc(secs),
            cmd.join(", "),
            records.join(",\n")
        );
        match std::fs::write(path, doc) {
            Ok(()) => println!("wrote {path}"),
            Err(e) => {
                eprintln!("kv_shards bench: {path}: {e}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// A Unix time as xcall-bench writes dates, in UTC.
fn utc(secs: u64) -> String {
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

fn mode_of(name: &str) -> Option<Mode> {
    [Mode::Xcall, Mode::Mutex, Mode::Channel].into_iter().find(|m| m.name() == name)
}

const USAGE: &str = "usage: kv_shards [check]                       the self-check, every mode
       kv_shards serve [--mode M] [--port P]      serve on 127.0.0.1:P (6380) until stdin closes;
                                                  M: xcall (default), mutex or channel
       kv_shards bench [--rounds R] [--requests N] [--clients C] [--pipeline P] [--json FILE]
                                                  every mode and redis-server under redis-benchmark
                                                  (3 rounds, 200000 requests a test, -c 32 -P 16)";

/// The options of `cmd` as (name, value) pairs, each one it takes; else the error line.
fn options(cmd: &str, rest: &[String]) -> Result<Vec<(String, String)>, String> {
    let takes: &[&str] = match cmd {
        "serve" => &["--mode", "--port"],
        "bench" => &["--rounds", "--requests", "--clients", "--pipeline", "--json"],
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
    let mut bad = None;
    let mut num = |name: &str, d: usize| match opt(name).map(|v| v.parse::<usize>().map_err(|_| v)) {
        None => d,
        Some(Ok(n)) if n > 0 => n,
        Some(Ok(_)) | Some(Err(_)) => {
            bad.get_or_insert(format!("{name} {}: want a positive number", opt(name).unwrap_or_default()));
            d
        }
    };
    let port = num("--port", 6380);
    let (rounds, requests, clients, pipeline) = (num("--rounds", 3), num("--requests", 200_000), num("--clients", 32), num("--pipeline", 16));
    if port > usize::from(u16::MAX) {
        bad.get_or_insert(format!("--port {port}: want 1-65535"));
    }
    if let Some(e) = bad {
        eprintln!("kv_shards: {e}");
        return ExitCode::from(2);
    }
    let mode = match opt("--mode").map(|m| mode_of(&m).ok_or(m)) {
        None => Mode::Xcall,
        Some(Ok(m)) => m,
        Some(Err(m)) => {
            eprintln!("kv_shards: no mode {m}: xcall, mutex or channel");
            return ExitCode::from(2);
        }
    };
    let r = match cmd {
        "serve" => serve(mode, port as u16).map(|_| true),
        "bench" => bench(rounds, requests, clients, pipeline, opt("--json").as_deref()),
        "check" => [Mode::Xcall, Mode::Mutex, Mode::Channel].into_iter().try_fold(true, |ok, m| Ok(check(m, 8, 2000)? && ok)),
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
            ExitCode::FAILURE
        }
    }
}

#[test]
fn every_reply_checked_and_redis_benchmark_counts() {
    for mode in [Mode::Xcall, Mode::Mutex, Mode::Channel] {
        assert_eq!(check(mode, 8, 1000), Ok(true), "{mode:?}");
    }
}

/// Two senders to one drained inbox, interleaved: both push, then both wake. The loop must
/// find its eventfd readable (with a wake only when the channel's length read 1, neither
/// wrote it: both read 2, and the loop slept with two jobs queued). And again after a drain.
#[test]
fn inbox_wakes_its_loop_when_two_senders_interleave() {
    // SAFETY: a new eventfd, owned from here on.
    let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    assert!(raw >= 0, "eventfd");
    // SAFETY: as above.
    let efd = unsafe { OwnedFd::from_raw_fd(raw) };
    let (tx, rx) = crossbeam_channel::unbounded::<Job>();
    let woken = Arc::new(AtomicBool::new(false));
    let inbox = Inbox { tx, efd, woken: woken.clone() };
    let rx = InboxRx { rx, efd: raw, woken };
    let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let job = || -> Job {
        let ran = ran.clone();
        Box::new(move || {
            ran.fetch_add(1, Ordering::Relaxed);
        })
    };
    let readable = || {
        let mut pfd = libc::pollfd { fd: raw, events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd of ours; no wait.
        let r = unsafe { libc::poll(&mut pfd, 1, 0) };
        let mut v = [0u8; 8];
        // SAFETY: an 8-byte read of our eventfd (nonblocking), as the loop reads it.
        unsafe { libc::read(raw, v.as_mut_ptr().cast(), 8) };
        r == 1
    };
    for round in 1..=3 {
        inbox.push(job()).expect("push");
        inbox.push(job()).expect("push");
        inbox.wake();
        inbox.wake();
        assert!(readable(), "round {round}: two jobs queued and the loop's eventfd never written");
        rx.drain();
        assert_eq!(ran.load(Ordering::Relaxed), 2 * round, "round {round}: the drain ran both");
        assert!(!readable(), "round {round}: one write for both");
    }
}
