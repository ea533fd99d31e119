//! Read/write (shared) locks: readers share, a writer excludes everyone, a waiting
//! writer is woken by the last reader's release, each holder's share expires on its own,
//! stale tokens touch nothing, promotion and demotion. The tests that do not move a
//! clock by hand run on the backend `EPHPM_TEST_STORE` names (`common::any_store`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use common::*;
use ephpm::rwlock::{Held, Mode, RwLocks};
use ephpm::store::Store;

const LONG: Duration = Duration::from_secs(30);

fn any_locks() -> (Guard, RwLocks) {
    let (g, s) = any_store();
    (g, RwLocks::new(s))
}

fn take(l: &RwLocks, name: &[u8], mode: Mode, ttl: Duration, wait: Duration) -> Option<Held> {
    l.acquire(name, mode, ttl, wait).expect("store")
}

/// 16 threads take a read lock at once, 20 rounds: every one is granted, and a writer
/// is refused while they hold it.
#[test]
fn many_readers_hold_at_once_across_threads() {
    let (_g, locks) = any_locks();
    let barrier = Barrier::new(16);
    for round in 0..20 {
        let name = format!("r:{round}");
        let held = Mutex::new(Vec::new());
        std::thread::scope(|t| {
            for _ in 0..16 {
                let (locks, name, barrier, held) = (&locks, &name, &barrier, &held);
                t.spawn(move || {
                    barrier.wait();
                    let h = take(locks, name.as_bytes(), Mode::Read, LONG, Duration::ZERO);
                    held.lock().unwrap().push(h);
                });
            }
        });
        let held = held.into_inner().unwrap();
        assert!(
            held.iter().all(Option::is_some),
            "round {round}: a reader was refused"
        );
        assert!(take(&locks, name.as_bytes(), Mode::Write, LONG, Duration::ZERO).is_none());
        for h in held.into_iter().flatten() {
            assert!(locks.release(&h).unwrap());
        }
        assert!(take(&locks, name.as_bytes(), Mode::Write, LONG, Duration::ZERO).is_some());
    }
}

/// 32 threads race for a free lock, half as writers and half as readers, 50 rounds:
/// either one writer alone is granted, or readers only. This is the test that fails
/// when the decision and the write are not one atomic step (`broken-atomicity`).
#[test]
fn racing_writers_and_readers_never_share() {
    let (_g, locks) = any_locks();
    let barrier = Barrier::new(32);
    for round in 0..50 {
        let name = format!("race:{round}");
        let (writers, readers) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|t| {
            for i in 0..32 {
                let (locks, name, barrier) = (&locks, &name, &barrier);
                let (writers, readers) = (&writers, &readers);
                t.spawn(move || {
                    let mode = if i % 2 == 0 { Mode::Write } else { Mode::Read };
                    barrier.wait();
                    if take(locks, name.as_bytes(), mode, LONG, Duration::ZERO).is_some() {
                        match mode {
                            Mode::Write => writers.fetch_add(1, Ordering::SeqCst),
                            Mode::Read => readers.fetch_add(1, Ordering::SeqCst),
                        };
                    }
                });
            }
        });
        let (w, r) = (writers.into_inner(), readers.into_inner());
        assert!(
            (w == 1 && r == 0) || (w == 0 && r > 0),
            "round {round}: {w} writers and {r} readers were granted together"
        );
    }
}

