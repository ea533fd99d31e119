//! A release of an exclusive lock wakes one waiter, not all of them (issue #19), on
//! `redis://`: waiters wait in a line, and a release hands the lock to the first one. A
//! waiter that dies in the line does not wedge the others. With the fault point
//! `broadcast-wakeups` (every release wakes every waiter, as before), the counting test
//! fails.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::child;
use common::no_hang;
use common::redis::RedisServer;
use ephpm::ground::dsn::{self, Dsn};
use ephpm::lock::{Held, Locks};
use ephpm::store::redis::RedisStore;

/// Waiters behind the first holder: a session's 20 requests at once.
const WAITERS: usize = 19;
const LOCK: &[u8] = b"herd";
const TTL: Duration = Duration::from_secs(30);
/// Longer than `no_hang`'s bound: a waiter left asleep shows as a hang.
const WAIT: Duration = Duration::from_secs(120);

fn open(dsn: &str) -> Arc<RedisStore> {
    let Ok(Dsn::Redis(target)) = dsn::parse(dsn) else {
        panic!("not a redis dsn: {dsn}")
    };
    Arc::new(RedisStore::new(target).expect("store"))
}

/// Waiters of `LOCK` that Redis knows of: tickets in its line, or subscribers of its
/// channel (how waiters wait with `broadcast-wakeups`).
fn waiting(dsn: &str) -> usize {
    let client = redis::Client::open(dsn).expect("client");
    let mut con = client.get_connection().expect("connection");
    let queued: usize = redis::cmd("LLEN")
        .arg("{herd}:ephpm:queue")
        .query(&mut con)
        .expect("LLEN");
    let (_, subscribed): (String, usize) = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg("{herd}:ephpm:wake")
        .query(&mut con)
        .expect("NUMSUB");
    queued + subscribed
}

/// Commands the server has run so far (its `total_commands_processed`: the commands
/// inside scripts included).
fn commands(dsn: &str) -> u64 {
    let client = redis::Client::open(dsn).expect("client");
    let mut con = client.get_connection().expect("connection");
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut con)
        .expect("INFO");
    info.lines()
        .find_map(|l| l.strip_prefix("total_commands_processed:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("total_commands_processed")
}

/// Waits (bounded by the caller's `no_hang`) until `n` waiters are waiting.
fn until_waiting(dsn: &str, n: usize) {
    while waiting(dsn) < n {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Starts a waiter with its own store (its own connection and subscriber, as a PHP
/// process has) that takes the lock once, checks nobody else holds it meanwhile, holds
/// it a moment (so that the others are asleep when it releases, as behind a request),
/// and releases it; returns its fence.
fn waiter(dsn: &str, inside: Arc<AtomicBool>) -> (Arc<RedisStore>, std::thread::JoinHandle<u64>) {
    let store = open(dsn);
    let thread = common::take_once(store.clone(), LOCK, TTL, WAIT, inside);
    (store, thread)
}

/// The first holder, which the waiters queue behind.
fn hold(dsn: &str) -> (Locks, Held) {
    let locks = Locks::new(open(dsn));
    let held = locks
        .acquire(LOCK, TTL, Duration::ZERO)
        .expect("acquire")
        .expect("a free lock");
    (locks, held)
}

/// 19 waiters on one lock, each taking it once: each release wakes at most one waiter
/// (wake-ups ≤ releases, where a broadcast wakes every waiter still waiting: about
/// releases × waiters / 2) and costs a few commands, not a few per waiter; every waiter
/// gets the lock exactly once, and none hangs.
#[test]
fn a_release_wakes_one_waiter_not_all() {
    let server = RedisServer::start();
    let dsn = server.unix_dsn("");
    let (woken, slices, releases, commands) = no_hang(move || {
        let (locks, held) = hold(&dsn);
        let inside = Arc::new(AtomicBool::new(false));
        let waiters: Vec<_> = (0..WAITERS).map(|_| waiter(&dsn, inside.clone())).collect();
        until_waiting(&dsn, WAITERS);
        let before = commands(&dsn);
        assert!(locks.release(&held).expect("release"));
        let mut fences = vec![held.fence];
        let mut woken = 0;
        let mut slices = 0;
        for (store, thread) in waiters {
            fences.push(thread.join().expect("a waiter failed"));
            let counts = store.wake_counts();
            woken += counts.woken;
            slices += counts.slices;
        }
        fences.sort_unstable();
        fences.dedup();
        assert_eq!(fences.len(), WAITERS + 1, "one acquisition each");
        let commands = commands(&dsn) - before;
        (woken, slices, WAITERS as u64 + 1, commands)
    });
    eprintln!(
        "{releases} releases woke waiters {woken} times ({slices} slices ran out), \
         {commands} commands"
    );
    assert!(
        woken <= releases,
        "{releases} releases woke waiters {woken} times: a herd"
    );
    // Per release: the release and the woken waiter's acquisition, 11 commands with
    // those their scripts run, and a look of a waiter whose slice ran out now and then
    // (more of those on a loaded machine); a herd adds about three round trips (some 9
    // commands) per waiter: ~220 in all against ~1050.
    assert!(
        commands <= releases * 25,
        "{releases} releases cost {commands} commands: a herd"
    );
}

/// A waiter killed (SIGKILL) while in the line leaves a ticket nobody answers: the
/// release that pops it wakes nobody, and the waiters behind it still get the lock.
#[test]
fn a_waiter_killed_in_the_line_does_not_wedge_the_others() {
    if let Some(dsn) = child::job() {
        let locks = Locks::new(open(&dsn));
        child::ready();
        let _ = locks.acquire(LOCK, TTL, WAIT);
        return;
    }
    let server = RedisServer::start();
    let dsn = server.unix_dsn("");
    no_hang(move || {
        let (locks, held) = hold(&dsn);
        let mut dead = child::spawn(
            "a_waiter_killed_in_the_line_does_not_wedge_the_others",
            &dsn,
        );
        until_waiting(&dsn, 1);
        dead.kill().expect("kill the waiter");
        dead.wait().expect("reap the waiter");
        let inside = Arc::new(AtomicBool::new(false));
        let waiters: Vec<_> = (0..3).map(|_| waiter(&dsn, inside.clone())).collect();
        // The dead waiter's ticket is first in the line (it leaves the count of
        // subscribers with `broadcast-wakeups`, hence 3).
        until_waiting(&dsn, 3);
        assert!(locks.release(&held).expect("release"));
        for (_, thread) in waiters {
            thread.join().expect("a waiter failed");
        }
    });
}
