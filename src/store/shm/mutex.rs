//! The shard lock: a process-shared, robust pthread mutex that lives inside the segment.
//!
//! Robust means a holder killed at any instruction does not wedge the store: the kernel
//! marks the mutex, and the next locker is told so (`EOWNERDEAD`) and must repair what the
//! dead holder may have left half-done before it marks the mutex consistent again. This
//! module only speaks pthreads; what "repair" means is the shard's business
//! (`Shard::repair`).
//!
//! Robustness is not enough on its own: the kernel only marks mutexes that sit on a dead
//! thread's robust list. A lock word overwritten by a stray write (another program with
//! this user's rights, a bug) names an owner that never held it, and a plain
//! `pthread_mutex_lock` would wait for it forever. So [`lock`] never blocks unbounded:
//! it waits in slices of `SLICE`, and after each one looks at the owner the lock word
//! names. An owner shown to be gone, shown not to map this segment, or ourselves (guards
//! never nest) is not a holder — one whose /proc we may not read (a php-fpm worker, not
//! dumpable) is taken as one (see [`is_holder`]): the mutex is [`recover`]ed — initialised afresh,
//! its waiters woken — under a per-shard recovery lock so that exactly one process does
//! it, and the shard is marked for repair. A live holder that keeps it past `MAX_HOLD`
//! (a stopped process) is an error, never an endless wait.

use std::io;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::ShmError;
use super::futex;
use super::registry;

/// How long one wait for the lock lasts before its owner is looked at. Shard operations
/// take microseconds; a holder still there after this is stopped, dead or not real.
const SLICE: Duration = Duration::from_millis(200);
/// The longest a live holder may keep a shard locked before a waiter gives up with an
/// error: far beyond any operation (a repair of a 2 GiB shard included), short enough
/// that a stopped process shows up as errors, not as a hung pool.
pub const MAX_HOLD: Duration = Duration::from_secs(10);
/// The owner's thread id in a robust mutex's lock word (the kernel's FUTEX_TID_MASK).
const TID_MASK: i32 = 0x3fff_ffff;

/// The segment a mutex lives in, for telling a real holder from a stray lock word.
#[derive(Debug, Clone, Copy)]
pub struct Segment {
    /// The segment file's inode: a real holder maps it.
    pub ino: u64,
    /// This process's descriptor of the segment file (the recovery locks live on it).
    pub fd: std::os::fd::RawFd,
}

/// What `lock` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquired {
    /// The previous holder unlocked normally; the state it guards is consistent.
    Clean,
    /// The previous holder died holding the lock. The caller holds the lock now, must
    /// repair the state it guards, then call [`mark_consistent`] before unlocking.
    OwnerDied,
}

/// What a waiter concluded about the mutex it could not take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stuck {
    /// Its lock word or type was garbage, or its owner was gone: the caller must
    /// initialise it afresh (see [`recover`]) under the shard's recovery lock, if the
    /// word still reads `word` there.
    Broken { word: i32 },
}

/// Initialises a process-shared robust mutex in place.
///
/// # Safety
/// - `m` must point to writable memory, aligned for `pthread_mutex_t`, that no other
///   thread or process uses as a mutex yet (the segment creator holds the creation flock).
pub unsafe fn init(m: *mut libc::pthread_mutex_t) -> Result<(), ShmError> {
    // SAFETY: an all-zero attribute object is a valid argument for pthread_mutexattr_init,
    // which overwrites it.
    let mut attr: libc::pthread_mutexattr_t = unsafe { std::mem::zeroed() };
    // SAFETY: `attr` is a local we own; each call gets a pointer to it; `m` is valid and
    // unused per this function's contract.
    unsafe {
        check(
            libc::pthread_mutexattr_init(&mut attr),
            "pthread_mutexattr_init",
        )?;
        let result = (|| {
            check(
                libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED),
                "pthread_mutexattr_setpshared",
            )?;
            check(
                libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST),
                "pthread_mutexattr_setrobust",
            )?;
            check(libc::pthread_mutex_init(m, &attr), "pthread_mutex_init")
        })();
        libc::pthread_mutexattr_destroy(&mut attr);
        result
    }
}

