//! Exactly once: several threads mixing nowait, waiting, async and call-all calls to every
//! CPU; each call has its own id and must have run exactly once (call-all: once per CPU).

mod common;

use common::{cpus, serial};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use xcall::Runtime;

const THREADS: usize = 4;
const PER_THREAD: usize = 20_000;

#[test]
fn every_call_runs_exactly_once() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let online: Vec<usize> = rt.online_cpus().unwrap().iter().collect();
    let runs: Arc<Vec<AtomicU32>> = Arc::new((0..THREADS * PER_THREAD).map(|_| AtomicU32::new(0)).collect());
    let mut expected = vec![0u32; THREADS * PER_THREAD];
    for t in 0..THREADS {
        for i in 0..PER_THREAD {
            expected[t * PER_THREAD + i] = if i % 100 == 7 { online.len() as u32 } else { 1 };
        }
    }
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (rt, runs, online) = (&rt, runs.clone(), &online);
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    let id = t * PER_THREAD + i;
                    let cpu = online[(t + i) % online.len()];
                    let r = runs.clone();
                    let mark = move || {
                        r[id].fetch_add(1, Ordering::Relaxed);
                    };
                    match i % 100 {
                        7 => assert_eq!(rt.call_on_all(&mark).unwrap().len(), online.len()),
                        n if n % 10 == 3 => rt.call_on(cpu, mark).unwrap(),
                        n if n % 10 == 5 => {
                            let f = rt.call_on_async(cpu, mark);
                            if n % 20 == 5 {
                                f.wait().unwrap();
                            } else {
                                // queued by a first poll, dropped in flight: its drop waits
                                let mut f = std::pin::pin!(f);
                                let _ = common::poll_once(f.as_mut());
                            }
                        }
                        _ => rt.spawn_on(cpu, mark).unwrap(),
                    }
                }
                // a waiting call after the nowait ones to each CPU: they have all run then
                for &cpu in online {
                    rt.call_on(cpu, || ()).unwrap();
                }
            });
        }
    });
    let wrong: Vec<(usize, u32, u32)> = runs
        .iter()
        .enumerate()
        .filter(|(i, r)| r.load(Ordering::Relaxed) != expected[*i])
        .map(|(i, r)| (i, r.load(Ordering::Relaxed), expected[i]))
        .take(10)
        .collect();
    assert!(wrong.is_empty(), "calls run the wrong number of times (id, ran, expected): {wrong:?}");
    assert!(cpus().len() >= online.len());
}
