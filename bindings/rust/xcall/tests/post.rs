//! `post_on`: a message delivered once, on its CPU, in order with the thread's other calls;
//! refused, its box comes back undelivered; a panic in `deliver` contained; and no
//! allocation on the whole path, the same box sent there and back again (a counting global
//! allocator that counts on the test's thread and the runtime's workers, marked by the
//! `cpu_init` hook: not on the harness's own, which may print meanwhile).

mod common;

use common::cpus;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use xcall::{ErrorKind, Handle, Message, Runtime};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // const, no destructor: readable inside the allocator
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn one() {
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: System's allocator, with a count.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        one();
        // SAFETY: as the caller promised us.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised us.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        one();
        // SAFETY: as the caller promised us.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A ping-pong ball: goes to `there`, where its CPU and sequence are recorded, and comes
/// back to `home` in the same box, where it is parked for the next throw.
struct Ball {
    seq: usize,
    home: usize,
    there: usize,
    went: bool,
}

static SEEN: Mutex<Vec<(usize, usize, bool)>> = Mutex::new(Vec::new());
static PARKED: Mutex<Option<Box<Ball>>> = Mutex::new(None);
static DROPS: AtomicUsize = AtomicUsize::new(0);

impl Message for Ball {
    fn deliver(mut self: Box<Self>) {
        let cpu = xcall::current_cpu().unwrap_or(usize::MAX);
        let mut seen = SEEN.lock().unwrap();
        if seen.len() < seen.capacity() {
            seen.push((self.seq, cpu, self.went));
        }
        drop(seen);
        if !self.went {
            self.went = true;
            let home = self.home;
            if let Err((e, _)) = HANDLE.get().expect("handle").post_on(home, self) {
                panic!("post back: {e}");
            }
        } else {
            *PARKED.lock().unwrap() = Some(self);
        }
    }
}

impl Drop for Ball {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

static HANDLE: std::sync::OnceLock<Handle> = std::sync::OnceLock::new();

struct Boom;

impl Message for Boom {
    fn deliver(self: Box<Self>) {
        panic!("boom (a test's deliberate panic)");
    }
}

#[test]
fn post_on_delivers_in_its_box_and_allocates_nothing() {
    COUNTED.set(true);
    let rt = Runtime::builder()
        .cpu_init(|_| {
            COUNTED.set(true);
            Ok(())
        })
        .build()
        .unwrap();
    let cpus = cpus();
    let (home, there) = (cpus[0], *cpus.last().unwrap());
    HANDLE.set(rt.handle()).unwrap();
    const THROWS: usize = 200;
    SEEN.lock().unwrap().reserve(2 * THROWS + 64);
    let mut ball = Box::new(Ball { seq: 0, home, there, went: false });
    // warm up: the rings both ways, thread-locals
    let throw = |mut b: Box<Ball>, seq: usize| -> Box<Ball> {
        b.seq = seq;
        b.went = false;
        let to = b.there;
        rt.post_on(to, b).map_err(|(e, _)| e).unwrap();
        loop {
            // the ball comes back to `home`'s worker, which parks it
            if let Some(b) = PARKED.lock().unwrap().take() {
                return b;
            }
            std::thread::yield_now();
        }
    };
    for i in 0..10 {
        ball = throw(ball, i);
    }
    SEEN.lock().unwrap().clear();
    let before = ALLOCS.load(Ordering::SeqCst);
    for i in 0..THROWS {
        ball = throw(ball, i);
    }
    let allocs = ALLOCS.load(Ordering::SeqCst) - before;
    let seen = std::mem::take(&mut *SEEN.lock().unwrap());
    assert_eq!(allocs, 0, "allocations in {THROWS} round trips of one posted box");
    assert_eq!(seen.len(), 2 * THROWS);
    for (i, pair) in seen.chunks(2).enumerate() {
        assert_eq!(pair[0], (i, there, false), "throw {i} out");
        assert_eq!(pair[1], (i, home, true), "throw {i} back");
    }
    assert_eq!(DROPS.load(Ordering::SeqCst), 0, "the box was never dropped on the way");

    // order with the thread's other calls: posts then a waiting call see them all run
    let order = std::sync::Arc::new(Mutex::new(Vec::new()));
    struct Push(usize, std::sync::Arc<Mutex<Vec<usize>>>);
    impl Message for Push {
        fn deliver(self: Box<Self>) {
            self.1.lock().unwrap().push(self.0);
        }
    }
    for i in 0..100 {
        rt.post_on(there, Box::new(Push(i, order.clone()))).map_err(|(e, _)| e).unwrap();
    }
    rt.call_on(there, || ()).unwrap();
    assert_eq!(*order.lock().unwrap(), (0..100).collect::<Vec<_>>());

    // refused: the box comes back undelivered, nothing dropped
    let (e, back) = rt.post_on(usize::MAX, ball).unwrap_err();
    assert_eq!(e, ErrorKind::Unavailable);
    assert_eq!(e.cpu(), Some(usize::MAX));
    assert_eq!(back.seq, THROWS - 1);
    assert_eq!(DROPS.load(Ordering::SeqCst), 0);
    drop(back);
    assert_eq!(DROPS.load(Ordering::SeqCst), 1);

    // a panic in deliver: contained and counted, the worker goes on
    let panics = xcall::spawn_panics();
    rt.post_on(there, Box::new(Boom)).map_err(|(e, _)| e).unwrap();
    assert_eq!(rt.call_on(there, || 7).unwrap(), 7);
    assert_eq!(xcall::spawn_panics(), panics + 1);

    rt.shutdown().unwrap();
    let b = Box::new(Ball { seq: 0, home, there, went: false });
    let (e, _) = HANDLE.get().unwrap().post_on(there, b).unwrap_err();
    assert_eq!(e, ErrorKind::Unavailable, "after shutdown");
}
