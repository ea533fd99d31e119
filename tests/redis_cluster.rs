//! `redis-cluster://`: a Redis Cluster of three masters with a replica each (Debian's
//! redis-server on loopback ports, `common::redis_cluster`). Keys spread over every
//! master and the store's own keys of a lock share its hash slot; scan, clear and stats
//! walk every master; a master killed fails its slots' calls with `Unavailable` (never
//! a hang) until its replica is promoted, leaves the other slots alone, and fences keep
//! growing across the failover. The backend-generic suites also run here
//! (`EPHPM_TEST_STORE=redis-cluster`).

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::no_hang;
use common::redis::ask;
use common::redis_cluster::RedisCluster;
use ephpm::rwlock::{Mode, Op, Outcome};
use ephpm::store::dsn::{self, Dsn};
use ephpm::store::redis::RedisStore;
use ephpm::store::{Fetched, Store, StoreError, Value};

fn store(dsn: &str) -> Arc<RedisStore> {
    let Ok(Dsn::Redis(target)) = dsn::parse(dsn) else {
        panic!("not a redis dsn: {dsn}")
    };
    Arc::new(RedisStore::new(target).expect("store"))
}

const KEYS: usize = 300;

#[test]
fn keys_spread_over_every_master_and_scan_clear_and_stats_see_them_all() {
    let cluster = RedisCluster::start();
    let s = store(&cluster.dsn("?prefix=spread:"));
    let keys: Vec<Vec<u8>> = (0..KEYS).map(|i| format!("k{i}").into_bytes()).collect();
    let entries: Vec<(&[u8], Value<'_>)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (&k[..], Value::Int(i as i64)))
        .collect();
    // One call over keys of many slots (a pipeline per master underneath).
    s.set_many(&entries, None).unwrap();
    let masters: HashSet<u16> = keys
        .iter()
        .map(|k| cluster.master_of(&[b"spread:", &k[..]].concat()))
        .collect();
    assert_eq!(masters.len(), 3, "the keys landed on {masters:?}");

    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let mut seen = 0;
    s.get_many(&refs, &mut |i, hit, _| {
        assert!(matches!(hit.value, Fetched::Int(n) if n == i as i64));
        seen += 1;
    })
    .unwrap();
    assert_eq!(seen, KEYS);

    // A lock's value, fence counter and wake-up channel share its slot: the scripts
    // that touch them together run on a cluster.
    let fence = s
        .lock_acquire(b"job", b"t1", Duration::from_secs(30))
        .unwrap();
    assert!(fence.is_some());
    assert!(
        s.lock_extend(b"job", b"t1", Duration::from_secs(30))
            .unwrap()
    );
    assert!(!s.lock_release(b"job", b"t2").unwrap());
    assert!(s.lock_release(b"job", b"t1").unwrap());
    let token = [7u8; 32];
    let write = Op::Acquire {
        mode: Mode::Write,
        token,
        ttl: Duration::from_secs(30),
    };
    assert!(matches!(
        s.rw_lock(b"rw", &write).unwrap(),
        Outcome::Acquired { .. }
    ));
    assert!(matches!(
        s.rw_lock(b"rw", &Op::Release { token }).unwrap(),
        Outcome::Done(true)
    ));

    let mut found = Vec::new();
    let mut cursor = 0;
    loop {
        cursor = s.scan(b"k", cursor, &mut found).unwrap();
        if cursor == 0 {
            break;
        }
    }
    let found: HashSet<Vec<u8>> = found.into_iter().map(|e| e.key).collect();
    assert_eq!(found, keys.iter().cloned().collect::<HashSet<_>>());

    let stats = s.stats().unwrap();
    assert_eq!(stats.shards, 3);
    assert!(stats.entries >= KEYS as u64, "{} entries", stats.entries);

    assert_eq!(s.clear(b"k").unwrap(), KEYS as u64);
    let mut left = 0;
    s.get_many(&refs, &mut |_, _, _| left += 1).unwrap();
    assert_eq!(left, 0);
}

/// The first key `tag:N` whose master (under `prefix`) is `port`.
fn key_on(cluster: &RedisCluster, prefix: &str, port: u16, tag: &str) -> Vec<u8> {
    (0..)
        .map(|i| format!("{tag}:{i}").into_bytes())
        .find(|k| cluster.master_of(&[prefix.as_bytes(), &k[..]].concat()) == port)
        .unwrap()
}

#[test]
fn a_killed_master_fails_its_slots_until_its_replica_takes_over_and_fences_grow() {
    let mut cluster = RedisCluster::start();
    let prefix = "fo:";
    let s = store(&cluster.dsn(&format!("?prefix={prefix}&timeout=0.5")));
    let (doomed, other) = (cluster.nodes[0].0, cluster.nodes[1].0);
    let lost = key_on(&cluster, prefix, doomed, "lost");
    let kept = key_on(&cluster, prefix, other, "kept");
    let probe = key_on(&cluster, prefix, doomed, "probe");
    let ttl = Duration::from_secs(2);
    let before = s.lock_acquire(&lost, b"old", ttl).unwrap().expect("free");
    // The replica has the lock and its fence counter before its master dies.
    ask(doomed, redis::cmd("WAIT").arg(1).arg(5000)).expect("WAIT");

    cluster.kill(doomed);
    // Until the replica is promoted: the lost slot's calls fail with Unavailable, and a
    // lock on another master's slot is unaffected.
    let mut failures = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s2 = s.clone();
        let k = probe.clone();
        match no_hang(move || s2.set(&k, Value::Int(1), None)) {
            Ok(()) => break,
            Err(StoreError::Unavailable { .. }) => failures += 1,
            Err(other) => panic!("expected Unavailable during the failover, got {other}"),
        }
        let fence = s
            .lock_acquire(&kept, b"k", ttl)
            .unwrap()
            .expect("other slot's lock");
        assert!(fence > 0);
        assert!(s.lock_release(&kept, b"k").unwrap());
        assert!(Instant::now() < deadline, "no failover within a minute");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        failures > 0,
        "the first call after the kill reached a master"
    );
    assert_ne!(
        cluster.master_of(&[prefix.as_bytes(), &lost[..]].concat()),
        doomed
    );

    // The old holder's lock came across with the replica: held until its TTL runs out,
    // then the next holder's fence is greater.
    let deadline = Instant::now() + Duration::from_secs(60);
    let after = loop {
        if let Some(f) = s.lock_acquire(&lost, b"new", ttl).unwrap() {
            break f;
        }
        assert!(Instant::now() < deadline, "the lock never expired");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        after > before,
        "fence {after} after the failover, {before} before"
    );
    assert!(!s.lock_release(&lost, b"old").unwrap());
    assert!(s.lock_release(&lost, b"new").unwrap());
}
