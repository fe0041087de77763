//! The shards: one thread per CPU, each with its own `SO_REUSEPORT` listener and epoll loop,
//! and the three ways they share the store (`Mode`). Everything but the way a batch reaches
//! its owner and comes back is the same code in every mode.
//!
//! A pass of a shard's loop: run what other shards sent (their batches of requests for this
//! shard's keys, and the answers to this shard's own); send this pass's batches, one per
//! owner; write the replies that are ready; wait for events; read each readable connection
//! once and parse every whole request, a request on a key going into its owner's batch (this
//! shard's own included) and any other answered at once. A connection's replies leave in
//! request order (`conn.rs`). No borrow of the shard's state is held across a libxcall call
//! or a lock: a call may serve this CPU's calls while it waits.

use crate::batch::{Batch, Tag};
use crate::conn::{Conn, Conns};
use crate::resp::{command, parse, Command, Parsed};
use crate::store::{Op, Store};
use std::cell::RefCell;
use std::net::TcpStream;
use std::ops::Range;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex, PoisonError};
use std::time::{Duration, Instant};
use xcall::{Attached, CpuSet, Error, ErrorKind, Handle, Message, Runtime, Sharded};

/// Bytes read from a connection at a time.
const READ_CHUNK: usize = 64 * 1024;
/// Batches a shard keeps in flight to one owner; requests for it wait in the next batch.
/// Answers travel the other way on the same thread's ring, so a ring (256 entries) holds at
/// most twice this: a nowait call never waits for room.
const IN_FLIGHT: usize = 2;
/// How long a loop that awaits answers polls for them before it sleeps, by default (see
/// `wait`): none, as polling bought nothing on the 2-vCPU machine (bindings/rust/README.md).
pub const AWAIT_POLL: Duration = Duration::from_micros(0);
const TOK_EVENTFD: u64 = 0;
const TOK_LISTENER: u64 = 1;

/// How the shards share the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// a `Sharded<Store>`; batches go to the key's owner with `post_on` and come back the
    /// same way
    Xcall,
    /// one `Mutex<Store>` per shard: the reading shard runs a batch itself under its owner's
    /// lock, no forwarding
    Mutex,
    /// each shard's store its thread's own; batches go through a crossbeam channel per shard
    /// whose loop an eventfd wakes
    Channel,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Xcall, Mode::Mutex, Mode::Channel];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Xcall => "xcall",
            Mode::Mutex => "mutex",
            Mode::Channel => "channel",
        }
    }

    pub fn by_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Which shard owns a key (FNV-1a).
pub fn owner_of(key: &[u8], shards: usize) -> usize {
    let h = key.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3));
    (h % shards as u64) as usize
}

type Job = Box<dyn FnOnce() + Send>;

/// What a shard's inbox carries in the modes without libxcall.
enum Msg {
    Batch(Box<Batch>),
    Job(Job),
}

/// A shard's inbox in the modes without libxcall (Channel's batches, both modes' control):
/// a channel, and the eventfd its loop watches, written only while the loop sleeps.
///
/// Sender: send, a SeqCst fence, then `sleeping.swap(false)`: the one whose swap read true
/// writes the eventfd. Loop, before it sleeps: `sleeping = true`, a SeqCst fence, then a look
/// at the channel: not empty, it does not sleep. Either the loop's look comes after the
/// sender's fence and sees the message, or the sender's swap comes after the loop's store and
/// reads true, or another sender's swap did and wrote: no message waits for a sleeping loop.
/// (The same elision libxcall's kicks make, so that the two forwarding modes differ only in
/// their transport.)
pub struct Inbox {
    tx: crossbeam_channel::Sender<Msg>,
    efd: OwnedFd,
    sleeping: Arc<AtomicBool>,
}

/// The loop's end of an inbox.
pub struct InboxRx {
    rx: crossbeam_channel::Receiver<Msg>,
    efd: RawFd,
    sleeping: Arc<AtomicBool>,
}

impl Inbox {
    fn pair() -> Result<(Inbox, InboxRx), Error> {
        let (tx, rx) = crossbeam_channel::unbounded();
        // SAFETY: a new eventfd, owned from here on.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::from(ErrorKind::Io));
        }
        // SAFETY: as above.
        let efd = unsafe { OwnedFd::from_raw_fd(fd) };
        let sleeping = Arc::new(AtomicBool::new(false));
        Ok((Inbox { tx, efd, sleeping: sleeping.clone() }, InboxRx { rx, efd: fd, sleeping }))
    }

    /// Send `m`; given back when the loop is gone.
    fn post(&self, m: Msg) -> Result<(), Msg> {
        self.tx.send(m).map_err(|e| e.0)?;
        fence(Ordering::SeqCst);
        if self.sleeping.swap(false, Ordering::SeqCst) {
            count(|c| c.wakes += 1);
            let one = 1u64.to_ne_bytes();
            // SAFETY: a write of 8 bytes to an eventfd we own.
            unsafe { libc::write(self.efd.as_raw_fd(), one.as_ptr().cast(), 8) };
        }
        Ok(())
    }
}

