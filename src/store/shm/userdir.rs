//! Where a user's segments live: a private directory of that user, found by owner.
//!
//! Every process of one Unix user must find the same directory, and no other user may
//! deny, read or redirect it. `/dev/shm` is world-writable (sticky), so any fixed name in
//! it can be taken first by somebody else. The rendezvous is therefore a *sequence* of
//! names, `ephpm-<euid>`, `ephpm-<euid>-1`, `ephpm-<euid>-2`, …, walked in order: the
//! first entry that is a real directory (never a symlink) owned by the process's uid is
//! the user's directory; entries owned by anybody else are skipped; the first free name
//! is created with mode 0700. Two processes of one user walk the same sequence, so they
//! agree (mkdir is atomic: the loser of a race finds the winner's directory next). A
//! squatter can push the user down the sequence, never into a directory it controls.
//!
//! Once found, the directory cannot be swapped under us: `/dev/shm` is sticky, so only
//! its owner (or root) can rename or remove it, and only its owner can create files in
//! it (mode 0700), which is what keeps the segments, the cluster segment and the node's
//! socket out of other users' reach.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::ShmError;

/// Names tried before giving up: enough that a stray leftover or a casual squat never
/// matters; a user who finds all of them taken is under attack and is told the fix.
const CANDIDATES: u32 = 64;

pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn candidate(parent: &Path, uid: u32, n: u32) -> PathBuf {
    if n == 0 {
        parent.join(format!("ephpm-{uid}"))
    } else {
        parent.join(format!("ephpm-{uid}-{n}"))
    }
}

/// What an entry of the sequence is to this user.
enum Found {
    Ours,
    Absent,
    Taken { owner: u32 },
}

fn look(path: &Path, uid: u32) -> Result<Found, ShmError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_dir() && m.uid() == uid => {
            // Ours but opened up (by us, or an old build): only we may write in it.
            if m.mode() & 0o077 != 0 {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
                    .map_err(|e| file_error(path, "chmod", e))?;
            }
            Ok(Found::Ours)
        }
        Ok(m) => Ok(Found::Taken { owner: m.uid() }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Found::Absent),
        Err(e) => Err(file_error(path, "lstat", e)),
    }
}

/// The user's directory under `parent`; created (mode 0700) when `create` and there is
/// none yet, else `None` when there is none.
pub fn find(parent: &Path, create: bool) -> Result<Option<PathBuf>, ShmError> {
    let uid = euid();
    let mut first_squatter = None;
    for n in 0..CANDIDATES {
        let path = candidate(parent, uid, n);
        match look(&path, uid)? {
            Found::Ours => return Ok(Some(path)),
            Found::Taken { owner } => {
                first_squatter.get_or_insert((path, owner));
            }
            Found::Absent if !create => return Ok(None),
            Found::Absent => match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Some(path)),
                // Somebody made it meanwhile: one of ours (then it is ours), or not.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match look(&path, uid)? {
                    Found::Ours => return Ok(Some(path)),
                    Found::Taken { owner } => {
                        first_squatter.get_or_insert((path, owner));
                    }
                    Found::Absent => {}
                },
                Err(e) => return Err(file_error(&path, "mkdir", e)),
            },
        }
    }
    let (path, owner) = first_squatter.unwrap_or_else(|| (candidate(parent, uid, 0), 0));
    Err(ShmError::DirTaken {
        first: path,
        owner,
        tried: CANDIDATES,
    })
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

    fn parent(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("ephpm-userdir-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("mkdir");
        p
    }

    #[test]
    fn creates_then_finds_the_same_private_directory() {
        let p = parent("same");
        assert_eq!(find(&p, false).expect("find"), None);
        let made = find(&p, true).expect("create").expect("a dir");
        let meta = std::fs::metadata(&made).expect("stat");
        assert_eq!(meta.mode() & 0o777, 0o700);
        assert_eq!(find(&p, true).expect("again"), Some(made.clone()));
        assert_eq!(find(&p, false).expect("find"), Some(made));
        std::fs::remove_dir_all(&p).expect("cleanup");
    }

    #[test]
    fn a_symlink_or_a_file_at_the_first_name_is_skipped() {
        let p = parent("skip");
        let uid = euid();
        let target = p.join("elsewhere");
        std::fs::create_dir(&target).expect("mkdir");
        std::os::unix::fs::symlink(&target, candidate(&p, uid, 0)).expect("symlink");
        std::fs::write(candidate(&p, uid, 1), b"").expect("file");
        let found = find(&p, true).expect("find").expect("a dir");
        assert_eq!(found, candidate(&p, uid, 2));
        std::fs::remove_dir_all(&p).expect("cleanup");
    }

    #[test]
    fn an_opened_up_directory_of_ours_is_made_private_again() {
        let p = parent("mode");
        let d = candidate(&p, euid(), 0);
        std::fs::create_dir(&d).expect("mkdir");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert_eq!(find(&p, false).expect("find"), Some(d.clone()));
        let mode = std::fs::metadata(&d).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::remove_dir_all(&p).expect("cleanup");
    }
}
