//! The segment file: created, sized, initialised and published safely when several
//! processes start at once; adopted as it is when it is sound; set aside only when it is
//! unreadable *and* nobody maps it. No store logic here: `init` formats the contents.
//!
//! Creation protocol: open (or create, mode 0600) the file, take an exclusive `flock`,
//! make sure the file locked is still the one at the path (a replacer may have unlinked
//! it meanwhile), refuse a file owned by another uid, then either initialise an empty file
//! and publish its header's magic last, or validate the existing header. The flock is
//! released explicitly once the file is mapped: the mapping keeps the open file
//! description alive, so closing the descriptor alone would keep the lock held. The
//! kernel drops it if the process dies.
//!
//! "In use" is a shared open-file-description lock (`F_OFD_SETLK`, `F_RDLCK`) on the
//! file's first byte, taken by every process for as long as it maps the segment (a forked
//! child shares its parent's) and dropped by the kernel when the process ends. A process
//! that would set a segment aside first tries a write lock on that byte: if anybody holds
//! the read lock, the segment is in use and is never unlinked or re-created — two
//! segments under one name would be two lock holders. OFD locks and `flock` do not
//! interact on Linux, so the creation lock and the use lock are independent.
//!
//! A segment made with another `ephpm.shm_size` (another php.ini, another pool) is sound:
//! it is adopted at the size it was made with, and the caller is told both sizes.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::ShmError;
use super::constants::{MAX_SEGMENT_SIZE, MIN_SEGMENT_SIZE, SHARD_COUNT};
use super::layout::{EVENTS_OFFSET, Events, LAYOUT_VERSION, MAGIC, SHARDS_OFFSET, SegmentHeader};
use super::mutex::{MAX_HOLD, Segment};
use super::ofd;
use super::shard::Shard;
use super::userdir::euid;

/// Where each part of a segment of a given size lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub total: u64,
    pub shard_stride: u64,
    pub arena_len: u32,
}

impl Geometry {
    pub fn for_size(total: u64) -> Result<Self, ShmError> {
        if !(MIN_SEGMENT_SIZE..=MAX_SEGMENT_SIZE).contains(&total) {
            return Err(ShmError::BadSize(total));
        }
        let stride = ((total - SHARDS_OFFSET as u64) / SHARD_COUNT as u64) / 4096 * 4096;
        let arena = (stride - Shard::header_bytes() as u64) / 16 * 16;
        Ok(Geometry {
            total,
            shard_stride: stride,
            arena_len: arena.min(u32::MAX as u64 & !15) as u32,
        })
    }
}

/// A mapping of the whole segment, unmapped on drop. It keeps the file open, which keeps
/// this process's use lock on it (see the module doc) until the mapping goes.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
    file: File,
}