impl InboxRx {
    /// Announce a sleep: false when a message came meanwhile (do not sleep).
    fn sleep_begin(&self) -> bool {
        self.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if self.rx.is_empty() {
            return true;
        }
        self.sleeping.store(false, Ordering::SeqCst);
        false
    }

    fn sleep_end(&self) {
        self.sleeping.store(false, Ordering::SeqCst);
    }
}

#[derive(Clone)]
pub enum Backend {
    Xcall(Handle, Sharded<Store>),
    Mutex(Arc<Vec<Mutex<Store>>>),
    Channel,
}

/// The server as every shard sees it.
#[derive(Clone)]
pub struct Server {
    /// shard i runs on CPU `cpus[i]`
    pub cpus: Arc<[usize]>,
    pub backend: Backend,
    /// Mutex and Channel modes: each shard's inbox
    inboxes: Arc<Vec<Inbox>>,
    /// how long a loop that awaits answers polls for them before it sleeps
    pub await_poll: Duration,
}

impl Server {
    pub fn shards(&self) -> usize {
        self.cpus.len()
    }

    /// Queue `f` to run in `shard`'s loop, without waiting (control, not requests).
    fn send(&self, shard: usize, f: impl FnOnce() + Send + 'static) -> Result<(), Error> {
        if let Backend::Xcall(h, _) = &self.backend {
            return h.spawn_on(self.cpus[shard], f);
        }
        self.inboxes[shard].post(Msg::Job(Box::new(f))).map_err(|_| Error::from(ErrorKind::Unavailable))
    }

    /// Run `f` in `shard`'s loop and wait for its result (control, not requests).
    pub fn call<R: Send + 'static>(&self, shard: usize, f: impl FnOnce() -> R + Send + 'static) -> Result<R, Error> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.send(shard, move || {
            let _ = tx.send(f());
        })?;
        rx.recv().map_err(|_| Error::from(ErrorKind::Unavailable))
    }

    /// (INCRs, commands) the stores have counted, summed over the shards.
    pub fn store_counts(&self) -> Result<(u64, u64), Error> {
        match &self.backend {
            Backend::Xcall(_, st) => st.map_reduce(|st| (st.incrs, st.ops), (0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
            Backend::Mutex(v) => Ok(v.iter().fold((0, 0), |a, m| {
                let st = m.lock().unwrap_or_else(PoisonError::into_inner);
                (a.0 + st.incrs, a.1 + st.ops)
            })),
            Backend::Channel => {
                let mut sum = (0, 0);
                for me in 0..self.shards() {
                    let (i, o) = self.call(me, || OWN_STORE.with_borrow(|st| (st.incrs, st.ops)))?;
                    sum = (sum.0 + i, sum.1 + o);
                }
                Ok(sum)
            }
        }
    }
}

/// What a shard counts, per run.
#[derive(Default, Debug, Clone, Copy)]
pub struct Counts {
    pub conns: u64,
    pub requests: u64,
    /// ops on keys (a DEL or EXISTS of n keys is n), those on another shard's keys, and
    /// those sent there in a batch (Mutex runs them here under the owner's lock)
    pub ops: u64,
    pub remote: u64,
    pub forwarded: u64,
    /// batches this shard sent to other shards, and ops it served for others
    pub batches: u64,
    pub served: u64,
    /// answers for connections closed meanwhile, dropped
    pub orphans: u64,
    pub errors: u64,
    /// loop passes, and the waits that slept (the others only looked)
    pub passes: u64,
    pub sleeps: u64,
    /// system calls the loop made: reads, writes, epoll_wait, epoll_ctl; eventfd writes
    /// (Channel and Mutex: the inbox's; Xcall: libxcall's, in its stats)
    pub reads: u64,
    pub writes: u64,
    pub waits: u64,
    pub ctls: u64,
    pub wakes: u64,
    /// allocations by this thread (the example's counting allocator)
    pub allocs: u64,
    /// the shard thread's id, for its CPU time (/proc/self/task/TID/schedstat)
    pub tid: i32,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        let f = |a: &mut u64, b: u64| *a += b;
        f(&mut self.conns, o.conns);
        f(&mut self.requests, o.requests);
        f(&mut self.ops, o.ops);
        f(&mut self.remote, o.remote);
        f(&mut self.forwarded, o.forwarded);
        f(&mut self.batches, o.batches);
        f(&mut self.served, o.served);
        f(&mut self.orphans, o.orphans);
        f(&mut self.errors, o.errors);
        f(&mut self.passes, o.passes);
        f(&mut self.sleeps, o.sleeps);
        f(&mut self.reads, o.reads);
        f(&mut self.writes, o.writes);
        f(&mut self.waits, o.waits);
        f(&mut self.ctls, o.ctls);
        f(&mut self.wakes, o.wakes);
        f(&mut self.allocs, o.allocs);
    }
}

