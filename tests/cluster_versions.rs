//! A rolling upgrade: nodes of an older build (data-plane version 2 only) and of the
//! next one (versions 2 and 3) in one fleet keep serving with nothing lost — values,
//! locks and their fences, `?copies=async` lock operations (an old owner gets them as
//! awaited ones), the hand-off to a node that joins, a secret's rotation — and once
//! every node is upgraded they speak 3 with each other. A node of a version
//! nobody else knows is no member, and both sides say so naming both versions.
//!
//! One build plays every part: it needs the cargo feature `fault-points`, with which a
//! node takes its versions from the fault point `wire-versions` (`src/fault.rs`,
//! `src/wire/version.rs`). With the point `no-wire-negotiation` switched on as well
//! (`FAILPOINTS=no-wire-negotiation=return` for the test, which its nodes inherit: a
//! node then speaks its highest version whatever its peer speaks) the mixed fleet
//! fails: `make prove-tests-can-fail`.

mod common;

use common::TestDir;
use common::cluster::*;
use ephpm::ground::dsn::Copies;
use ephpm::store::{Store, Value};

const A: &str = "dmVyc2lvbnMtc2VjcmV0LUEtb2YtMTI4LWJpdHM";
const B: &str = "dmVyc2lvbnMtc2VjcmV0LUItb2YtMTI4LWJpdHM";
const OLD: &str = "2";
const NEW: &str = "2,3";

/// A node's FAILPOINTS: the test's own (what `make prove-tests-can-fail` switches on)
/// and the node's versions.
fn speaking(versions: &str) -> String {
    let inherited = std::env::var("FAILPOINTS").unwrap_or_default();
    format!("{inherited};wire-versions=return({versions})")
}

fn start(dir: &TestDir, index: u8, seeds: &[std::net::SocketAddr], versions: &str) -> TestNode {
    let file = dir.0.join("cluster.secret");
    TestNode::start_env(
        dir,
        index,
        seeds,
        &["--secret-file", file.to_str().unwrap()],
        &[("FAILPOINTS", &speaking(versions))],
    )
}

fn ids(nodes: &[&TestNode]) -> Vec<String> {
    nodes.iter().map(|n| n.id()).collect()
}

/// Every key written so far reads back right through `node`.
fn all_there(node: &TestNode, written: &[(String, i64)]) {
    let store = node.store();
    for (key, value) in written {
        let mut out = Vec::new();
        let hit = eventually(&format!("{key} reads through {}", node.id()), || {
            store.get(key.as_bytes(), &mut out).ok()
        });
        assert!(hit.is_some(), "{key} is lost, read through {}", node.id());
        assert_eq!(
            hit.unwrap().value,
            ephpm::store::Fetched::Int(*value),
            "{key} through {}",
            node.id()
        );
    }
}

/// Writes `n` keys `prefix:i` through `node`, remembering them in `written`.
fn write(node: &TestNode, prefix: &str, n: i64, written: &mut Vec<(String, i64)>) {
    let store = node.store();
    for i in 0..n {
        let key = format!("{prefix}:{i}");
        store
            .set(key.as_bytes(), Value::Int(i), None)
            .unwrap_or_else(|e| panic!("write {key} through {}: {e}", node.id()));
        written.push((key, i));
    }
}

