//! `Builder::option` refusals say why: libxcall's reason reaches the report hook at `build`,
//! whichever came first, option or hook; `cpu_max` sizes a per-CPU vector.

mod common;

use common::{cpus, serial};
use std::sync::{Arc, Mutex};
use xcall::{CpuSet, ErrorKind, Runtime};

#[test]
fn a_bad_option_says_why() {
    let _s = serial();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let l = lines.clone();
    let r = Runtime::builder()
        .option("XCALL_POLL_NS", "fast")
        .report(move |line| l.lock().unwrap().push(line.to_string()))
        .build();
    assert_eq!(r.map(drop).unwrap_err(), ErrorKind::InvalidArgument);
    let got = lines.lock().unwrap().join("\n");
    assert!(got.contains("XCALL_POLL_NS=\"fast\": invalid"), "reported: {got:?}");

    let l = lines.clone();
    lines.lock().unwrap().clear();
    let r = Runtime::builder()
        .report(move |line| l.lock().unwrap().push(line.to_string()))
        .option("XCALL_NO_SUCH", "1")
        .build();
    assert_eq!(r.map(drop).unwrap_err(), ErrorKind::InvalidArgument);
    let got = lines.lock().unwrap().join("\n");
    assert!(got.contains("XCALL_NO_SUCH: no such option"), "reported: {got:?}");
}

#[test]
fn cpu_max_is_one_past_the_highest_cpu() {
    let _s = serial();
    let all = cpus();
    let top = *all.iter().max().unwrap();
    let rt = Runtime::builder().cpus(&CpuSet::from_cpus([top]).unwrap()).build().unwrap();
    assert_eq!(rt.cpu_max(), Ok(top + 1));
    drop(rt);
}
