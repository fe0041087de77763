//! Nowait calls that carry a box the caller already has: no allocation per call.
//!
//! [`Handle::spawn_on`] boxes its closure, one allocation a call. A server that forwards
//! work between its shards many times a second wants none: it sends a batch in a buffer it
//! keeps, the receiver writes its answers into the same buffer and sends it back, and the
//! first sender fills it again. [`Handle::post_on`] is that call: the box is the call's
//! argument, handed to [`Message::deliver`] on the target.

use crate::call::SPAWN_PANICS;
use crate::error::check_on;
use crate::{cpu_arg, Error, Handle};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

/// Something a nowait call carries to a CPU in its own box ([`Handle::post_on`]).
///
/// `deliver` runs once on the target, in its worker (an attached thread: inside its
/// [`Attached::poll`](crate::Attached::poll)), with the box: it may keep it, drop it, or post
/// it on to another CPU, an answer written into it. A panic in it is contained there, as a
/// [`Handle::spawn_on`] closure's: reported by the panic hook, the box dropped, and counted
/// by [`spawn_panics`](crate::spawn_panics).
pub trait Message: Send + 'static {
    /// Run on the target CPU, once.
    fn deliver(self: Box<Self>);
}

unsafe extern "C" fn run_message<M: Message>(arg: *mut c_void) {
    // SAFETY: arg is the Box<M> that post_on gave up for this call, which runs once.
    let m = unsafe { Box::from_raw(arg.cast::<M>()) };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || m.deliver())) {
        SPAWN_PANICS.fetch_add(1, Ordering::Relaxed);
        // a payload whose drop panics again must not unwind into C either
        let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    }
}

impl Handle {
    /// Queue `msg` to `cpu`, where [`Message::deliver`] gets it, and return at once (a nowait
    /// call, as [`Handle::spawn_on`], with the same order: calls from one thread to one CPU
    /// run in the order made). Nothing is allocated: the box travels as the call's argument.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// static SUM: AtomicUsize = AtomicUsize::new(0);
    /// struct Add(usize);
    /// impl xcall::Message for Add {
    ///     fn deliver(self: Box<Self>) {
    ///         SUM.fetch_add(self.0, Ordering::Relaxed);
    ///     }
    /// }
    /// let rt = xcall::Runtime::new()?;
    /// let cpu = rt.online_cpus()?.iter().next().unwrap();
    /// rt.post_on(cpu, Box::new(Add(42))).map_err(|(e, _)| e)?;
    /// rt.call_on(cpu, || ())?; // a later waiting call returns after it ran
    /// assert_eq!(SUM.load(Ordering::Relaxed), 42);
    /// # Ok::<(), xcall::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Handle::spawn_on`], with the box given back: the call was refused unqueued, and
    /// `deliver` did not run.
    #[allow(clippy::type_complexity)]
    pub fn post_on<M: Message>(&self, cpu: usize, msg: Box<M>) -> Result<(), (Error, Box<M>)> {
        let c = match cpu_arg(cpu) {
            Ok(c) => c,
            Err(e) => return Err((e, msg)),
        };
        let arg = Box::into_raw(msg);
        // SAFETY: run_message::<M> takes the box back, once, on the target; M is Send +
        // 'static. Refused, the call was never queued and the box is still ours.
        let r = unsafe { xcall_sys::xc_call_single(c, Some(run_message::<M>), arg.cast(), 0) };
        match check_on(r, cpu) {
            Ok(_) => Ok(()),
            // SAFETY: as above: refused, so not queued.
            Err(e) => Err((e, unsafe { Box::from_raw(arg) })),
        }
    }
}
