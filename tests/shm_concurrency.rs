//! Concurrency guarantees of the shm store, across threads and across processes.
//! `make prove-tests-can-fail` runs these with the fault point `broken-atomicity`, which
//! splits each atomic operation in two, and expects them to fail.

mod common;

use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::child;
use common::*;
use ephpm::store::shm::ShmStore;
use ephpm::store::{Fetched, SetNx, Store, Value};

/// 32 threads racing set_nx on one absent key: exactly one wins, every round.
#[test]
fn set_nx_race_has_exactly_one_winner() {
    let (_d, s) = store(4 * MB);
    let barrier = Barrier::new(32);
    for round in 0..50 {
        let key = format!("lock:{round}");
        let winners = AtomicUsize::new(0);
        std::thread::scope(|t| {
            for i in 0..32 {
                let (s, key, barrier, winners) = (&s, &key, &barrier, &winners);
                t.spawn(move || {
                    let token = format!("token-{i}");
                    barrier.wait();
                    if s.set_nx(
                        key.as_bytes(),
                        Value::Str(token.as_bytes()),
                        Some(Duration::from_secs(30)),
                    )
                    .unwrap()
                        == SetNx::Inserted
                    {
                        winners.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(winners.load(Ordering::SeqCst), 1, "round {round}");
    }
}

/// 32 threads × 50 increments of one counter: no update is lost.
#[test]
fn concurrent_increments_lose_no_update() {
    let (_d, s) = store(4 * MB);
    let barrier = Barrier::new(32);
    std::thread::scope(|t| {
        for _ in 0..32 {
            let (s, barrier) = (&s, &barrier);
            t.spawn(move || {
                barrier.wait();
                for _ in 0..50 {
                    s.incr_by(b"counter", 1, None).unwrap();
                }
            });
        }
    });
    let mut out = Vec::new();
    assert_eq!(
        s.get(b"counter", &mut out).unwrap().unwrap().value,
        Fetched::Int(32 * 50)
    );
}

/// Releasing by token never deletes another holder's lock: holders that race to release
/// with their own (stale) tokens while one current holder owns the lock never delete it.
#[test]
fn release_with_wrong_token_keeps_lock() {
    let (_d, s) = store(4 * MB);
    for round in 0..50 {
        let key = format!("l:{round}");
        s.set(key.as_bytes(), Value::Str(b"stale"), None).unwrap();
        let barrier = Barrier::new(17);
        std::thread::scope(|t| {
            for _ in 0..16 {
                let (s, key, barrier) = (&s, &key, &barrier);
                t.spawn(move || {
                    barrier.wait();
                    s.del_if_eq(key.as_bytes(), b"stale").unwrap();
                });
            }
            barrier.wait();
            // The stale holder's lock is taken over by the current holder.
            let _ = s.del_if_eq(key.as_bytes(), b"stale");
            s.set_nx(
                key.as_bytes(),
                Value::Str(b"current"),
                Some(Duration::from_secs(30)),
            )
            .unwrap();
        });
        let mut out = Vec::new();
        assert!(
            s.get(key.as_bytes(), &mut out).unwrap().is_some(),
            "round {round}: the current holder's lock was deleted"
        );
        assert_eq!(out, b"current", "round {round}");
    }
}

const CHILD_INCREMENTS: i64 = 500;

/// Child side of `increments_from_several_processes_lose_no_update`.
#[test]
fn child_increments() {
    let Some(dir) = child::job().filter(|j| j.starts_with("incr:")) else {
        return;
    };
    let opts = ephpm::store::shm::ShmOptions {
        dir: dir[5..].into(),
        ..ephpm::store::shm::ShmOptions::new("t", 4 * MB)
    };
    let (s, _) = ShmStore::open(&opts).unwrap();
    child::ready();
    // Start together: wait for the parent's go signal in the store itself.
    while !s.exists(b"go").unwrap() {
        std::thread::yield_now();
    }
    for _ in 0..CHILD_INCREMENTS {
        s.incr_by(b"shared", 1, None).unwrap();
    }
}

/// Four processes incrementing one counter through their own mappings: none is lost.
#[test]
fn increments_from_several_processes_lose_no_update() {
    if child::job().is_some() {
        return;
    }
    let dir = TestDir::new("p");
    let (s, _) = ShmStore::open(&dir.options(4 * MB)).unwrap();
    let job = format!("incr:{}", dir.0.display());
    let mut kids: Vec<_> = (0..4)
        .map(|_| child::spawn("child_increments", &job))
        .collect();
    s.set(b"go", Value::Bool(true), None).unwrap();
    for k in &mut kids {
        assert!(k.wait().unwrap().success());
    }
    let mut out = Vec::new();
    assert_eq!(
        s.get(b"shared", &mut out).unwrap().unwrap().value,
        Fetched::Int(4 * CHILD_INCREMENTS)
    );
}
