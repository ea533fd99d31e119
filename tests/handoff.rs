//! The hand-off at scale: a fourth node joins a 3-node cluster (real `ephpm-node`
//! processes, `common::cluster`) that holds many keys, and receives every entry it is
//! now placed for; and the batch it comes in never undoes a newer write or a delete.
//!
//! Done is counted, never timed: each old node logs one "handed N entries" line when
//! its hand-off has been acknowledged, and then the new node's segment must hold every
//! key of its placement. The duration is printed, not asserted (`--nocapture`).
//! The million-key run is behind `make test-fleet` (`--ignored`): minutes on 2 cores.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::TestDir;
use common::cluster::{
    SECRET, TestNode, dump_logs, eventually, free_data_addr, start_cluster, wait_for_members,
};
use ephpm::cluster::crypto::handshake;
use ephpm::cluster::keyring::Keyring;
use ephpm::cluster::peers::Peers;
use ephpm::cluster::placement::Members;
use ephpm::store::{KeyTtl, Store, Value};
use ephpm::wire::entry::{self, State};
use ephpm::wire::{self, BATCH_BYTES, Entry, Op, Response, Route};

/// The clusters of these tests are large: one at a time, or they time each other.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The loader's and the reader's threads.
const THREADS: usize = 6;

fn key(i: usize) -> Vec<u8> {
    format!("h:{i}").into_bytes()
}

fn value(i: usize) -> Vec<u8> {
    format!("v{i}").into_bytes()
}

fn members(n: u8) -> Members {
    Members::new((1..=n).map(|i| Arc::from(format!("node-{i}"))))
}

/// A segment size for `keys` small keys on every node (each holds all of them).
fn segment_for(keys: usize) -> String {
    format!("{}M", 32 + keys / 1500)
}

/// The nodes' arguments: a segment of `size`, and the default gossip interval (the
/// tests' 100 ms has chitchat's rounds over thousands of published keys take the
/// 2 cores of a test machine from the writes).
fn node_args(size: &str) -> [&str; 4] {
    ["--shm-size", size, "--gossip-interval-ms", "1000"]
}

/// Calls `f(i)` for every `i` in `0..n`, spread over `THREADS` threads.
fn spread(n: usize, f: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let f = &f;
            s.spawn(move || {
                for i in (t..n).step_by(THREADS) {
                    f(i);
                }
            });
        }
    });
}

/// Writes keys `0..n`, each once, through its owner's store: one owner at a time, many
/// threads each. (Owners deciding at once stall one another: an owner keeps the key's
/// stripe while it copies the write to the others, and a copy waits for the stripe of
/// its key there, which another owner may keep while copying to this one, until the
/// 1 s timeout. Writes that race across owners run at about 1,000 a second on 2 cores;
/// one owner at a time, 6,000.)
fn fill(nodes: &[TestNode], n: usize) {
    let three = members(3);
    for node in nodes {
        let store = node.store();
        let owned: Vec<usize> = (0..n)
            .filter(|&i| *three.owner(&key(i)).unwrap() == *node.id())
            .collect();
        spread(owned.len(), |j| {
            let i = owned[j];
            store
                .set(&key(i), Value::Str(&value(i)), None)
                .unwrap_or_else(|e| panic!("writing key {i}: {e}"))
        });
    }
}

