//! The segments of a host, as `ephpm stores` lists them: every user's private directory
//! under the shm directory (`userdir.rs`), and in each its store segments and cluster
//! segments, with their owner, size, whether a process maps them, and their entry count.
//!
//! Nothing here opens a store: a segment is mapped only to read its header and its
//! shards' entry counters, no use lock is taken (so listing never makes a segment look
//! in use, nor keeps `rm-store` from removing it), and nothing is created, repaired or
//! replaced. A segment this build cannot read is listed with no entry count.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::ShmError;
use super::constants::SHARD_COUNT;
use super::layout::{SHARDS_OFFSET, ShardHeader};
use super::segment::{self, Mapping};

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
    /// The store name (for a cluster segment, the store it belongs to).
    pub name: String,
    pub kind: Kind,
    /// Bytes of the file.
    pub size: u64,
    /// Whether some process maps it now.
    pub in_use: bool,
    /// Entries, summed over its shards; `None` when this build cannot read the segment.
    pub entries: Option<u64>,
}

/// The segments under `parent` (`ephpm.shm_dir`) of user `uid`, or of every user when
/// `uid` is `None` (root's view: another user's directory is mode 0700).
pub fn list(parent: &Path, uid: Option<u32>) -> Result<Vec<SegmentInfo>, ShmError> {
    let mut out = Vec::new();
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
        list_dir(&dir.path(), &mut out)?;
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

fn list_dir(dir: &Path, out: &mut Vec<SegmentInfo>) -> Result<(), ShmError> {
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
        let file_name = file.file_name().to_string_lossy().into_owned();
        let (name, kind) = match file_name.strip_suffix(".cluster") {
            Some(store) => (store.to_string(), Kind::Cluster),
            None => (file_name, Kind::Store),
        };
        let in_use = match segment::in_use(&path) {
            Ok(u) => u,
            Err(_) if !path.exists() => continue,
            Err(e) => return Err(e),
        };
        out.push(SegmentInfo {
            entries: entries(&path, meta.len()),
            path,
            owner: meta.uid(),
            name,
            kind,
            size: meta.len(),
            in_use,
        });
    }
    Ok(())
}

/// The segment's entry count, read from its shard headers without their locks: a
/// snapshot, each shard's count exact at the moment it is read. `None` when the file is
/// not a segment this build can read.
fn entries(path: &Path, len: u64) -> Option<u64> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    if len < size_of::<super::layout::SegmentHeader>() as u64 {
        return None;
    }
    let mapping = Mapping::map(&file, len).ok()?;
    let g = segment::readable(&mapping, len).ok()?;
    let mut total = 0;
    for i in 0..SHARD_COUNT {
        let offset = SHARDS_OFFSET + i * g.shard_stride as usize;
        // SAFETY: `readable` checked the header's geometry against the file's length, so
        // shard `i`'s header lies inside the mapping; `live` is an aligned u32 that its
        // lock holder may be writing, hence one volatile read (never torn on an aligned
        // word) instead of a reference into memory another process changes.
        let live = unsafe {
            let header = mapping.ptr().add(offset).cast::<ShardHeader>();
            std::ptr::read_volatile(&raw const (*header).live)
        };
        total += u64::from(live);
    }
    Some(total)
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
    fn only_the_private_directory_names_carry_a_user() {
        assert_eq!(user_of_dir("ephpm-1000"), Some(1000));
        assert_eq!(user_of_dir("ephpm-1000-3"), Some(1000));
        assert_eq!(user_of_dir("ephpm-1000-"), None);
        assert_eq!(user_of_dir("ephpm-1000-x"), None);
        assert_eq!(user_of_dir("ephpm.1000.default"), None);
        assert_eq!(user_of_dir("other"), None);
    }
}