/// A shard thread's own state.
struct Shard {
    me: usize,
    ep: RawFd,
    conns: Conns,
    /// connections with replies to write or a close to finish, each once (`Conn::queued`)
    dirty: Vec<u64>,
    /// per owner: this pass's requests; batches back from it, emptied; batches out there
    filling: Vec<Option<Box<Batch>>>,
    // boxed: a batch travels as its box (a call's argument, a channel message)
    #[allow(clippy::vec_box)]
    spare: Vec<Vec<Box<Batch>>>,
    in_flight: Vec<usize>,
    words: Vec<Range<usize>>,
    now: Vec<u8>,
}

impl Shard {
    fn new(me: usize, shards: usize, ep: RawFd) -> Shard {
        Shard {
            me,
            ep,
            conns: Conns::default(),
            dirty: Vec::new(),
            filling: (0..shards).map(|_| None).collect(),
            spare: (0..shards).map(|_| Vec::new()).collect(),
            in_flight: vec![0; shards],
            words: Vec::new(),
            now: Vec::new(),
        }
    }

    fn batch_for(&mut self, owner: usize) -> &mut Batch {
        let me = self.me;
        let spare = &mut self.spare[owner];
        self.filling[owner].get_or_insert_with(|| spare.pop().unwrap_or_else(|| Box::new(Batch::new(me, owner))))
    }

    fn mark(&mut self, tok: u64) {
        if let Some(c) = self.conns.get(tok) {
            if !c.queued {
                c.queued = true;
                self.dirty.push(tok);
            }
        }
    }

    /// Read what a connection sent, once, and take each whole request.
    fn readable(&mut self, tok: u64, shards: usize) {
        let Some(c) = self.conns.get(tok) else { return };
        if c.eof {
            return;
        }
        c.inbuf.reserve(READ_CHUNK);
        let room = c.inbuf.capacity() - c.inbuf.len();
        let fd = c.stream.as_raw_fd();
        // SAFETY: a read into the vector's spare capacity, then its length set to what came.
        let n = unsafe { libc::recv(fd, c.inbuf.as_mut_ptr().add(c.inbuf.len()).cast(), room, 0) };
        count(|k| k.reads += 1);
        let mut broken = false;
        match n {
            0 => c.eof = true,
            // SAFETY: recv wrote n bytes there.
            n if n > 0 => unsafe { c.inbuf.set_len(c.inbuf.len() + n as usize) },
            _ => {
                let e = std::io::Error::last_os_error().kind();
                broken = !matches!(e, std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted);
            }
        }
        if broken {
            self.close(tok);
            return;
        }
        let inbuf = std::mem::take(&mut c.inbuf);
        let mut at = 0;
        let mut eof = false;
        loop {
            let buf = &inbuf[at..];
            match parse(buf, &mut self.words) {
                Parsed::Incomplete => break,
                Parsed::Nothing(used) => at += used,
                Parsed::Request(used) => {
                    self.request(tok, buf, shards);
                    at += used;
                }
                Parsed::Error(why) => {
                    // answered, then closed once the replies before it are out (as Redis)
                    count(|k| k.requests += 1);
                    self.now.clear();
                    self.now.extend_from_slice(b"-ERR ");
                    self.now.extend_from_slice(why.as_bytes());
                    self.now.extend_from_slice(b"\r\n");
                    if let Some(c) = self.conns.get(tok) {
                        c.reply_now(&self.now);
                    }
                    at = inbuf.len();
                    eof = true;
                    break;
                }
            }
        }
        let Some(c) = self.conns.get(tok) else { return };
        c.inbuf = inbuf;
        c.inbuf.drain(..at);
        if eof && !c.eof {
            c.eof = true;
        }
        let eof = c.eof;
        if eof {
            // read no more: a socket at its end stays readable for a level-triggered epoll
            self.interest(tok);
        }
        self.mark(tok);
    }

