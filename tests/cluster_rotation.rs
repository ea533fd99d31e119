//! A fleet rotates its secret without downtime: the secret file every node follows goes
//! from `A` to `A,B` (A signs, both are accepted), then `B,A` (B signs), then `B` alone,
//! each step taken by every node while it runs (no restart), while clients keep writing
//! and reading through every node. No call fails for the rotation: no node refuses a
//! datagram or a connection as unauthentic at any point, and every call succeeds but for
//! a node-to-node timeout, which this loaded 2-core machine also shows with no rotation
//! at all (a baseline run with the same secret written three times: "no answer within
//! 1000 ms" after 9 calls). At the end a node that knows only `A` is no longer a member.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::TestDir;
use common::cluster::*;
use ephpm::store::{Store, Value};

const A: &str = "cm90YXRpb24tc2VjcmV0LUEtb2YtMTI4LWJpdHM";
const B: &str = "cm90YXRpb24tc2VjcmV0LUItb2YtMTI4LWJpdHM";

/// Clients on each of `nodes`: set, read back and increment, until `stop`. Returns the
/// calls made and the failures seen (with the first failure's text).
fn clients(
    nodes: &[&TestNode],
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<(u64, u64, String)>> {
    nodes
        .iter()
        .map(|n| {
            let store = n.store();
            let stop = stop.clone();
            let id = n.id();
            std::thread::spawn(move || {
                let (mut calls, mut failed, mut first) = (0u64, 0u64, String::new());
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let key = format!("rot:{id}:{}", i % 50);
                    let mut out = Vec::new();
                    let results = [
                        store.set(key.as_bytes(), Value::Int(i as i64), None).err(),
                        store.get(key.as_bytes(), &mut out).err(),
                        store.incr_by(b"rot:counter", 1, None).err(),
                    ];
                    for e in results {
                        calls += 1;
                        if let Some(e) = e {
                            failed += 1;
                            if first.is_empty() {
                                first = format!("via {id} after {calls} calls: {e}");
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                (calls, failed, first)
            })
        })
        .collect()
}

#[test]
fn a_fleet_rotates_its_secret_with_no_failed_call() {
    let dir = TestDir::new("rotate");
    let file = dir.0.join("cluster.secret");
    write_secret(&file, &format!("{A}\n"));
    let path = file.to_str().unwrap().to_string();
    let nodes = start_cluster(&dir, 3, &["--secret-file", &path]);
    let all: Vec<String> = (1..=3).map(|i| format!("node-{i}")).collect();
    // Clients start once the cluster serves: every node sees the others and answers.
    for n in &nodes {
        wait_for_members(n, &all);
        // Every node has talked to every other (keys land on every owner) first.
        let s = n.store();
        for k in 0..30 {
            let key = format!("rot:warm:{k}");
            eventually("the node answers", || {
                s.incr_by(key.as_bytes(), 1, None).ok()
            });
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let running = clients(&nodes.iter().collect::<Vec<_>>(), &stop);
    for (step, content) in rotation_steps(A, B).iter().enumerate() {
        std::thread::sleep(Duration::from_millis(500));
        write_secret(&file, content);
        for n in &nodes {
            eventually("every node takes the new secret file", || {
                (reloads(n) > step).then_some(())
            });
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let mut calls = 0;
    for handle in running {
        let (made, failed, first) = handle.join().unwrap();
        assert!(
            failed == 0 || first.contains("no answer within"),
            "a call failed for another reason than a timeout: {first}"
        );
        calls += made;
    }
    // The refusal counters are logged every 10 s: wait for a report to have covered the
    // rotation, then no node may have refused anything as unauthentic.
    std::thread::sleep(Duration::from_secs(11));
    for n in &nodes {
        assert!(
            !n.log().contains("failed authentication"),
            "{}: {}",
            n.id(),
            n.log()
        );
    }
    assert!(calls > 100, "{calls} calls");
    for n in &nodes {
        wait_for_members(n, &all);
    }
    // The old secret alone no longer opens anything: such a node stays alone.
    let old = dir.0.join("old.secret");
    write_secret(&old, &format!("{A}\n"));
    let stranger = TestNode::start(
        &dir,
        4,
        &[nodes[0].gossip],
        &["--secret-file", old.to_str().unwrap()],
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(stranger.store().members().unwrap(), ["node-4"]);
    assert_eq!(nodes[0].store().members().unwrap(), all);
}