/// Takes the mutex if it is free and sound: the uncontended case, inlined into every
/// operation (one check of the mutex's type, one trylock, no clock read). `None`: it is
/// busy or looks broken; the caller goes on with [`lock_contended`].
///
/// # Safety
/// - `m` must point to a mutex initialised by [`init`] in a mapping that stays valid
///   until the matching [`unlock`].
/// - The calling thread must not hold it already (it is not recursive).
#[inline(always)]
pub unsafe fn try_lock(m: *mut libc::pthread_mutex_t) -> Option<Acquired> {
    #[cfg(feature = "no-lock-recovery")]
    // SAFETY: forwarded to the caller.
    return match unsafe { libc::pthread_mutex_lock(m) } {
        libc::EOWNERDEAD => Some(Acquired::OwnerDied),
        _ => Some(Acquired::Clean),
    };
    // SAFETY: forwarded to the caller: `m` is a live mutex in the mapping.
    if !unsafe { kind_is_ours(m) } {
        return None;
    }
    // SAFETY: forwarded to the caller.
    match unsafe { libc::pthread_mutex_trylock(m) } {
        0 => Some(Acquired::Clean),
        libc::EOWNERDEAD => Some(Acquired::OwnerDied),
        _ => None,
    }
}

/// Locks the mutex once [`try_lock`] could not: waits in bounded slices, looking at the
/// owner after each, at most `MAX_HOLD` for a live holder. `Err(Ok(Stuck))` when the
/// mutex is broken (see the module doc): the caller recovers it and tries again.
///
/// # Safety
/// As [`try_lock`].
#[cold]
#[inline(never)]
pub unsafe fn lock_contended(
    m: *mut libc::pthread_mutex_t,
    seg: Segment,
    shard: usize,
) -> Result<Acquired, Result<Stuck, ShmError>> {
    let mut start: Option<Instant> = None;
    loop {
        // SAFETY: forwarded to the caller: `m` is a live mutex in the mapping.
        let word = unsafe { lock_word(m) }.load(Ordering::Relaxed);
        // SAFETY: as above.
        if !unsafe { kind_is_ours(m) } {
            return Err(Ok(Stuck::Broken { word }));
        }
        // SAFETY: forwarded to the caller; `deadline` is a valid timespec on our stack.
        match unsafe { libc::pthread_mutex_timedlock(m, &deadline(SLICE)) } {
            0 => return Ok(Acquired::Clean),
            libc::EOWNERDEAD => return Ok(Acquired::OwnerDied),
            libc::ETIMEDOUT => {
                // SAFETY: as above.
                let word = unsafe { lock_word(m) }.load(Ordering::Relaxed);
                let owner = word & TID_MASK;
                if owner == 0 {
                    continue; // released just now
                }
                if !is_holder(owner, seg) {
                    return Err(Ok(Stuck::Broken { word }));
                }
                let waited = start.get_or_insert_with(Instant::now).elapsed() + SLICE;
                if waited >= MAX_HOLD {
                    return Err(Err(ShmError::LockHeld {
                        shard,
                        owner,
                        held_ms: waited.as_millis() as u64,
                    }));
                }
            }
            // ENOTRECOVERABLE (a repairer died before marking it consistent and the mark
            // was lost), EINVAL, EDEADLK, EAGAIN: a mutex in a state only garbage explains.
            _ => return Err(Ok(Stuck::Broken { word })),
        }
    }
}

/// Initialises a broken mutex afresh and wakes everybody waiting on it, if it still
/// reads as the caller saw it (else somebody recovered or took it meanwhile);
/// `before_init` runs first, while nobody can hold the mutex.
///
/// # Safety
/// - `m` points to a mutex of the live mapping, and the caller holds the shard's
///   recovery lock (so no other process recovers it at the same time).
pub unsafe fn recover(
    m: *mut libc::pthread_mutex_t,
    seen: Stuck,
    before_init: impl FnOnce(),
) -> Result<(), ShmError> {
    let Stuck::Broken { word } = seen;
    // SAFETY: forwarded to the caller.
    let now = unsafe { lock_word(m) }.load(Ordering::Relaxed);
    // SAFETY: as above.
    if now != word && unsafe { kind_is_ours(m) } {
        return Ok(()); // taken, released or recovered since: try again normally
    }
    before_init();
    // SAFETY: `m` is writable memory of the mapping, aligned for a mutex; nobody holds it
    // (its owner is gone or never existed) and the recovery lock keeps other recoverers
    // out. Waiters inside pthread_mutex_lock sleep on the lock word and retry when woken.
    unsafe { init(m)? };
    // SAFETY: the lock word is the mutex's first 32-bit field (see `lock_word`).
    futex::wake_all(unsafe { &*lock_word(m).as_ptr().cast::<AtomicU32>() });
    Ok(())
}