// SAFETY: the mapping is plain shared memory; every access to its contents goes through
// the shard mutexes or atomics (see shard.rs, wait.rs).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn header(&self) -> &SegmentHeader {
        // SAFETY: the mapping is at least MIN_SEGMENT_SIZE bytes and page-aligned, so a
        // SegmentHeader fits at its start; its fields are immutable after publication
        // except `magic`, an atomic.
        unsafe { &*self.ptr.cast::<SegmentHeader>() }
    }

    pub(super) fn map(file: &File, len: u64) -> Result<Self, ShmError> {
        // SAFETY: a fresh shared mapping of `len` bytes of an open file; the kernel picks
        // the address, so no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(ShmError::Os("mmap", io::Error::last_os_error()));
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len: len as usize,
            file: file.try_clone().map_err(|e| ShmError::Os("dup", e))?,
        })
    }

    /// What the shard locks need to know of the segment file (see `mutex.rs`).
    pub fn segment(&self) -> Segment {
        Segment {
            ino: self.file.metadata().map(|m| m.ino()).unwrap_or(0),
            fd: self.file.as_raw_fd(),
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned, and nothing of ours uses the
        // mapping any more (the owning store is being dropped).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The result of opening a segment.
pub struct Opened {
    pub mapping: Mapping,
    pub geometry: Geometry,
    /// Why an existing segment was set aside, or adopted at another size.
    pub warnings: Vec<String>,
}

fn flock(file: &File, op: libc::c_int) -> Result<(), ShmError> {
    loop {
        // SAFETY: flock on a file descriptor we own; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(ShmError::Os("flock", e));
        }
    }
}

/// Takes the creation flock, waiting at most `MAX_HOLD`: its holder checks or makes the
/// segment in milliseconds (a 2 GiB fallocate included), so one that keeps it longer is
/// stopped (SIGSTOP, a debugger) and the opener fails with an error naming the file,
/// rather than hang as a blocking flock would for as long as the holder stays stopped.
/// A dead holder's flock is gone with it. Polled, not blocked on: the lock is only ever
/// contended while processes start together, for the microseconds of a header check.
fn flock_exclusive(file: &File, path: &Path) -> Result<(), ShmError> {
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_micros(500);
    loop {
        match flock(file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => return Ok(()),
            Err(ShmError::Os(_, e)) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        if start.elapsed() >= MAX_HOLD {
            return Err(ShmError::CreationHeld { path: path.into() });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(20));
    }
}

/// The geometry an existing segment was made with, from its header (mapped, or a copy
/// read with pread: `inventory.rs`), or why this build cannot read it.
pub(super) fn readable(h: &SegmentHeader, file_len: u64) -> Result<Geometry, String> {
    if file_len < size_of::<SegmentHeader>() as u64 {
        return Err(format!("it is only {file_len} bytes long"));
    }
    if h.magic.load(Ordering::Acquire) != MAGIC {
        return Err("its initialisation never completed (the creating process died)".into());
    }
    if h.layout_version != LAYOUT_VERSION {
        return Err(format!(
            "it has layout version {}, this build uses {LAYOUT_VERSION}",
            h.layout_version
        ));
    }
    let theirs = Geometry::for_size(h.total_size)
        .map_err(|_| format!("its header gives an impossible size ({})", h.total_size))?;
    if file_len != theirs.total {
        return Err(format!(
            "its header says {} bytes, the file is {file_len}",
            theirs.total
        ));
    }
    if h.shard_count as usize != SHARD_COUNT
        || h.shard_stride != theirs.shard_stride
        || h.arena_len != theirs.arena_len as u64
    {
        return Err("its shard geometry differs from this build's".into());
    }
    Ok(theirs)
}

/// The byte every mapping process holds a read lock on (see the module doc).
pub(super) const IN_USE_BYTE: u64 = 0;

/// Marks this process as a user of the segment for as long as `file` stays open.
fn hold_use_lock(file: &File) -> Result<(), ShmError> {
    ofd::lock(file, libc::F_RDLCK, IN_USE_BYTE, true)
        .map(|_| ())
        .map_err(|e| ShmError::Os("fcntl(F_OFD_SETLKW)", e))
}

/// Whether any process (this one included, through another open) maps the segment.
pub(super) fn in_use(path: &Path) -> Result<bool, ShmError> {
    let probe = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| file_error(path, "open", e))?;
    let free = ofd::lock(&probe, libc::F_WRLCK, IN_USE_BYTE, false)
        .map_err(|e| ShmError::Os("fcntl(F_OFD_SETLK)", e))?;
    // Closing the probe drops its lock, if it got one.
    Ok(!free)
}

/// Removes the segment at `path` if no process maps it: the operator's way to resize or
/// reset a store. Returns whether there was one.
pub fn remove_unused(path: &Path) -> Result<bool, ShmError> {
    let file = match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(file_error(path, "open", e)),
    };
    flock_exclusive(&file, path)?;
    if in_use(path)? {
        return Err(ShmError::InUse { path: path.into() });
    }
    std::fs::remove_file(path).map_err(|e| file_error(path, "unlink", e))?;
    Ok(true)
}

