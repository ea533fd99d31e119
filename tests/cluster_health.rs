//! A fleet's member health as an operator sees it: `ephpm cluster --json` (the host's
//! node answering `Op::Health`) and `ClusterStore::health`, which `Ephpm\Kv::members()`
//! converts. Real `ephpm-node` processes on 127.0.0.N; states are waited for with
//! generous deadlines, never timed.

mod common;

use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::TestDir;
use common::cluster::*;
use ephpm::cluster::placement::Members;
use ephpm::ground::fleet::MemberState;
use ephpm::store::{Store, Value};

/// A secret the fleet does not share.
const STRANGER: &str = "YS1zdHJhbmdlci1zZWNyZXQtb2YtMTI4LWJpdHM";

/// Each member's entry of an `ephpm cluster --json` document, by id.
fn members(doc: &serde_json::Value) -> HashMap<String, serde_json::Value> {
    doc["members"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| (m["id"].as_str().unwrap_or_default().to_string(), m.clone()))
        .collect()
}

/// Waits (at most 60 s) until `f` holds of `node`'s `ephpm cluster --json`.
fn wait_for(node: &TestNode, what: &str, f: impl Fn(&serde_json::Value) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = None;
    while Instant::now() < deadline {
        last = cluster_json(node).ok();
        if last.as_ref().is_some_and(&f) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    dump_logs(&node.dir);
    panic!("never happened: {what}; last answer: {last:?}");
}

#[test]
fn a_stopped_node_is_suspect_then_dead_and_the_copies_it_missed_are_dropped() {
    let dir = TestDir::new("health");
    // Gossip every 300 ms: the failure detector then takes seconds to give up on a
    // stopped node, time for writes to try copies to it (at 100 ms it is gone in one).
    let nodes = start_cluster(&dir, 3, &["--gossip-interval-ms", "300"]);
    let first = &nodes[0];
    wait_for(first, "every member alive", |doc| {
        let m = members(doc);
        m.len() == 3 && m.values().all(|x| x["state"] == "alive")
    });
    // Keys for the ownership share: every member owns some of what this host holds.
    let store = first.store();
    for i in 0..60 {
        let key = format!("health:{i}");
        eventually("a write lands", || {
            store.set(key.as_bytes(), Value::Int(i), None).ok()
        });
    }
    wait_for(first, "shares of the keys held here", |doc| {
        let m = members(doc);
        let keys: u64 = m.values().map(|x| x["keys"].as_u64().unwrap_or(0)).sum();
        let shares: f64 = m.values().map(|x| x["share"].as_f64().unwrap_or(0.0)).sum();
        keys == 60 && (shares - 1.0).abs() < 1e-9 && m.values().all(|x| x["keys"] != 0)
    });
    let doc = cluster_json(first).expect("ephpm cluster");
    let me = &members(&doc)["node-1"];
    assert_eq!(me["this_node"], true);
    assert!(me["last_heard_ms"].is_null() && me["clock_skew_ms"].is_null());
    let other = &members(&doc)["node-2"];
    assert!(other["last_heard_ms"].is_u64(), "{other}");
    // One machine, one clock: the skew is the datagram's way, far below a second.
    assert!(
        other["clock_skew_ms"].as_i64().unwrap().abs() < 1000,
        "{other}"
    );

    // node-3 stops: writes through node-1 keep copying to it until the failure
    // detector gives up on it, and those copies never land.
    nodes[2].signal(libc::SIGSTOP);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let store = first.store();
        std::thread::spawn(move || {
            // Keys node-1 owns: it decides each write and pushes a copy to every member,
            // node-3 included, until node-3 is no member.
            let placement = Members::new(["node-1", "node-2", "node-3"].map(Arc::from));
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let key = format!("stopped:{i}");
                if placement.owner(key.as_bytes()).as_deref() != Some("node-1") {
                    continue;
                }
                let _ = store.set(key.as_bytes(), Value::Int(i), None);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !seen.contains(&"dead".to_string()) && Instant::now() < deadline {
        if let Ok(doc) = cluster_json(first) {
            let state = members(&doc)["node-3"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if seen.last() != Some(&state) {
                seen.push(state);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let suspect = seen.iter().position(|s| s == "suspect");
    let dead = seen.iter().position(|s| s == "dead");
    assert!(
        suspect.is_some() && dead.is_some() && suspect < dead,
        "node-3 went through {seen:?}, not suspect then dead"
    );
    wait_for(first, "node-3's missed copies counted as dropped", |doc| {
        members(doc)["node-3"]["copies_dropped"].as_u64() > Some(0)
    });
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    // The same through the store, which Kv::members() converts.
    let health = first
        .store()
        .health()
        .unwrap()
        .expect("a cluster has health");
    let third = health.members.iter().find(|m| m.id == "node-3").unwrap();
    assert_eq!(third.state, MemberState::Dead);
    assert!(third.copies_dropped > 0);
    let second = health.members.iter().find(|m| m.id == "node-2").unwrap();
    assert_ne!(second.state, MemberState::Dead);
    // Placement no longer gives node-3 any key.
    assert_eq!(third.keys, 0);
    nodes[2].signal(libc::SIGCONT);
}

#[test]
fn datagrams_sealed_with_another_secret_are_refused_and_counted() {
    let dir = TestDir::new("health-refused");
    let nodes = start_cluster(&dir, 2, &[]);
    let unauthentic = |doc: &serde_json::Value| doc["refusals"]["unauthentic"].as_u64();
    let before = unauthentic(&cluster_json(&nodes[0]).expect("ephpm cluster"));
    assert!(before.is_some(), "refusals by cause are in the answer");
    let file = dir.0.join("stranger.secret");
    write_secret(&file, &format!("{STRANGER}\n"));
    let _stranger = TestNode::start(
        &dir,
        3,
        &[nodes[0].gossip],
        &["--secret-file", file.to_str().unwrap()],
    );
    wait_for(&nodes[0], "the stranger's datagrams refused", |doc| {
        unauthentic(doc) > before
    });
    let doc = cluster_json(&nodes[0]).unwrap();
    assert_eq!(members(&doc).len(), 2, "the stranger is no member: {doc}");
    // And the text form says the same, by cause.
    let out = Command::new(env!("CARGO_BIN_EXE_ephpm"))
        .arg("--shm-dir")
        .arg(&dir.0)
        .args(["--store", "n1", "cluster"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("node-1 (this node)") && text.contains("unauthentic "),
        "{text}"
    );
}

#[test]
fn a_store_that_is_no_cluster_has_no_members() {
    let (dir, store) = common::store(1 << 20);
    assert_eq!(store.health().unwrap(), None);
    let out = Command::new(env!("CARGO_BIN_EXE_ephpm"))
        .arg("--shm-dir")
        .arg(&dir.0)
        .args(["--dsn", "shm://t", "cluster"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is no cluster"));
}
