//! The Runtime dropped while other threads' calls are in flight: every call they made either
//! ran once (the call said Ok) or was refused (Unavailable) and dropped in the caller, and
//! every closure was dropped exactly once.

mod common;

use common::{cpus, serial};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use xcall::{ErrorKind, Runtime};

struct Token(Arc<AtomicUsize>);

impl Drop for Token {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn runtime_dropped_with_calls_in_flight() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let h = rt.handle();
    let ran = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let made = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..3)
        .map(|t| {
            let (ran, dropped, made) = (ran.clone(), dropped.clone(), made.clone());
            std::thread::spawn(move || {
                let (mut ok, mut created) = (0usize, 0usize);
                for i in 0.. {
                    let cpu = cpus()[i % cpus().len()];
                    let token = Token(dropped.clone());
                    let r = ran.clone();
                    let f = move || {
                        let _t = token;
                        r.fetch_add(1, Ordering::SeqCst);
                    };
                    created += 1;
                    let res = match (t + i) % 3 {
                        0 => h.spawn_on(cpu, f),
                        1 => h.call_on(cpu, f),
                        _ => {
                            // queued by a first poll, then dropped in flight (its drop waits)
                            let mut fut = std::pin::pin!(h.call_on_async(cpu, f));
                            match common::poll_once(fut.as_mut()) {
                                std::task::Poll::Ready(r) => r,
                                std::task::Poll::Pending => Ok(()),
                            }
                        }
                    };
                    match res {
                        Ok(()) => ok += 1,
                        Err(e) if e == ErrorKind::Unavailable => break,
                        Err(e) => panic!("call: {e}"),
                    }
                    made.fetch_add(1, Ordering::SeqCst);
                }
                (ok, created)
            })
        })
        .collect();
    // drop the runtime while the threads are at it
    while made.load(Ordering::SeqCst) < 3000 {
        std::thread::yield_now();
    }
    drop(rt);
    let (mut ok, mut created) = (0, 0);
    for t in threads {
        let (o, c) = t.join().unwrap();
        ok += o;
        created += c;
    }
    assert_eq!(ran.load(Ordering::SeqCst), ok, "every accepted call ran once, across the exit");
    assert_eq!(dropped.load(Ordering::SeqCst), created, "every closure was dropped once");
    // and a runtime may follow
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.call_on(cpus()[0], || 1).unwrap(), 1);
}