/// Opens the segment at `path`, creating it as needed; `init` formats a fresh one (its
/// header already written, magic not yet published). A sound existing segment is used
/// at whatever size it was made with; when that differs from `size` a warning says so,
/// unless `adopt_size` says the caller expects it (the cluster segment).
pub fn open(
    path: &Path,
    size: u64,
    adopt_size: bool,
    init: impl Fn(&Mapping, &Geometry) -> Result<(), ShmError>,
) -> Result<Opened, ShmError> {
    let wanted = Geometry::for_size(size)?;
    let mut warnings = Vec::new();
    for _attempt in 0..8 {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| file_error(path, "open", e))?;
        flock_exclusive(&file, path)?;
        let meta = file.metadata().map_err(|e| file_error(path, "fstat", e))?;
        match std::fs::symlink_metadata(path) {
            Ok(now) if now.ino() == meta.ino() && now.dev() == meta.dev() => {}
            _ => continue, // replaced while we waited for the lock: start over
        }
        if meta.uid() != euid() {
            return Err(ShmError::ForeignOwner {
                path: path.into(),
                owner: meta.uid(),
                uid: euid(),
            });
        }
        if meta.mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| file_error(path, "chmod", e))?;
        }
        if meta.len() == 0 {
            reserve(&file, path, size)?;
            let mapping = Mapping::map(&file, size)?;
            write_header(&mapping, &wanted);
            init(&mapping, &wanted)?;
            mapping.header().magic.store(MAGIC, Ordering::Release);
            hold_use_lock(&file)?;
            flock(&file, libc::LOCK_UN)?;
            return Ok(Opened {
                mapping,
                geometry: wanted,
                warnings,
            });
        }
        let mapping = Mapping::map(&file, meta.len().max(size_of::<SegmentHeader>() as u64))?;
        match readable(mapping.header(), meta.len()) {
            Ok(theirs) => {
                if theirs.total != wanted.total && !adopt_size {
                    warnings.push(format!(
                        "ephpm.shm_size asks for {} bytes, but the shared store {} in use \
                         was made with {} bytes: using it at {} bytes (to resize it, stop \
                         every process that uses it and call ephpm_store_remove())",
                        wanted.total,
                        path.display(),
                        theirs.total,
                        theirs.total
                    ));
                }
                let mapping = if theirs.total as usize == mapping.len {
                    mapping
                } else {
                    Mapping::map(&file, theirs.total)?
                };
                hold_use_lock(&file)?;
                flock(&file, libc::LOCK_UN)?;
                return Ok(Opened {
                    mapping,
                    geometry: theirs,
                    warnings,
                });
            }
            Err(why) => {
                drop(mapping);
                if in_use(path)? {
                    return Err(ShmError::Unreadable {
                        path: path.into(),
                        why,
                    });
                }
                warnings.push(format!(
                    "replacing the shared store {} with a fresh, empty one: {why} (and no \
                     process uses it)",
                    path.display()
                ));
                std::fs::remove_file(path).map_err(|e| file_error(path, "unlink", e))?;
                // Waiters for the lock find the path gone or new, and start over.
                flock(&file, libc::LOCK_UN)?;
            }
        }
    }
    Err(ShmError::Os(
        "open (the segment kept being replaced)",
        io::Error::from(io::ErrorKind::WouldBlock),
    ))
}

/// Reserves the file's memory now, so that a full /dev/shm is an error here rather than
/// a SIGBUS on some later write.
fn reserve(file: &File, path: &Path, size: u64) -> Result<(), ShmError> {
    // SAFETY: posix_fallocate on a file descriptor we own; no memory is involved.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, size as libc::off_t) };
    if rc != 0 {
        let _ = std::fs::remove_file(path);
        return Err(ShmError::NoSpace {
            path: path.into(),
            size,
            source: io::Error::from_raw_os_error(rc),
        });
    }
    Ok(())
}

fn write_header(m: &Mapping, g: &Geometry) {
    // SAFETY: the mapping is fresh and zero-filled and we hold the creation flock, so no
    // other process reads the header until `magic` is published.
    let h = unsafe { &mut *m.ptr().cast::<SegmentHeader>() };
    h.layout_version = LAYOUT_VERSION;
    h.shard_count = SHARD_COUNT as u32;
    h.total_size = g.total;
    h.generation = generation_seed();
    h.shard_stride = g.shard_stride;
    h.arena_len = g.arena_len as u64;
    // SAFETY: `Events` lies at EVENTS_OFFSET inside the header page of the fresh mapping
    // (layout.rs asserts it fits before the wait table); as above, nobody else reads it yet.
    let events = unsafe { &mut *m.ptr().add(EVENTS_OFFSET).cast::<Events>() };
    events.created_unix = crate::ground::wall::since_epoch().as_secs();
}

/// A value that differs between two creations of the same segment.
pub fn generation_seed() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u64;
    xxhash_rust::xxh3::xxh3_64(
        &[ts.tv_sec as u64, ts.tv_nsec as u64, pid]
            .map(u64::to_ne_bytes)
            .concat(),
    )
}

fn file_error(path: &Path, what: &'static str, source: io::Error) -> ShmError {
    ShmError::File {
        path: PathBuf::from(path),
        what,
        source,
    }
}
