//! Where a user's segments live: one private directory of that user, `ephpm-<euid>`.
//!
//! Every process of one Unix user must find the same directory, and no other user may
//! read, redirect or split it. The rule: the user's directory is `<parent>/ephpm-<euid>`,
//! one name and no other. A process uses it when it is a real directory (never a
//! symlink) owned by its uid; creates it (mkdir, mode 0700) when the name is free; and
//! otherwise stops with `DirTaken`, naming the squatter and the fix.
//!
//! Why one name and not a sequence of fallbacks (`ephpm-<euid>-1`, `-2`, … as earlier
//! builds did): with more than one name the choice depends on what each process saw,
//! and another user can change what they see between two processes. A squatter holds
//! the first name while the victim's first process starts (it settles in the second),
//! then removes it; the next process of the victim creates the first: two stores, two
//! holders of one lock. No walk of several names closes that race, because another user
//! can create and remove names at any moment and a walk is not atomic. With one name
//! there is nothing to choose: every process of the user that gets a directory at all
//! gets this one. Why no interleaving splits it:
//! - `mkdir` is atomic, so of the user's processes racing on a free name one creates it
//!   and the others find it owned by their uid;
//! - once the user owns it, nobody but the user or root can remove or rename it: the
//!   parent must be sticky or writable by its owner only (checked, see [`check_parent`]),
//!   and only the user can create files in it (mode 0700);
//! - a name held by somebody else is never used, and nothing else is tried instead.
//!
//! What a squatter can still do is deny the store (the error says so, with its uid): a
//! name in a directory everybody may write can always be taken first. A host with local
//! users it does not trust sets `ephpm.shm_dir` to a directory only root creates entries
//! in, holding `ephpm-<uid>` directories root made for each pool user (docs/how-the-store-works.md, "How the
//! store works").

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::ShmError;

pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The one name of user `uid`'s directory under `parent`.
fn user_dir(parent: &Path, uid: u32) -> PathBuf {
    parent.join(format!("ephpm-{uid}"))
}

/// What the user's name holds, to this user.
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

/// Refuses a parent in which somebody else could rename or remove the user's directory:
/// one that its group or others may write without the sticky bit (`/dev/shm` and `/tmp`
/// have it).
fn check_parent(parent: &Path) -> Result<(), ShmError> {
    let m = std::fs::metadata(parent).map_err(|e| file_error(parent, "stat", e))?;
    let others_write = m.mode() & 0o022 != 0;
    if others_write && m.mode() & libc::S_ISVTX == 0 {
        return Err(ShmError::UnsafeParent {
            path: parent.into(),
            mode: m.mode() & 0o7777,
        });
    }
    Ok(())
}

/// The user's directory under `parent`; created (mode 0700) when `create` and it does not
/// exist yet, else `None` when it does not.
pub fn find(parent: &Path, create: bool) -> Result<Option<PathBuf>, ShmError> {
    let uid = euid();
    let path = user_dir(parent, uid);
    check_parent(parent)?;
    let taken = |owner| ShmError::DirTaken {
        path: path.clone(),
        owner,
    };
    match look(&path, uid)? {
        Found::Ours => Ok(Some(path)),
        Found::Taken { owner } => Err(taken(owner)),
        Found::Absent if !create => Ok(None),
        Found::Absent => match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => Ok(Some(path)),
            // Made meanwhile: by one of ours (then it is ours), or by somebody else.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match look(&path, uid)? {
                Found::Ours => Ok(Some(path)),
                Found::Taken { owner } => Err(taken(owner)),
                // Made and removed again meanwhile: only a squatter does that.
                Found::Absent => Err(file_error(&path, "mkdir", e)),
            },
            Err(e) => Err(file_error(&path, "mkdir", e)),
        },
    }
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
    fn a_symlink_or_a_file_at_the_name_is_refused_and_nothing_else_is_used() {
        let p = parent("skip");
        let uid = euid();
        let target = p.join("elsewhere");
        std::fs::create_dir(&target).expect("mkdir");
        std::os::unix::fs::symlink(&target, user_dir(&p, uid)).expect("symlink");
        assert!(matches!(find(&p, true), Err(ShmError::DirTaken { .. })));
        std::fs::remove_file(user_dir(&p, uid)).expect("rm");
        std::fs::write(user_dir(&p, uid), b"").expect("file");
        assert!(matches!(find(&p, true), Err(ShmError::DirTaken { .. })));
        let names: Vec<_> = std::fs::read_dir(&p).expect("ls").flatten().collect();
        assert_eq!(names.len(), 2, "nothing but the squatter's two entries");
        std::fs::remove_dir_all(&p).expect("cleanup");
    }

    #[test]
    fn a_parent_others_may_write_without_the_sticky_bit_is_refused() {
        let p = parent("parent");
        let open = p.join("open");
        std::fs::create_dir(&open).expect("mkdir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert!(matches!(
            find(&open, true),
            Err(ShmError::UnsafeParent { .. })
        ));
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        assert!(find(&open, true).expect("sticky is fine").is_some());
        std::fs::remove_dir_all(&p).expect("cleanup");
    }

    #[test]
    fn an_opened_up_directory_of_ours_is_made_private_again() {
        let p = parent("mode");
        let d = user_dir(&p, euid());
        std::fs::create_dir(&d).expect("mkdir");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        assert_eq!(find(&p, false).expect("find"), Some(d.clone()));
        let mode = std::fs::metadata(&d).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::remove_dir_all(&p).expect("cleanup");
    }
}