/// The version `node`'s node speaks with each member, from `ephpm cluster --json`.
fn versions_spoken(node: &TestNode) -> Vec<(String, Option<u64>)> {
    let doc = cluster_json(node).unwrap_or_else(|e| panic!("ephpm cluster: {e}"));
    doc["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap().to_string(), m["version"].as_u64()))
        .collect()
}

#[test]
fn a_fleet_of_two_builds_keeps_every_value_and_lock_through_an_upgrade() {
    let dir = TestDir::new("versions");
    write_secret(&dir.0.join("cluster.secret"), &format!("{A}\n"));
    let n1 = start(&dir, 1, &[], OLD);
    let n2 = start(&dir, 2, &[n1.gossip], OLD);
    let n3 = start(&dir, 3, &[n1.gossip], OLD);
    let old = ids(&[&n1, &n2, &n3]);
    for n in [&n1, &n2, &n3] {
        wait_for_members(n, &old);
    }
    let mut written = Vec::new();
    write(&n1, "old", 100, &mut written);
    let token = [b'a'; 32];
    let first_fence = n2
        .store()
        .lock_acquire(b"upgrade:lock", &token, std::time::Duration::from_secs(120))
        .unwrap()
        .expect("the lock is free");

    // A node of the next build joins: entries are handed to it, and every old node
    // and it serve each other's keys.
    let n4 = start(&dir, 4, &[n1.gossip], NEW);
    let mixed = ids(&[&n1, &n2, &n3, &n4]);
    for n in [&n1, &n2, &n3, &n4] {
        wait_for_members(n, &mixed);
    }
    write(&n4, "mixed", 100, &mut written);
    for n in [&n1, &n4] {
        all_there(n, &written);
    }
    assert!(
        written
            .iter()
            .any(|(k, _)| n4.segment_state(k.as_bytes()) == Some("value")),
        "nothing was handed to or copied to the new node"
    );
    // The old node's lock holds on the new one, and a release there lets the next in
    // with a greater fence.
    let other = [b'b'; 32];
    let s4 = n4.store();
    let ttl = std::time::Duration::from_secs(30);
    assert_eq!(s4.lock_acquire(b"upgrade:lock", &other, ttl).unwrap(), None);
    assert!(s4.lock_release(b"upgrade:lock", &token).unwrap());
    let next_fence = s4
        .lock_acquire(b"upgrade:lock", &other, ttl)
        .unwrap()
        .expect("released");
    assert!(next_fence > first_fence, "{next_fence} after {first_fence}");
    // `?copies=async` through the new node: an old owner gets the operation as an
    // awaited one (version 2 cannot say async, and an old node refuses it).
    async_cycles(&n4, "mixed");
    // Old and new speak 2 with each other.
    assert!(
        versions_spoken(&n4)
            .iter()
            .all(|(id, v)| *v == Some(if id == "node-4" { 3 } else { 2 })),
        "{:?}",
        versions_spoken(&n4)
    );

    // The mixed fleet rotates its secret, every node taking each step while it runs.
    let file = dir.0.join("cluster.secret");
    for (step, content) in rotation_steps(A, B).iter().enumerate() {
        write_secret(&file, content);
        for n in [&n1, &n2, &n3, &n4] {
            eventually("every node takes the new secret file", || {
                (reloads(n) > step).then_some(())
            });
        }
        write(&n3, &format!("rotation{step}"), 20, &mut written);
    }
    for n in [&n1, &n2, &n3, &n4] {
        wait_for_members(n, &mixed);
    }
    all_there(&n4, &written);

    // The old nodes are upgraded one at a time (same store, the next build).
    let mut nodes = [n1, n2, n3, n4];
    for i in 0..3 {
        nodes[i].set_env("FAILPOINTS", &speaking(NEW));
        nodes[i].restart();
        for n in &nodes {
            wait_for_members(n, &mixed);
        }
        write(
            &nodes[(i + 1) % 4],
            &format!("upgraded{i}"),
            30,
            &mut written,
        );
        all_there(&nodes[i], &written);
    }
    all_there(&nodes[3], &written);
    // Now everyone speaks the highest version both sides know: 3.
    for n in &nodes {
        let spoken = versions_spoken(n);
        assert!(spoken.iter().all(|(_, v)| *v == Some(3)), "{spoken:?}");
    }
    assert!(
        nodes[0]
            .store()
            .lock_release(b"upgrade:lock", &other)
            .unwrap()
    );
    async_cycles(&nodes[0], "upgraded");
}

/// Twenty `?copies=async` lock cycles through `node`, on locks of every owner.
fn async_cycles(node: &TestNode, tag: &str) {
    let s = node.store_with(Copies::Async);
    let token = [b'c'; 32];
    let ttl = std::time::Duration::from_secs(30);
    for i in 0..20 {
        let name = format!("{tag}:async:{i}");
        let taken = s.lock_acquire(name.as_bytes(), &token, ttl).unwrap();
        assert!(taken.is_some(), "{name} was held");
        assert!(s.lock_release(name.as_bytes(), &token).unwrap(), "{name}");
    }
}

#[test]
fn a_node_of_a_version_nobody_knows_is_no_member_and_both_sides_name_both() {
    let dir = TestDir::new("versions-unknown");
    write_secret(&dir.0.join("cluster.secret"), &format!("{A}\n"));
    let n1 = start(&dir, 1, &[], NEW);
    let n2 = start(&dir, 2, &[n1.gossip], NEW);
    let fleet = ids(&[&n1, &n2]);
    for n in [&n1, &n2] {
        wait_for_members(n, &fleet);
    }
    let stranger = start(&dir, 9, &[n1.gossip], "9");
    eventually("node-1 says why node-9 is no member", || {
        n1.log()
            .contains("node-9 speaks data-plane versions 9, this node 2, 3")
            .then_some(())
    });
    eventually("node-9 says why node-1 is no member", || {
        stranger
            .log()
            .contains("node-1 speaks data-plane versions 2, 3, this node 9")
            .then_some(())
    });
    assert_eq!(n1.store().members().unwrap(), fleet);
    assert_eq!(stranger.store().members().unwrap(), ["node-9"]);
    let health = n1.store().health().unwrap().unwrap();
    let refused = health.refusals.iter().find(|(c, _)| c == "version");
    assert!(refused.is_some_and(|(_, n)| *n >= 1), "{health:?}");
}
