//! The shard lock: a futex word inside the segment, in the kernel's robust-futex protocol.
//!
//! The lock word is the first word of a process-shared robust `pthread_mutex_t` (glibc's
//! `__lock`), and it is taken the way glibc takes such a mutex, without calling glibc:
//! 0 when free, else the holder's kernel thread id, with `WAITERS` set once somebody
//! sleeps on it and `OWNER_DIED` set by the kernel. An uncontended acquire is one
//! compare-and-swap, a release one more; a builds that still locks through
//! `pthread_mutex_lock` (an older ephpm.so in the same pool during an upgrade) excludes
//! and is excluded by this one, because both speak the same word.
//!
//! A holder killed at any instruction does not wedge the store: while it holds the lock,
//! its thread's robust-list head (`thread_self.rs`) names the lock in
//! `list_op_pending`, set before the compare-and-swap and cleared after the release,
//! so the kernel, at the thread's death, finds the word holding the dead thread's id
//! and marks it `OWNER_DIED`. The next locker takes it and is told (`Acquired::OwnerDied`):
//! it must repair what the dead holder may have left half-done (`Shard::repair`). Guards
//! never nest, so one pending slot is all a thread needs; glibc's own robust list is never
//! touched (our locks are not on it).
//!
//! The kernel only marks words it is told about. A lock word overwritten by a stray write
//! (another program with this user's rights, a bug) names an owner that never held it,
//! and a plain futex wait would wait for it forever. So [`lock_contended`] never blocks
//! unbounded: it waits in slices of `SLICE`, and after each full one looks at the owner
//! the lock word names. An owner shown to be gone, shown not to map this segment, or
//! ourselves (guards never nest) is not a holder — one whose /proc we may not read (a
//! php-fpm worker, not dumpable) is taken as one (see [`is_holder`]): the mutex is
//! [`recover`]ed — initialised afresh, its waiters woken — under a per-shard recovery
//! lock so that exactly one process does it, and the shard is marked for repair. A live
//! holder that keeps it past `MAX_HOLD` (a stopped process) is an error, never an
//! endless wait.

use std::io;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::ShmError;
use super::futex;
use super::registry;
use super::thread_self::{self, ThreadSelf};

/// How long one wait for the lock lasts before its owner is looked at. Shard operations
/// take microseconds; a holder still there after this is stopped, dead or not real.
const SLICE: Duration = Duration::from_millis(200);
/// The longest a live holder may keep a shard locked before a waiter gives up with an
/// error: far beyond any operation (a repair of a 2 GiB shard included), short enough
/// that a stopped process shows up as errors, not as a hung pool.
pub const MAX_HOLD: Duration = Duration::from_secs(10);
/// The lock word's bits (linux/futex.h): the owner's thread id, somebody sleeps on the
/// word, the owner died holding it (set by the kernel).
const TID_MASK: u32 = 0x3fff_ffff;
const WAITERS: u32 = 0x8000_0000;
const OWNER_DIED: u32 = 0x4000_0000;

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
    /// The previous holder died holding the lock. The caller holds the lock now and must
    /// repair the state it guards before unlocking.
    OwnerDied,
}

/// What a waiter concluded about the mutex it could not take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stuck {
    /// Its lock word or type was garbage, or its owner was gone: the caller must
    /// initialise it afresh (see [`recover`]) under the shard's recovery lock, if the
    /// word still reads `word` there.
    Broken { word: u32 },
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

/// Takes the mutex if it is free: the uncontended case, inlined into every operation
/// (one compare-and-swap, no system call, no clock read). `None`: it is busy; the caller
/// goes on with [`lock_contended`].
///
/// # Safety
/// - `m` must point to a mutex initialised by [`init`] in a mapping that stays valid
///   until the matching [`unlock`].
/// - The calling thread must hold no shard lock (guards never nest).
#[inline(always)]
pub unsafe fn try_lock(m: *mut libc::pthread_mutex_t) -> Option<Acquired> {
    // SAFETY: forwarded to the caller.
    unsafe { claim(m, thread_self::current(), 0) }
}

