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
//! - A waiter takes a ticket (`mailbox:id`: its process's mailbox channel, see
//!   `wakeups.rs`, and a random id) and puts it at the end of the lock's line, a Redis
//!   list named after the lock (`keys::QUEUE`, in the lock's hash slot), in the same
//!   script that reads the lock's TTL (`scripts::ENQUEUE`): one round trip, and atomic
//!   with the release, so a release either finds the ticket or comes before the look
//!   that sees the lock free.
//! - The release (`scripts::RELEASE`, or the native delete plus
//!   `scripts::HAND_OVER_IF_FREE` in the same pipeline) pops the first ticket and
//!   publishes it on that mailbox: one waiter wakes and races for the lock. The fence
//!   and the compare-and-delete are as before; the key's own channel is still published,
//!   for the waiters that all want to know (MemoLock's "the value is ready",
//!   `wait_for_change`).
//!
//! # What cannot wedge the lock
//! A waiter still sleeps in bounded slices (`wakeups::SLICE`) and never past the lock's
//! TTL, and looks again after each with the same script (which puts its ticket back if
//! it left the line). So:
//! - a ticket whose waiter died or gave up is popped like any other and wakes nobody:
//!   the next release, or the next slice of the others, moves the line on (a waiter
//!   that gives up takes its ticket out first, when Redis answers);
//! - an expired lock (its holder crashed) lets the waiters in at its TTL, as before;
//! - a woken waiter that loses the race to a newcomer queues again (at the end: a line,
//!   not a strict FIFO of acquisitions).
//!
//! Tickets in a line nobody refreshes go with it after `LINE_KEEP`.
//!
//! # Why Pub/Sub and not BLPOP
//! A variant where each waiter blocked in `BLPOP` on a turn key of its own (pipelined
//! with its look, no subscriber at all) was measured and dropped: in bench/session.php
//! its median hand-over was 1.9–3.3 ms against 0.8–1.0 ms for this one, alternated in
//! one session (2026-12-03, see bench/RESULTS.md).

use std::time::{Duration, Instant};

use super::wakeups::{SLICE, WakeCounts};
use super::{RedisStore, Result, keys, millis, scripts};

/// A lock's line lives this long after its last waiter looked at it: waiters refresh it
/// every slice, so only an abandoned line expires.
const LINE_KEEP: Duration = Duration::from_secs(10);

impl RedisStore {
    /// Waits in the line of the lock `name` until a release hands this waiter its turn
    /// or the lock is free (true), or `timeout` passes (false). See the module doc.
    pub(super) fn wait_in_line(&self, name: &[u8], timeout: Duration) -> Result<bool> {
        let deadline = Instant::now() + timeout;
        let full = self.key(name);
        let line = keys::derived(&full, keys::QUEUE);
        let wakeups = self.wakeups()?;
        let ticket = wakeups.ticket(&full, deadline.min(Instant::now() + SLICE));
        loop {
            let ttl: i64 = self.run(|c| {
                scripts::ENQUEUE
                    .key(&full)
                    .key(&line)
                    .arg(ticket.name())
                    .arg(millis(LINE_KEEP))
                    .invoke(&mut c.con)
            })?;
            if ttl == -2 {
                return Ok(true);
            }
            let now = Instant::now();
            let mut until = deadline.min(now + SLICE);
            if ttl >= 0 {
                // Nobody signals an expiry: look again when the holder's TTL runs out.
                until = until.min(now + Duration::from_millis(ttl as u64 + 1));
            }
            if wakeups.wait_for_ticket(&ticket, until) {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                // Leave the line, so that no release hands the lock to nobody. If Redis
                // does not answer, the ticket costs the others one slice.
                let _ = self.run(|c| {
                    redis::cmd("LREM")
                        .arg(&line)
                        .arg(1)
                        .arg(ticket.name())
                        .query::<i64>(&mut c.con)
                });
                return Ok(false);
            }
        }
    }

    /// How often this store's waiters were woken, in this process (for the tests).
    pub fn wake_counts(&self) -> WakeCounts {
        let slot = self.wakeups.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref()
            .map_or(WakeCounts::default(), |(_, w)| w.counts())
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
