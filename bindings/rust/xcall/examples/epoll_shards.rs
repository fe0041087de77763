//! A thread-per-core server whose threads are libxcall's workers, as examples/epoll-shards.c
//! in Rust. One shard thread per CPU, pinned there, runs one epoll loop: its client's socket
//! and, beside it, the eventfd of its attached CPU (through `AsRawFd`). Calls other shards send
//! run right here, in `poll()`, between the loop's own events.
//!
//! A table of counters is split over the shards: key k belongs to shard k % shards, and only
//! that shard's thread touches its counter (a thread-local: no lock, no atomic). Each shard's
//! client sends it requests ("count key k") over a socket pair. A shard counts its own keys at
//! once; another shard's key goes there with `spawn_on`, which runs on the owner's thread, and
//! the owner sends the count back the same way to the shard whose client asked.
//!
//!   cargo run --example epoll_shards -- [requests per shard]
//!
//! It checks its own result: exit status 0 when every request was answered once, by the shard
//! that owns its key, every key's count adds up, and libxcall ran on each CPU exactly the calls
//! the shards sent there.

use std::cell::{Cell, RefCell};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::Barrier;
use std::time::Duration;
use xcall::{Attached, CpuSet, Error, ErrorKind, Handle, Runtime};

const NKEYS: usize = 1024;
const WINDOW: usize = 16; // requests a client keeps in flight: answers always fit the socket buffer
const BATCH: usize = 32; // requests read at a time: calls and other events get their turn
const MAX_SHARDS: usize = 8;
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10); // a client gives up on an answer then

/// A request, and its answer: the same message, completed by the key's owner.
#[derive(Clone, Copy, Debug, Default)]
struct Msg {
    client: u32,
    id: u32,
    key: u32,
    count: u32,
    shard: i32,
}

impl Msg {
    fn to_bytes(self) -> [u8; 20] {
        let mut b = [0; 20];
        for (i, v) in [self.client, self.id, self.key, self.count, self.shard as u32].iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&v.to_ne_bytes());
        }
        b
    }

    fn from_bytes(b: &[u8; 20]) -> Msg {
        let w = |i: usize| u32::from_ne_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
        Msg { client: w(0), id: w(1), key: w(2), count: w(3), shard: w(4) as i32 }
    }
}

/// What a shard's thread owns, and reports at its end.
#[derive(Default, Debug)]
struct Shard {
    count: Vec<u32>,
    received: u64,
    local: u64,
    forwarded: u64,
    served: u64,
    replies: u64,
    errors: u64,
}

thread_local! {
    static SHARD: RefCell<Shard> = RefCell::new(Shard { count: vec![0; NKEYS], ..Shard::default() });
    static SOCKET: RefCell<Option<UnixStream>> = const { RefCell::new(None) };
    static STOP: Cell<bool> = const { Cell::new(false) };
}

/// The cluster as every shard sees it: which CPU runs which shard.
#[derive(Clone, Copy)]
struct Cluster {
    h: Handle,
    cpus: [usize; MAX_SHARDS],
    n: usize,
}

impl Cluster {
    fn owner(&self, key: u32) -> usize {
        key as usize % self.n
    }
}

/// On the shard that owns the key: count it, answer.
fn count(me: usize, mut m: Msg) -> Msg {
    SHARD.with_borrow_mut(|s| {
        s.count[m.key as usize] += 1;
        m.count = s.count[m.key as usize];
    });
    m.shard = me as i32;
    m
}

/// On the shard whose client asked: send the answer back.
fn reply(m: Msg) {
    let ok = SOCKET.with_borrow_mut(|s| s.as_mut().is_some_and(|s| s.write_all(&m.to_bytes()).is_ok()));
    SHARD.with_borrow_mut(|s| if ok { s.replies += 1 } else { s.errors += 1 });
}

fn handle_request(c: Cluster, me: usize, m: Msg) {
    SHARD.with_borrow_mut(|s| s.received += 1);
    let owner = c.owner(m.key);
    if owner == me {
        SHARD.with_borrow_mut(|s| s.local += 1);
        reply(count(me, m));
        return;
    }
    SHARD.with_borrow_mut(|s| s.forwarded += 1);
    let sent = c.h.spawn_on(c.cpus[owner], move || {
        SHARD.with_borrow_mut(|s| s.served += 1);
        let answer = count(owner, m);
        if c.h.spawn_on(c.cpus[me], move || reply(answer)).is_err() {
            SHARD.with_borrow_mut(|s| s.errors += 1);
        }
    });
    if sent.is_err() {
        SHARD.with_borrow_mut(|s| s.errors += 1);
    }
}

