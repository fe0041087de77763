//! `Sharded<T>`: one instance of `T` per CPU, built, used and dropped on its own CPU, with
//! exclusive access through calls and no lock (Seastar's `sharded<T>`).

use crate::borrow::BorrowFlag;
use crate::call::drop_payload;
use crate::error::{Error, ErrorKind};
use crate::{CallFuture, Handle};
use std::cell::UnsafeCell;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// One instance of `T` per CPU of the runtime, each built on its own CPU, touched only by
/// closures that run there, and dropped there: per-CPU state with no lock, as Seastar's
/// `sharded<T>`.
///
/// ```
#[doc = include_str!("../examples/sharded_counters.rs")]
/// ```
///
/// **Calls.** [`invoke_on`](Sharded::invoke_on) runs a closure on one CPU with that CPU's
/// `&mut T` and waits for its result; [`invoke_on_async`](Sharded::invoke_on_async) is the
/// same as a future (a [`CallFuture`] inside: no allocation);
/// [`invoke_on_nowait`](Sharded::invoke_on_nowait) queues a `'static` closure and returns at
/// once; [`invoke_on_all`](Sharded::invoke_on_all) and [`map_reduce`](Sharded::map_reduce)
/// are one `xc_call_all` each, the calling worker's own CPU included.
///
/// **Sharing.** A `Sharded` is a handle on an [`Arc`]: cloning it is cheap, and a `'static`
/// closure (a nowait call, an async one, another thread) keeps the instances alive by
/// holding a clone. `T` need only be [`Send`]: each instance is touched by one thread at a
/// time, its CPU's, and that thread may change (an attached CPU after a detach and attach).
///
/// **Build and drop.** [`Sharded::new`] runs the constructor on every online CPU (one
/// `xc_call_all`), so that the instance is first touched there; a CPU offline then (an
/// attached CPU no thread has attached yet) has no instance, and a call that reaches it later
/// gets [`ErrorKind::Unavailable`]. When the last handle goes, each instance is dropped on
/// its own CPU by a waiting call; one whose CPU is offline, or whose runtime is down, is
/// dropped on the dropping thread. A panic in `T`'s drop is resumed there after every
/// instance was dropped.
///
/// # Nesting: one `&mut T` per CPU at a time
///
/// A closure holding a CPU's `&mut T` may come back into its own thread, which then runs
/// other calls to the same CPU before the closure returns:
///
/// - (a) [`invoke_on`](Sharded::invoke_on) to its own CPU, and
///   [`invoke_on_all`](Sharded::invoke_on_all) / [`map_reduce`](Sharded::map_reduce) (which
///   include the local CPU), run inline on the same thread;
/// - (b) a nowait call ([`Handle::spawn_on`], [`invoke_on_nowait`](Sharded::invoke_on_nowait))
///   whose ring to its target is full serves its own CPU's calls while it waits for room
///   (and so does a waiting call, [`Handle::call_on`], while it waits);
/// - (c) [`Handle::cpu_offline`] and [`Handle::cpu_online`] serve while they wait;
/// - (d) `xc_poll` inside a call runs the CPU's calls; [`CallFuture::wait`] and a
///   `CallFuture` dropped in flight call it on a worker while they wait.
///
/// Each (`Sharded`, CPU) pair has a borrow flag, set while a closure holds the `&mut T`. A
/// second access from any of these gets [`ErrorKind::Borrowed`], naming the CPU, and its
/// closure does not run: `invoke_on`, `invoke_on_async` and the two calls on every CPU return
/// it; `invoke_on_nowait`'s closure is called with it (so that it can still answer
/// someone). Nothing panics across libxcall's C code, and the holder goes on undisturbed.
/// Another `Sharded`, or another CPU's instance of this one, is a different flag: nesting
/// those is fine. The flag costs an uncontended compare-and-swap on a line of that CPU's
/// slot, no more.
pub struct Sharded<T: Send> {
    inner: Arc<Inner<T>>,
}

impl<T: Send> Clone for Sharded<T> {
    fn clone(&self) -> Sharded<T> {
        Sharded { inner: self.inner.clone() }
    }
}