    /// One request of `buf` (its words parsed into `self.words`).
    fn request(&mut self, tok: u64, buf: &[u8], shards: usize) {
        count(|k| k.requests += 1);
        self.now.clear();
        let cmd = command(buf, &self.words, &mut self.now);
        let Some(c) = self.conns.get(tok) else { return };
        let (op, keys, sum) = match cmd {
            Command::Now => {
                c.reply_now(&self.now);
                return;
            }
            Command::One(op) => (op, 1..2, false),
            Command::Each(op) => (op, 1..self.words.len(), true),
        };
        let seq = c.reply_later(keys.len() as u32, sum);
        let me = self.me;
        for i in keys {
            let key = &buf[self.words[i].clone()];
            let val = if op == Op::Set { &buf[self.words[2].clone()] } else { &b""[..] };
            let owner = owner_of(key, shards);
            count(|k| {
                k.ops += 1;
                k.remote += u64::from(owner != me);
            });
            self.batch_for(owner).push(Tag { tok, seq }, op, key, val);
        }
    }

    /// An owner's answers, into their connections' reply order.
    fn complete(&mut self, b: &Batch) {
        for (tag, reply) in b.answers() {
            match self.conns.get(tag.tok) {
                Some(c) => {
                    c.answer(tag.seq, reply);
                    self.mark(tag.tok);
                }
                None => count(|k| k.orphans += 1),
            }
        }
    }

    /// A batch back from its owner, or run here: emptied, kept for the next pass.
    fn recycle(&mut self, mut b: Box<Batch>) {
        b.clear();
        let to = b.to;
        self.spare[to].push(b);
    }

    /// Set a connection's epoll interest from its state: readable until its end, writable
    /// while replies wait for room.
    fn interest(&mut self, tok: u64) {
        let ep = self.ep;
        let Some(c) = self.conns.get(tok) else { return };
        let events = if c.eof { 0 } else { libc::EPOLLIN as u32 } | if c.writing { libc::EPOLLOUT as u32 } else { 0 };
        let mut ev = libc::epoll_event { events, u64: tok };
        // SAFETY: epoll on a descriptor of this thread's, still open.
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_MOD, c.stream.as_raw_fd(), &mut ev) };
        count(|k| k.ctls += 1);
    }

    /// Write what a connection has ready; close it once it has ended and all is out.
    fn flush(&mut self, tok: u64) {
        let Some(c) = self.conns.get(tok) else { return };
        c.queued = false;
        let mut done = 0;
        let mut broken = false;
        while done < c.out.len() {
            let left = &c.out[done..];
            // SAFETY: a send from our buffer; MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE.
            let n = unsafe { libc::send(c.stream.as_raw_fd(), left.as_ptr().cast(), left.len(), libc::MSG_NOSIGNAL) };
            count(|k| k.writes += 1);
            if n >= 0 {
                done += n as usize;
                continue;
            }
            match std::io::Error::last_os_error().kind() {
                std::io::ErrorKind::Interrupted => {}
                std::io::ErrorKind::WouldBlock => break,
                _ => {
                    broken = true;
                    break;
                }
            }
        }
        if broken {
            self.close(tok);
            return;
        }
        if done == c.out.len() {
            c.out.clear();
        } else {
            c.out.drain(..done);
        }
        if c.eof && !c.waiting() && c.out.is_empty() {
            self.close(tok);
            return;
        }
        let want = !c.out.is_empty();
        if want != c.writing {
            c.writing = want;
            self.interest(tok);
        }
    }

    fn close(&mut self, tok: u64) {
        if let Some(c) = self.conns.remove(tok) {
            // SAFETY: as in interest.
            unsafe { libc::epoll_ctl(self.ep, libc::EPOLL_CTL_DEL, c.stream.as_raw_fd(), std::ptr::null_mut()) };
            count(|k| k.ctls += 1);
        }
    }

    fn flush_dirty(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        for &tok in &dirty {
            self.flush(tok);
        }
        dirty.clear();
        self.dirty = dirty;
    }

    fn accept_all(&mut self, lfd: RawFd) {
        loop {
            // SAFETY: accept on our listener; the new descriptor is owned by the TcpStream.
            let fd = unsafe { libc::accept4(lfd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
            if fd < 0 {
                return; // EAGAIN, or an error the next readiness shows again
            }
            // SAFETY: fd is a new socket of ours.
            let stream = unsafe { TcpStream::from_raw_fd(fd) };
            let _ = stream.set_nodelay(true);
            let tok = self.conns.insert(Conn::new(stream));
            let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tok };
            // SAFETY: as in interest.
            if unsafe { libc::epoll_ctl(self.ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
                self.conns.remove(tok);
                continue;
            }
            count(|k| k.conns += 1);
        }
    }
}

thread_local! {
    static SERVER: RefCell<Option<Server>> = const { RefCell::new(None) };
    static SHARD: RefCell<Option<Shard>> = const { RefCell::new(None) };
    static COUNTS: std::cell::Cell<Counts> = std::cell::Cell::new(Counts::default());
    static LISTENER: RefCell<Option<OwnedFd>> = const { RefCell::new(None) };
    static STOP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// set by the close call: the loop closes at its top, then answers on it
    static CLOSE: RefCell<Option<crossbeam_channel::Sender<()>>> = const { RefCell::new(None) };
    /// Channel mode: the shard's store
    static OWN_STORE: RefCell<Store> = RefCell::new(Store::default());
    static INBOX: RefCell<Option<InboxRx>> = const { RefCell::new(None) };
}

fn count(f: impl FnOnce(&mut Counts)) {
    COUNTS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    });
}

