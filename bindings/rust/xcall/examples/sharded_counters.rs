// Per-CPU state with no lock (cargo run --example sharded_counters): one instance per CPU,
// built there, reached by calls that run there.
use xcall::{Runtime, Sharded};

fn main() -> Result<(), xcall::Error> {
    let rt = Runtime::new()?;
    // one Vec per CPU, each built (first touched) on its own CPU
    let counts: Sharded<Vec<u64>> = Sharded::new(&rt, |_cpu| vec![0; 16])?;
    let cpu = rt.online_cpus()?.iter().next().unwrap();
    counts.invoke_on(cpu, |v| v[3] += 1)?; // waits; the closure has &mut Vec
    let c = counts.clone(); // a handle on an Arc: 'static closures keep the instances alive
    counts.invoke_on_nowait(cpu, move |v| {
        // a nowait call: Err only where the instance is held further up this thread
        if let Ok(v) = v {
            v[3] += 1;
        }
        drop(c);
    })?;
    let seen = counts.invoke_on_async(cpu, |v| v[3]).wait()?; // a future, or .await
    assert_eq!(seen, 2); // calls from one thread to one CPU run in order
    counts.invoke_on_all(|v| v[0] += 1)?; // one xc_call_all
    let total = counts.map_reduce(|v| v.iter().sum::<u64>(), 0, |a, b| a + b)?;
    assert_eq!(total, 2 + rt.online_cpus()?.len() as u64);
    // a nested access to the same CPU's instance is refused, not aliased
    let nested = counts.invoke_on(cpu, |_| counts.invoke_on(cpu, |_| ()));
    assert_eq!(nested?.unwrap_err(), xcall::ErrorKind::Borrowed);
    Ok(())
}
