// CallFuture on an executor: pollster blocks the thread on one future; any other executor
// (tokio, smol, a thread-per-core runtime's own) polls it the same way.
// cargo run --example pollster_call
use xcall::Runtime;

async fn sum_of_cpu_ids(rt: &Runtime) -> Result<usize, xcall::Error> {
    let mut sum = 0;
    for cpu in rt.online_cpus()?.iter() {
        // queued at the first poll; the target CPU wakes the task when it has run
        sum += rt.call_on_async(cpu, move || xcall::current_cpu().unwrap_or(0)).await?;
    }
    Ok(sum)
}

fn main() -> Result<(), xcall::Error> {
    let rt = Runtime::new()?;
    let want: usize = rt.online_cpus()?.iter().sum();
    assert_eq!(pollster::block_on(sum_of_cpu_ids(&rt))?, want);
    Ok(())
}
