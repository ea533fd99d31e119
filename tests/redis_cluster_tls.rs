//! `rediss-cluster://`: a Redis Cluster of three masters with a replica each that speaks
//! TLS only — to clients, on its cluster bus and between masters and replicas — with a
//! CA made by the test and a client certificate required (`common::redis_cluster`,
//! `common::tls`). Values, locks and wake-ups work over it; a client without a
//! certificate is refused; `?read_from=replica` reads from replicas; a master killed
//! costs a process at most one failed write, and no read once its replica took over; a
//! write that timed out is never sent twice. The backend-generic suites also run here
//! (`EPHPM_TEST_STORE=redis-cluster-tls`).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::no_hang;
use common::redis::wait_until;
use common::redis_cluster::RedisCluster;
use ephpm::ground::dsn::{self, Dsn};
use ephpm::lock::Locks;
use ephpm::store::redis::RedisStore;
use ephpm::store::{Fetched, Store, StoreError, Value};

fn store(dsn: &str) -> Arc<RedisStore> {
    let Ok(Dsn::Redis(target)) = dsn::parse(dsn) else {
        panic!("not a redis dsn: {dsn}")
    };
    Arc::new(RedisStore::new(target).expect("store"))
}

/// The first key `tag:N` whose master (under `prefix`) is `port`.
fn key_on(cluster: &RedisCluster, prefix: &str, port: u16, tag: &str) -> Vec<u8> {
    (0..)
        .map(|i| format!("{tag}:{i}").into_bytes())
        .find(|k| cluster.master_of(&[prefix.as_bytes(), &k[..]].concat()) == port)
        .unwrap()
}

/// The masters' ports now.
fn masters(cluster: &RedisCluster) -> Vec<u16> {
    cluster
        .live()
        .filter(|p| cluster.info_field(*p, "replication", "role").as_deref() == Some("master"))
        .collect()
}

