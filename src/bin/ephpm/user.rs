//! Users: names for `stores`, and `--user`, which makes root act as that user (its euid
//! and egid) so that the store is found in that user's private directory and passes the
//! same ownership checks its PHP processes pass (`userdir.rs`, `segment.rs`). The
//! password database is read, and the ids changed, by nix.

use nix::unistd::{Gid, Uid, setgroups, setresgid, setresuid};

/// A user from the password database.
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl From<nix::unistd::User> for User {
    fn from(u: nix::unistd::User) -> Self {
        User {
            name: u.name,
            uid: u.uid.as_raw(),
            gid: u.gid.as_raw(),
        }
    }
}

/// Looks a user up by name, or by number when `who` is one (as `id` and `chown` do).
pub fn lookup(who: &str) -> Option<User> {
    match who.parse::<u32>() {
        Ok(uid) => by_uid(uid),
        Err(_) => nix::unistd::User::from_name(who)
            .ok()
            .flatten()
            .map(User::from),
    }
}

pub fn by_uid(uid: u32) -> Option<User> {
    nix::unistd::User::from_uid(Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(User::from)
}

/// The user's name, or its number when the password database has none.
pub fn name_of(uid: u32) -> String {
    by_uid(uid).map_or_else(|| uid.to_string(), |u| u.name)
}

/// Becomes `user` for the rest of the process: its group alone as supplementary group,
/// then its gid, then its uid (in that order: once the uid is dropped, the groups can no
/// longer be changed). Real, effective and saved ids all change, so nothing done after
/// can use root's rights.
pub fn become_user(user: &User) -> Result<(), String> {
    let (uid, gid) = (Uid::from_raw(user.uid), Gid::from_raw(user.gid));
    setgroups(&[gid]).map_err(|e| format!("setgroups: {e}"))?;
    setresgid(gid, gid, gid).map_err(|e| format!("setresgid: {e}"))?;
    setresuid(uid, uid, uid).map_err(|e| format!("setresuid: {e}"))
}
