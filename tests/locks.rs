//! Token locks: one winner, releases that cannot free another holder's lock, fencing
//! numbers, and waiters woken by the release. The tests that do not move a clock by hand
//! run on the backend `EPHPM_TEST_STORE` names (`common::any_store`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::*;
use ephpm::lock::{Locks, new_token};
use ephpm::store::Store;

fn locks(s: ephpm::store::shm::ShmStore) -> (Arc<dyn Store>, Locks) {
    let s: Arc<dyn Store> = Arc::new(s);
    (s.clone(), Locks::new(s))
}

fn any_locks() -> (Guard, Locks) {
    let (g, s) = any_store();
    (g, Locks::new(s))
}

/// Tokens are 32 hex digits and never repeat.
#[test]
fn tokens_are_fresh_random_hex() {
    let a = new_token();
    let b = new_token();
    assert_ne!(a, b);
    assert!(a.iter().all(u8::is_ascii_hexdigit));
}

/// 32 threads race for one free lock, 50 rounds: exactly one gets it each round.
#[test]
fn lock_acquire_race_has_exactly_one_winner() {
    let (_g, locks) = any_locks();
    let barrier = Barrier::new(32);
    for round in 0..50 {
        let name = format!("lock:{round}");
        let winners = AtomicUsize::new(0);
        std::thread::scope(|t| {
            for _ in 0..32 {
                let (locks, name, barrier, winners) = (&locks, &name, &barrier, &winners);
                t.spawn(move || {
                    barrier.wait();
                    if locks
                        .acquire(name.as_bytes(), Duration::from_secs(30), Duration::ZERO)
                        .unwrap()
                        .is_some()
                    {
                        winners.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(winners.load(Ordering::SeqCst), 1, "round {round}");
    }
}

/// The overrun case: A's TTL runs out, B takes the lock, A releases and extends → both
/// refused, B still holds it, and B's fence is greater than A's.
#[test]
fn release_after_expiry_cannot_free_the_next_holders_lock() {
    let (_d, s, clock) = store_with_clock(4 * MB);
    let (store, locks) = locks(s);
    let a = locks
        .acquire(b"job", Duration::from_secs(1), Duration::ZERO)
        .unwrap()
        .unwrap();
    clock.advance(Duration::from_millis(1500));
    assert!(!locks.is_held(&a).unwrap());
    let b = locks
        .acquire(b"job", Duration::from_secs(30), Duration::ZERO)
        .unwrap()
        .expect("free after A's TTL");
    assert!(
        b.fence > a.fence,
        "fence(B)={} must exceed fence(A)={}",
        b.fence,
        a.fence
    );
    assert!(!locks.release(&a).unwrap(), "A's release must be refused");
    assert!(
        !locks.extend(&a, Duration::from_secs(30)).unwrap(),
        "A's extend must be refused"
    );
    assert!(locks.is_held(&b).unwrap());
    assert!(
        locks
            .acquire(b"job", Duration::from_secs(30), Duration::ZERO)
            .unwrap()
            .is_none(),
        "C is refused"
    );
    assert!(locks.release(&b).unwrap());
    assert!(!store.exists(b"job").unwrap());
}

/// Fencing numbers strictly increase per name across releases, expiries and clears.
#[test]
fn fences_increase_across_releases_expiries_and_clears() {
    let (_d, s, clock) = store_with_clock(4 * MB);
    let (store, locks) = locks(s);
    let mut last = 0;
    for i in 0..20 {
        let h = locks
            .acquire(b"f", Duration::from_secs(1), Duration::ZERO)
            .unwrap()
            .unwrap();
        assert!(h.fence > last, "acquisition {i}: {} after {last}", h.fence);
        last = h.fence;
        match i % 3 {
            0 => assert!(locks.release(&h).unwrap()),
            1 => clock.advance(Duration::from_secs(2)),
            _ => {
                store.clear(b"").unwrap();
            }
        }
    }
}

/// extend keeps a held lock alive past its first TTL.
#[test]
fn extend_by_token_keeps_the_lock() {
    let (_d, s, clock) = store_with_clock(4 * MB);
    let (_, locks) = locks(s);
    let h = locks
        .acquire(b"e", Duration::from_secs(1), Duration::ZERO)
        .unwrap()
        .unwrap();
    clock.advance(Duration::from_millis(800));
    assert!(locks.extend(&h, Duration::from_secs(1)).unwrap());
    clock.advance(Duration::from_millis(800));
    assert!(locks.is_held(&h).unwrap());
    assert!(
        locks
            .acquire(b"e", Duration::from_secs(1), Duration::ZERO)
            .unwrap()
            .is_none()
    );
}

/// A waiter gets the lock once the holder releases it, woken by the release; and a
/// holder that never releases is waited for only until its TTL runs out.
#[test]
fn waiters_get_the_lock_on_release_and_after_a_dead_holders_ttl() {
    let (_g, locks) = any_locks();
    let h = locks
        .acquire(b"w", Duration::from_secs(30), Duration::ZERO)
        .unwrap()
        .unwrap();
    std::thread::scope(|t| {
        t.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            assert!(locks.release(&h).unwrap());
        });
        let got = locks
            .acquire(b"w", Duration::from_secs(30), Duration::from_secs(20))
            .unwrap();
        assert!(got.is_some_and(|g| g.fence > h.fence));
    });
    // A "dead" holder: takes the lock for 200 ms and never releases it.
    locks
        .acquire(b"dead", Duration::from_millis(200), Duration::ZERO)
        .unwrap()
        .unwrap();
    assert!(
        locks
            .acquire(b"dead", Duration::from_secs(1), Duration::from_secs(20))
            .unwrap()
            .is_some()
    );
    // A lock held past the caller's wait: not acquired.
    locks
        .acquire(b"busy", Duration::from_secs(30), Duration::ZERO)
        .unwrap()
        .unwrap();
    assert!(
        locks
            .acquire(b"busy", Duration::from_secs(1), Duration::from_millis(50))
            .unwrap()
            .is_none()
    );
}
