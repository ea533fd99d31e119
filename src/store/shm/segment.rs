//! The segment file: created, sized, initialised and published safely when several
//! processes start at once; validated and, when it does not match this build or size,
//! replaced by a fresh one. No store logic here: `init` formats the contents.
//!
//! Creation protocol: open (or create, mode 0600) the file, take an exclusive `flock`,
//! make sure the file locked is still the one at the path (a replacer may have unlinked
//! it meanwhile), refuse a file owned by another uid, then either initialise an empty file
//! and publish its header's magic last, or validate the existing header. The flock is
//! released explicitly once the file is mapped: the mapping keeps the open file
//! description alive, so closing the descriptor alone would keep the lock held. The
//! kernel drops it if the process dies.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::ShmError;
use super::constants::{MAX_SEGMENT_SIZE, MIN_SEGMENT_SIZE, SHARD_COUNT};
use super::layout::{LAYOUT_VERSION, MAGIC, SHARDS_OFFSET, SegmentHeader};
use super::shard::Shard;

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

/// A mapping of the whole segment, unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
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

    fn map(file: &File, len: u64) -> Result<Self, ShmError> {
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
        })
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
    /// Why an existing segment was replaced, if it was.
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

pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Why a mapped, existing segment cannot be used as `want`, if it cannot.
fn mismatch(m: &Mapping, file_len: u64, want: Geometry) -> Option<String> {
    let h = m.header();
    if file_len < size_of::<SegmentHeader>() as u64 {
        return Some(format!("it is only {file_len} bytes long"));
    }
    if h.magic.load(Ordering::Acquire) != MAGIC {
        return Some("its initialisation never completed (the creating process died)".into());
    }
    if h.layout_version != LAYOUT_VERSION {
        return Some(format!(
            "it has layout version {}, this build uses {LAYOUT_VERSION}",
            h.layout_version
        ));
    }
    if h.total_size != want.total || file_len != want.total {
        return Some(format!(
            "it is {} bytes, ephpm.shm_size asks for {}",
            h.total_size, want.total
        ));
    }
    if h.shard_count as usize != SHARD_COUNT
        || h.shard_stride != want.shard_stride
        || h.arena_len != want.arena_len as u64
    {
        return Some("its shard geometry differs from this build's".into());
    }
    None
}

/// Opens the segment at `path`, creating or replacing it as needed; `init` formats a
/// fresh one (its header already written, magic not yet published). With `adopt_size`, a
/// sound existing segment is used at whatever size it was made with.
pub fn open(
    path: &Path,
    size: u64,
    adopt_size: bool,
    init: impl Fn(&Mapping, &Geometry) -> Result<(), ShmError>,
) -> Result<Opened, ShmError> {
    let mut geometry = Geometry::for_size(size)?;
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
        flock(&file, libc::LOCK_EX)?;
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
            write_header(&mapping, &geometry);
            init(&mapping, &geometry)?;
            mapping.header().magic.store(MAGIC, Ordering::Release);
            flock(&file, libc::LOCK_UN)?;
            return Ok(Opened {
                mapping,
                geometry,
                warnings,
            });
        }
        let mapping = Mapping::map(&file, meta.len().max(size_of::<SegmentHeader>() as u64))?;
        if adopt_size && meta.len() >= size_of::<SegmentHeader>() as u64 {
            if let Ok(theirs) = Geometry::for_size(mapping.header().total_size) {
                geometry = theirs;
            }
        }
        match mismatch(&mapping, meta.len(), geometry) {
            None => {
                flock(&file, libc::LOCK_UN)?;
                return Ok(Opened {
                    mapping,
                    geometry,
                    warnings,
                });
            }
            Some(why) => {
                warnings.push(format!(
                    "replacing the shared store {} with a fresh, empty one: {why}",
                    path.display()
                ));
                drop(mapping);
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