/// One CPU's instance and its flag, on a line pair of its own (no false sharing between
/// CPUs).
#[repr(align(128))]
struct Slot<T> {
    flag: BorrowFlag,
    value: UnsafeCell<Option<T>>,
    /// Whether `value` holds an instance, for any thread to read without the flag (which is
    /// its CPU's thread's). Relaxed: a snapshot; set on the CPU while `Sharded::new` builds,
    /// which its waiting call orders before any handle exists, and cleared only once the
    /// last handle is gone.
    present: AtomicBool,
}

struct Inner<T: Send> {
    /// indexed by CPU id, `cpu_max` long
    slots: Box<[Slot<T>]>,
}

// SAFETY: an instance is touched only under its slot's flag (a try-lock whose acquire and
// release hand it from one holder to the next, as a Mutex does), so sharing Inner between
// threads hands each T to one thread at a time: T: Send suffices, as for Mutex<T>.
unsafe impl<T: Send> Sync for Inner<T> {}
// SAFETY: as above; Inner owns its instances.
unsafe impl<T: Send> Send for Inner<T> {}

impl<T: Send> Inner<T> {
    /// Run `f` with `cpu`'s instance, or with why not: no such CPU or no instance
    /// (`Unavailable`), or held further up this thread (`Borrowed`). Called on `cpu`'s own
    /// thread by the calls below.
    fn access<R>(&self, cpu: usize, f: impl FnOnce(Result<&mut T, Error>) -> R) -> R {
        let Some(slot) = self.slots.get(cpu) else {
            return f(Err(Error::from(ErrorKind::Unavailable).on_cpu(cpu)));
        };
        let Some(_held) = slot.flag.try_borrow() else {
            return f(Err(Error::from(ErrorKind::Borrowed).on_cpu(cpu)));
        };
        // SAFETY: the flag is ours until _held drops, after f returned (or unwound): no
        // other reference to the value exists meanwhile.
        match unsafe { (*slot.value.get()).as_mut() } {
            Some(t) => f(Ok(t)),
            None => f(Err(Error::from(ErrorKind::Unavailable).on_cpu(cpu))),
        }
    }

    fn with<R>(&self, cpu: usize, f: impl FnOnce(&mut T) -> R) -> Result<R, Error> {
        self.access(cpu, |t| t.map(f))
    }

    /// Drop `cpu`'s instance where this runs (the last handle is gone: the flag is free).
    fn take_and_drop(&self, cpu: usize) {
        drop(self.swap(cpu, None));
    }

    /// Put or take `cpu`'s instance, under its flag.
    fn swap(&self, cpu: usize, v: Option<T>) -> Result<Option<T>, Error> {
        let slot = self.slots.get(cpu).ok_or_else(|| Error::from(ErrorKind::Unavailable).on_cpu(cpu))?;
        let _held = slot.flag.try_borrow().ok_or_else(|| Error::from(ErrorKind::Borrowed).on_cpu(cpu))?;
        slot.present.store(v.is_some(), Ordering::Relaxed);
        // SAFETY: as in access.
        Ok(std::mem::replace(unsafe { &mut *slot.value.get() }, v))
    }
}

impl<T: Send> Drop for Inner<T> {
    fn drop(&mut self) {
        let h = Handle::new();
        let mut panic = None;
        for cpu in 0..self.slots.len() {
            if self.slots[cpu].value.get_mut().is_none() {
                continue;
            }
            let inner: &Inner<T> = self;
            // on its own CPU: the last handle is gone, so nothing else holds the flag
            let there = catch_unwind(AssertUnwindSafe(|| {
                // a value taken and dropped on the target; a panic in its drop is caught
                // there and resumed here by call_on
                h.call_on(cpu, || inner.take_and_drop(cpu))
            }));
            let caught = match there {
                Ok(Ok(())) => None,
                // refused (the CPU offline, the runtime down): here, on the dropping thread
                Ok(Err(_)) => {
                    let v = self.slots[cpu].value.get_mut().take();
                    catch_unwind(AssertUnwindSafe(move || drop(v))).err()
                }
                Err(p) => Some(p),
            };
            // the first payload is resumed; another's dropped, as the first waits
            match caught {
                Some(p) if panic.is_none() => panic = Some(p),
                Some(p) => drop_payload(p),
                None => {}
            }
        }
        if let Some(p) = panic {
            if std::thread::panicking() {
                drop_payload(p); // already unwinding: a second unwind would abort
            } else {
                resume_unwind(p);
            }
        }
    }
}

