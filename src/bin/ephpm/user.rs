//! Users: names for `stores`, and `--user`, which makes root act as that user (its euid
//! and egid) so that the store is found in that user's private directory and passes the
//! same ownership checks its PHP processes pass (`userdir.rs`, `segment.rs`).

use std::ffi::{CStr, CString};

/// A user from the password database.
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// Looks a user up by name, or by number when `who` is one (as `id` and `chown` do).
pub fn lookup(who: &str) -> Option<User> {
    match who.parse::<u32>() {
        Ok(uid) => by_uid(uid),
        Err(_) => {
            let name = CString::new(who).ok()?;
            passwd(|pw, buf, out| {
                // SAFETY: every pointer is valid for the call and `buf` is as long as said.
                unsafe { libc::getpwnam_r(name.as_ptr(), pw, buf.as_mut_ptr(), buf.len(), out) }
            })
        }
    }
}

pub fn by_uid(uid: u32) -> Option<User> {
    passwd(|pw, buf, out| {
        // SAFETY: every pointer is valid for the call and `buf` is as long as said.
        unsafe { libc::getpwuid_r(uid, pw, buf.as_mut_ptr(), buf.len(), out) }
    })
}

/// The user's name, or its number when the password database has none.
pub fn name_of(uid: u32) -> String {
    by_uid(uid).map_or_else(|| uid.to_string(), |u| u.name)
}

fn passwd(
    call: impl Fn(*mut libc::passwd, &mut Vec<libc::c_char>, *mut *mut libc::passwd) -> i32,
) -> Option<User> {
    let mut buf: Vec<libc::c_char> = vec![0; 4096];
    loop {
        // SAFETY: an all-zero passwd is a valid value to be filled in.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut out = std::ptr::null_mut();
        match call(&mut pw, &mut buf, &mut out) {
            libc::ERANGE if buf.len() < 1 << 20 => buf.resize(buf.len() * 2, 0),
            0 if !out.is_null() => {
                // SAFETY: on success pw_name points to a NUL-terminated string in `buf`.
                let name = unsafe { CStr::from_ptr(pw.pw_name) };
                return Some(User {
                    name: name.to_string_lossy().into_owned(),
                    uid: pw.pw_uid,
                    gid: pw.pw_gid,
                });
            }
            _ => return None,
        }
    }
}

/// Becomes `user` for the rest of the process: its group alone as supplementary group,
/// then its gid, then its uid (in that order: once the uid is dropped, the groups can no
/// longer be changed). Real, effective and saved ids all change, so nothing done after
/// can use root's rights.
pub fn become_user(user: &User) -> Result<(), String> {
    let fail = |what: &str| Err(format!("{what}: {}", std::io::Error::last_os_error()));
    // SAFETY: setgroups reads one gid from a valid pointer.
    if unsafe { libc::setgroups(1, &user.gid) } != 0 {
        return fail("setgroups");
    }
    // SAFETY: setresgid/setresuid have no memory preconditions.
    if unsafe { libc::setresgid(user.gid, user.gid, user.gid) } != 0 {
        return fail("setresgid");
    }
    // SAFETY: as above.
    if unsafe { libc::setresuid(user.uid, user.uid, user.uid) } != 0 {
        return fail("setresuid");
    }
    Ok(())
}
