//! Exactly once: several threads mixing nowait, waiting, async and call-all calls to every
//! CPU; each call has its own id and must have run exactly once (call-all: once per CPU). And
//! nowait calls across a CPU's offline and online: each ran once, or was refused and never ran.

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

/// A nowait call whose doorbell finds its CPU closing (offline) is settled at once: taken back
/// unrun (`Unavailable`, the closure dropped by the caller) unless the close took it to run.
/// Never both: each call ran exactly once or was refused and never ran, and every closure was
/// dropped once, while one thread sends and another takes the CPU offline and online again.
/// In a child process: a refused closure run all the same would be a use-after-free.
#[test]
fn nowait_calls_across_offline_and_online() {
    if !common::in_child("nowait_calls_across_offline_and_online") {
        return;
    }
    if !common::have_cpus(2, "a CPU taken offline beside a sender") {
        return;
    }
    const N: usize = 200_000;
    let rt = Runtime::new().unwrap();
    let target = *cpus().last().unwrap();
    let ran: Arc<Vec<AtomicU32>> = Arc::new((0..N).map(|_| AtomicU32::new(0)).collect());
    let dropped = Arc::new(AtomicU32::new(0));
    let sent = std::sync::atomic::AtomicBool::new(false);
    let (refused, cycles) = std::thread::scope(|s| {
        let sender = s.spawn(|| {
            let mut refused = Vec::with_capacity(N);
            for i in 0..N {
                let (ran, token) = (ran.clone(), Token(dropped.clone()));
                match rt.spawn_on(target, move || {
                    let _t = token;
                    ran[i].fetch_add(1, Ordering::Relaxed);
                }) {
                    Ok(()) => refused.push(false),
                    Err(e) if e == xcall::ErrorKind::Unavailable => refused.push(true),
                    Err(e) => panic!("spawn_on: {e}"),
                }
            }
            sent.store(true, Ordering::Relaxed);
            refused
        });
        let mut cycles = 0;
        while !sent.load(Ordering::Relaxed) {
            rt.cpu_offline(target).unwrap();
            std::thread::yield_now(); // the sender's turn, while the CPU is offline
            rt.cpu_online(target).unwrap();
            cycles += 1;
        }
        (sender.join().unwrap(), cycles)
    });
    // every accepted call has run once this offline returns: it runs what every ring holds
    rt.cpu_offline(target).unwrap();
    rt.cpu_online(target).unwrap();
    let sent = refused.len();
    assert_eq!(sent, N);
    let wrong: Vec<(usize, u32, bool)> = (0..N)
        .map(|i| (i, ran[i].load(Ordering::Relaxed), refused[i]))
        .filter(|&(_, n, r)| n != u32::from(!r))
        .take(10)
        .collect();
    let n_refused = refused.iter().filter(|&&r| r).count();
    eprintln!("{sent} nowait calls, {n_refused} refused, across {cycles} offline/online cycles");
    assert!(wrong.is_empty(), "(call, times ran, refused): {wrong:?}");
    assert_eq!(dropped.load(Ordering::SeqCst) as usize, sent, "every closure dropped once");
}

/// Counts its drop.
struct Token(Arc<AtomicU32>);

impl Drop for Token {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