/// Whether somebody holds the mutex right now (its lock word names an owner), read
/// without taking it: what `stats()` shows of a shard.
///
/// # Safety
/// `m` points to a live mutex.
pub unsafe fn is_locked(m: *mut libc::pthread_mutex_t) -> bool {
    // SAFETY: forwarded to the caller.
    unsafe { lock_word(m) }.load(Ordering::Relaxed) & TID_MASK != 0
}

/// The mutex's lock word (glibc: `__data.__lock`, its first field; for a robust mutex
/// the owner's tid with the waiters and owner-died bits).
///
/// # Safety
/// `m` points to a live mutex.
unsafe fn lock_word<'a>(m: *mut libc::pthread_mutex_t) -> &'a AtomicI32 {
    // SAFETY: the mutex is at least 4 bytes and 4-aligned; the kernel and glibc access
    // this word atomically, so do we.
    unsafe { &*m.cast::<AtomicI32>() }
}

/// Offset of glibc's `__data.__owner` (the holder's tid, kept beside the lock word).
const OWNER_OFFSET: usize = 8;
/// Offset of glibc's `__data.__kind` (the mutex type and flags) in `pthread_mutex_t`, on
/// 64-bit Linux: after `__lock`, `__count`, `__owner` and `__nusers`.
const KIND_OFFSET: usize = 16;

/// The `__kind` our own `init` writes, read from a mutex made here with the same
/// attributes (0 when that could not be done: the check is then skipped).
fn our_kind() -> i32 {
    static KIND: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *KIND.get_or_init(|| {
        // SAFETY: a zeroed local mutex is writable, aligned and used by nobody else.
        let mut local: libc::pthread_mutex_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { init(&mut local) }.is_err() {
            return 0;
        }
        // SAFETY: KIND_OFFSET + 4 is inside the 40-byte mutex.
        let kind = unsafe {
            (&raw const local)
                .cast::<u8>()
                .add(KIND_OFFSET)
                .cast::<i32>()
                .read()
        };
        // SAFETY: an initialised, unlocked mutex of ours.
        unsafe { libc::pthread_mutex_destroy(&mut local) };
        kind
    })
}

/// Whether the mutex's type is the one `init` makes: a stray write there could make
/// glibc treat it as another kind of mutex (one that no owner check can see through).
///
/// # Safety
/// `m` points to a live mutex.
unsafe fn kind_is_ours(m: *mut libc::pthread_mutex_t) -> bool {
    let ours = our_kind();
    // SAFETY: KIND_OFFSET + 4 is inside the mutex; glibc writes `__kind` only at init, so
    // a relaxed atomic read sees a whole value.
    let kind = unsafe { &*m.cast::<u8>().add(KIND_OFFSET).cast::<AtomicI32>() };
    ours == 0 || kind.load(Ordering::Relaxed) == ours
}

/// Whether thread `tid` may be a real holder. Dead only on evidence: the answer is `false`
/// only when the kernel says so — no such thread (its robust list was walked at its exit,
/// so a mutex it held would read owner-died, not its tid), a maps file we could read
/// that does not map the segment (a holder maps it for as long as it holds), or a
/// process not registered on the segment (`registry.rs`; every process registers before
/// its first lock, and the kernel unregisters it at its exit). Anything else, and above
/// all a maps file we may not read of a registered process, means "may be holding": php-fpm
/// workers switch user without exec and so are not dumpable, and their own user's other
/// processes get EACCES on their /proc files while they live and hold locks. Taking
/// such a holder for dead would make a second holder (and crash the first when it
/// resumes); waiting for it costs at most `MAX_HOLD` and an error.
/// Our own thread never is a holder (guards never nest, so it cannot hold a shard it
/// waits for).
fn is_holder(tid: i32, seg: Segment) -> bool {
    // SAFETY: gettid has no preconditions.
    if tid == unsafe { libc::gettid() } {
        return false;
    }
    if cfg!(feature = "unreadable-is-dead") {
        return maps_inode(tid, seg.ino) == Some(true); // the demonstration: the old rule
    }
    match maps_inode(tid, seg.ino) {
        Some(maps) => maps,
        None => registered(tid, seg) != Some(false),
    }
}

