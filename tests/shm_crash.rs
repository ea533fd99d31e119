//! Crash safety: processes hammering the store are SIGKILLed at random instants, 400
//! times; afterwards no shard is left locked, a consistency walk of every shard finds
//! nothing wrong, and every operation works.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::child::{self, Rng};
use common::*;
use ephpm::store::shm::{ShmOptions, ShmStore};
use ephpm::store::{Store, Value};

/// Small enough that the hammer keeps the allocator evicting, coalescing and growing
/// indexes: the paths with the most steps to interrupt.
const SIZE: u64 = MB;

fn options(dir: &str) -> ShmOptions {
    ShmOptions {
        dir: dir.into(),
        ..ShmOptions::new("t", SIZE)
    }
}

/// Child side: random operations of every kind, forever, until killed.
#[test]
fn child_hammer() {
    let Some(dir) = child::job().and_then(|j| j.strip_prefix("hammer:").map(String::from)) else {
        return;
    };
    let (s, _) = ShmStore::open(&options(&dir)).unwrap();
    let mut rng = Rng::seeded();
    let big = vec![b'b'; 6000];
    child::ready();
    let mut out = Vec::new();
    loop {
        let key = format!("k{}", rng.below(3000));
        let k = key.as_bytes();
        let ttl = (rng.below(4) == 0).then(|| Duration::from_millis(rng.below(50)));
        let _ = match rng.below(9) {
            0 | 1 => s
                .set(
                    k,
                    Value::Str(&big[..rng.below(big.len() as u64) as usize]),
                    ttl,
                )
                .map(|_| ()),
            2 => s
                .set_nx(k, Value::Str(b"token"), Some(Duration::from_millis(200)))
                .map(|_| ()),
            3 => s.del(k).map(|_| ()),
            4 => s.del_if_eq(k, b"token").map(|_| ()),
            5 => s.incr_by(b"counter", 1, None).map(|_| ()),
            6 => s.get(k, &mut out).map(|_| ()),
            7 => s.expire(k, ttl).map(|_| ()),
            _ => s.clear(b"k1").map(|_| ()),
        };
    }
}

/// Runs `verify` on another thread, so a shard left locked fails the test instead of
/// hanging it.
fn verify_within(s: &'static ShmStore, limit: Duration) -> u64 {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(s.verify()));
    match rx.recv_timeout(limit) {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => panic!("corrupt store: {e}"),
        Err(_) => panic!("a shard stayed locked: verify did not finish within {limit:?}"),
    }
}

#[test]
fn sigkill_at_random_instants_leaves_a_consistent_store() {
    if child::job().is_some() {
        return;
    }
    let dir = TestDir::new("k");
    let (s, _) = ShmStore::open(&options(&dir.0.to_string_lossy())).unwrap();
    let s: &'static ShmStore = Box::leak(Box::new(s));
    let job = format!("hammer:{}", dir.0.display());
    let mut rng = Rng::seeded();
    // Two hammers at a time, so a killed holder often has a live waiter on its lock.
    let mut kids = vec![
        child::spawn("child_hammer", &job),
        child::spawn("child_hammer", &job),
    ];
    for kill in 0..400 {
        std::thread::sleep(Duration::from_micros(rng.below(3000)));
        let victim = rng.below(2) as usize;
        let pid = kids[victim].id() as i32;
        // SAFETY: kill(2) has no memory preconditions; the pid is our own live child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
        kids[victim].wait().unwrap();
        kids[victim] = child::spawn("child_hammer", &job);
        if kill % 50 == 49 {
            verify_within(s, Duration::from_secs(30));
        }
    }
    for k in &mut kids {
        k.kill().unwrap();
        k.wait().unwrap();
    }
    verify_within(s, Duration::from_secs(30));
    let st = s.stats().unwrap();
    assert!(
        st.repairs > 0,
        "no kill landed inside a critical section: {st:?}"
    );
    eprintln!("after 400 kills: {st:?}");

    // Every operation still works.
    let mut out = Vec::new();
    s.set(b"after", Value::Str(b"crash"), None).unwrap();
    assert!(s.get(b"after", &mut out).unwrap().is_some());
    assert_eq!(out, b"crash");
    assert!(s.del_if_eq(b"after", b"crash").unwrap());
    assert_eq!(
        s.set_nx(b"after", Value::Int(1), None).unwrap(),
        ephpm::store::SetNx::Inserted
    );
    // (Not the children's "counter": in this full 1 MiB store it may have been evicted.)
    let n = s.incr_by(b"after-counter", 1, None).unwrap();
    assert_eq!(s.incr_by(b"after-counter", 1, None).unwrap(), n + 1);
    s.clear(b"").unwrap();
    assert_eq!(verify_within(s, Duration::from_secs(30)), 0);
}
