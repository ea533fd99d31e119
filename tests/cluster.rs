//! The gossip cluster with real `ephpm-node` processes on 127.0.0.N (`common::cluster`).
//!
//! ePHPm's three bugs each have a test here that fails when the nodes decide on their
//! own copies (the fault point `no-owner-routing`, switched on by `make prove-tests-can-fail`).

mod common;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::child;
use common::cluster::{
    SECRET, TestNode, dump_logs, eventually, start_cluster, wait_for_members, write_secret,
};
use common::{MB, TestDir};
use ephpm::cluster::placement::Members;
use ephpm::ground::dsn::Copies;
use ephpm::store::cluster::ClusterStore;
use ephpm::store::shm::{ShmOptions, ShmStore};
use ephpm::store::{Fetched, SetNx, Store, StoreError, Value};

fn ids(n: u8) -> Members {
    Members::new((1..=n).map(|i| Arc::from(format!("node-{i}"))))
}

/// The first key `key:N` whose owner among `members` is `node`.
fn key_owned_by(members: &Members, node: &str, tag: &str) -> Vec<u8> {
    (0..)
        .map(|i| format!("{tag}:{i}").into_bytes())
        .find(|k| &*members.owner(k).unwrap() == node)
        .unwrap()
}

fn string(s: &ClusterStore, key: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    s.get(key, &mut out).unwrap().map(|_| out)
}

/// The host's cluster segment itself, as the node keeps it (what PHP reads first).
#[test]
fn three_nodes_share_small_and_large_values_and_decide_at_the_owner() {
    let dir = TestDir::new("cl");
    let nodes = start_cluster(&dir, 3, &[]);
    let stores: Vec<_> = nodes.iter().map(TestNode::store).collect();
    stores[0].set(b"small", Value::Str(b"hello"), None).unwrap();
    let big = vec![b'x'; 10_000];
    stores[0]
        .set(b"big", Value::Str(&big), Some(Duration::from_secs(60)))
        .unwrap();
    for s in &stores {
        let mut out = Vec::new();
        let hit = s
            .get(b"small", &mut out)
            .unwrap()
            .expect("small everywhere");
        assert_eq!((hit.value, &out[..]), (Fetched::Str, &b"hello"[..]));
        let hit = s.get(b"big", &mut out).unwrap().expect("big everywhere");
        assert_eq!((hit.value, out.len()), (Fetched::Str, 10_000));
    }
    assert_eq!(
        stores[1].set_nx(b"small", Value::Int(1), None).unwrap(),
        SetNx::Exists
    );
    assert_eq!(stores[2].incr_by(b"n", 5, None).unwrap(), 5);
    assert_eq!(stores[0].incr_by(b"n", 1, None).unwrap(), 6);
    assert!(stores[1].del_if_eq(b"n", b"6").unwrap());
    assert!(string(&stores[2], b"n").is_none());
    // The small value reaches every host's segment by gossip: read there at shm speed.
    for n in &nodes {
        let seg = n.segment();
        eventually("the small value in every segment", || {
            seg.exists(b"small").unwrap().then_some(())
        });
    }
}

