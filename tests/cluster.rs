//! The gossip cluster with real `ephpm-node` processes on 127.0.0.N.
mod common;

use std::time::Duration;

use common::TestDir;
use common::cluster::{TestNode, start_cluster, wait_for_members};
use ephpm::store::{Fetched, SetNx, Store, Value};

#[test]
fn three_nodes_share_values_small_and_large() {
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
    let _ = wait_for_members;
}