/// The shard's state, borrowed for `f` (never across a libxcall call or a lock).
fn with_shard<R>(f: impl FnOnce(&mut Shard) -> R) -> Option<R> {
    SHARD.with_borrow_mut(|s| s.as_mut().map(f))
}

/// The server, borrowed (shared borrows nest: a call served inside a call may look too;
/// only the loop's top, which holds none, takes it away).
fn with_server<R>(f: impl FnOnce(&Server) -> R) -> Option<R> {
    SERVER.with_borrow(|s| s.as_ref().map(f))
}

/// Run a batch on this shard's store: Xcall's under `invoke_on` to its own CPU (inline, one
/// borrow of the instance for the whole batch), Channel's the thread's own, Mutex's the
/// owner's, locked once for the batch (the owner may be another shard's: no forwarding).
fn exec(srv: &Server, b: &mut Batch) {
    let owner = b.to;
    let ok = match &srv.backend {
        Backend::Xcall(_, st) => st.invoke_on(srv.cpus[owner], |st| b.exec(st)).is_ok(),
        Backend::Mutex(v) => {
            b.exec(&mut v[owner].lock().unwrap_or_else(PoisonError::into_inner));
            true
        }
        Backend::Channel => {
            OWN_STORE.with_borrow_mut(|st| b.exec(st));
            true
        }
    };
    if !ok {
        count(|k| k.errors += 1);
    }
}

impl Message for Batch {
    /// Xcall: a batch arrives in its destination's loop (inside `Attached::poll`).
    fn deliver(self: Box<Self>) {
        arrived(self);
    }
}

/// A batch in the loop of the shard it was sent to: requests for this shard's keys, run and
/// sent back; or this shard's own requests, answered.
fn arrived(mut b: Box<Batch>) {
    if b.answered {
        with_shard(|s| {
            s.in_flight[b.to] -= 1;
            s.complete(&b);
            s.recycle(b);
        });
        return;
    }
    with_server(|srv| {
        exec(srv, &mut b);
        count(|k| k.served += b.len() as u64);
        b.answered = true;
        let from = b.from;
        let sent = match &srv.backend {
            Backend::Xcall(h, _) => h.post_on(srv.cpus[from], b).map_err(|(e, _)| e),
            _ => srv.inboxes[from].post(Msg::Batch(b)).map_err(|_| Error::from(ErrorKind::Unavailable)),
        };
        if sent.is_err() {
            count(|k| k.errors += 1); // the asking shard is gone: shutting down
        }
    });
}

/// Send this pass's batches: this shard's own run here, Mutex's run here under their owners'
/// locks, the others sent to their owners, at most `IN_FLIGHT` to each (the rest go later,
/// in one batch).
fn send_batches(srv: &Server) {
    let me = with_shard(|s| s.me).unwrap_or(0);
    for owner in 0..srv.shards() {
        let local = owner == me || matches!(srv.backend, Backend::Mutex(_));
        let Some(mut b) = with_shard(|s| {
            let ready = s.filling[owner].as_ref().is_some_and(|b| !b.is_empty());
            if !ready || (!local && s.in_flight[owner] >= IN_FLIGHT) {
                return None;
            }
            if !local {
                s.in_flight[owner] += 1;
            }
            s.filling[owner].take()
        })
        .flatten() else {
            continue;
        };
        if local {
            exec(srv, &mut b);
            with_shard(|s| {
                s.complete(&b);
                s.recycle(b);
            });
            continue;
        }
        let ops = b.len() as u64;
        count(|k| {
            k.batches += 1;
            k.forwarded += ops;
        });
        let sent = match &srv.backend {
            Backend::Xcall(h, _) => h.post_on(srv.cpus[owner], b),
            _ => srv.inboxes[owner].post(Msg::Batch(b)).map_err(|m| match m {
                Msg::Batch(b) => (Error::from(ErrorKind::Unavailable), b),
                Msg::Job(_) => unreachable!("a batch was sent"),
            }),
        };
        if let Err((e, b)) = sent {
            // refused (shutting down): each request answered with the error
            count(|k| k.errors += 1);
            with_shard(|s| {
                s.in_flight[owner] -= 1;
                let mut b = b;
                b.fail(&e.to_string());
                s.complete(&b);
                s.recycle(b);
            });
        }
    }
}

