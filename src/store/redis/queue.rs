//! Waiters of an exclusive lock wait in line, and a release wakes one of them: no
//! thundering herd. No PHP here.
//!
//! # Why a line
//! Before, every waiter subscribed to the lock's channel and every release woke them
//! all; each then looked at the lock, raced for it and subscribed again (about three
//! round trips), and all but one lost. With 19 sessions waiting that is some 57 round
//! trips per release for one winner.
//!
//! # How
//! - A waiter names a **turn key** of its own (`keys::TURN` and a random id, in the
//!   lock's hash slot) and sends, in one pipeline on its own connection: a script that
//!   puts the turn key at the end of the lock's **line** (a list, `keys::QUEUE`) while
//!   the lock is held (`scripts::ENQUEUE`), and `BLPOP` on the turn key for one slice.
//!   One round trip, and the waiter sleeps in Redis itself: no subscriber, no hop through
//!   the background runtime, and nothing to set up in a process that waits once.
//! - The release (`scripts::RELEASE`, or the native delete plus
//!   `scripts::HAND_OVER_IF_FREE` in the same pipeline) pops the first turn key and
//!   pushes to it: that waiter's BLPOP returns, and it races for the lock. The fence and
//!   the compare-and-delete are as before; the key's own channel is still published, for
//!   the waiters that all want to know (MemoLock's "the value is ready",
//!   `wait_for_change`).
//! - No wake-up is lost: the look and the queueing are one script, atomic with the
//!   release, and a turn pushed while the waiter is between two BLPOPs waits in its key.
//!   A look that finds the lock free pushes the waiter's turn itself.
//!
//! # What cannot wedge the lock
//! A waiter blocks one slice (`SLICE`) at most, and looks again (the same pipeline,
//! which puts its turn key back in line if it left it). So:
//! - a turn key whose waiter died is popped like any other and wakes nobody: the others
//!   look again within a slice and find the lock free;
//! - an expired lock (its holder crashed) lets the waiters in within a slice;
//! - a waiter that gives up leaves the line, and passes on a turn it was handed
//!   meanwhile (`scripts::LEAVE`);
//! - a woken waiter that loses the race to a newcomer queues again (at the end: a line,
//!   not a strict FIFO of acquisitions).
//!
//! Lines and turn keys nobody refreshes expire (`LINE_KEEP`, 10 s in the scripts).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::wakeups::SLICE;
use super::{RedisStore, Result, keys, millis, scripts};

/// A lock's line lives this long after its last waiter looked at it: waiters refresh it
/// every slice, so only an abandoned line expires.
const LINE_KEEP: Duration = Duration::from_secs(10);
/// BLPOP's timeout is in seconds, and 0 means "for ever": never less than this.
const SHORTEST_BLOCK: Duration = Duration::from_millis(1);

/// How this process's waiters of one store were woken.
#[derive(Default)]
pub struct Turns {
    woken: AtomicU64,
    slices: AtomicU64,
}

/// How often waiters of one store were woken, in this process, for the tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WakeCounts {
    /// Waits that a wake-up ended: a turn handed over in a line (one waiter per
    /// release), or a message on the key's channel (every waiter of the key).
    pub woken: u64,
    /// Slices that passed without one, after which the waiter looked again.
    pub slices: u64,
}

impl RedisStore {
    /// Waits in the line of the lock `name` until a release hands this waiter its turn
    /// or the lock is free (true), or `timeout` passes (false). See the module doc.
    pub(super) fn wait_in_line(&self, name: &[u8], timeout: Duration) -> Result<bool> {
        let deadline = Instant::now() + timeout;
        let full = self.key(name);
        let line = keys::derived(&full, keys::QUEUE);
        let mut turn = keys::derived(&full, keys::TURN);
        turn.extend_from_slice(&crate::lock::new_token());
        loop {
            let block = deadline
                .saturating_duration_since(Instant::now())
                .min(SLICE)
                .max(SHORTEST_BLOCK);
            let (held, popped): (i64, Option<(Vec<u8>, Vec<u8>)>) = self.run(|c| {
                // BLPOP answers after `block`: the socket waits that long on top.
                c.con.set_read_timeout(Some(block + self.dsn.timeout))?;
                let answer = redis::pipe()
                    .cmd("EVAL")
                    .arg(scripts::ENQUEUE)
                    .arg(3)
                    .arg(&full)
                    .arg(&line)
                    .arg(&turn)
                    .arg(millis(LINE_KEEP))
                    .cmd("BLPOP")
                    .arg(&turn)
                    .arg(block.as_secs_f64())
                    .query(&mut c.con);
                c.con.set_read_timeout(Some(self.dsn.timeout))?;
                answer
            })?;
            if popped.is_some() {
                if held == 1 {
                    // Not the turn the look pushed itself: a release's.
                    self.turns.woken.fetch_add(1, Ordering::Relaxed);
                }
                return Ok(true);
            }
            self.turns.slices.fetch_add(1, Ordering::Relaxed);
            if Instant::now() >= deadline {
                // If Redis does not answer, the turn key costs the others one slice.
                let _ = self.run(|c| {
                    scripts::LEAVE
                        .key(&full)
                        .key(&line)
                        .key(&turn)
                        .invoke::<i64>(&mut c.con)
                });
                return Ok(false);
            }
        }
    }

    /// How often this store's waiters were woken, in this process (for the tests).
    pub fn wake_counts(&self) -> WakeCounts {
        let mut counts = WakeCounts {
            woken: self.turns.woken.load(Ordering::Relaxed),
            slices: self.turns.slices.load(Ordering::Relaxed),
        };
        let slot = self.wakeups.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, w)) = slot.as_ref() {
            counts.woken += w.woken.load(Ordering::Relaxed);
            counts.slices += w.slices.load(Ordering::Relaxed);
        }
        counts
    }
}

/// The hand-over after a native compare-and-delete of `full` (see
/// `scripts::HAND_OVER_IF_FREE`), for the same pipeline.
pub(super) fn hand_over_if_free(full: &[u8], line: &[u8]) -> redis::Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(scripts::HAND_OVER_IF_FREE.as_str())
        .arg(2)
        .arg(full)
        .arg(line);
    cmd
}
