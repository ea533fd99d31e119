//! Fault points: the places where `make prove-tests-can-fail` switches a guarantee off,
//! so that the guarantee's test can be seen to fail.
//!
//! They are tikv's `fail` points, compiled in only by the cargo feature `fault-points`.
//! In every other build [`on`] is `false` and [`value`] is `None`, constants the
//! compiler folds: the branch a point guards is compiled away and costs nothing.
//!
//! A build with the feature takes its points from `FAILPOINTS`, read once per process at
//! the first question (the extension asks at MINIT, in php-fpm's master before it forks,
//! so workers keep them after clearing their environment), in the `fail` crate's syntax:
//! `FAILPOINTS='broken-atomicity=return;wire-versions=return(2,3)'`. Unset, the build
//! behaves as the product does.
//!
//! The points, each named after what it breaks:
//! - `broken-atomicity`: set_nx, incr_by, compare-and-delete, lock acquire and the
//!   read/write lock split into a read and a later write; sessions write without checking
//!   their lock and release it blindly; shm's optimistic readers trust torn reads.
//! - `no-repair`: a shard whose lock holder died is taken over, never repaired.
//! - `no-lock-recovery`: shard locks wait without looking at the owner, and repair runs
//!   before the guard that unlocks exists (the scribble tests then hang).
//! - `coarse-expiry`: expiry decided by the coarse clock alone.
//! - `unreadable-is-dead`: a lock holder whose /proc cannot be read is taken for dead.
//! - `broadcast-wakeups`: every release of an exclusive lock wakes every waiter.
//! - `lru-only-eviction`: eviction by approximate LRU alone, without retention classes.
//! - `await-all-copies`: a cluster owner waits for every host's copy of a lock operation.
//! - `no-owner-routing`: every cluster node decides on its own copy (ePHPm's design).
//! - `no-wire-negotiation`: a node speaks its highest data-plane version regardless.
//! - `wire-versions`: not a fault but a node's data-plane versions (`return(2,3)`), so
//!   that one test binary runs the nodes of an older and a newer build side by side.
//! - `resp-unguarded`: ephpm-resp admits any uid and any command before AUTH.

/// Whether the fault point `point` is switched on.
#[inline(always)]
pub fn on(point: &str) -> bool {
    value(point).is_some()
}

/// The argument of the fault point `point` (`return(ARG)` gives `Some("ARG")`, a bare
/// `return` `Some("")`), or `None` when it is off.
#[inline(always)]
pub fn value(point: &str) -> Option<String> {
    #[cfg(feature = "fault-points")]
    {
        configure();
        fail::fail_point!(point, |arg: Option<String>| Some(arg.unwrap_or_default()));
    }
    let _ = point;
    None
}

/// Reads `FAILPOINTS` into the `fail` registry, once per process. The `fail` crate's own
/// reader (`FailScenario::setup`) panics on a malformed entry and holds a lock for the
/// scenario's life: here a malformed entry is reported and skipped, as a Rust panic must
/// not reach PHP even in a test build.
#[cfg(feature = "fault-points")]
pub fn configure() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(points) = std::env::var("FAILPOINTS") else {
            return;
        };
        for entry in points.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let set = match entry.split_once('=') {
                Some((name, actions)) => fail::cfg(name.trim(), actions.trim()),
                None => Err("no =ACTIONS".to_string()),
            };
            if let Err(why) = set {
                eprintln!("ephpm: FAILPOINTS entry {entry:?} ignored: {why}");
            }
        }
    });
}

/// Without the feature there is nothing to read.
#[cfg(not(feature = "fault-points"))]
pub fn configure() {}

#[cfg(all(test, feature = "fault-points"))]
mod tests {
    #[test]
    fn a_configured_point_is_on_and_gives_its_argument() {
        fail::cfg("fault-test-point", "return(2,3)").unwrap();
        assert!(super::on("fault-test-point"));
        assert_eq!(super::value("fault-test-point").as_deref(), Some("2,3"));
        fail::remove("fault-test-point");
        assert!(!super::on("fault-test-point"));
    }
}
