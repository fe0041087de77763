//! A call as a future: completed by the target CPU, which wakes the task's `Waker` there.

use std::future::Future;
use std::panic::resume_unwind;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

pub(crate) struct State<R> {
    inner: Mutex<Inner<R>>,
}

struct Inner<R> {
    out: Option<thread::Result<R>>,
    waker: Option<Waker>,
    done: bool,
}

impl<R> State<R> {
    pub(crate) fn new() -> Arc<State<R>> {
        Arc::new(State { inner: Mutex::new(Inner { out: None, waker: None, done: false }) })
    }

    /// On the target: the result in, then the waker out of the lock and woken.
    pub(crate) fn complete(&self, out: thread::Result<R>) {
        let waker = {
            let mut i = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            i.out = Some(out);
            i.done = true;
            i.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The result of [`Handle::call_on_async`](crate::Handle::call_on_async): a future that the
/// target CPU completes, waking the task's [`Waker`] from there. It needs no executor of its
/// own: any executor polls it, and [`CallFuture::wait`] blocks the calling thread on it.
///
/// The call's state is on the heap, owned by the future and by the call: dropping the future
/// before the call ran is safe, the call still runs once and drops its result on the target.
///
/// A panic of the closure is resumed by the poll that finds it. Polling again after the
/// future returned `Ready` panics, as for most futures.
#[must_use = "the call runs whether or not the future is polled; drop it to ignore the result"]
pub struct CallFuture<R> {
    pub(crate) state: Arc<State<R>>,
}

impl<R> CallFuture<R> {
    /// Whether the call has run (its result is waiting for the next poll).
    pub fn is_finished(&self) -> bool {
        self.state.inner.lock().unwrap_or_else(PoisonError::into_inner).done
    }

    /// Block the calling thread until the call has run, and return its result.
    ///
    /// # Panics
    /// Resumes a panic of the closure.
    pub fn wait(mut self) -> R {
        struct Unpark(Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Unpark(thread::current())));
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(r) = Pin::new(&mut self).poll(&mut cx) {
                return r;
            }
            thread::park();
        }
    }
}

impl<R> Future for CallFuture<R> {
    type Output = R;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let mut i = self.state.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match i.out.take() {
            Some(Ok(r)) => Poll::Ready(r),
            Some(Err(p)) => {
                drop(i);
                resume_unwind(p)
            }
            None if i.done => panic!("xcall::CallFuture polled after it returned Ready"),
            None => {
                match &i.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => i.waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

impl<R> std::fmt::Debug for CallFuture<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallFuture").field("finished", &self.is_finished()).finish()
    }
}