/// One attempt to take the word: free (0) or left by a dead owner (`OWNER_DIED`, no
/// owner). `also` is `WAITERS` for a locker that has slept on the word: others may still
/// sleep there, so its release must wake one.
///
/// # Safety
/// As [`try_lock`].
#[inline(always)]
unsafe fn claim(m: *mut libc::pthread_mutex_t, me: ThreadSelf, also: u32) -> Option<Acquired> {
    // SAFETY: forwarded to the caller.
    let word = unsafe { lock_word(m) };
    // Parked before the word can name us: a death from here on is the kernel's to mark.
    // SAFETY: `me.head` is this thread's registered head or null.
    unsafe { park(me, m) };
    // AcqRel: acquires what the last holder wrote, and keeps the parking before it.
    let seen =
        match word.compare_exchange(0, me.tid as u32 | also, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => {
                // SAFETY: we hold `m` now.
                unsafe { set_owner(m, me.tid) };
                return Some(Acquired::Clean);
            }
            Err(seen) => seen,
        };
    if seen & TID_MASK == 0 && seen & OWNER_DIED != 0 {
        let mine = me.tid as u32 | (seen & WAITERS) | also;
        if word
            .compare_exchange(seen, mine, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            // SAFETY: we hold `m` now.
            unsafe { set_owner(m, me.tid) };
            return Some(Acquired::OwnerDied);
        }
    }
    // SAFETY: as above.
    unsafe { park(me, std::ptr::null_mut()) };
    None
}

