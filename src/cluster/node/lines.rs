//! The lines of waiters of the exclusive locks this node owns: a release hands the lock
//! to the first waiter still waiting, not to all of them (issue #19; the Redis twin is
//! `store/redis/queue.rs`). In memory only: a line is as old as its waiters' requests,
//! and a waiter whose request ends (it gave up, its node or process died) leaves it.
//! Locking: one std mutex around the map, held for a push or a pop, never across an
//! await; callers hold the key's stripe lock, which orders these with the decisions.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use tokio::sync::oneshot;

#[derive(Default)]
pub(super) struct Lines {
    lines: Mutex<HashMap<Vec<u8>, VecDeque<oneshot::Sender<()>>>>,
}

impl Lines {
    /// Puts a waiter at the end of `key`'s line; the receiver fires on its turn.
    pub(super) fn join(&self, key: &[u8]) -> oneshot::Receiver<()> {
        let (turn, wait) = oneshot::channel();
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.entry(key.to_vec()).or_default().push_back(turn);
        wait
    }

    /// Wakes the first waiter of `key` that is still waiting; returns whether there was
    /// one. A waiter that left (its receiver dropped) is skipped, so it costs nobody a
    /// wait.
    pub(super) fn hand_over(&self, key: &[u8]) -> bool {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let Some(line) = lines.get_mut(key) else {
            return false;
        };
        let mut woke = false;
        while let Some(turn) = line.pop_front() {
            if turn.send(()).is_ok() {
                woke = true;
                break;
            }
        }
        if line.is_empty() {
            lines.remove(key);
        }
        woke
    }

    /// Drops the places of `key`'s waiters that left (a waiter that gave up calls it).
    pub(super) fn forget_gone(&self, key: &[u8]) {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(line) = lines.get_mut(key) {
            line.retain(|turn| !turn.is_closed());
            if line.is_empty() {
                lines.remove(key);
            }
        }
    }
}