/// Channel and Mutex modes: run what the inbox holds; how many.
fn drain_inbox() -> usize {
    let mut n = 0;
    loop {
        let m = INBOX.with_borrow(|i| i.as_ref().and_then(|i| i.rx.try_recv().ok()));
        match m {
            Some(Msg::Batch(b)) => arrived(b),
            Some(Msg::Job(j)) => j(),
            None => return n,
        }
        n += 1;
    }
}

/// The loop's wait: sleep, announced (libxcall's `sleep_begin`, the inbox's), unless it
/// awaits answers and has waited less than `AWAIT_POLL` for them, or something came: then
/// it only looks. A loop that only looks is running for its senders, whose calls then need
/// no kick.
/// The loop's wait. A loop that awaits answers first polls for them, in user space, for up
/// to `await_poll` since it began to wait: an answer that comes meanwhile finds it running,
/// so its sender's call needs no kick, and the loop only looks at its epoll set. Otherwise it
/// announces its sleep (libxcall's `sleep_begin`, the inbox's) and sleeps in `epoll_wait`,
/// unless something came meanwhile: then it only looks.
fn wait(att: Option<&Attached<'_>>, ep: RawFd, events: &mut [libc::epoll_event], awaiting_since: Option<Instant>, await_poll: Duration) -> Result<usize, Error> {
    let mut look = false;
    if let Some(t0) = awaiting_since {
        while t0.elapsed() < await_poll {
            let got = match att {
                Some(att) => att.poll()?,
                None => drain_inbox(),
            };
            if got > 0 {
                look = true;
                break;
            }
            std::hint::spin_loop();
        }
    }
    let sleep = !look
        && match att {
            Some(att) => att.sleep_begin()?,
            None => INBOX.with_borrow(|i| i.as_ref().map_or(true, InboxRx::sleep_begin)),
        };
    // SAFETY: our epoll set and buffer.
    let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, if sleep { -1 } else { 0 }) };
    count(|k| {
        k.waits += 1;
        k.sleeps += u64::from(sleep);
    });
    if !look {
        match att {
            Some(att) => att.sleep_end()?,
            None => INBOX.with_borrow(|i| i.as_ref().map(InboxRx::sleep_end)).unwrap_or(()),
        }
    }
    Ok(n.max(0) as usize)
}

fn shard_loop(att: Option<&Attached<'_>>, ep: RawFd, efd: Option<RawFd>) -> Result<(), Error> {
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
    let mut awaiting_since: Option<Instant> = None;
    loop {
        count(|k| k.passes += 1);
        // what other shards sent: requests for this shard's keys, answers to its own
        let ran = match att {
            Some(att) => att.poll()?,
            None => drain_inbox(),
        };
        with_server(send_batches);
        with_shard(Shard::flush_dirty);
        if let Some(closed) = CLOSE.take() {
            close_shard();
            let _ = closed.send(());
        }
        if STOP.get() {
            return Ok(());
        }
        let awaiting = with_shard(|s| s.in_flight.iter().any(|&n| n > 0)).unwrap_or(false);
        awaiting_since = match (awaiting, awaiting_since) {
            (false, _) => None,
            (true, Some(t)) if ran == 0 => Some(t),
            (true, _) => Some(Instant::now()),
        };
        let await_poll = with_server(|s| s.await_poll).unwrap_or_default();
        let n = wait(att, ep, &mut events, awaiting_since, await_poll)?;
        let shards = with_server(Server::shards).unwrap_or(0);
        for ev in &events[..n] {
            match ev.u64 {
                TOK_EVENTFD => {
                    if let Some(efd) = efd {
                        let mut v = [0u8; 8];
                        // SAFETY: an 8-byte read of our eventfd (nonblocking).
                        unsafe { libc::read(efd, v.as_mut_ptr().cast(), 8) };
                    }
                }
                TOK_LISTENER => {
                    if let Some(lfd) = LISTENER.with_borrow(|l| l.as_ref().map(|l| l.as_raw_fd())) {
                        with_shard(|s| s.accept_all(lfd));
                    }
                }
                tok => with_shard(|s| {
                    if shards == 0 {
                        s.close(tok); // closing: no server
                        return;
                    }
                    if ev.events & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 {
                        s.flush(tok);
                        s.close(tok);
                        return;
                    }
                    if ev.events & libc::EPOLLIN as u32 != 0 {
                        s.readable(tok, shards);
                    }
                    if ev.events & libc::EPOLLOUT as u32 != 0 {
                        s.mark(tok);
                    }
                })
                .unwrap_or(()),
            }
        }
    }
}

