//! The borrow flag of one (`Sharded`, CPU) pair: set while a closure holds the CPU's `&mut T`.
//!
//! Pure Rust, no libxcall: a try-lock that never waits. Calls to a CPU run on its one worker
//! thread, so the only way to meet the flag set is to come back into that thread from a
//! closure that holds it (a call run inline, or served while the closure waits): the second
//! access is refused, it does not wait, and the first goes on. The flag is atomic all the
//! same, with acquire and release, because the thread of a CPU can change (an attached CPU's
//! thread across detach and attach; an instance dropped on the dropping thread): the next
//! holder sees everything the last one wrote. Tested with loom
//! (`RUSTFLAGS="--cfg loom" cargo test -p xcall --lib borrow`).

#[cfg(all(loom, test))]
use loom::sync::atomic::{AtomicBool, Ordering};
#[cfg(not(all(loom, test)))]
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a closure holds the instance now.
#[derive(Debug)]
pub(crate) struct BorrowFlag {
    held: AtomicBool,
}

/// A held borrow; dropping it (also in an unwind) clears the flag.
#[derive(Debug)]
pub(crate) struct Borrow<'a> {
    flag: &'a BorrowFlag,
}

impl BorrowFlag {
    pub(crate) fn new() -> BorrowFlag {
        BorrowFlag { held: AtomicBool::new(false) }
    }

    /// The borrow, or `None` while another holds it. Acquire: the holder sees what the last
    /// one wrote before its release.
    pub(crate) fn try_borrow(&self) -> Option<Borrow<'_>> {
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| Borrow { flag: self })
    }

    /// Whether a borrow is held now (a snapshot).
    #[allow(dead_code)]
    pub(crate) fn is_borrowed(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }
}

impl Drop for Borrow<'_> {
    fn drop(&mut self) {
        self.flag.held.store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::BorrowFlag;

    #[test]
    fn nested_borrow_is_refused_until_the_first_ends() {
        let f = BorrowFlag::new();
        let b = f.try_borrow().expect("free");
        assert!(f.is_borrowed());
        assert!(f.try_borrow().is_none(), "a nested borrow on the same thread");
        drop(b);
        assert!(!f.is_borrowed());
        assert!(f.try_borrow().is_some());
    }

    #[test]
    fn an_unwind_releases_it() {
        let f = BorrowFlag::new();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _b = f.try_borrow().unwrap();
            panic!("in the closure");
        }));
        assert!(r.is_err());
        assert!(f.try_borrow().is_some());
    }
}

/// Every interleaving of the flag's users, as loom explores them: at most one holder at a
/// time (loom's `UnsafeCell` fails on two overlapping accesses), and each holder sees the
/// last holder's writes (it fails on an access not ordered after the previous one: with
/// `Relaxed` in place of acquire and release these fail).
#[cfg(all(test, loom))]
mod loom_tests {
    use super::BorrowFlag;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::thread;

    struct Shard {
        flag: BorrowFlag,
        value: UnsafeCell<u64>,
    }

    // SAFETY: value is touched only under the flag, which is what the test checks.
    unsafe impl Sync for Shard {}

    fn bump(s: &Shard) -> bool {
        match s.flag.try_borrow() {
            Some(_b) => {
                // SAFETY: the borrow is held.
                s.value.with_mut(|v| unsafe { *v += 1 });
                true
            }
            None => false,
        }
    }

    #[test]
    fn one_holder_at_a_time_and_writes_handed_over() {
        loom::model(|| {
            let s = Arc::new(Shard { flag: BorrowFlag::new(), value: UnsafeCell::new(0) });
            let s2 = s.clone();
            let t = thread::spawn(move || bump(&s2));
            let mine = bump(&s);
            let theirs = t.join().unwrap();
            let _b = s.flag.try_borrow().expect("both borrows have ended");
            // SAFETY: the borrow is held.
            let v = s.value.with(|v| unsafe { *v });
            assert_eq!(v, u64::from(mine) + u64::from(theirs));
        });
    }

    #[test]
    fn a_thread_change_sees_the_last_holder() {
        // an attached CPU's thread after a detach and attach: the handover is the flag's
        // release and acquire, nothing else orders the two threads here
        loom::model(|| {
            let s = Arc::new(Shard { flag: BorrowFlag::new(), value: UnsafeCell::new(0) });
            let s2 = s.clone();
            let t = thread::spawn(move || {
                for _ in 0..2 {
                    bump(&s2);
                }
            });
            let seen = match s.flag.try_borrow() {
                // SAFETY: the borrow is held.
                Some(_b) => s.value.with(|v| unsafe { *v }),
                None => u64::MAX,
            };
            t.join().unwrap();
            assert!(seen <= 2 || seen == u64::MAX);
        });
    }

    #[test]
    fn nested_is_refused_on_one_thread() {
        loom::model(|| {
            let f = BorrowFlag::new();
            let b = f.try_borrow().unwrap();
            assert!(f.try_borrow().is_none());
            drop(b);
            assert!(f.try_borrow().is_some());
        });
    }
}