impl<T: Send> Sharded<T> {
    /// Build one instance per online CPU, each on its own CPU (one `xc_call_all`, the
    /// calling worker's own CPU included, inline): `make(cpu)` runs there.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] when the runtime is down; [`ErrorKind::OutOfMemory`]. The
    /// instances built are dropped then, each on its CPU.
    ///
    /// # Panics
    /// Resumes a panic of `make` (the first CPU's, by number), after every CPU ran it and the
    /// instances built were dropped.
    pub fn new<F>(h: &Handle, make: F) -> Result<Sharded<T>, Error>
    where
        F: Fn(usize) -> T + Sync,
    {
        let n = h.cpu_max()?;
        let slots = (0..n)
            .map(|_| Slot { flag: BorrowFlag::new(), value: UnsafeCell::new(None), present: AtomicBool::new(false) })
            .collect();
        let me = Sharded { inner: Arc::new(Inner { slots }) };
        let inner = &*me.inner;
        let built = h.call_on_all(|| match crate::current_cpu() {
            // built here, stored in place: its memory is first touched on this CPU
            Some(cpu) => inner.swap(cpu, Some(make(cpu))).map(|_| ()),
            None => Err(Error::from(ErrorKind::Unavailable)),
        })?;
        for (_, r) in built {
            r?;
        }
        Ok(me)
    }
}

impl<T: Send + 'static> Sharded<T> {
    /// Run `f` on `cpu` with its instance and return its result, once it ran. The closure
    /// may borrow from the caller (the call waits). From `cpu`'s own worker it runs inline.
    ///
    /// # Errors
    /// [`ErrorKind::Unavailable`] for a CPU offline, absent or with no instance, or the
    /// runtime down; [`ErrorKind::Borrowed`] when the instance is held further up the
    /// target's thread (see [nesting](Sharded#nesting-one-mut-t-per-cpu-at-a-time)); as
    /// [`Handle::call_on`]. `f` did not run then.
    ///
    /// # Panics
    /// Resumes a panic of `f`, caught on the target (the instance stays, as `f` left it).
    pub fn invoke_on<F, R>(&self, cpu: usize, f: F) -> Result<R, Error>
    where
        F: FnOnce(&mut T) -> R + Send,
        R: Send,
    {
        let inner = &*self.inner;
        Handle::new().call_on(cpu, move || inner.with(cpu, f))?
    }

    /// [`invoke_on`](Sharded::invoke_on) as a future: the call is queued at its first poll,
    /// completed on the target, which wakes the task; no allocation (a [`CallFuture`]
    /// inside). The closure holds a handle, so the instances outlive it.
    ///
    /// # Errors
    /// The future's output: as [`invoke_on`](Sharded::invoke_on).
    pub fn invoke_on_async<F, R>(&self, cpu: usize, f: F) -> ShardFuture<impl FnOnce() -> Result<R, Error> + Send + 'static, R>
    where
        F: FnOnce(&mut T) -> R + Send + 'static,
        R: Send + 'static,
    {
        let me = self.clone();
        ShardFuture { call: Handle::new().call_on_async(cpu, move || me.inner.with(cpu, f)) }
    }

    /// Queue `f` to run on `cpu` with its instance and return at once (a nowait call: boxed,
    /// run once, freed there). `f` gets `Ok(&mut T)`, or the reason it cannot have it there
    /// ([`ErrorKind::Borrowed`]: it was served further up a closure that holds the instance;
    /// [`ErrorKind::Unavailable`]: no instance on that CPU), so that it can still answer
    /// whoever waits for it. Calls from one thread to one CPU run in the order made.
    ///
    /// # Errors
    /// As [`Handle::spawn_on`]: the call was refused, and `f` is dropped unrun.
    pub fn invoke_on_nowait<F>(&self, cpu: usize, f: F) -> Result<(), Error>
    where
        F: FnOnce(Result<&mut T, Error>) + Send + 'static,
    {
        let me = self.clone();
        Handle::new().spawn_on(cpu, move || me.inner.access(cpu, f))
    }

    /// Run `f` on every online CPU with its instance, as one `xc_call_all` (the calling
    /// worker's own CPU included, inline), and return each CPU's result by CPU number. CPUs
    /// with no instance (offline when the `Sharded` was built) are left out.
    ///
    /// # Errors
    /// [`ErrorKind::Borrowed`], naming the CPU, when a CPU's instance was held further up its
    /// thread (the calling worker's own, from inside an `invoke_on` there): every other CPU
    /// ran `f`, and their results are dropped; as [`Handle::call_on_all`].
    ///
    /// # Panics
    /// As [`Handle::call_on_all`].
    pub fn invoke_on_all<F, R>(&self, f: F) -> Result<Vec<(usize, R)>, Error>
    where
        F: Fn(&mut T) -> R + Sync,
        R: Send,
    {
        let inner = &*self.inner;
        let out = Handle::new().call_on_all(|| match crate::current_cpu() {
            Some(cpu) => inner.with(cpu, &f),
            None => Err(Error::from(ErrorKind::Unavailable)),
        })?;
        let mut results = Vec::with_capacity(out.len());
        let mut first = None;
        for (cpu, r) in out {
            match r {
                Ok(v) => results.push((cpu, v)),
                Err(e) if e == ErrorKind::Unavailable => {}
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(results),
        }
    }

    /// `map` on every CPU with its instance (one `xc_call_all`, as
    /// [`invoke_on_all`](Sharded::invoke_on_all)), then the results folded with `reduce` on
    /// the calling thread, in CPU order, from `init`.
    ///
    /// # Errors
    /// As [`invoke_on_all`](Sharded::invoke_on_all).
    ///
    /// # Panics
    /// As [`invoke_on_all`](Sharded::invoke_on_all).
    pub fn map_reduce<M, R, A, F>(&self, map: M, init: A, mut reduce: F) -> Result<A, Error>
    where
        M: Fn(&mut T) -> R + Sync,
        R: Send,
        F: FnMut(A, R) -> A,
    {
        Ok(self.invoke_on_all(map)?.into_iter().fold(init, |a, (_, r)| reduce(a, r)))
    }
}

