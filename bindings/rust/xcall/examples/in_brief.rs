// Every kind of call, once (the README's "In brief"): cargo run --example in_brief
use xcall::Runtime;

fn main() -> Result<(), xcall::Error> {
    let rt = Runtime::new()?; // one pinned worker per CPU
    let seen = rt.call_on_all(xcall::current_cpu)?; // one xc_call_all, every result back
    assert!(seen.iter().all(|&(cpu, ran_on)| ran_on == Some(cpu)));
    let cpu = seen[0].0;
    let v = [1, 2, 3];
    let sum: i32 = rt.call_on(cpu, || v.iter().sum())?; // waits: the closure may borrow
    assert_eq!(sum, 6);
    rt.spawn_on(cpu, move || println!("nowait on {cpu}"))?; // boxed, run once, freed there
    let answer = rt.call_on_async(cpu, || 42).wait()?; // a future, allocation-free; or .await
    assert_eq!(answer, 42);
    let e = rt.call_on(usize::MAX, || ()).unwrap_err(); // no such CPU: the error names it
    assert_eq!((e.kind(), e.cpu()), (xcall::ErrorKind::Unavailable, Some(usize::MAX)));
    Ok(())
}
