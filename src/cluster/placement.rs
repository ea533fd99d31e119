//! Where a key lives: rendezvous (highest random weight) hashing over the live node ids,
//! with XXH3 of the bytes — the same answer on every node, build and architecture.
//! A join moves only the keys the newcomer wins (1/(n+1) of them); a leave moves only
//! the leaver's. The first node is the key's owner, the next ones its replicas.

use std::sync::Arc;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

/// The node ids of a membership view, each with its hash seed, sorted by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Members {
    nodes: Vec<(Arc<str>, u64)>,
}

impl Members {
    pub fn new<I: IntoIterator<Item = Arc<str>>>(ids: I) -> Self {
        let mut nodes: Vec<_> = ids
            .into_iter()
            .map(|id| {
                let seed = xxh3_64(id.as_bytes());
                (id, seed)
            })
            .collect();
        nodes.sort();
        nodes.dedup();
        Members { nodes }
    }

    pub fn ids(&self) -> impl Iterator<Item = &Arc<str>> {
        self.nodes.iter().map(|(id, _)| id)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.nodes.iter().any(|(n, _)| &**n == id)
    }

    /// The `count` nodes with the highest weight for `key`, owner first.
    pub fn place(&self, key: &[u8], count: usize) -> Vec<Arc<str>> {
        let mut ranked: Vec<(u64, &Arc<str>)> = self
            .nodes
            .iter()
            .map(|(id, seed)| (xxh3_64_with_seed(key, *seed), id))
            .collect();
        // Ties (2^-64) go to the smaller id, so every node agrees.
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        ranked
            .into_iter()
            .take(count)
            .map(|(_, id)| id.clone())
            .collect()
    }

    pub fn owner(&self, key: &[u8]) -> Option<Arc<str>> {
        self.place(key, 1).pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(n: usize) -> Members {
        Members::new((1..=n).map(|i| Arc::from(format!("node-{i}"))))
    }

    fn moved(from: &Members, to: &Members, keys: u32) -> f64 {
        let changed = (0..keys)
            .filter(|i| {
                let k = format!("key:{i}");
                from.owner(k.as_bytes()) != to.owner(k.as_bytes())
            })
            .count();
        changed as f64 / keys as f64
    }

    #[test]
    fn a_join_moves_a_quarter_and_a_leave_only_the_leavers_keys() {
        let (three, four) = (members(3), members(4));
        let join = moved(&three, &four, 100_000);
        assert!((join - 0.25).abs() < 0.01, "3→4 moved {join}");
        let without_2 = Members::new(["node-1", "node-3", "node-4"].map(Arc::from));
        for i in 0..10_000 {
            let k = format!("key:{i}");
            let before = four.owner(k.as_bytes()).unwrap();
            let after = without_2.owner(k.as_bytes()).unwrap();
            assert!(
                &*before == "node-2" || before == after,
                "{k} moved off a live node"
            );
        }
    }

    #[test]
    fn the_placement_is_the_same_on_every_build() {
        // Fixed by XXH3's definition: if this changes, nodes of two builds disagree.
        let m = members(4);
        assert_eq!(&*m.owner(b"key:42").unwrap(), "node-4");
        let p = m.place(b"user:1", 2);
        assert_eq!(p.len(), 2);
        assert_ne!(p[0], p[1]);
        assert_eq!(m.place(b"x", 9).len(), 4);
        assert_eq!(Members::default().owner(b"x"), None);
    }
}