/// Stop serving: the listener out of the loop, every connection closed, the server's
/// handles dropped here (no borrow of it is held at the loop's top).
fn close_shard() {
    LISTENER.with_borrow(|l| {
        if let (Some(l), Some(ep)) = (l.as_ref(), with_shard(|s| s.ep)) {
            // SAFETY: the listener is still open.
            unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, l.as_raw_fd(), std::ptr::null_mut()) };
        }
    });
    with_shard(|s| {
        s.conns.clear();
        s.dirty.clear();
    });
    SERVER.set(None);
}

/// On each shard, once the store is built: the server, and its listener in the loop.
fn open_shard(s: Server) {
    SERVER.set(Some(s));
    let ep = with_shard(|s| s.ep).unwrap_or(-1);
    if let Some(lfd) = LISTENER.with_borrow(|l| l.as_ref().map(|l| l.as_raw_fd())) {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: TOK_LISTENER };
        // SAFETY: the listener stays open until the thread ends.
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, lfd, &mut ev) };
    }
}

/// A shard thread: pinned (and attached in Xcall mode), then the loop, until told to stop.
fn shard_main(rt: Option<&Runtime>, cpu: usize, me: usize, shards: usize, listener: OwnedFd, inbox: Option<InboxRx>, started: &Barrier) -> Result<Counts, Error> {
    let allocs0 = crate::allocs::this_thread();
    // SAFETY: gettid has no arguments.
    count(|k| k.tid = unsafe { libc::gettid() });
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
    LISTENER.set(Some(listener));
    let efd = inbox.as_ref().map(|i| i.efd);
    INBOX.set(inbox);
    if let Ok((_, ep, _)) = &opened {
        SHARD.set(Some(Shard::new(me, shards, *ep)));
    }
    // calls to this CPU are refused until its thread attached: everyone waits here
    started.wait();
    let (att, ep, wake_fd) = opened?;
    let r = shard_loop(att.as_ref(), ep, efd);
    // the detach closes the eventfd: out of the epoll set first; calls still queued run there
    // SAFETY: as above.
    unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, wake_fd, std::ptr::null_mut()) };
    if let Some(att) = att {
        att.detach()?;
    }
    SHARD.set(None);
    // SAFETY: our epoll set, closed once.
    unsafe { libc::close(ep) };
    LISTENER.set(None);
    INBOX.set(None);
    r?;
    count(|k| k.allocs = crate::allocs::this_thread() - allocs0);
    Ok(COUNTS.get())
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

/// What a run of the server reports at its end.
#[derive(Debug)]
pub struct Report {
    pub shards: Vec<Counts>,
    pub incrs: u64,
    pub ops: u64,
    /// Xcall: libxcall's counters over the run, every CPU's summed
    pub xc: Option<xcall::Stats>,
}

impl Report {
    pub fn total(&self) -> Counts {
        let mut t = Counts::default();
        for s in &self.shards {
            t.add(s);
        }
        t
    }
}

/// While the server runs: its port, its server (for counts), its shard threads' ids.
pub struct Running<'a> {
    pub port: u16,
    pub server: &'a Server,
    pub tids: Vec<i32>,
}