fn shard_main(rt: &Runtime, c: Cluster, me: usize, sock: UnixStream, started: &Barrier) -> Result<Shard, Error> {
    let opened = open(rt, c, me, sock);
    // the clients start once every shard is in its loop: a call to a CPU whose thread has
    // not attached yet is refused (Unavailable)
    started.wait();
    let (att, ep, sock_fd) = opened?;
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 16];
    loop {
        att.poll()?; // requests and answers from other shards
        if STOP.get() {
            break;
        }
        // from here on a call to this CPU writes the eventfd, which ends the epoll_wait; if
        // one came already, only look at the socket: a stream of calls must not starve it
        let timeout = if att.sleep_begin()? { -1 } else { 0 };
        // SAFETY: as above.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, timeout) };
        att.sleep_end()?;
        for ev in &events[..n.max(0) as usize] {
            if ev.u64 == 1 {
                read_requests(c, me, ep, sock_fd);
            }
        }
    }
    // the detach closes the eventfd: out of the epoll set first; calls still queued run there
    // SAFETY: as above.
    unsafe {
        libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, att.as_raw_fd(), std::ptr::null_mut());
        libc::close(ep);
    }
    att.detach()?;
    SOCKET.set(None);
    Ok(SHARD.take())
}

/// Attach this thread to its shard's CPU, and watch its eventfd and its client's socket.
fn open(rt: &Runtime, c: Cluster, me: usize, sock: UnixStream) -> Result<(Attached<'_>, i32, i32), Error> {
    let cpu = c.cpus[me];
    xcall::pin_current_thread(cpu)?;
    let att = rt.attach(cpu)?;
    sock.set_nonblocking(true).map_err(|_| ErrorKind::Io)?;
    let sock_fd = sock.as_raw_fd();
    SOCKET.set(Some(sock));
    // SAFETY: epoll on descriptors this thread owns; the eventfd stays open while attached.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(ErrorKind::Io.into());
    }
    for (fd, tag) in [(att.as_raw_fd(), 0u64), (sock_fd, 1)] {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag };
        // SAFETY: as above.
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
            return Err(ErrorKind::Io.into());
        }
    }
    Ok((att, ep, sock_fd))
}

fn read_requests(c: Cluster, me: usize, ep: i32, sock_fd: i32) {
    let mut buf = [0u8; 20];
    for _ in 0..BATCH {
        let r = SOCKET.with_borrow_mut(|s| s.as_mut().map(|s| s.read(&mut buf)));
        match r {
            Some(Ok(20)) => handle_request(c, me, Msg::from_bytes(&buf)),
            Some(Err(e)) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            Some(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => {
                if !matches!(other, Some(Ok(0))) {
                    SHARD.with_borrow_mut(|s| s.errors += 1);
                }
                // the client is done: its socket would read as ready for ever
                // SAFETY: the socket is in this thread's epoll set.
                unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, sock_fd, std::ptr::null_mut()) };
                return;
            }
        }
    }
}

fn key_of(client: usize, id: usize) -> u32 {
    ((client * 7919 + id * 31 + id / 7) % NKEYS) as u32
}

/// The client: WINDOW requests in flight; every answer checked. Returns its error count.
fn client_main(c: Cluster, me: usize, mut sock: UnixStream, requests: usize) -> u64 {
    if sock.set_read_timeout(Some(ANSWER_TIMEOUT)).is_err() {
        return 1;
    }
    let mut answered = vec![false; requests];
    let (mut sent, mut got, mut errors) = (0, 0, 0u64);
    let mut buf = [0u8; 20];
    while got < requests {
        while sent < requests && sent - got < WINDOW {
            let m = Msg { client: me as u32, id: sent as u32, key: key_of(me, sent), count: 0, shard: -1 };
            if sock.write_all(&m.to_bytes()).is_err() {
                return errors + 1;
            }
            sent += 1;
        }
        if let Err(e) = sock.read_exact(&mut buf) {
            eprintln!("client {me}: no answer to {} requests: {e}", sent - got);
            return errors + 1;
        }
        let a = Msg::from_bytes(&buf);
        got += 1;
        let id = a.id as usize;
        let ok = a.client as usize == me
            && id < requests
            && !answered[id]
            && a.key == key_of(me, id)
            && a.shard as usize == c.owner(a.key)
            && a.count >= 1;
        if !ok {
            if errors < 5 {
                eprintln!("client {me}: wrong answer {a:?}");
            }
            errors += 1;
        } else {
            answered[id] = true;
        }
    }
    errors
}