/// Waits until each of `nodes` has logged the end of a hand-off.
fn wait_for_handoffs(nodes: &[TestNode], deadline: Duration) {
    let started = Instant::now();
    loop {
        if nodes.iter().all(|n| n.log().contains("handed ")) {
            return;
        }
        if started.elapsed() > deadline {
            dump_logs(&nodes[0].dir);
            panic!("the old nodes did not finish their hand-off");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The keys of `0..n` that node-4 is placed for (owner or replica) in 4 nodes.
fn placed_on_the_fourth(n: usize) -> Vec<usize> {
    let four = members(4);
    (0..n)
        .filter(|&i| four.place(&key(i), 2).iter().any(|m| &**m == "node-4"))
        .collect()
}

/// The string value `seg` (a node's own segment) holds for `key`, if it holds one.
fn held(seg: &ephpm::store::shm::ShmStore, key: &[u8]) -> Option<Vec<u8>> {
    let mut found = None;
    seg.read(key, &mut |v| {
        if let Value::Str(e) = v {
            if let Some((_, State::Value(Value::Str(b)))) = entry::parse(e) {
                found = Some(b.to_vec());
            }
        }
    })
    .expect("read the segment");
    found
}

/// Three nodes with `n` keys, then a fourth: waits for the hand-off, checks that the
/// fourth's segment holds every key of its placement and that every key reads its
/// value through every node (all keys, on every node).
fn a_fourth_node_takes_its_share(n: usize) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TestDir::new("handoff");
    let size = segment_for(n);
    let nodes = start_cluster(&dir, 3, &node_args(&size));
    let loaded = Instant::now();
    fill(&nodes, n);
    eprintln!(
        "{n} keys written through 3 nodes in {:.1} s",
        loaded.elapsed().as_secs_f64()
    );
    let mine = placed_on_the_fourth(n);

    let joined = Instant::now();
    let fourth = TestNode::start(&dir, 4, &[nodes[0].gossip], &node_args(&size));
    let store = fourth.store();
    while !store.members().is_ok_and(|m| m.len() == 4) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let seen = joined.elapsed();
    wait_for_handoffs(&nodes, Duration::from_secs(900));
    let took = joined.elapsed();
    let seg = fourth.segment();
    let missing: Vec<usize> = mine
        .iter()
        .copied()
        .filter(|&i| held(&seg, &key(i)) != Some(value(i)))
        .collect();
    for node in nodes.iter().chain([&fourth]) {
        eprintln!("{}'s segment: {:?}", node.id(), node.segment().stats());
    }
    if !missing.is_empty() {
        dump_logs(&dir.0);
    }
    assert!(
        missing.is_empty(),
        "{} of the {} keys placed on node-4 are not in its segment after the hand-off \
         (first: {:?})",
        missing.len(),
        mine.len(),
        &missing[..missing.len().min(5)]
    );
    for line in nodes.iter().flat_map(|n| {
        n.log()
            .lines()
            .filter(|l| l.contains("handed "))
            .map(String::from)
            .collect::<Vec<_>>()
    }) {
        eprintln!("{line}");
    }
    eprintln!(
        "hand-off of {n} keys to a 4th node ({} entries placed on it): {:.2} s from its \
         start, {:.2} s from when it saw the 3 others",
        mine.len(),
        took.as_secs_f64(),
        (took - seen).as_secs_f64()
    );

    let all: Vec<String> = (1..=4).map(|i| format!("node-{i}")).collect();
    for node in nodes.iter().chain([&fourth]) {
        wait_for_members(node, &all);
    }
    for node in nodes.iter().chain([&fourth]) {
        let store = node.store();
        let (missing, failed) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let read = Instant::now();
        spread(n, |i| {
            let mut out = Vec::new();
            match store.get(&key(i), &mut out) {
                Ok(Some(_)) if out == value(i) => {}
                Ok(_) => _ = missing.fetch_add(1, Ordering::Relaxed),
                Err(_) => _ = failed.fetch_add(1, Ordering::Relaxed),
            }
        });
        let (missing, failed) = (missing.into_inner(), failed.into_inner());
        assert!(
            missing + failed == 0,
            "through {}: {missing} keys missing or wrong, {failed} reads failed; its \
             segment: {:?}",
            node.id(),
            store.stats()
        );
        eprintln!(
            "all {n} keys read through {} in {:.1} s",
            node.id(),
            read.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn a_fourth_node_takes_its_share_of_100k_keys_and_every_key_stays_readable() {
    a_fourth_node_takes_its_share(100_000);
}

/// `make test-fleet`.
#[test]
#[ignore = "minutes: make test-fleet"]
fn a_fourth_node_takes_its_share_of_a_million_keys_and_every_key_stays_readable() {
    a_fourth_node_takes_its_share(1_000_000);
}

/// A batch as the hand-off sends it, to a node that holds a newer write of one key and
/// the delete of another: each entry goes in as a `Put` would, only over an older copy
/// (never undoing the write, never bringing the deleted key back), a new key with its
/// TTL. A batch over the bound and a count that the frame cannot hold are refused (the
/// connection ends unanswered), and the node serves on.
#[test]
fn a_batch_never_undoes_a_newer_write_or_a_delete_and_a_bad_one_is_refused() {
    let dir = TestDir::new("batch");
    let data = free_data_addr(1);
    let node = TestNode::start(&dir, 1, &[], &["--data", &data.to_string()]);
    let store = node.store();
    eventually("the node serves", || store.members().ok());
    store.set(b"newer", Value::Str(b"written"), None).unwrap();
    store.set(b"deleted", Value::Str(b"x"), None).unwrap();
    assert!(store.del(b"deleted").unwrap());
    // Stamp 1: older than anything the node's clock decides.
    let handed = |ttl| Entry {
        stored: entry::value(1, Value::Str(b"handed")),
        ttl,
    };
    let batch = Op::PutMany {
        entries: vec![
            (b"newer".to_vec(), handed(None)),
            (b"deleted".to_vec(), handed(None)),
            (b"absent".to_vec(), handed(Some(Duration::from_secs(600)))),
        ],
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let peers = Peers::new(Arc::new(Keyring::new(&[SECRET.as_bytes().to_vec()])));
    let ask = |op: &Op| rt.block_on(peers.ask((data, 2), Route::Here, op, Duration::from_secs(5)));
    assert_eq!(ask(&batch), Ok(Response::Done));
    let string = |k: &[u8]| {
        let mut out = Vec::new();
        store.get(k, &mut out).unwrap().map(|_| out)
    };
    assert_eq!(string(b"newer").as_deref(), Some(&b"written"[..]));
    assert_eq!(string(b"deleted"), None);
    assert_eq!(node.segment_state(b"deleted"), Some("deleted"));
    assert_eq!(string(b"absent").as_deref(), Some(&b"handed"[..]));
    match store.ttl(b"absent").unwrap() {
        KeyTtl::Remaining(left) => assert!(left > Duration::from_secs(500), "{left:?}"),
        other => panic!("the TTL was not kept: {other:?}"),
    }

    let half = vec![b'x'; BATCH_BYTES / 2];
    let over = Op::PutMany {
        entries: ["over:1", "over:2"]
            .map(|k| {
                let stored = entry::value(1, Value::Str(&half));
                (k.as_bytes().to_vec(), Entry { stored, ttl: None })
            })
            .to_vec(),
    };
    assert!(ask(&over).is_err(), "a batch over the bound is refused");
    assert_eq!(string(b"over:1"), None);
    let mut claim = vec![Route::Here as u8, 17];
    claim.extend_from_slice(&(1u64 << 40).to_be_bytes());
    claim.extend_from_slice(&[0; 64]);
    let answered = rt.block_on(async {
        let mut conn = tokio::net::TcpStream::connect(data).await.unwrap();
        let mut session = handshake::initiate(&mut conn, &[SECRET.as_bytes().to_vec()], 2)
            .await
            .unwrap();
        wire::write_frame_async(&mut conn, &session.seal(&claim))
            .await
            .unwrap();
        wire::read_frame_async(&mut conn).await
    });
    assert!(
        answered.is_err(),
        "a count the frame cannot hold is refused"
    );
    assert_eq!(
        ask(&Op::Members),
        Ok(Response::Members(vec!["node-1".into()]))
    );
    assert!(node.log().lines().all(|l| !l.contains("panicked")));
}
