//! One task's waker, registered by the poller and taken by the target that completes the
//! call, lock-free on both sides (the protocol of the `atomic-waker` crate): a registration
//! that meets a take wakes itself, so no completion goes unseen.
//!
//! Pure Rust, no libxcall: tested with loom (`RUSTFLAGS="--cfg loom" cargo test -p xcall --lib
//! waker`: every interleaving of a registration and a take) and with Miri (data races on the
//! slot).

#[cfg(all(loom, test))]
use loom::sync::atomic::{AtomicU8, Ordering};
#[cfg(not(all(loom, test)))]
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::Waker;

/// A waker slot with its own lock-free state.
pub(crate) struct AtomicWaker {
    state: AtomicU8,
    waker: Slot,
}

/// Nobody is at the slot.
const WAITING: u8 = 0;
/// The poller is writing the slot.
const REGISTERING: u8 = 1;
/// The target is taking from the slot (or came while the poller wrote it).
const WAKING: u8 = 2;

impl AtomicWaker {
    pub(crate) fn new() -> AtomicWaker {
        AtomicWaker { state: AtomicU8::new(WAITING), waker: Slot::new() }
    }

    /// The poller's side (one poller at a time: poll takes `Pin<&mut>`). Acquire: the slot's
    /// last write (a take's) happens before ours; the release back to WAITING publishes ours
    /// to the next take.
    pub(crate) fn register(&self, w: &Waker) {
        match self.state.compare_exchange(WAITING, REGISTERING, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => {
                // SAFETY: REGISTERING: the taker keeps off the slot.
                let old_is_same = unsafe { self.waker.with_mut(|s| s.as_ref().is_some_and(|old| old.will_wake(w))) };
                if !old_is_same {
                    let new = w.clone();
                    // SAFETY: as above.
                    let old = unsafe { self.waker.with_mut(|s| s.replace(new)) };
                    drop(old);
                }
                if self
                    .state
                    .compare_exchange(REGISTERING, WAITING, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    // a take came meanwhile and left it to us: wake now
                    // SAFETY: the state is REGISTERING | WAKING: the taker keeps off the slot
                    // until the swap below.
                    let w = unsafe { self.waker.with_mut(Option::take) };
                    self.state.swap(WAITING, Ordering::AcqRel);
                    if let Some(w) = w {
                        w.wake();
                    }
                }
            }
            // a take under way: it may miss this waker, so wake it ourselves
            Err(_) => w.wake_by_ref(),
        }
    }

    /// The target's side: the waker, if one is registered and not being registered.
    /// Acquire: the registration's write of the slot happens before our read; release: our
    /// take before the next registration.
    pub(crate) fn take(&self) -> Option<Waker> {
        match self.state.fetch_or(WAKING, Ordering::AcqRel) {
            WAITING => {
                // SAFETY: WAKING set from WAITING: the registrar keeps off the slot.
                let w = unsafe { self.waker.with_mut(Option::take) };
                self.state.fetch_and(!WAKING, Ordering::Release);
                w
            }
            _ => None,
        }
    }
}

/// The slot: `std`'s `UnsafeCell`, or loom's, which checks that no two accesses overlap.
struct Slot {
    #[cfg(not(all(loom, test)))]
    cell: std::cell::UnsafeCell<Option<Waker>>,
    #[cfg(all(loom, test))]
    cell: loom::cell::UnsafeCell<Option<Waker>>,
}

impl Slot {
    fn new() -> Slot {
        #[cfg(not(all(loom, test)))]
        let cell = std::cell::UnsafeCell::new(None);
        #[cfg(all(loom, test))]
        let cell = loom::cell::UnsafeCell::new(None);
        Slot { cell }
    }

    /// Run `f` on the slot.
    ///
    /// # Safety
    /// The caller holds the slot by the state's protocol: no other access overlaps.
    unsafe fn with_mut<R>(&self, f: impl FnOnce(&mut Option<Waker>) -> R) -> R {
        #[cfg(not(all(loom, test)))]
        // SAFETY: as the caller promised.
        let r = f(unsafe { &mut *self.cell.get() });
        #[cfg(all(loom, test))]
        // SAFETY: as the caller promised.
        let r = self.cell.with_mut(|p| f(unsafe { &mut *p }));
        r
    }
}

// SAFETY: the slot is touched only by the holder of the state (above); a Waker is Send + Sync.
unsafe impl Sync for AtomicWaker {}

#[cfg(test)]
mod tests {
    use super::AtomicWaker;
    #[cfg(all(loom, test))]
    use loom::{
        sync::atomic::{AtomicBool, AtomicUsize, Ordering},
        sync::Arc,
        thread,
    };
    #[cfg(not(all(loom, test)))]
    use std::{
        sync::atomic::{AtomicBool, AtomicUsize, Ordering},
        sync::Arc,
        thread,
    };
    use std::task::{Wake, Waker};

    /// Counts its wakes.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A poll racing a completion: the target sets done and takes the waker; the poller
    /// registers and then looks at done. Either the poller sees done, or the target woke the
    /// registered waker: the completion is never missed.
    fn poll_races_completion() {
        let count = std::sync::Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let aw = Arc::new(AtomicWaker::new());
        let done = Arc::new(AtomicBool::new(false));
        let (aw2, done2) = (aw.clone(), done.clone());
        let target = thread::spawn(move || {
            done2.store(true, Ordering::Release);
            if let Some(w) = aw2.take() {
                w.wake();
            }
        });
        aw.register(&waker);
        let seen = done.load(Ordering::Acquire);
        target.join().unwrap();
        assert!(seen || count.0.load(Ordering::SeqCst) >= 1, "a completion went unseen");
    }

    #[cfg(all(loom, test))]
    #[test]
    fn a_registration_racing_a_take_is_woken() {
        loom::model(poll_races_completion);
    }

    #[cfg(not(all(loom, test)))]
    #[test]
    fn a_registration_racing_a_take_is_woken() {
        for _ in 0..if cfg!(miri) { 20 } else { 2000 } {
            poll_races_completion();
        }
    }

    #[cfg(not(all(loom, test)))]
    #[test]
    fn registered_then_taken_once() {
        let count = std::sync::Arc::new(Count(AtomicUsize::new(0)));
        let aw = AtomicWaker::new();
        assert!(aw.take().is_none());
        aw.register(&Waker::from(count.clone()));
        aw.register(&Waker::from(count.clone())); // the same task: kept, not cloned again
        aw.take().expect("registered").wake();
        assert!(aw.take().is_none(), "taken once");
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }
}
