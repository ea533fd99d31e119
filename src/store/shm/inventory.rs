//! The segments of a host, as `ephpm stores` lists them: every user's private directory
//! under the shm directory (`userdir.rs`), and in each its store segments and cluster
//! segments, with their owner, size, whether a process maps them, and their entry count.
//!
//! Nothing here opens a store or maps a segment: its header and its shards' entry
//! counters are read with pread(2), because the file's owner may truncate it at any
//! moment, and touching a mapped page past the new end of a file is SIGBUS — root's
//! `ephpm stores` would die of another user's `truncate`. A read past the end is only a
//! short read, shown as a truncated segment. No use lock is taken (so listing never makes
//! a segment look in use, nor keeps `rm-store` from removing it), and nothing is created,
//! repaired or replaced. A segment this build cannot read is listed with no entry count.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::ShmError;
use super::constants::SHARD_COUNT;
use super::layout::{LAYOUT_VERSION, MAGIC, SHARDS_OFFSET, SegmentHeader, ShardHeader};
use super::segment;

/// What a segment file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A host store (`shm://NAME`, `ephpm.store_name`).
    Store,
    /// The cluster node's copy of a store's keys (`NAME.cluster`).
    Cluster,
}

/// One segment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo {
    pub path: PathBuf,
    /// The file's owner: the user whose processes use it.
    pub owner: u32,
    /// The store name (for a cluster segment, the store it belongs to): the file's name
    /// as it is, bytes its owner chose, not necessarily UTF-8.
    pub name: OsString,
    pub kind: Kind,
    /// Bytes of the file.
    pub size: u64,
    /// Whether some process maps it now.
    pub in_use: bool,
    /// How many open files of the segment hold its use lock, as the kernel lists them in
    /// /proc/locks: the processes that map it, a forked child that kept its parent's
    /// open file counting with its parent. `None` when /proc/locks cannot be read.
    pub processes: Option<u64>,
    pub entries: Entries,
}

/// What a segment's shard counters say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entries {
    /// Entries, summed over its shards.
    Counted(u64),
    /// The file is shorter than its header says: it was truncated after it was made.
    Truncated,
    /// Not a segment this build can read.
    Unknown,
}

/// The segments under `parent` (`ephpm.shm_dir`) of user `uid`, or of every user when
/// `uid` is `None` (root's view: another user's directory is mode 0700).
pub fn list(parent: &Path, uid: Option<u32>) -> Result<Vec<SegmentInfo>, ShmError> {
    let mut out = Vec::new();
    let holders = use_lock_holders();
    let dirs = match std::fs::read_dir(parent) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(file_error(parent, "opendir", e)),
    };
    for dir in dirs {
        let dir = dir.map_err(|e| file_error(parent, "readdir", e))?;
        let Some(named) = dir.file_name().to_str().and_then(user_of_dir) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(dir.path()) else {
            continue;
        };
        // Only a real directory owned by the uid in its name is that user's (userdir.rs):
        // anything else at such a name is a squatter's, and holds no store of anybody.
        if !meta.is_dir() || meta.uid() != named || uid.is_some_and(|u| u != named) {
            continue;
        }
        list_dir(&dir.path(), &holders, &mut out)?;
    }
    out.sort_by(|a, b| (a.owner, &a.name, &a.path).cmp(&(b.owner, &b.name, &b.path)));
    Ok(out)
}

/// The uid in a private directory's name: `ephpm-<uid>` or `ephpm-<uid>-<n>`.
fn user_of_dir(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("ephpm-")?;
    let uid = rest.split_once('-').map_or(rest, |(uid, n)| {
        if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() {
            uid
        } else {
            ""
        }
    });
    uid.parse().ok()
}

/// The use locks (`segment::IN_USE_BYTE`, shared) of every file, by (device, inode),
/// from /proc/locks, whose lines read `N: OFDLCK ADVISORY READ -1 MAJ:MIN:INODE 0 0`
/// (major and minor in hex, as the kernel prints them). `None` when it cannot be read.
fn use_lock_holders() -> Option<HashMap<(u64, u64), u64>> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    Some(count_use_locks(&text))
}

fn count_use_locks(text: &str) -> HashMap<(u64, u64), u64> {
    let byte = segment::IN_USE_BYTE.to_string();
    let mut held = HashMap::new();
    for line in text.lines() {
        // A waiter's line starts `N: -> ...`: it holds nothing yet.
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, "OFDLCK", _, "READ", _, file, start, end] = f.as_slice() else {
            continue;
        };
        if *start != byte || *end != byte {
            continue;
        }
        let mut parts = file.split(':');
        let (Some(major), Some(minor), Some(ino), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(major), Ok(minor), Ok(ino)) = (
            u32::from_str_radix(major, 16),
            u32::from_str_radix(minor, 16),
            ino.parse::<u64>(),
        ) else {
            continue;
        };
        *held.entry((libc::makedev(major, minor), ino)).or_insert(0) += 1;
    }
    held
}