/// ePHPm's first bug: three nodes race for one lock, 30 rounds: exactly one winner.
#[test]
fn one_lock_three_racing_nodes_one_winner() {
    let dir = TestDir::new("race");
    let nodes = start_cluster(&dir, 3, &[]);
    let stores: Vec<_> = nodes.iter().map(TestNode::store).collect();
    let barrier = Barrier::new(3);
    for round in 0..30 {
        let name = format!("lock:{round}");
        let wins: usize = std::thread::scope(|t| {
            let racers: Vec<_> = stores
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let (name, barrier) = (&name, &barrier);
                    t.spawn(move || {
                        let token = format!("holder-{i}");
                        barrier.wait();
                        s.lock_acquire(name.as_bytes(), token.as_bytes(), Duration::from_secs(30))
                            .unwrap()
                            .is_some()
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap() as usize).sum()
        });
        assert_eq!(wins, 1, "round {round}");
    }
}

/// ePHPm's second bug: after a takeover (the lock expired, or an operator broke it),
/// the old holder's release is false, and the new holder keeps its lock everywhere.
#[test]
fn a_stale_release_after_a_takeover_is_false_and_the_new_holder_keeps_the_lock() {
    let dir = TestDir::new("stale");
    let nodes = start_cluster(&dir, 3, &[]);
    let s: Vec<_> = nodes.iter().map(TestNode::store).collect();
    let ttl = Duration::from_millis(300);
    assert!(
        s[0].lock_acquire(b"expiring", b"old", ttl)
            .unwrap()
            .is_some()
    );
    std::thread::sleep(ttl + Duration::from_millis(200));
    assert!(
        s[1].lock_acquire(b"expiring", b"new", Duration::from_secs(30))
            .unwrap()
            .is_some()
    );
    assert!(
        !s[0].lock_release(b"expiring", b"old").unwrap(),
        "the stale release freed a lock"
    );

    assert!(
        s[0].lock_acquire(b"broken", b"old", Duration::from_secs(30))
            .unwrap()
            .is_some()
    );
    // An operator breaks the lock (through another node) and somebody else takes it.
    s[1].del(b"broken").unwrap();
    assert!(
        s[1].lock_acquire(b"broken", b"new", Duration::from_secs(30))
            .unwrap()
            .is_some()
    );
    assert!(
        !s[0].lock_release(b"broken", b"old").unwrap(),
        "the stale release freed a lock"
    );

    std::thread::sleep(Duration::from_millis(500));
    for (i, store) in s.iter().enumerate() {
        for name in [&b"expiring"[..], b"broken"] {
            assert_eq!(
                string(store, name).as_deref(),
                Some(&b"new"[..]),
                "node {}",
                i + 1
            );
            assert!(
                store
                    .lock_acquire(name, b"third", Duration::from_secs(1))
                    .unwrap()
                    .is_none()
            );
        }
    }

    // The stale release racing the takeover, 60 rounds: whichever lands first at the
    // owner, the new holder that got the lock still holds it afterwards, everywhere.
    // (Decided on each node's own copy, the release sometimes lands after the takeover
    // with a later stamp, and its tombstone deletes the new holder's lock.)
    let mut rng = common::child::Rng::seeded();
    for round in 0..60 {
        let name = format!("raced:{round}");
        let name = name.as_bytes();
        let ttl = Duration::from_secs(30);
        assert!(s[0].lock_acquire(name, b"old", ttl).unwrap().is_some());
        let delay = Duration::from_micros(rng.below(400));
        let taken = std::thread::scope(|t| {
            let takeover = t.spawn(|| {
                s[1].del(name).unwrap();
                s[1].lock_acquire(name, b"new", ttl).unwrap().is_some()
            });
            t.spawn(|| {
                std::thread::sleep(delay);
                s[0].lock_release(name, b"old").unwrap()
            });
            takeover.join().unwrap()
        });
        assert!(taken, "round {round}: the takeover found the lock held");
        for (i, store) in s.iter().enumerate() {
            assert_eq!(
                string(store, name).as_deref(),
                Some(&b"new"[..]),
                "round {round}, node {}: the stale release deleted the new holder's lock",
                i + 1
            );
        }
    }
}

/// ePHPm's third bug: with the key's owner unreachable (stopped: it takes connections and
/// never answers), a decision is `Unavailable`, never a guess made elsewhere.
#[test]
fn an_unreachable_owner_is_unavailable_never_inserted() {
    let dir = TestDir::new("down");
    // Gossip every 500 ms: the failure detector takes seconds to declare the stopped node
    // dead, well past the calls' wait for it (with 100 ms, on a loaded machine, it could
    // declare it first, and the new owner then rightly decides).
    let nodes = start_cluster(&dir, 3, &["--gossip-interval-ms", "500"]);
    let key = key_owned_by(&ids(3), "node-3", "k");
    let s1 = nodes[0].store();
    nodes[2].signal(libc::SIGSTOP);
    let started = Instant::now();
    // Both at once, before the failure detector declares the stopped node dead (then
    // its keys have a new owner, which decides).
    let (nx, lock) = std::thread::scope(|t| {
        let nx = t.spawn(|| s1.set_nx(&key, Value::Int(1), Some(Duration::from_secs(30))));
        let lock = t.spawn(|| s1.lock_acquire(&key, b"t", Duration::from_secs(30)));
        (nx.join().unwrap(), lock.join().unwrap())
    });
    nodes[2].signal(libc::SIGCONT);
    assert!(
        matches!(nx, Err(StoreError::Unavailable { .. })),
        "set_nx with the owner stopped gave {nx:?}"
    );
    assert!(
        matches!(lock, Err(StoreError::Unavailable { .. })),
        "lock_acquire with the owner stopped gave {lock:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it waited {:?}",
        started.elapsed()
    );
}

/// A paused host that holds no copy of a lock (neither its owner nor its replica) costs
/// the lock's operations nothing: nothing reads a lock from a host's segment, so the
/// owner sends that host its copy without waiting for it. When it waited, each operation
/// took the node timeout (1 s) until the failure detector gave up on the paused host, so
/// the host was no member any more by the time 20 lock cycles were done; now they are
/// done while it still is (gossip every second: the detector needs many seconds).
#[test]
fn a_paused_host_that_holds_no_copy_of_a_lock_never_delays_it() {
    let dir = TestDir::new("paused");
    let gossip = ["--gossip-interval-ms", "1000"];
    // Node 4 joins three that have found each other: then no placement node 1 asks while
    // it catches up after a change (the one before it) has node 4 in it.
    let mut nodes = start_cluster(&dir, 3, &gossip);
    nodes.push(TestNode::start(&dir, 4, &[nodes[0].gossip], &gossip));
    let all: Vec<String> = nodes.iter().map(TestNode::id).collect();
    for node in &nodes {
        wait_for_members(node, &all);
    }
    // Placed on nodes 1 and 2, before node 4 joined and after.
    let key = (0..)
        .map(|i| format!("lock:{i}").into_bytes())
        .find(|k| {
            let two = |m: &Members| {
                m.place(k, 2)
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
            };
            two(&ids(4)) == ["node-1", "node-2"] && two(&ids(3)) == ["node-1", "node-2"]
        })
        .unwrap();
    let s1 = nodes[0].store();
    let token = b"paused-token";
    let ttl = Duration::from_secs(30);
    nodes[3].signal(libc::SIGSTOP);
    for _ in 0..20 {
        assert!(s1.lock_acquire(&key, token, ttl).unwrap().is_some());
        assert!(s1.lock_release(&key, token).unwrap());
    }
    let members = s1.members().unwrap();
    nodes[3].signal(libc::SIGCONT);
    if !members.iter().any(|m| m == "node-4") {
        dump_logs(&dir.0);
        panic!("20 lock cycles outlasted the failure detector: members {members:?}");
    }
}

/// A stopped replica costs the owner its one-second wait for the copy, never the write:
/// the node that routed the request waits for the owner longer than the owner waits for
/// its replicas (with equal waits the write landed and the caller was told it failed).
#[test]
fn a_stopped_replica_slows_a_write_but_never_fails_it() {
    let dir = TestDir::new("slowrep");
    let nodes = start_cluster(&dir, 3, &[]);
    let key = key_owned_by(&ids(3), "node-2", "k");
    let s1 = nodes[0].store();
    nodes[2].signal(libc::SIGSTOP);
    let written = s1.set_nx(&key, Value::Str(b"v"), Some(Duration::from_secs(30)));
    nodes[2].signal(libc::SIGCONT);
    assert!(
        matches!(written, Ok(SetNx::Inserted)),
        "set_nx gave {written:?}"
    );
    assert_eq!(string(&s1, &key), Some(b"v".to_vec()));
}

/// Writes decided on three nodes at once never wait on one another: an owner copies a
/// write to the others without holding the key's stripe, so two owners copying to each
/// other keys of one stripe no longer both wait out the timeout (each such stall left a
/// "missed a write" line: a few in most runs of this test before the fix).
#[test]
fn writes_decided_on_three_nodes_at_once_never_stall_each_other() {
    let dir = TestDir::new("stall");
    let nodes = start_cluster(&dir, 3, &[]);
    std::thread::scope(|t| {
        for (n, node) in nodes.iter().enumerate() {
            let s = node.store();
            t.spawn(move || {
                for i in 0..1500 {
                    let key = format!("w{n}:{i}");
                    s.set(key.as_bytes(), Value::Int(i), None).unwrap();
                }
            });
        }
    });
    let stalls: usize = nodes
        .iter()
        .map(|n| n.log().matches("missed a write").count())
        .sum();
    assert_eq!(stalls, 0, "copies waited out the timeout {stalls} times");
}

const RACERS_PER_NODE: usize = 8;
const LOCK_ROUNDS: i64 = 100;

fn coordination(dir: &str) -> ShmStore {
    let opts = ShmOptions {
        dir: dir.into(),
        ..ShmOptions::new("coord", 4 * MB)
    };
    ShmStore::open(&opts).unwrap().0
}

/// Child side of `thirty_two_processes_over_four_nodes_race_one_lock`.
#[test]
fn child_lock_racer() {
    let Some(job) = child::job().and_then(|j| j.strip_prefix("racer:").map(String::from)) else {
        return;
    };
    let (dir, node) = job.split_once('|').unwrap();
    let opts = ShmOptions {
        dir: dir.into(),
        ..ShmOptions::new(&format!("n{node}"), 16 << 20)
    };
    let cluster = ClusterStore::open(&opts, Duration::from_secs(5), b"", Copies::Sync)
        .unwrap()
        .0;
    let coord = coordination(dir);
    let token = format!("{}", std::process::id());
    child::ready();
    let mut out = Vec::new();
    for round in 0..LOCK_ROUNDS {
        while counter(&coord, b"round", &mut out) < round + 1 {
            std::thread::sleep(Duration::from_micros(200));
        }
        let name = format!("lock:{round}");
        if cluster
            .lock_acquire(name.as_bytes(), token.as_bytes(), Duration::from_secs(60))
            .unwrap()
            .is_some()
        {
            coord
                .incr_by(format!("wins:{round}").as_bytes(), 1, None)
                .unwrap();
        }
        coord
            .incr_by(format!("done:{round}").as_bytes(), 1, None)
            .unwrap();
    }
}

fn counter(s: &ShmStore, key: &[u8], out: &mut Vec<u8>) -> i64 {
    match s.get(key, out).unwrap() {
        Some(h) => match h.value {
            Fetched::Int(n) => n,
            other => panic!("{other:?}"),
        },
        None => 0,
    }
}

/// 32 processes, 8 on each of 4 nodes, race for one lock, 100 rounds: exactly one
/// winner each round.
#[test]
fn thirty_two_processes_over_four_nodes_race_one_lock() {
    if child::job().is_some() {
        return;
    }
    let dir = TestDir::new("r32");
    let nodes = start_cluster(&dir, 4, &[]);
    let coord = coordination(&dir.0.display().to_string());
    let mut kids: Vec<_> = (0..4 * RACERS_PER_NODE)
        .map(|i| {
            let job = format!("racer:{}|{}", dir.0.display(), nodes[i % 4].index);
            child::spawn("child_lock_racer", &job)
        })
        .collect();
    let mut out = Vec::new();
    let all = (4 * RACERS_PER_NODE) as i64;
    for round in 0..LOCK_ROUNDS {
        coord.set(b"round", Value::Int(round + 1), None).unwrap();
        let done = format!("done:{round}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while counter(&coord, done.as_bytes(), &mut out) < all {
            assert!(Instant::now() < deadline, "round {round} never finished");
            std::thread::sleep(Duration::from_millis(1));
        }
        let wins = counter(&coord, format!("wins:{round}").as_bytes(), &mut out);
        assert_eq!(wins, 1, "round {round}");
    }
    for k in &mut kids {
        assert!(k.wait().unwrap().success());
    }
}

/// A large value written on node 1 is read on every node, and still after its owner
/// is killed (from a replica).
#[test]
fn a_large_value_is_read_everywhere_and_from_a_replica_once_its_owner_dies() {
    let dir = TestDir::new("big");
    let mut nodes = start_cluster(&dir, 3, &[]);
    let key = key_owned_by(&ids(3), "node-3", "big");
    let value = vec![7u8; 200_000];
    nodes[0]
        .store()
        .set(&key, Value::Str(&value), None)
        .unwrap();
    for n in &nodes {
        assert_eq!(
            string(&n.store(), &key).map(|v| v.len()),
            Some(value.len()),
            "{}",
            n.id()
        );
    }
    nodes[2].kill();
    for n in &nodes[..2] {
        assert_eq!(
            string(&n.store(), &key).as_deref(),
            Some(&value[..]),
            "{} after the owner died",
            n.id()
        );
    }
    let survivors = [nodes[0].id(), nodes[1].id()];
    wait_for_members(&nodes[0], &survivors);
    for n in &nodes[..2] {
        assert_eq!(
            string(&n.store(), &key).as_deref(),
            Some(&value[..]),
            "{} once the owner left",
            n.id()
        );
    }
}

/// A fourth node joins: the share of keys whose owner changes is at most 1/4 + 0.02
/// (hash % n would move 3/4), and every key stays readable during and after the hand-off.
#[test]
fn a_fourth_node_moves_a_quarter_of_the_keys_and_every_key_stays_readable() {
    let dir = TestDir::new("join");
    let nodes = start_cluster(&dir, 3, &[]);
    let keys: Vec<Vec<u8>> = (0..4000).map(|i| format!("key:{i}").into_bytes()).collect();
    let s1 = nodes[0].store();
    for (i, k) in keys.iter().enumerate() {
        let v = if i % 2 == 0 {
            vec![b's'; 20]
        } else {
            vec![b'L'; 2_000]
        };
        s1.set(k, Value::Str(&v), None).unwrap();
    }
    let moved = keys
        .iter()
        .filter(|k| ids(3).owner(k) != ids(4).owner(k))
        .count();
    let share = moved as f64 / keys.len() as f64;
    assert!(share <= 0.25 + 0.02, "{share} of the keys changed owner");
    eprintln!(
        "a fourth node: {share:.4} of {} keys changed owner",
        keys.len()
    );

    let fourth = TestNode::start(&dir, 4, &[nodes[0].gossip], &[]);
    let readers: Vec<ClusterStore> = nodes.iter().map(TestNode::store).collect();
    let all: Vec<String> = (1..=4).map(|i| format!("node-{i}")).collect();
    let joined_at = Instant::now();
    // During the hand-off: every key, on every old node, over and over.
    while joined_at.elapsed() < Duration::from_secs(3) {
        for r in &readers {
            for k in &keys {
                assert!(
                    string(r, k).is_some(),
                    "{} unreadable during the join",
                    String::from_utf8_lossy(k)
                );
            }
        }
    }
    for n in nodes.iter().chain([&fourth]) {
        wait_for_members(n, &all);
    }
    let stores: Vec<ClusterStore> = nodes.iter().chain([&fourth]).map(TestNode::store).collect();
    for s in &stores {
        for k in &keys {
            assert!(
                string(s, k).is_some(),
                "{} unreadable after the join",
                String::from_utf8_lossy(k)
            );
        }
    }
    // The new owner holds what it owns now, in its own segment.
    let seg = fourth.segment();
    let owned: Vec<_> = keys
        .iter()
        .filter(|k| &*ids(4).owner(k).unwrap() == "node-4")
        .collect();
    eventually("the moved keys in the new owner's segment", || {
        owned.iter().all(|k| seg.exists(k).unwrap()).then_some(())
    });
}

/// Every node restarted in turn (a new generation, the same id and host store): no
/// value is lost, and every one is read on every node.
#[test]
fn a_rolling_restart_loses_nothing() {
    let dir = TestDir::new("roll");
    let mut nodes = start_cluster(&dir, 3, &[]);
    let keys: Vec<Vec<u8>> = (0..150).map(|i| format!("roll:{i}").into_bytes()).collect();
    let s1 = nodes[0].store();
    for (i, k) in keys.iter().enumerate() {
        s1.set(k, Value::Int(i as i64), None).unwrap();
    }
    let all: Vec<String> = (1..=3).map(|i| format!("node-{i}")).collect();
    for i in 0..nodes.len() {
        nodes[i].restart();
        for n in &nodes {
            wait_for_members(n, &all);
        }
        // Wait until the restarted node answers for every key, then write more through it.
        let s = nodes[i].store();
        for (j, k) in keys.iter().enumerate() {
            let mut out = Vec::new();
            let hit = eventually("a key after the restart", || {
                s.get(k, &mut out).ok().flatten()
            });
            assert_eq!(
                hit.value,
                Fetched::Int(j as i64),
                "{} after restarting node {}",
                String::from_utf8_lossy(k),
                i + 1
            );
        }
    }
    for n in &nodes {
        let s = n.store();
        for (j, k) in keys.iter().enumerate() {
            let mut out = Vec::new();
            let hit = s.get(k, &mut out).unwrap();
            assert_eq!(
                hit.map(|h| h.value),
                Some(Fetched::Int(j as i64)),
                "on {}",
                n.id()
            );
        }
    }
    let _ = dump_logs;
}

/// A node with another secret never becomes a member and sees none of the data; one
/// without a secret does not start at all.
#[test]
fn a_wrong_secret_is_invisible_and_an_empty_one_is_a_startup_error() {
    let dir = TestDir::new("sec");
    let nodes = start_cluster(&dir, 2, &[]);
    nodes[0]
        .store()
        .set(b"secret-data", Value::Str(b"for members"), None)
        .unwrap();
    let other = dir.0.join("other.secret");
    write_secret(&other, "bm90LXRoZS10ZXN0LXNlY3JldC0xMjgtYml0cw");
    let intruder = TestNode::start(
        &dir,
        3,
        &[nodes[0].gossip],
        &["--secret-file", other.to_str().unwrap()],
    );
    std::thread::sleep(Duration::from_secs(2));
    let members = |n: &TestNode| n.store().members().unwrap();
    assert_eq!(members(&nodes[0]), ["node-1", "node-2"]);
    assert_eq!(members(&intruder), ["node-3"]);
    assert!(string(&intruder.store(), b"secret-data").is_none());
    assert!(!intruder.segment().exists(b"secret-data").unwrap());
    assert_ne!(SECRET, "bm90LXRoZS10ZXN0LXNlY3JldC0xMjgtYml0cw");
    eventually("node 1 says it drops the intruder's datagrams", || {
        let log = std::fs::read_to_string(dir.0.join("node-1.log")).unwrap_or_default();
        log.contains("failed authentication").then_some(())
    });

    let mut unsecured = TestNode::start(&dir, 5, &[], &["--no-secret"]);
    let status = eventually("the node without a secret exits", || unsecured.exited());
    assert_eq!(status.code(), Some(1));
    let log = std::fs::read_to_string(dir.0.join("node-5.log")).unwrap();
    assert!(
        log.contains("the secret (--secret-file or EPHPM_CLUSTER_SECRET) is empty"),
        "{log}"
    );

    let insecure = TestNode::start(&dir, 6, &[], &["--no-secret", "--allow-insecure-no-auth"]);
    eventually("the insecure node warns", || {
        let log = std::fs::read_to_string(dir.0.join("node-6.log")).unwrap_or_default();
        log.contains("WITHOUT AUTHENTICATION").then_some(())
    });
    assert_eq!(members(&insecure), ["node-6"]);
}

/// A value past what one gossip key may carry goes to the data plane (its owner and
/// replica), and gossip keeps flowing for the small keys written after it.
#[test]
fn a_value_over_the_gossip_limit_goes_to_the_data_plane_and_gossip_keeps_flowing() {
    let dir = TestDir::new("lim");
    let nodes = start_cluster(&dir, 3, &[]);
    let s1 = nodes[0].store();
    let huge = vec![b'h'; 100_000];
    s1.set(b"huge", Value::Str(&huge), None).unwrap();
    for i in 0..20 {
        s1.set(format!("after:{i}").as_bytes(), Value::Int(i), None)
            .unwrap();
    }
    for n in &nodes {
        let seg = n.segment();
        eventually(
            "small keys written after the huge one, in every segment",
            || {
                (0..20)
                    .all(|i| seg.exists(format!("after:{i}").as_bytes()).unwrap())
                    .then_some(())
            },
        );
        assert_eq!(
            string(&n.store(), b"huge").map(|v| v.len()),
            Some(huge.len())
        );
    }
    // The owner and the replica hold the value; the third host holds gossip's marker
    // (read once, it keeps no copy).
    let holders = ids(3).place(b"huge", 2);
    for n in &nodes {
        let held = holders.iter().any(|h| **h == *n.id());
        let want = if held { "value" } else { "elsewhere" };
        eventually("the marker on the host that does not hold it", || {
            (n.segment_state(b"huge") == Some(want)).then_some(())
        });
    }
}

/// With push_writes off, a small value still reaches every host, by gossip alone, and a
/// later write replaces it there.
#[test]
fn gossip_alone_carries_small_values_to_every_host() {
    let dir = TestDir::new("gos");
    let nodes = start_cluster(&dir, 3, &["--no-push"]);
    let key = (0..)
        .map(|i| format!("g:{i}").into_bytes())
        .find(|k| !ids(3).place(k, 2).iter().any(|n| &**n == "node-3"))
        .unwrap();
    let s1 = nodes[0].store();
    s1.set(&key, Value::Int(1), None).unwrap();
    let seg = nodes[2].segment();
    let mut out = Vec::new();
    let int_in_segment = |seg: &ShmStore, out: &mut Vec<u8>| {
        let mut n = None;
        seg.read(&key, &mut |v| {
            if let Value::Str(e) = v {
                if let Some((_, ephpm::wire::entry::State::Value(Value::Int(i)))) =
                    ephpm::wire::entry::parse(e)
                {
                    n = Some(i);
                }
            }
        })
        .unwrap();
        out.clear();
        n
    };
    eventually("the value on node 3 by gossip", || {
        (int_in_segment(&seg, &mut out) == Some(1)).then_some(())
    });
    s1.set(&key, Value::Int(2), None).unwrap();
    eventually("the new value on node 3 by gossip", || {
        (int_in_segment(&seg, &mut out) == Some(2)).then_some(())
    });
}

/// Fencing numbers grow across releases, expiries and an owner's death (the replica that
/// takes over numbers above what it was sent).
#[test]
fn fences_grow_across_releases_expiries_and_a_new_owner() {
    let dir = TestDir::new("fence");
    let mut nodes = start_cluster(&dir, 3, &[]);
    let name = key_owned_by(&ids(3), "node-3", "fence");
    let s1 = nodes[0].store();
    let ttl = Duration::from_secs(30);
    let f1 = s1.lock_acquire(&name, b"a", ttl).unwrap().unwrap();
    assert!(s1.lock_release(&name, b"a").unwrap());
    let f2 = s1
        .lock_acquire(&name, b"b", Duration::from_millis(200))
        .unwrap()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let f3 = s1.lock_acquire(&name, b"c", ttl).unwrap().unwrap();
    assert!(f1 < f2 && f2 < f3, "{f1} {f2} {f3}");
    nodes[2].kill();
    wait_for_members(&nodes[0], &[nodes[0].id(), nodes[1].id()]);
    wait_for_members(&nodes[1], &[nodes[0].id(), nodes[1].id()]);
    // The replica kept c's lock: the holder keeps it across the owner's death.
    assert!(s1.lock_acquire(&name, b"d", ttl).unwrap().is_none());
    assert!(s1.lock_release(&name, b"c").unwrap());
    let f4 = s1.lock_acquire(&name, b"d", ttl).unwrap().unwrap();
    assert!(f4 > f3, "{f3} then {f4}");
}

/// `ephpm-node` stopped by SIGTERM (systemd) exits 0, having given its lease and its
/// socket up (killed, it leaves both to expire).
#[test]
fn a_node_stopped_by_sigterm_gives_its_lease_up() {
    let dir = TestDir::new("term");
    let mut nodes = start_cluster(&dir, 1, &[]);
    let socket = ephpm::wire::socket_path(&nodes[0].options()).unwrap();
    assert!(socket.exists());
    nodes[0].signal(libc::SIGTERM);
    let status = eventually("the node exits", || nodes[0].exited());
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists(), "the socket was left behind");
}