/// 8 threads take the lock 40 times each, a third of them as writers, waiting for it:
/// inside, no writer ever sees anybody else, and readers do overlap.
#[test]
fn a_writer_excludes_everyone_while_readers_overlap() {
    let (_g, locks) = any_locks();
    let inside = AtomicUsize::new(0);
    let (violations, overlaps) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|t| {
        for i in 0..8 {
            let (locks, inside) = (&locks, &inside);
            let (violations, overlaps) = (&violations, &overlaps);
            t.spawn(move || {
                for n in 0..40 {
                    let mode = if (i + n) % 3 == 0 {
                        Mode::Write
                    } else {
                        Mode::Read
                    };
                    let h = take(locks, b"x", mode, LONG, LONG).expect("granted within 30 s");
                    let others = inside.fetch_add(1, Ordering::SeqCst);
                    if mode == Mode::Write && others > 0 {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    if mode == Mode::Read && others > 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::yield_now();
                    std::thread::sleep(Duration::from_micros(200));
                    if mode == Mode::Write && inside.load(Ordering::SeqCst) != 1 {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    inside.fetch_sub(1, Ordering::SeqCst);
                    assert!(locks.release(&h).unwrap());
                }
            });
        }
    });
    assert_eq!(violations.into_inner(), 0, "a writer shared the lock");
    assert!(
        overlaps.into_inner() > 0,
        "readers never held the lock together"
    );
}

/// A writer waits while 4 readers hold the lock (30 s TTLs) and gets it only after the
/// last of them released: the grant comes after the fourth release in the event log.
#[test]
fn a_waiting_writer_is_woken_by_the_last_readers_release() {
    let (_g, locks) = any_locks();
    let readers: Vec<Held> = (0..4)
        .map(|_| take(&locks, b"w", Mode::Read, LONG, Duration::ZERO).unwrap())
        .collect();
    let log = Mutex::new(Vec::<String>::new());
    std::thread::scope(|t| {
        let writer = t.spawn(|| {
            let h = take(&locks, b"w", Mode::Write, LONG, Duration::from_secs(20));
            log.lock().unwrap().push("writer granted".into());
            h
        });
        for (i, r) in readers.iter().enumerate() {
            // Gives the writer time to go back to sleep; nothing is asserted on time.
            std::thread::sleep(Duration::from_millis(60));
            log.lock().unwrap().push(format!("release {i}"));
            assert!(locks.release(r).unwrap());
        }
        let h = writer.join().unwrap().expect("the writer got the lock");
        assert!(readers.iter().all(|r| h.fence > r.fence));
    });
    let log = log.into_inner().unwrap();
    assert_eq!(
        log.last().map(String::as_str),
        Some("writer granted"),
        "{log:?}"
    );
}

/// A reader process killed while it holds its share (TTL 300 ms) frees it when the TTL
/// runs out: the writer waiting in this process is granted, and the other reader's
/// share (taken here, with a long TTL) was untouched by the expiry.
#[test]
fn a_killed_readers_share_expires() {
    if let Some(dir) = child::job() {
        let opts = ephpm::store::shm::ShmOptions {
            dir: dir.into(),
            ..ephpm::store::shm::ShmOptions::new("t", 4 * MB)
        };
        let (s, _) = ephpm::store::shm::ShmStore::open(&opts).unwrap();
        let locks = RwLocks::new(Arc::new(s));
        let _h = take(
            &locks,
            b"k",
            Mode::Read,
            Duration::from_millis(300),
            Duration::ZERO,
        )
        .unwrap();
        child::ready();
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let dir = TestDir::new("rwk");
    let (s, _) = ephpm::store::shm::ShmStore::open(&dir.options(4 * MB)).unwrap();
    let locks = RwLocks::new(Arc::new(s));
    let mut reader = child::spawn("a_killed_readers_share_expires", dir.0.to_str().unwrap());
    let mine = take(&locks, b"k", Mode::Read, LONG, Duration::ZERO).unwrap();
    reader.kill().unwrap();
    reader.wait().unwrap();
    // Only this process's reader is left once the killed one's TTL ran out; this share
    // promotes then.
    let promoted = locks
        .promote(&mine, LONG, Duration::from_secs(20))
        .unwrap()
        .expect("the killed reader's share expired");
    assert_eq!(locks.mode(&promoted).unwrap(), Some(Mode::Write));
}

/// A share whose TTL ran out: its release and extend are refused and the next holder's
/// lock is untouched; fences keep increasing across releases and expiries.
#[test]
fn a_stale_token_touches_nothing() {
    let (_d, s, clock) = store_with_clock(4 * MB);
    let store: Arc<dyn Store> = Arc::new(s);
    let locks = RwLocks::new(store.clone());
    let a = take(
        &locks,
        b"s",
        Mode::Write,
        Duration::from_secs(1),
        Duration::ZERO,
    )
    .unwrap();
    clock.advance(Duration::from_millis(1500));
    assert_eq!(locks.mode(&a).unwrap(), None);
    let b = take(&locks, b"s", Mode::Read, LONG, Duration::ZERO).unwrap();
    let c = take(&locks, b"s", Mode::Read, LONG, Duration::ZERO).unwrap();
    assert!(b.fence > a.fence && c.fence > b.fence);
    assert!(!locks.release(&a).unwrap());
    assert!(!locks.extend(&a, LONG).unwrap());
    assert!(locks.promote(&a, LONG, Duration::ZERO).unwrap().is_none());
    assert_eq!(locks.mode(&b).unwrap(), Some(Mode::Read));
    assert_eq!(locks.mode(&c).unwrap(), Some(Mode::Read));
    // One reader's share expires alone.
    assert!(locks.extend(&c, Duration::from_secs(100)).unwrap());
    clock.advance(Duration::from_secs(50));
    assert_eq!(locks.mode(&b).unwrap(), None);
    assert_eq!(locks.mode(&c).unwrap(), Some(Mode::Read));
    assert!(locks.release(&c).unwrap());
    assert!(
        !store.exists(b"s").unwrap(),
        "the last release removes the lock"
    );
    let d = take(&locks, b"s", Mode::Write, LONG, Duration::ZERO).unwrap();
    assert!(d.fence > c.fence);
}

/// Promotion waits for the other readers and is woken by their release; demotion lets
/// readers back in.
#[test]
fn promotion_and_demotion() {
    let (_g, locks) = any_locks();
    let r1 = take(&locks, b"p", Mode::Read, LONG, Duration::ZERO).unwrap();
    let r2 = take(&locks, b"p", Mode::Read, LONG, Duration::ZERO).unwrap();
    assert!(locks.promote(&r1, LONG, Duration::ZERO).unwrap().is_none());
    assert_eq!(
        locks.mode(&r1).unwrap(),
        Some(Mode::Read),
        "a refused promotion keeps the share"
    );
    let w = std::thread::scope(|t| {
        let promoting = t.spawn(|| locks.promote(&r1, LONG, Duration::from_secs(20)).unwrap());
        std::thread::sleep(Duration::from_millis(60));
        assert!(locks.release(&r2).unwrap());
        promoting.join().unwrap()
    })
    .expect("promoted once the other reader left");
    assert_eq!(w.token, r1.token);
    assert!(w.fence > r2.fence);
    assert_eq!(locks.mode(&w).unwrap(), Some(Mode::Write));
    assert!(take(&locks, b"p", Mode::Read, LONG, Duration::ZERO).is_none());
    let d = locks.demote(&w, LONG).unwrap().expect("demoted");
    assert_eq!(locks.mode(&d).unwrap(), Some(Mode::Read));
    let r3 = take(&locks, b"p", Mode::Read, LONG, Duration::ZERO).expect("readers join");
    assert!(take(&locks, b"p", Mode::Write, LONG, Duration::ZERO).is_none());
    assert!(locks.release(&d).unwrap() && locks.release(&r3).unwrap());
    assert!(take(&locks, b"p", Mode::Write, LONG, Duration::ZERO).is_some());
}