/// GETs the node on `port` has run.
fn gets(cluster: &RedisCluster, port: u16) -> u64 {
    cluster
        .info_field(port, "commandstats", "cmdstat_get")
        .and_then(|s| s.strip_prefix("calls=")?.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn values_locks_and_wakeups_work_over_tls_with_a_client_certificate() {
    let cluster = RedisCluster::start_tls();
    let s = store(&cluster.dsn("?prefix=tls:"));
    cluster.spread_over_every_master(&*s, "tls:", 60);
    assert_eq!(s.incr_by(b"n", 5, None).unwrap(), 5);

    let locks = Locks::new(s.clone());
    let held = locks
        .acquire(b"job", Duration::from_secs(30), Duration::ZERO)
        .unwrap()
        .expect("free");
    assert!(locks.release(&held).unwrap());
    // Another process's waiter is woken by the release's message (sharded Pub/Sub over
    // TLS too).
    let other = store(&cluster.dsn("?prefix=tls:"));
    assert_eq!(cluster.wakes_a_waiter(&s, &other, "tls:", b"job"), 1);
}

#[test]
fn a_client_without_a_certificate_is_refused() {
    let cluster = RedisCluster::start_tls();
    let certs = cluster.tls.clone().expect("tls");
    let seeds: Vec<String> = cluster.live().map(|p| format!("127.0.0.1:{p}")).collect();
    let dsn = format!(
        "rediss-cluster://{}?ca={}&timeout=0.5",
        seeds.join(","),
        certs.ca().display()
    );
    let s = store(&dsn);
    let err = no_hang(move || s.set(b"k", Value::Int(1), None)).unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err}");
    // And one with the certificate is served.
    let s = store(&cluster.dsn(""));
    s.set(b"k", Value::Int(1), None).unwrap();
}

#[test]
fn read_from_replica_reads_get_and_get_many_from_replicas() {
    let cluster = RedisCluster::start_tls();
    let writer = store(&cluster.dsn("?prefix=r:"));
    let reader = store(&cluster.dsn("?prefix=r:&read_from=replica"));
    writer.set(b"k", Value::Int(7), None).unwrap();
    let (master, replicas) = cluster.nodes_of(b"r:k");
    assert!(!replicas.is_empty());
    wait_until("the replica has the key", || {
        replicas.iter().all(|r| {
            matches!(
                cluster.ask(*r, &redis::cmd("DBSIZE")),
                Some(redis::Value::Int(n)) if n > 0
            )
        })
    });
    let before: u64 = gets(&cluster, master);
    let replica_before: u64 = replicas.iter().map(|r| gets(&cluster, *r)).sum();
    let mut out = Vec::new();
    for _ in 0..10 {
        let hit = reader.get(b"k", &mut out).unwrap().expect("replicated");
        assert!(matches!(hit.value, Fetched::Int(7)));
    }
    let mut n = 0;
    reader
        .get_many(&[&b"k"[..], &b"k"[..]], &mut |_, _, _| n += 1)
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(gets(&cluster, master), before, "a read reached the master");
    let replica_after: u64 = replicas.iter().map(|r| gets(&cluster, *r)).sum();
    assert!(
        replica_after >= replica_before + 10,
        "the replicas ran {} GETs",
        replica_after - replica_before
    );
}

/// A process whose connection was opened before the kill may fail one write (it was
/// sent to the dead master: it may have landed), never the same write twice; one whose
/// connection learnt the slot map while the dead master still held its slots fails no
/// write once the replica took over: the refused connection sent nothing, so the write
/// runs again at once on a fresh slot map.
#[test]
fn a_killed_master_fails_no_write_twice_and_none_once_its_replica_took_over() {
    let mut cluster = RedisCluster::start_tls();
    let dsn = cluster.dsn("?prefix=f:&timeout=0.5");
    let before = store(&dsn);
    let doomed = masters(&cluster)[0];
    let alive = masters(&cluster)[1];
    let on_doomed = key_on(&cluster, "f:", doomed, "k");
    let on_alive = key_on(&cluster, "f:", alive, "k");
    before.set(&on_doomed, Value::Int(1), None).unwrap();
    before.set(&on_alive, Value::Int(1), None).unwrap();
    cluster.kill(doomed);
    // Opened now, before the cluster noticed: its slot map names the dead master.
    let during = store(&dsn);
    during.set(&on_alive, Value::Int(2), None).unwrap();
    wait_until("a replica took over", || {
        !masters(&cluster).contains(&doomed) && masters(&cluster).len() == 3
    });
    cluster.wait_until_ok();

    for round in 0..3 {
        during
            .set(&on_doomed, Value::Int(10 + round), None)
            .unwrap_or_else(|e| panic!("write {round} after the failover failed: {e}"));
    }
    for round in 0..3 {
        if let Err(first) = before.set(&on_doomed, Value::Int(20 + round), None) {
            before
                .set(&on_doomed, Value::Int(20 + round), None)
                .unwrap_or_else(|e| panic!("write {round} failed twice: {first}, then {e}"));
        }
    }
    let mut out = Vec::new();
    let hit = during.get(&on_doomed, &mut out).unwrap().expect("written");
    assert!(matches!(hit.value, Fetched::Int(22)));
}

#[test]
fn a_write_that_timed_out_is_never_sent_twice() {
    let cluster = RedisCluster::start_tls();
    let s = store(&cluster.dsn("?prefix=t:&timeout=0.3"));
    let master = masters(&cluster)[0];
    let key = key_on(&cluster, "t:", master, "n");
    s.set(&key, Value::Int(0), None).unwrap();
    cluster.proc(master).signal(libc::SIGSTOP);
    let s2 = s.clone();
    let k2 = key.clone();
    let err = no_hang(move || s2.incr_by(&k2, 1, None)).unwrap_err();
    cluster.proc(master).signal(libc::SIGCONT);
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err}");
    // The INCR was sent once and the stopped master runs it once it goes on.
    let full = [b"t:".as_slice(), &key].concat();
    wait_until("the master runs what it was sent", || {
        matches!(
            cluster.ask(master, redis::cmd("GET").arg(&full)),
            Some(redis::Value::BulkString(_))
        ) && cluster
            .info_field(master, "commandstats", "cmdstat_incrby")
            .is_some()
    });
    let calls = cluster
        .info_field(master, "commandstats", "cmdstat_incrby")
        .unwrap_or_default();
    assert!(calls.starts_with("calls=1,"), "INCRBY {calls}");
    let mut out = Vec::new();
    let hit = s.get(&key, &mut out).unwrap().expect("the counter");
    assert!(
        matches!(hit.value, Fetched::Int(1)),
        "the INCR landed twice"
    );
}
