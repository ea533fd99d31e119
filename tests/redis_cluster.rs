//! `redis-cluster://`: a Redis Cluster of three masters with a replica each (Debian's
//! redis-server on loopback ports, `common::redis_cluster`). Keys spread over every
//! master and the store's own keys of a lock share its hash slot; scan, clear and stats
//! walk every master; a master killed fails its slots' calls with `Unavailable` (never
//! a hang) until its replica is promoted, leaves the other slots alone, and fences keep
//! growing across the failover. Waiters are woken by sharded Pub/Sub: a lock's release
//! `SPUBLISH`es to the shard of the lock's slot only, and wakes one waiter. The
//! backend-generic suites also run here (`EPHPM_TEST_STORE=redis-cluster`).

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use common::no_hang;
use common::redis::{ask, info_field, wait_until};
use common::redis_cluster::RedisCluster;
use ephpm::ground::dsn::{self, Dsn};
use ephpm::lock::Locks;
use ephpm::rwlock::{Mode, Op, Outcome};
use ephpm::store::redis::RedisStore;
use ephpm::store::{Store, StoreError, Value};

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
    let keys = cluster.spread_over_every_master(&*s, "spread:", KEYS);

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
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
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
    // A waiter whose subscriber listens on the doomed master before the kill.
    let wake = key_on(&cluster, prefix, doomed, "wake");
    let waiter = store(&cluster.dsn(&format!("?prefix={prefix}&timeout=0.5")));
    let woken = |cluster: &RedisCluster| cluster.wakes_a_waiter(&s, &waiter, prefix, &wake);
    assert_eq!(woken(&cluster), 1, "before the failover");
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
    // The subscriber found the promoted replica: a release there still wakes its waiter.
    assert_eq!(woken(&cluster), 1, "after the failover");
}

/// Calls of `command` (lower case) every live node has run, Lua's included.
fn calls(cluster: &RedisCluster, command: &str) -> u64 {
    cluster
        .live()
        .filter_map(|port| info_field(port, "commandstats", &format!("cmdstat_{command}")))
        .filter_map(|stat| {
            stat.strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// Shard channels subscribed on the node at `port` whose names start with `prefix`.
fn shard_channels(port: u16, prefix: &str) -> usize {
    match ask(
        port,
        redis::cmd("PUBSUB")
            .arg("SHARDCHANNELS")
            .arg(format!("{prefix}*")),
    ) {
        Some(redis::Value::Array(names)) => names.len(),
        _ => 0,
    }
}

/// 19 processes' stores wait on one lock: each waits in line on a mailbox of its own in
/// the lock's slot, subscribed with SSUBSCRIBE on that slot's master and on no other
/// node; each release `SPUBLISH`es (no classic `PUBLISH`, which a cluster copies to every
/// node) and wakes one waiter; every waiter gets the lock once, one at a time.
#[test]
fn a_release_wakes_one_waiter_by_sharded_pubsub_on_the_locks_shard() {
    const WAITERS: usize = 19;
    const TTL: Duration = Duration::from_secs(30);
    let cluster = RedisCluster::start();
    let dsn = cluster.dsn("?prefix=herd:");
    let owner = cluster.master_of(b"herd:job");
    let mailboxes = "{herd:job}:ephpm:mailbox:";
    let holder = Locks::new(store(&dsn));
    let first = holder
        .acquire(b"job", TTL, Duration::ZERO)
        .unwrap()
        .expect("a free lock");
    let publish_before = calls(&cluster, "publish");
    let spublish_before = calls(&cluster, "spublish");
    let inside = Arc::new(AtomicBool::new(false));
    let waiters: Vec<_> = (0..WAITERS)
        .map(|_| {
            let s = store(&dsn);
            let wait = Duration::from_secs(120);
            let thread = common::take_once(s.clone(), b"job", TTL, wait, inside.clone());
            (s, thread)
        })
        .collect();
    wait_until("19 mailboxes subscribed on the lock's master", || {
        shard_channels(owner, mailboxes) == WAITERS
    });
    for port in cluster.live().filter(|&p| p != owner) {
        assert_eq!(
            shard_channels(port, "{herd:"),
            0,
            "a shard channel on {port}"
        );
    }
    let (woken, fences) = no_hang(move || {
        assert!(holder.release(&first).expect("release"));
        let mut fences = vec![first.fence];
        let mut woken = 0;
        for (s, thread) in waiters {
            fences.push(thread.join().expect("a waiter failed"));
            woken += s.wake_counts().woken;
        }
        (woken, fences)
    });
    let mut distinct = fences.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), WAITERS + 1, "one acquisition each");
    let releases = WAITERS as u64 + 1;
    assert!(
        woken <= releases,
        "{releases} releases woke waiters {woken} times"
    );
    assert_eq!(
        calls(&cluster, "publish"),
        publish_before,
        "a classic PUBLISH"
    );
    assert!(
        calls(&cluster, "spublish") - spublish_before >= releases,
        "the releases did not SPUBLISH"
    );

    // A ticket queued by a process that publishes the classic way (a rolling upgrade)
    // names a mailbox in another slot: the release still frees the lock.
    let s = store(&dsn);
    let held = Locks::new(s.clone())
        .acquire(b"job", TTL, Duration::ZERO)
        .unwrap()
        .expect("a free lock");
    ask(
        owner,
        redis::cmd("RPUSH")
            .arg("{herd:job}:ephpm:queue")
            .arg("ephpm:mailbox:0123456789abcdef:42"),
    )
    .expect("RPUSH");
    assert!(Locks::new(s.clone()).release(&held).unwrap());
    assert!(s.lock_acquire(b"job", b"next", TTL).unwrap().is_some());
}