/// Run the server in `mode` on the CPUs `cpus` (one shard each), on `port` (0: any), while
/// `work` runs, then stop it.
pub fn run_server<R>(mode: Mode, cpus: &[usize], port: u16, await_poll: Duration, work: impl FnOnce(&Running<'_>) -> R) -> Result<(R, Report), Error> {
    let n = cpus.len();
    if n == 0 {
        return Err(Error::from(ErrorKind::InvalidArgument));
    }
    let set = CpuSet::from_cpus(cpus.iter().copied())?;
    // Xcall: every CPU is a shard's, libxcall starts no thread of its own
    let rt = match mode {
        Mode::Xcall => Some(Runtime::builder().cpus(&set).attach(&set).build()?),
        _ => None,
    };
    let (lfds, port) = listeners(n, port).map_err(|e| Error::from_errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
    let mut inboxes = Vec::new();
    let mut receivers = Vec::new();
    if rt.is_none() {
        for _ in 0..n {
            let (tx, rx) = Inbox::pair()?;
            inboxes.push(tx);
            receivers.push(Some(rx));
        }
    } else {
        receivers.resize_with(n, || None);
    }
    let inboxes = Arc::new(inboxes);
    let cpus: Arc<[usize]> = cpus.into();
    let started = Barrier::new(n + 1);
    std::thread::scope(|sc| {
        let threads: Vec<_> = lfds
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(me, (lfd, inbox))| {
                let (rt, started, cpu) = (rt.as_ref(), &started, cpus[me]);
                sc.spawn(move || shard_main(rt, cpu, me, n, lfd, inbox, started))
            })
            .collect();
        started.wait();
        let mut stopper = Server { cpus: cpus.clone(), backend: Backend::Channel, inboxes: inboxes.clone(), await_poll };
        if let Some(rt) = &rt {
            stopper.backend = Backend::Xcall(rt.handle(), Sharded::new(rt, |_| Store::default())?);
        }
        let xc0 = rt.as_ref().and_then(|rt| rt.total_stats().ok());
        let run = || -> Result<_, Error> {
            // the store: Xcall's built in the shards' loops, one instance on each CPU
            let backend = match mode {
                Mode::Xcall => stopper.backend.clone(),
                Mode::Mutex => Backend::Mutex(Arc::new((0..n).map(|_| Mutex::new(Store::default())).collect())),
                Mode::Channel => Backend::Channel,
            };
            let server = Server { cpus: cpus.clone(), backend, inboxes: inboxes.clone(), await_poll };
            let mut tids = Vec::new();
            for me in 0..n {
                let s = server.clone();
                tids.push(stopper.call(me, move || {
                    open_shard(s);
                    COUNTS.get().tid
                })?);
            }
            let out = work(&Running { port, server: &server, tids });
            let (incrs, ops) = server.store_counts()?;
            let xc = match (&rt, xc0) {
                (Some(rt), Some(a)) => rt.total_stats().ok().map(|b| stats_delta(&b, &a)),
                _ => None,
            };
            // the shards' handles first (each loop drops its own at its top, which holds no
            // borrow of it, and answers then), then ours: Xcall's instances dropped on their
            // CPUs, by the last handle, here
            for me in 0..n {
                let (tx, rx) = crossbeam_channel::bounded(1);
                stopper.send(me, move || CLOSE.set(Some(tx)))?;
                rx.recv().map_err(|_| Error::from(ErrorKind::Unavailable))?;
            }
            drop(server);
            Ok((out, incrs, ops, xc))
        };
        let r = run();
        // the stopper's store (Xcall: the last handle) dropped while the loops still run
        let stop = Server { backend: Backend::Channel, ..stopper.clone() };
        if let Backend::Xcall(h, _) = stopper.backend {
            drop(stopper);
            for &cpu in cpus.iter() {
                let r = h.spawn_on(cpu, || STOP.set(true));
                if r.is_err() {
                    eprintln!("STOP to {cpu}: {r:?}");
                }
            }
        } else {
            for me in 0..n {
                let _ = stop.send(me, || STOP.set(true));
            }
        }
        let mut shards = Vec::new();
        for t in threads {
            shards.push(t.join().map_err(|_| Error::from(ErrorKind::Io))?);
        }
        let (out, incrs, ops, xc) = r?;
        let shards = shards.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok((out, Report { shards, incrs, ops, xc }))
    })
}

fn stats_delta(later: &xcall::Stats, earlier: &xcall::Stats) -> xcall::Stats {
    let mut d = xcall::Stats::default();
    // SAFETY: three xc_stats of ours.
    unsafe { xcall_sys::xc_stats_delta(&mut d, earlier, later) };
    d
}

/// The inbox's wake: a loop that announced its sleep gets one eventfd write for any number of
/// senders; a loop awake gets none, and its announcement then sees what came and refuses
/// the sleep.
#[test]
fn inbox_writes_its_eventfd_only_for_a_sleeping_loop() {
    let (inbox, rx) = Inbox::pair().expect("eventfd");
    let readable = || {
        let mut pfd = libc::pollfd { fd: rx.efd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd of ours; no wait.
        let r = unsafe { libc::poll(&mut pfd, 1, 0) };
        let mut v = [0u8; 8];
        // SAFETY: an 8-byte read of our eventfd (nonblocking), as the loop reads it.
        unsafe { libc::read(rx.efd, v.as_mut_ptr().cast(), 8) };
        r == 1
    };
    let job = || Msg::Job(Box::new(|| ()));
    for round in 0..3 {
        assert!(rx.sleep_begin(), "round {round}: nothing queued: sleep");
        assert!(inbox.post(job()).is_ok() && inbox.post(job()).is_ok());
        assert!(readable(), "round {round}: two messages for a sleeping loop and no write");
        rx.sleep_end();
        assert_eq!(rx.rx.try_iter().count(), 2);
        assert!(inbox.post(job()).is_ok());
        assert!(!readable(), "round {round}: a write for a loop awake");
        assert!(!rx.sleep_begin(), "round {round}: a message queued, and the loop would sleep");
        rx.sleep_end();
        assert_eq!(rx.rx.try_iter().count(), 1);
    }
}
