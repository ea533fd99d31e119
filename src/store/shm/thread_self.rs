//! The calling thread's kernel thread id and robust-list head, without a system call.
//!
//! The shard lock (`mutex.rs`) speaks the kernel's robust-futex protocol: its lock word
//! holds the holder's thread id, and while it holds the lock the thread's robust-list
//! head names the lock in `list_op_pending`, so that the kernel marks the word
//! owner-died if the thread dies holding it. glibc registers one head per thread
//! (`set_robust_list`) inside its thread descriptor, and keeps the thread id beside it;
//! both are at fixed offsets from the thread pointer. The offset is learnt once per
//! process from what the kernel reports (`get_robust_list`), and checked against
//! `gettid`, so nothing here assumes a glibc layout it has not seen. Where it cannot be
//! learnt (another architecture, another libc, the calls refused) every call asks the
//! kernel instead: slower, never wrong.

use std::sync::atomic::{AtomicIsize, Ordering};

/// The kernel's `struct robust_list_head` (linux/futex.h).
#[repr(C)]
pub struct RobustListHead {
    /// The circular list of robust locks glibc holds for the thread (glibc's business).
    pub list: *mut libc::c_void,
    /// From a list entry to its lock word: glibc's (and ours, see `mutex.rs`).
    pub futex_offset: libc::c_long,
    /// The entry of the lock being taken, or, for the shard lock, held.
    pub list_op_pending: *mut libc::c_void,
}

/// The calling thread as the robust protocol needs it.
#[derive(Clone, Copy)]
pub struct ThreadSelf {
    /// Its kernel thread id (what a lock word names).
    pub tid: i32,
    /// Its registered robust-list head; null when it has none (then a holder that dies
    /// is found by the waiters' look at its liveness alone).
    pub head: *mut RobustListHead,
}

/// The `futex_offset` glibc registers: its `pthread_mutex_t`'s `__lock` minus
/// `__list.__next` on 64-bit Linux. The shard lock parks that entry of its mutex; a head
/// registered with another offset is not used (the kernel would look at the wrong word).
pub const GLIBC_FUTEX_OFFSET: libc::c_long = -32;
/// Where the thread id sits before the head in glibc's thread descriptor (`tid`,
/// `pid_ununsed`, `robust_prev`, `robust_head`): checked, never trusted (`learn`).
const TID_BEFORE_HEAD: isize = 16;
/// Not learnt yet.
const UNKNOWN: isize = isize::MIN;
/// Learnt to be unusable: ask the kernel every time.
const SLOW: isize = isize::MIN + 1;

/// The head's offset from the thread pointer, for every thread of the process.
static HEAD_OFFSET: AtomicIsize = AtomicIsize::new(UNKNOWN);

/// The calling thread's id and robust head.
#[inline(always)]
pub fn current() -> ThreadSelf {
    let offset = HEAD_OFFSET.load(Ordering::Relaxed);
    if offset < SLOW {
        return learn();
    }
    if offset == SLOW {
        return from_kernel();
    }
    let head = thread_pointer().wrapping_offset(offset);
    // SAFETY: `learn` checked that, in this process, the thread pointer plus `offset` is
    // the kernel's registered head of the thread, with the thread's id TID_BEFORE_HEAD
    // bytes before it; the thread pointer and the descriptor are the calling thread's own
    // and live as long as it does. glibc writes the id at thread start and in a forked
    // child before any of our code runs there.
    let tid = unsafe { head.offset(-TID_BEFORE_HEAD).cast::<i32>().read() };
    ThreadSelf {
        tid,
        head: head.cast(),
    }
}

/// Learns the head's offset on the first call of the process and answers from it.
#[cold]
#[inline(never)]
fn learn() -> ThreadSelf {
    let kernel = from_kernel();
    let tp = thread_pointer();
    let offset = if kernel.head.is_null() || tp.is_null() {
        SLOW
    } else {
        let offset = (kernel.head as isize).wrapping_sub(tp as isize);
        // The head lies in the thread's descriptor, a few hundred bytes past the thread
        // pointer on x86-64; anything far from it is not a layout we know.
        let near = (TID_BEFORE_HEAD..4096).contains(&offset);
        // SAFETY: `near` puts the read inside the calling thread's own descriptor, which
        // the kernel just named.
        let tid_there = near
            && unsafe {
                kernel
                    .head
                    .cast::<u8>()
                    .offset(-TID_BEFORE_HEAD)
                    .cast::<i32>()
                    .read()
            } == kernel.tid;
        if tid_there { offset } else { SLOW }
    };
    HEAD_OFFSET.store(offset, Ordering::Relaxed);
    kernel
}

/// The calling thread's id and head from the kernel: two system calls.
fn from_kernel() -> ThreadSelf {
    let mut head: *mut RobustListHead = std::ptr::null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: pid 0 is the calling thread; both out-pointers are valid locals.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_robust_list,
            0,
            &mut head as *mut *mut RobustListHead,
            &mut len as *mut libc::size_t,
        )
    };
    let registered = rc == 0 && len == size_of::<RobustListHead>() && !head.is_null();
    // SAFETY: a head the kernel reports for the calling thread lies in the thread's live
    // descriptor (only read when there is one).
    if !registered || unsafe { (*head).futex_offset } != GLIBC_FUTEX_OFFSET {
        head = std::ptr::null_mut();
    }
    ThreadSelf {
        // SAFETY: gettid has no preconditions.
        tid: unsafe { libc::gettid() },
        head,
    }
}

/// The thread pointer: on x86-64 the first word of the thread's TCB is the TCB's own
/// address (the ABI's rule, which `%fs:0` reads). Null where it is not known.
#[inline(always)]
fn thread_pointer() -> *mut u8 {
    #[cfg(target_arch = "x86_64")]
    {
        let tp: *mut u8;
        // SAFETY: reads the first word of the calling thread's TCB through %fs, which the
        // x86-64 TLS ABI makes its own address; no memory is written, the stack is not used.
        unsafe {
            std::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp,
                options(nostack, readonly, preserves_flags, pure));
        }
        tp
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::ptr::null_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel_agrees() {
        let fast = current();
        let slow = from_kernel();
        assert_eq!(fast.tid, slow.tid);
        assert_eq!(fast.head, slow.head);
        assert!(!fast.head.is_null());
    }

    #[test]
    fn the_fast_path_names_the_same_thread_as_the_kernel() {
        kernel_agrees();
        assert!(
            HEAD_OFFSET.load(Ordering::Relaxed) > SLOW,
            "learnt a layout"
        );
        let threads: Vec<_> = (0..4).map(|_| std::thread::spawn(kernel_agrees)).collect();
        for t in threads {
            t.join().expect("thread");
        }
    }

    #[test]
    fn a_forked_child_has_its_own_id() {
        kernel_agrees();
        // SAFETY: the child only makes system calls and exits with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            let me = current();
            // SAFETY: as above.
            let ok = me.tid == unsafe { libc::gettid() } && me.head == from_kernel().head;
            // SAFETY: _exit is async-signal-safe; nothing to unwind in the child.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child; valid out-pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}