/// Locks the mutex once [`try_lock`] could not: sleeps on the word in bounded slices,
/// looking at the owner after each full one, at most `MAX_HOLD` for a live holder.
/// `Err(Ok(Stuck))` when the mutex is broken (see the module doc): the caller recovers
/// it and tries again.
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
    let me = thread_self::current();
    // SAFETY: forwarded to the caller.
    let word = unsafe { lock_word(m) };
    let mut also = 0;
    let mut start: Option<Instant> = None;
    loop {
        // SAFETY: forwarded to the caller.
        if let Some(acquired) = unsafe { claim(m, me, also) } {
            return Ok(acquired);
        }
        let seen = word.load(Ordering::Relaxed);
        if seen == 0 || seen & (TID_MASK | OWNER_DIED) == OWNER_DIED {
            continue; // released, or its owner died, just now
        }
        let recovers = !crate::fault::on("no-lock-recovery");
        // No owner but bits nobody writes alone, or a type glibc would misread (an
        // older build in the pool locks through glibc): garbage.
        // SAFETY: as above.
        if recovers && (seen & TID_MASK == 0 || !unsafe { kind_is_ours(m) }) {
            return Err(Ok(Stuck::Broken { word: seen }));
        }
        if seen & WAITERS == 0
            && word
                .compare_exchange(seen, seen | WAITERS, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            continue;
        }
        also = WAITERS;
        if !futex::wait(word, seen | WAITERS, SLICE) || !recovers {
            continue; // woken, or the word moved: try again
        }
        // A whole slice without a release: look at the holder.
        let now = word.load(Ordering::Relaxed);
        let owner = (now & TID_MASK) as i32;
        if owner == 0 {
            continue;
        }
        if !is_holder(owner, seg) {
            return Err(Ok(Stuck::Broken { word: now }));
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
    // out. Waiters sleep on the lock word and try again when woken.
    unsafe { init(m)? };
    // SAFETY: forwarded to the caller.
    futex::wake_all(unsafe { lock_word(m) });
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

/// The mutex's lock word (glibc: `__data.__lock`, its first field).
///
/// # Safety
/// `m` points to a live mutex.
unsafe fn lock_word<'a>(m: *mut libc::pthread_mutex_t) -> &'a AtomicU32 {
    // SAFETY: the mutex is at least 4 bytes and 4-aligned; the kernel and every locker
    // access this word atomically, so do we.
    unsafe { &*m.cast::<AtomicU32>() }
}

/// Names `m` (or nothing, for null) as the lock this thread takes or holds, where the
/// kernel looks at the thread's death (see the module doc).
///
/// # Safety
/// `m` is null or a live mutex; `me` is the calling thread (`thread_self::current`).
#[inline(always)]
unsafe fn park(me: ThreadSelf, m: *mut libc::pthread_mutex_t) {
    if me.head.is_null() {
        return;
    }
    let entry = if m.is_null() {
        std::ptr::null_mut()
    } else {
        m.cast::<u8>().wrapping_add(LIST_NEXT_OFFSET).cast()
    };
    // SAFETY: `me.head` is the calling thread's registered robust head, which lives as
    // long as the thread; only this thread and the kernel (at its death) use the slot,
    // and glibc only uses it inside its own robust-mutex calls, which never run while we
    // hold a shard lock.
    unsafe { AtomicPtr::from_ptr(&raw mut (*me.head).list_op_pending) }
        .store(entry, Ordering::Relaxed);
}

/// Writes glibc's `__owner` as glibc's own lock does, so that a build locking through
/// glibc finds the mutex consistent after us.
///
/// # Safety
/// The calling thread holds `m`.
#[inline(always)]
unsafe fn set_owner(m: *mut libc::pthread_mutex_t, tid: i32) {
    // SAFETY: OWNER_OFFSET + 4 is inside the mutex and 4-aligned; only the holder writes it.
    unsafe { AtomicU32::from_ptr(m.cast::<u8>().add(OWNER_OFFSET).cast()) }
        .store(tid as u32, Ordering::Relaxed);
}

/// The robust-list entry we park: the kernel finds the lock word `futex_offset` bytes
/// from it, and glibc registers every thread's head with `__lock` − `__list.__next`, so
/// the entry is the mutex's `__list.__next` (`thread_self` uses no head registered
/// otherwise).
const LIST_NEXT_OFFSET: usize = -thread_self::GLIBC_FUTEX_OFFSET as usize;
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
    if crate::fault::on("unreadable-is-dead") {
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

/// Unlocks the mutex: one compare-and-swap, and a wake when somebody sleeps on the word.
/// A word that no longer names us (overwritten, or recovered while we were stopped and
/// now another's) is left as it is — never released in another's name — and its
/// sleepers are woken to look at it.
///
/// # Safety
/// - The calling thread took `m` with [`try_lock`] or [`lock_contended`] and has not
///   unlocked it since.
#[inline(always)]
pub unsafe fn unlock(m: *mut libc::pthread_mutex_t) {
    let me = thread_self::current();
    // SAFETY: forwarded to the caller.
    let word = unsafe { lock_word(m) };
    // SAFETY: we hold `m`; 0 is what glibc leaves there when nobody holds the mutex.
    unsafe { set_owner(m, 0) };
    // AcqRel: publishes the guarded state, and keeps the unparking below after it.
    let was = match word.compare_exchange(me.tid as u32, 0, Ordering::AcqRel, Ordering::Relaxed) {
        Ok(was) => was,
        Err(seen) if seen & TID_MASK == me.tid as u32 => word.swap(0, Ordering::AcqRel),
        Err(_) => {
            futex::wake_all(word);
            0
        }
    };
    // SAFETY: `me` is the calling thread.
    unsafe { park(me, std::ptr::null_mut()) };
    if was & WAITERS != 0 {
        futex::wake_one(word);
    }
}

fn check(rc: i32, what: &'static str) -> Result<(), ShmError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(ShmError::Os(what, io::Error::from_raw_os_error(rc)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A mutex in a shared mapping of a file, as a shard's is: a waiter's look at the
    /// holder finds the file's inode in the holder's maps.
    struct Mapped {
        file: std::fs::File,
        m: *mut libc::pthread_mutex_t,
    }

    // SAFETY: the mapping is shared memory that outlives every thread of a test; the
    // mutex in it is what the threads synchronise on.
    unsafe impl Send for Mapped {}
    // SAFETY: as above.
    unsafe impl Sync for Mapped {}

    impl Mapped {
        fn new(name: &str) -> Self {
            let path =
                std::env::temp_dir().join(format!("ephpm-mutex-{name}-{}", std::process::id()));
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .expect("file");
            let _ = std::fs::remove_file(&path);
            file.set_len(4096).expect("size");
            // SAFETY: a fresh shared mapping of a 4096-byte file we own.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            assert_ne!(p, libc::MAP_FAILED);
            let m = p.cast::<libc::pthread_mutex_t>();
            // SAFETY: zero-filled, aligned, used by nobody yet.
            unsafe { init(m) }.expect("init");
            Mapped { file, m }
        }

        fn seg(&self) -> Segment {
            use std::os::unix::fs::MetadataExt;
            Segment {
                ino: self.file.metadata().expect("stat").ino(),
                fd: self.file.as_raw_fd(),
            }
        }

        fn lock(&self) -> Result<Acquired, Result<Stuck, ShmError>> {
            // SAFETY: a live mutex of ours; the tests never nest locks.
            match unsafe { try_lock(self.m) } {
                Some(a) => Ok(a),
                // SAFETY: as above.
                None => unsafe { lock_contended(self.m, self.seg(), 0) },
            }
        }

        fn raw(&self) -> *mut libc::pthread_mutex_t {
            self.m
        }

        fn word(&self) -> u32 {
            // SAFETY: a live mutex.
            unsafe { lock_word(self.m) }.load(Ordering::Relaxed)
        }
    }

    #[test]
    fn a_holder_that_dies_is_marked_by_the_kernel_and_the_next_locker_told() {
        let mapped = Mapped::new("died");
        std::thread::scope(|s| {
            // Joined, not only ended: the kernel looks at a thread's robust head as the
            // thread exits, after its closure has returned.
            let holder = s.spawn(|| assert_eq!(mapped.lock().expect("lock"), Acquired::Clean));
            holder.join().expect("holder");
        });
        // The thread ended holding it: the kernel found it parked and marked the word.
        assert_eq!(mapped.word() & (TID_MASK | OWNER_DIED), OWNER_DIED);
        assert_eq!(mapped.lock().expect("lock"), Acquired::OwnerDied);
        // SAFETY: we hold it.
        unsafe { unlock(mapped.m) };
        assert_eq!(mapped.lock().expect("lock"), Acquired::Clean);
        // SAFETY: we hold it.
        unsafe { unlock(mapped.m) };
        assert_eq!(mapped.word(), 0);
    }

    #[test]
    fn a_stray_word_naming_nobody_is_found_broken() {
        let mapped = Mapped::new("stray");
        // A thread id that no longer exists: a child that has been reaped.
        // SAFETY: the child exits at once.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: async-signal-safe exit of the child.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: our own child; valid out-pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        // SAFETY: a live mutex nobody holds.
        unsafe { lock_word(mapped.m) }.store(pid as u32, Ordering::Relaxed);
        match mapped.lock() {
            Err(Ok(Stuck::Broken { word })) => assert_eq!(word & TID_MASK, pid as u32),
            other => panic!("expected Broken, got {other:?}"),
        }
        // A word with a waiters bit and no owner is nobody's either.
        // SAFETY: as above.
        unsafe { lock_word(mapped.m) }.store(WAITERS, Ordering::Relaxed);
        assert!(matches!(mapped.lock(), Err(Ok(Stuck::Broken { .. }))));
    }

    #[test]
    fn glibcs_locker_and_ours_exclude_each_other() {
        const ROUNDS: u64 = 20_000;
        let mapped = Mapped::new("mixed");
        let counter = std::cell::UnsafeCell::new(0u64);
        struct Shared<'a>(&'a std::cell::UnsafeCell<u64>);
        // SAFETY: only touched under the mutex.
        unsafe impl Sync for Shared<'_> {}
        let shared = Shared(&counter);
        let bump = |shared: &Shared<'_>| {
            // SAFETY: we hold the mutex; a read and a write apart, as a lost update needs.
            unsafe {
                let v = std::ptr::read_volatile(shared.0.get());
                std::hint::spin_loop();
                std::ptr::write_volatile(shared.0.get(), v + 1);
            }
        };
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    // SAFETY: the robust mutex `init` made, as an older build locks it.
                    assert_eq!(unsafe { libc::pthread_mutex_lock(mapped.raw()) }, 0);
                    bump(&shared);
                    // SAFETY: held by this thread.
                    assert_eq!(unsafe { libc::pthread_mutex_unlock(mapped.raw()) }, 0);
                }
            });
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    assert_eq!(mapped.lock().expect("lock"), Acquired::Clean);
                    bump(&shared);
                    // SAFETY: held by this thread.
                    unsafe { unlock(mapped.raw()) };
                }
            });
        });
        assert_eq!(counter.into_inner(), 2 * ROUNDS);
        assert_eq!(mapped.word(), 0);
    }
}