/// Run the whole application; true when every check passed.
fn run(requests: usize) -> Result<bool, Error> {
    let all: Vec<usize> = CpuSet::current_affinity()?.iter().take(MAX_SHARDS).collect();
    let set = CpuSet::from_cpus(all.iter().copied())?;
    // every CPU is a shard's: libxcall starts no thread of its own
    let rt = Runtime::builder().cpus(&set).attach(&set).build()?;
    let mut c = Cluster { h: rt.handle(), cpus: [0; MAX_SHARDS], n: all.len() };
    c.cpus[..all.len()].copy_from_slice(&all);
    let before: Vec<xcall::Stats> = all.iter().map(|&cpu| rt.stats(cpu)).collect::<Result<_, _>>()?;

    let started = Barrier::new(c.n + 1);
    let (shards, client_errors) = std::thread::scope(|s| {
        let mut shard_threads = Vec::new();
        let mut client_ends = Vec::new();
        for me in 0..c.n {
            let (a, b) = UnixStream::pair().expect("socketpair");
            let (rt, started) = (&rt, &started);
            shard_threads.push(s.spawn(move || shard_main(rt, c, me, a, started)));
            client_ends.push(b);
        }
        started.wait();
        let clients: Vec<_> = client_ends
            .into_iter()
            .enumerate()
            .map(|(me, b)| s.spawn(move || client_main(c, me, b, requests)))
            .collect();
        let client_errors: u64 = clients.into_iter().map(|t| t.join().unwrap_or(1)).sum();
        // every answer is in: stop each loop (a shard that never attached gets Unavailable)
        for me in 0..c.n {
            let _ = c.h.spawn_on(c.cpus[me], || STOP.set(true));
        }
        let shards: Vec<Result<Shard, Error>> = shard_threads.into_iter().map(|t| t.join().unwrap()).collect();
        (shards, client_errors)
    });

    let mut ok = client_errors == 0;
    let mut totals = vec![0u64; NKEYS];
    for client in 0..c.n {
        for id in 0..requests {
            totals[key_of(client, id) as usize] += 1;
        }
    }
    let mut served_by = vec![0u64; c.n];
    let mut forwarded_from = vec![0u64; c.n];
    for (me, sh) in shards.iter().enumerate() {
        let sh = match sh {
            Ok(sh) => sh,
            Err(e) => {
                eprintln!("shard {me}: {e}");
                ok = false;
                continue;
            }
        };
        println!(
            "shard {me} (CPU {}): received {}, local {}, forwarded {}, served {}, replies {}, errors {}",
            c.cpus[me], sh.received, sh.local, sh.forwarded, sh.served, sh.replies, sh.errors
        );
        ok &= sh.errors == 0 && sh.received == requests as u64 && sh.replies == requests as u64;
        served_by[me] = sh.served;
        forwarded_from[me] = sh.forwarded;
        for (k, &n) in sh.count.iter().enumerate() {
            if c.owner(k as u32) == me {
                ok &= u64::from(n) == totals[k];
            } else {
                ok &= n == 0;
            }
        }
    }
    // libxcall ran on each CPU exactly what the shards sent it: the requests it served, the
    // answers to its own client's requests that others served, and the stop
    for me in 0..c.n {
        let d = rt.stats(c.cpus[me])? - before[me];
        let want = served_by[me] + forwarded_from[me] + 1;
        if d.calls != want {
            eprintln!("CPU {}: libxcall ran {} calls, the shards sent {want}", c.cpus[me], d.calls);
            ok = false;
        }
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let requests = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    match run(requests) {
        Ok(true) => {
            println!("epoll_shards: ok: every request answered once by its key's owner, every count adds up");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("epoll_shards: FAILED");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("epoll_shards: {e}");
            ExitCode::FAILURE
        }
    }
}

#[test]
fn shards_check_their_counts() {
    assert_eq!(run(2000), Ok(true));
}