impl<T: Send> Sharded<T> {
    /// Whether `cpu` has an instance (it was online when the `Sharded` was built). From any
    /// thread, at any time: it reads no instance and takes no borrow flag, so it never makes
    /// a call get [`ErrorKind::Borrowed`].
    pub fn has_instance(&self, cpu: usize) -> bool {
        self.inner.slots.get(cpu).is_some_and(|s| s.present.load(Ordering::Relaxed))
    }
}

impl<T: Send> std::fmt::Debug for Sharded<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharded").field("cpus", &self.inner.slots.len()).finish_non_exhaustive()
    }
}

/// The future of [`Sharded::invoke_on_async`]: a [`CallFuture`] whose output is the
/// closure's result, or the call's or the access's error. `!Unpin` and allocation-free, as
/// `CallFuture`; [`wait`](ShardFuture::wait) blocks a thread on it.
#[must_use = "a future does nothing until polled: the call is queued at its first poll"]
pub struct ShardFuture<G, R> {
    call: CallFuture<G, Result<R, Error>>,
}

impl<G, R> ShardFuture<G, R>
where
    G: FnOnce() -> Result<R, Error> + Send + 'static,
    R: Send + 'static,
{
    /// Queue the call (if it was not yet) and block until it ran, as [`CallFuture::wait`].
    ///
    /// # Errors
    /// As [`Sharded::invoke_on`].
    ///
    /// # Panics
    /// Resumes a panic of the closure.
    pub fn wait(self) -> Result<R, Error> {
        self.call.wait()?
    }
}

impl<G, R> ShardFuture<G, R> {
    /// The CPU the call goes to.
    pub fn cpu(&self) -> usize {
        self.call.cpu()
    }

    /// Whether the call has run or was refused; `false` before the first poll.
    pub fn is_finished(&self) -> bool {
        self.call.is_finished()
    }
}

impl<G, R> Future for ShardFuture<G, R>
where
    G: FnOnce() -> Result<R, Error> + Send + 'static,
    R: Send + 'static,
{
    type Output = Result<R, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<R, Error>> {
        // SAFETY: structural pinning of the only field: ShardFuture never moves it out, has
        // no Drop of its own and is !Unpin whenever CallFuture is.
        let call = unsafe { self.map_unchecked_mut(|s| &mut s.call) };
        call.poll(cx).map(|r| r.and_then(|r| r))
    }
}

impl<G, R> std::fmt::Debug for ShardFuture<G, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardFuture").field("call", &self.call).finish()
    }
}