fn list_dir(
    dir: &Path,
    holders: &Option<HashMap<(u64, u64), u64>>,
    out: &mut Vec<SegmentInfo>,
) -> Result<(), ShmError> {
    let files = std::fs::read_dir(dir).map_err(|e| file_error(dir, "opendir", e))?;
    for file in files {
        let file = file.map_err(|e| file_error(dir, "readdir", e))?;
        let path = file.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue; // removed meanwhile
        };
        // The node's socket (NAME.cluster.sock) and anything else not a plain file.
        if !meta.file_type().is_file() || meta.file_type().is_socket() {
            continue;
        }
        let file_name = file.file_name();
        let (name, kind) = match file_name.as_bytes().strip_suffix(b".cluster") {
            Some(store) => (OsStr::from_bytes(store).to_owned(), Kind::Cluster),
            None => (file_name, Kind::Store),
        };
        let in_use = match segment::in_use(&path) {
            Ok(u) => u,
            Err(_) if !path.exists() => continue,
            Err(e) => return Err(e),
        };
        out.push(SegmentInfo {
            entries: entries(&path),
            path,
            owner: meta.uid(),
            name,
            kind,
            size: meta.len(),
            in_use,
            processes: holders
                .as_ref()
                .map(|h| h.get(&(meta.dev(), meta.ino())).copied().unwrap_or(0)),
        });
    }
    Ok(())
}

/// The segment's entry count, read from its shard headers without their locks: a
/// snapshot, each shard's count as it was when it was read.
fn entries(path: &Path) -> Entries {
    let Some(file) = open_regular(path) else {
        return Entries::Unknown;
    };
    let Some(header) = read_header(&file) else {
        return Entries::Unknown;
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return Entries::Unknown;
    };
    if header.magic.load(Ordering::Relaxed) == MAGIC
        && header.layout_version == LAYOUT_VERSION
        && len < header.total_size
    {
        return Entries::Truncated;
    }
    let Ok(g) = segment::readable(&header, len) else {
        return Entries::Unknown;
    };
    let mut total = 0;
    for i in 0..SHARD_COUNT {
        let at = SHARDS_OFFSET as u64 + i as u64 * g.shard_stride + LIVE_AT;
        match read_counter(&file, at) {
            Some(live) => total += u64::from(live),
            // It shrank after the header was read.
            None => return Entries::Truncated,
        }
    }
    Entries::Counted(total)
}

/// Where a shard header's entry count is, from the header's start.
const LIVE_AT: u64 = std::mem::offset_of!(ShardHeader, live) as u64;

/// The file at `path` for reading, if it is still a regular file. Read-only is enough
/// for pread; O_NONBLOCK keeps a FIFO put there meanwhile from blocking the open.
fn open_regular(path: &Path) -> Option<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// A copy of the segment's header, or `None` when the file is shorter than one.
fn read_header(file: &File) -> Option<SegmentHeader> {
    let mut bytes = [0u8; size_of::<SegmentHeader>()];
    file.read_exact_at(&mut bytes, 0).ok()?;
    // SAFETY: `bytes` holds size_of::<SegmentHeader>() initialised bytes, and a
    // SegmentHeader (layout.rs: repr(C), integers and one AtomicU64, no padding at 48
    // bytes) is valid for every bit pattern; read_unaligned needs no alignment.
    Some(unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<SegmentHeader>()) })
}

/// The u32 counter at `at`, or `None` past the end of the file. Its lock holder may be
/// writing it while the kernel copies it, which may tear it: it is read until two reads
/// agree (a few tries; a figure for a person, so the last read is kept after that).
fn read_counter(file: &File, at: u64) -> Option<u32> {
    let read = || {
        let mut word = [0u8; 4];
        file.read_exact_at(&mut word, at).ok()?;
        Some(u32::from_ne_bytes(word))
    };
    let mut last = read()?;
    for _ in 0..3 {
        let again = read()?;
        if again == last {
            break;
        }
        last = again;
    }
    Some(last)
}

fn file_error(path: &Path, what: &'static str, source: io::Error) -> ShmError {
    ShmError::File {
        path: PathBuf::from(path),
        what,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_locks_are_counted_per_file_from_proc_locks() {
        let text = "1: OFDLCK ADVISORY  READ -1 00:1b:11376 1099511631838 1099511631838\n\
                    2: OFDLCK ADVISORY  READ -1 00:1b:11376 0 0\n\
                    3: OFDLCK ADVISORY  READ -1 00:1b:11376 0 0\n\
                    4: OFDLCK ADVISORY  WRITE -1 00:1b:99 0 0\n\
                    5: FLOCK  ADVISORY  READ 32507 fe:00:10135920 0 EOF\n\
                    5: -> OFDLCK ADVISORY  READ -1 00:1b:11376 0 0\n";
        let held = count_use_locks(text);
        assert_eq!(held.get(&(libc::makedev(0, 0x1b), 11376)), Some(&2));
        assert_eq!(held.len(), 1);
    }

    #[test]
    fn only_the_private_directory_names_carry_a_user() {
        assert_eq!(user_of_dir("ephpm-1000"), Some(1000));
        assert_eq!(user_of_dir("ephpm-1000-3"), Some(1000));
        assert_eq!(user_of_dir("ephpm-1000-"), None);
        assert_eq!(user_of_dir("ephpm-1000-x"), None);
        assert_eq!(user_of_dir("ephpm.1000.default"), None);
        assert_eq!(user_of_dir("other"), None);
    }
}