/// Whether the process of thread `tid` is registered on the segment (`registry.rs`):
/// `Some(false)` only on evidence (no such thread, or its process holds no registration),
/// `None` when it cannot be told. `/proc/<tid>/status` is readable by everyone, even for
/// a process whose maps are not.
fn registered(tid: i32, seg: Segment) -> Option<bool> {
    let status = match std::fs::read_to_string(format!("/proc/{tid}/status")) {
        Ok(status) => status,
        Err(e) if gone(&e) => return Some(false),
        Err(_) => return None,
    };
    let tgid = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()?;
    registry::is_registered(seg.fd, tgid).ok()
}

/// Whether a /proc read failed because the thread is gone (ENOENT), or exited between
/// the open and the read (ESRCH).
fn gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH)
}

/// Whether thread `tid` maps inode `ino`: `Some(false)` only on evidence (the thread does
/// not exist, or its maps were read and do not name the inode), `None` when it cannot be
/// told (the maps file is not ours to read).
fn maps_inode(tid: i32, ino: u64) -> Option<bool> {
    // /proc/<tid>/maps works for any thread id, not only a process's first.
    match std::fs::read_to_string(format!("/proc/{tid}/maps")) {
        Ok(maps) => {
            let ino = ino.to_string();
            Some(
                maps.lines()
                    .any(|l| l.split_ascii_whitespace().nth(4) == Some(ino.as_str())),
            )
        }
        Err(e) if gone(&e) => Some(false),
        Err(_) => None,
    }
}

/// An absolute CLOCK_REALTIME deadline `d` from now, as pthread_mutex_timedlock wants.
fn deadline(d: Duration) -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    let nanos = ts.tv_nsec as u64 + d.subsec_nanos() as u64;
    libc::timespec {
        tv_sec: ts.tv_sec + d.as_secs() as libc::time_t + (nanos / 1_000_000_000) as libc::time_t,
        tv_nsec: (nanos % 1_000_000_000) as libc::c_long,
    }
}

/// Declares the state guarded by a mutex taken with `Acquired::OwnerDied` repaired.
///
/// # Safety
/// - The calling thread must hold `m`, acquired with `Acquired::OwnerDied`.
pub unsafe fn mark_consistent(m: *mut libc::pthread_mutex_t) {
    // SAFETY: forwarded to the caller. The only documented error is EINVAL (not robust or
    // not inconsistent), which the contract excludes.
    let rc = unsafe { libc::pthread_mutex_consistent(m) };
    debug_assert_eq!(rc, 0, "pthread_mutex_consistent");
}

/// Unlocks the mutex. A lock word overwritten while we held it (glibc then refuses with
/// EPERM, and the mutex would stay locked in a name nobody answers to) is restored to
/// ours first, so that the unlock, and the robust list it is on, stay right.
///
/// # Safety
/// - The calling thread must hold `m`.
pub unsafe fn unlock(m: *mut libc::pthread_mutex_t) {
    // SAFETY: forwarded to the caller.
    if unsafe { libc::pthread_mutex_unlock(m) } == 0 {
        return;
    }
    // The waiters bit makes the unlock wake anybody who slept on the garbage word.
    const FUTEX_WAITERS: i32 = i32::MIN;
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    // SAFETY: we hold the mutex (contract): nobody else writes its lock word or owner.
    unsafe {
        lock_word(m).store(tid | FUTEX_WAITERS, Ordering::Relaxed);
        m.cast::<u8>().add(OWNER_OFFSET).cast::<i32>().write(tid);
    }
    // SAFETY: as above; if even this fails the shard's lock is broken and the next
    // locker's bounded wait recovers it.
    let _ = unsafe { libc::pthread_mutex_unlock(m) };
}

fn check(rc: i32, what: &'static str) -> Result<(), ShmError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(ShmError::Os(what, io::Error::from_raw_os_error(rc)))
    }
}
