//! Shutting the runtime down from one of its own workers: EDEADLK, and the runtime stays up
//! (so this file holds this one test: the process keeps that runtime to its end).

mod common;

use common::{cpus, serial};
use xcall::{ErrorKind, Runtime};

#[test]
fn shutdown_on_a_worker_is_refused() {
    let _s = serial();
    let rt = Runtime::new().unwrap();
    let h = rt.handle();
    let cpu = cpus()[0];
    assert_eq!((h.call_on(cpu, move || rt.shutdown()).unwrap()).map_err(|e| e.kind()), Err(ErrorKind::WouldDeadlock));
    // still up, and still one per process
    assert_eq!(h.call_on(cpu, xcall::current_cpu).unwrap(), Some(cpu));
    assert_eq!(Runtime::new().unwrap_err(), ErrorKind::Busy);
}
