//! Who is at the other end of a unix socket: the kernel's word (SO_PEERCRED), which a
//! process cannot forge. The node serves only processes of its own uid, and a PHP process
//! talks only to a node of its own uid, so another user on the host can neither send the
//! node requests nor pose as the node (and read every write) — even if it found a way to
//! put a socket where the node's should be.

use std::io;
use std::os::fd::AsRawFd;

/// The uid of the process at the other end of the connected unix socket `sock`.
pub fn peer_uid(sock: &impl AsRawFd) -> io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, a local of that size.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred.uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_pair_is_our_own_uid() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        assert_eq!(peer_uid(&a).expect("peer"), crate::store::shm::euid());
    }
}
