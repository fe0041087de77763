//! Sets of CPUs, as libxcall's masks (`cpu_set_t`) and cpulists ("0-3,8").

use crate::error::{check, Error, ErrorKind};
use std::ffi::{CStr, CString};
use std::fmt;

const WORDS: usize = 16;

/// A set of CPU numbers below [`CpuSet::CAPACITY`], laid out as glibc's `cpu_set_t`.
///
/// ```
/// use xcall::CpuSet;
/// let set = CpuSet::parse("0-2,5").unwrap();
/// assert_eq!(set.iter().collect::<Vec<_>>(), [0, 1, 2, 5]);
/// assert_eq!(set.to_string(), "0-2,5");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C)]
pub struct CpuSet {
    bits: [u64; WORDS],
}

// cpu_set_t is this array of words: the casts below rely on it
const _: () = assert!(std::mem::size_of::<CpuSet>() == std::mem::size_of::<libc::cpu_set_t>());
const _: () = assert!(std::mem::align_of::<CpuSet>() >= std::mem::align_of::<libc::cpu_set_t>());

impl CpuSet {
    /// One more than the largest CPU number a set can hold (glibc's `CPU_SETSIZE`).
    pub const CAPACITY: usize = WORDS * 64;

    /// The empty set.
    pub fn new() -> CpuSet {
        CpuSet::default()
    }

    /// The set of the given CPUs.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a CPU number of [`CpuSet::CAPACITY`] or more.
    pub fn from_cpus<I: IntoIterator<Item = usize>>(cpus: I) -> Result<CpuSet, Error> {
        let mut set = CpuSet::new();
        for c in cpus {
            set.insert(c)?;
        }
        Ok(set)
    }

    /// Parse a cpulist such as `"0-3,8,10-15:2"`, as `XCALL_CPUS` takes it.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a malformed or empty list, or a CPU too large.
    pub fn parse(list: &str) -> Result<CpuSet, Error> {
        let c = CString::new(list).map_err(|_| Error::from(ErrorKind::InvalidArgument))?;
        let mut set = CpuSet::new();
        // SAFETY: c is a NUL-terminated string; the set is a cpu_set_t (asserted above).
        check(unsafe { xcall_sys::xc_cpulist_parse(c.as_ptr(), set.as_raw_mut()) })?;
        Ok(set)
    }

    /// The CPUs the calling thread may run on.
    ///
    /// # Errors
    /// [`ErrorKind::Os`] with the errno of `sched_getaffinity`.
    pub fn current_affinity() -> Result<CpuSet, Error> {
        let mut set = CpuSet::new();
        // SAFETY: the set is a cpu_set_t of the size passed (asserted above).
        let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<CpuSet>(), set.as_raw_mut()) };
        if r != 0 {
            return Err(Error::from_errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)));
        }
        Ok(set)
    }

    /// Add a CPU.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a CPU number of [`CpuSet::CAPACITY`] or more.
    pub fn insert(&mut self, cpu: usize) -> Result<(), Error> {
        if cpu >= Self::CAPACITY {
            return Err(Error::from(ErrorKind::InvalidArgument));
        }
        self.bits[cpu / 64] |= 1 << (cpu % 64);
        Ok(())
    }

    /// Remove a CPU (nothing happens if it is not there).
    pub fn remove(&mut self, cpu: usize) {
        if cpu < Self::CAPACITY {
            self.bits[cpu / 64] &= !(1 << (cpu % 64));
        }
    }

    /// Whether the set holds a CPU.
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < Self::CAPACITY && self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// How many CPUs the set holds.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    /// The CPUs, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..Self::CAPACITY).filter(move |&c| self.contains(c))
    }

    pub(crate) fn as_raw(&self) -> *const libc::cpu_set_t {
        (self as *const CpuSet).cast()
    }

    pub(crate) fn as_raw_mut(&mut self) -> *mut libc::cpu_set_t {
        (self as *mut CpuSet).cast()
    }
}

/// The set as a cpulist, `"0-3,8"`; the empty set as `""`.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return Ok(());
        }
        // the longest list: every other CPU, "0,2,4,...", under 5 bytes a CPU
        let mut buf = vec![0u8; Self::CAPACITY * 5];
        // SAFETY: buf has the size passed; the set is a cpu_set_t (asserted above).
        let n = unsafe { xcall_sys::xc_cpulist_format(self.as_raw(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(fmt::Error);
        }
        let s = CStr::from_bytes_until_nul(&buf).map_err(|_| fmt::Error)?;
        f.write_str(&s.to_string_lossy())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({self})")
    }
}
