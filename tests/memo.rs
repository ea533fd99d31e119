//! make_once: one maker among racing callers, waiters served what it made, a failed
//! maker leaves no lock, a lock held too long times the others out.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Duration;

use common::*;
use ephpm::lock::{Held, Locks};
use ephpm::memo::{Maker, Outcome, Plan, Step, make_once};

/// A cache in a mutex, and a count of how often the thing was made.
struct Shared {
    cache: Mutex<Option<String>>,
    makes: AtomicUsize,
}

struct Caller<'a> {
    shared: &'a Shared,
    fail: bool,
}

impl Maker<String> for Caller<'_> {
    fn find(&mut self) -> Step<String> {
        match self.shared.cache.lock().unwrap().clone() {
            Some(v) => Step::Got(v),
            None => Step::Missing,
        }
    }
    fn make(&mut self, _held: &Held) -> Step<String> {
        self.shared.makes.fetch_add(1, Ordering::SeqCst);
        if self.fail {
            return Step::Failed;
        }
        std::thread::sleep(Duration::from_millis(50));
        *self.shared.cache.lock().unwrap() = Some("made".into());
        Step::Got("made".into())
    }
}

const PLAN: Plan = Plan {
    find_first: true,
    find_after_winning: true,
    find_after_waiting: true,
};

fn locks() -> (Guard, Locks) {
    let (g, s) = any_store();
    (g, Locks::new(s))
}

/// 16 threads at once: the thing is made exactly once and every caller gets it.
#[test]
fn racing_callers_make_the_thing_once() {
    let (_d, locks) = locks();
    let shared = Shared {
        cache: Mutex::new(None),
        makes: AtomicUsize::new(0),
    };
    let barrier = Barrier::new(16);
    std::thread::scope(|t| {
        for _ in 0..16 {
            let (locks, shared, barrier) = (&locks, &shared, &barrier);
            t.spawn(move || {
                barrier.wait();
                let out = make_once(
                    locks,
                    b"thing",
                    Duration::from_secs(10),
                    Duration::from_secs(10),
                    PLAN,
                    &mut Caller {
                        shared,
                        fail: false,
                    },
                );
                assert_eq!(out, Outcome::Done("made".to_string()));
            });
        }
    });
    assert_eq!(shared.makes.load(Ordering::SeqCst), 1);
}

/// One make_once on "t" that does not wait.
fn attempt(locks: &Locks, shared: &Shared, fail: bool) -> Outcome<String> {
    make_once(
        locks,
        b"t",
        Duration::from_secs(30),
        Duration::ZERO,
        PLAN,
        &mut Caller { shared, fail },
    )
}

/// A maker that fails releases the lock: the next caller makes the thing at once.
#[test]
fn a_failed_maker_leaves_no_lock() {
    let (_d, locks) = locks();
    let shared = Shared {
        cache: Mutex::new(None),
        makes: AtomicUsize::new(0),
    };
    assert_eq!(attempt(&locks, &shared, true), Outcome::Failed);
    assert_eq!(
        attempt(&locks, &shared, false),
        Outcome::Done("made".into())
    );
}

/// With the lock held elsewhere past the wait, nothing is made and the caller times out.
#[test]
fn a_lock_held_past_the_wait_times_out() {
    let (_d, locks) = locks();
    let _held = locks
        .acquire(b"busy", Duration::from_secs(30), Duration::ZERO)
        .unwrap()
        .unwrap();
    let shared = Shared {
        cache: Mutex::new(None),
        makes: AtomicUsize::new(0),
    };
    let out = make_once(
        &locks,
        b"busy",
        Duration::from_secs(30),
        Duration::from_millis(50),
        PLAN,
        &mut Caller {
            shared: &shared,
            fail: false,
        },
    );
    assert_eq!(out, Outcome::TimedOut);
    assert_eq!(shared.makes.load(Ordering::SeqCst), 0);
}

/// The store counts, for the operator, the callers that waited for the lock, the ones
/// whose wait ran out, and the ones that found what another made (stampedes avoided).
#[test]
fn waits_timeouts_and_stampedes_avoided_are_counted_in_the_store() {
    let (_d, s) = any_store();
    let locks = Locks::new(s.clone());
    let before = s.stats().unwrap();
    let shared = Shared {
        cache: Mutex::new(None),
        makes: AtomicUsize::new(0),
    };
    let barrier = Barrier::new(8);
    std::thread::scope(|t| {
        for _ in 0..8 {
            let (locks, shared, barrier, s) = (&locks, &shared, &barrier, &s);
            t.spawn(move || {
                // Each caller's connection open before the race: on a TLS cluster a new
                // one costs a handshake per node, time enough for the first caller to
                // finish before the others ask.
                s.exists(b"warm").unwrap();
                barrier.wait();
                make_once(
                    locks,
                    b"t",
                    Duration::from_secs(30),
                    Duration::from_secs(10),
                    PLAN,
                    &mut Caller {
                        shared,
                        fail: false,
                    },
                )
            });
        }
    });
    let after = s.stats().unwrap();
    assert_eq!(shared.makes.load(Ordering::SeqCst), 1);
    let waits = after.lock_waits - before.lock_waits;
    assert!(waits >= 1, "the 7 others found the lock held");
    assert_eq!(after.stampedes_avoided - before.stampedes_avoided, waits);
    assert_eq!(after.lock_timeouts, before.lock_timeouts);

    let _held = locks
        .acquire(b"busy", Duration::from_secs(30), Duration::ZERO)
        .unwrap()
        .unwrap();
    let none = locks
        .acquire(b"busy", Duration::from_secs(30), Duration::from_millis(30))
        .unwrap();
    assert!(none.is_none());
    let end = s.stats().unwrap();
    assert_eq!(end.lock_waits - after.lock_waits, 1);
    assert_eq!(end.lock_timeouts - after.lock_timeouts, 1);
}
