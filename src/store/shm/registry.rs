//! Which processes may hold the segment's shard locks: each registers before it takes
//! one, and the kernel unregisters it when it exits. This is the evidence of death that
//! `mutex::is_holder` asks for when it may not read a holder's `/proc/<tid>/maps` (a
//! php-fpm worker is not dumpable; neither is pid 1 of a container): a thread whose
//! process is not registered cannot hold a lock of the segment.
//!
//! A registration is a shared OFD lock on the byte `REGISTRY_BASE + pid` of the segment
//! file, taken through a descriptor of the process's own (not the mapping's, which a
//! forked child shares). A forked child inherits its parent's registration; before its
//! first lock it registers its own pid and closes the inherited descriptor
//! (`ShmStore::registered`), so the parent's exit still shows. Shared, not exclusive:
//! a child of a dead process that kept its inherited descriptor would otherwise keep a
//! later process with the same pid from registering (the byte stays held, which only
//! ever makes a dead holder look alive: waited for, never stolen from a live one).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::RawFd;

use super::ShmError;
use super::ofd;

/// The registry's first byte: far past the end of any segment (locks past the end of a
/// file are allowed and take no space); pids are below 2^22.
const REGISTRY_BASE: u64 = 1 << 40;

/// This process's registration on one segment: held while this value lives.
#[derive(Debug)]
pub struct Registration {
    _file: File,
}

/// Registers this process (`std::process::id()`) on the segment this process maps as
/// `fd`: reopened through `/proc/self/fd`, a new open file description of the very file
/// mapped (not whatever the path names by now), as the recovery locks are.
pub fn register(fd: RawFd) -> Result<Registration, ShmError> {
    let path = format!("/proc/self/fd/{fd}");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| ShmError::Os("reopen the segment (to register)", e))?;
    ofd::lock(&file, libc::F_RDLCK, byte_of(std::process::id()), true)
        .map_err(|e| ShmError::Os("fcntl(F_OFD_SETLKW)", e))?;
    Ok(Registration { _file: file })
}

/// Whether process `pid` is registered on the segment open as `fd`; an error when the
/// kernel could not be asked.
pub fn is_registered(fd: RawFd, pid: u32) -> io::Result<bool> {
    ofd::held_by_others(fd, byte_of(pid))
}

fn byte_of(pid: u32) -> u64 {
    REGISTRY_BASE + u64::from(pid)
}
