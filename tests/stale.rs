//! Stale-while-revalidate: records, phases, one elected refresher among racing callers,
//! a miss computed once, stale-if-error, and a failed refresh that keeps the old value.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::*;
use ephpm::lock::Locks;
use ephpm::memo::Step;
use ephpm::stale::{Got, How, Phase, Source, StaleCache, Times, Windows, decode, encode, now_ms};
use ephpm::store::{Fetched, Store, Value};

const WINDOWS: Windows = Windows {
    stale: Duration::from_secs(60),
    stale_if_error: Duration::from_secs(120),
};

/// A cached string under one key of a real store; computations are counted.
struct Key<'a> {
    store: &'a dyn Store,
    key: &'a [u8],
    computes: &'a AtomicUsize,
    /// What a computation gives (`None`: it fails), and how long it takes.
    compute: Option<&'a str>,
    takes: Duration,
    warnings: Vec<String>,
}

impl<'a> Key<'a> {
    fn new(store: &'a dyn Store, computes: &'a AtomicUsize, compute: Option<&'a str>) -> Self {
        Key {
            store,
            key: b"k",
            computes,
            compute,
            takes: Duration::ZERO,
            warnings: Vec::new(),
        }
    }
}

impl Source<String> for Key<'_> {
    fn read(&mut self) -> Step<(Times, String)> {
        let mut buf = Vec::new();
        match self.store.get(self.key, &mut buf).unwrap() {
            Some(hit) => {
                assert_eq!(hit.value, Fetched::Str);
                match decode(&buf) {
                    Some((t, Value::Str(s))) => Step::Got((t, String::from_utf8_lossy(s).into())),
                    _ => Step::Missing,
                }
            }
            None => Step::Missing,
        }
    }
    fn compute(&mut self) -> Step<(String, Duration)> {
        self.computes.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.takes);
        match self.compute {
            Some(v) => Step::Got((v.to_string(), Duration::from_secs(300))),
            None => Step::Failed,
        }
    }
    fn store(&mut self, value: &String, times: Times) {
        put(self.store, times, value);
    }
    fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }
}

fn put(store: &dyn Store, times: Times, value: &str) {
    let mut rec = Vec::new();
    encode(times, Value::Str(value.as_bytes()), &mut rec);
    store
        .set(b"k", Value::Str(&rec), Some(times.keep_for(now_ms())))
        .unwrap();
}

/// A record fresh for another 300 s.
fn fresh() -> Times {
    Times::new(now_ms(), Duration::from_secs(300), WINDOWS)
}

/// A record whose lifetime ended `ago` ms ago.
fn ended(ago: u64) -> Times {
    Times::new(now_ms() - 300_000 - ago, Duration::from_secs(300), WINDOWS)
}

fn shared_store() -> (Guard, Arc<dyn Store>) {
    any_store()
}

fn cache(store: Arc<dyn Store>) -> StaleCache {
    StaleCache {
        locks: Locks::new(store),
        lock_ttl: Duration::from_secs(10),
        wait: Duration::from_secs(10),
        windows: WINDOWS,
    }
}

fn served(got: &Got<String>) -> (&str, How, bool) {
    match got {
        Got::Served {
            value,
            how,
            refresh,
        } => (value.as_str(), *how, refresh.is_some()),
        Got::Failed => panic!("failed"),
    }
}

#[test]
fn times_have_three_windows() {
    let t = Times::new(1_000, Duration::from_secs(10), WINDOWS);
    assert_eq!(t.phase(1_000), Phase::Fresh);
    assert_eq!(t.phase(10_999), Phase::Fresh);
    assert_eq!(t.phase(11_000), Phase::Stale);
    assert_eq!(t.phase(70_999), Phase::Stale);
    assert_eq!(t.phase(71_000), Phase::Expired { fallback: true });
    assert_eq!(t.phase(131_000), Phase::Expired { fallback: false });
    assert_eq!(t.keep_for(1_000), Duration::from_millis(130_000));
}

#[test]
fn records_keep_every_kind_of_value() {
    let t = Times::new(5, Duration::from_secs(1), WINDOWS);
    let values = [
        Value::Str(b"text"),
        Value::Str(b""),
        Value::Serialized(b"a:0:{}"),
        Value::Int(-7),
        Value::Float(1.5),
        Value::Bool(true),
        Value::Bool(false),
        Value::Null,
    ];
    for v in values {
        let mut rec = Vec::new();
        encode(t, v, &mut rec);
        assert_eq!(decode(&rec), Some((t, v)));
    }
    assert_eq!(decode(b"plain value written by Kv::set"), None);
    assert_eq!(decode(b""), None);
}

#[test]
fn a_fresh_value_is_served_without_computing() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    put(&*s, fresh(), "old");
    let got = cache(s.clone()).get(b"lock", &mut Key::new(&*s, &computes, Some("new")));
    assert_eq!(served(&got), ("old", How::Fresh, false));
    assert_eq!(computes.load(Ordering::SeqCst), 0);
}

#[test]
fn a_miss_is_computed_and_stored() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    let c = cache(s.clone());
    let got = c.get(b"lock", &mut Key::new(&*s, &computes, Some("new")));
    assert_eq!(served(&got), ("new", How::Computed, false));
    let again = c.get(b"lock", &mut Key::new(&*s, &computes, Some("newer")));
    assert_eq!(served(&again), ("new", How::Fresh, false));
    assert_eq!(computes.load(Ordering::SeqCst), 1);
}

/// 12 threads on a stale key: every one is served the stale value at once, exactly one
/// is elected, and its refresh stores the new value.
#[test]
fn racing_readers_of_a_stale_key_elect_one_refresher() {
    let (_d, s) = shared_store();
    let c = cache(s.clone());
    // Several rounds, so that a broken election is caught however the threads run.
    for round in 0..10 {
        let name = format!("lock{round}");
        let computes = AtomicUsize::new(0);
        put(&*s, ended(1_000), "old");
        let barrier = Barrier::new(12);
        let elected = AtomicUsize::new(0);
        let served_all = AtomicUsize::new(0);
        std::thread::scope(|t| {
            for _ in 0..12 {
                let (c, s, computes, barrier, elected, served_all, name) =
                    (&c, &s, &computes, &barrier, &elected, &served_all, &name);
                t.spawn(move || {
                    let mut key = Key::new(&**s, computes, Some("new"));
                    barrier.wait();
                    let got = c.get(name.as_bytes(), &mut key);
                    let (value, how, _) = served(&got);
                    assert_eq!((value, how), ("old", How::Stale));
                    served_all.fetch_add(1, Ordering::SeqCst);
                    if let Got::Served {
                        refresh: Some(held),
                        ..
                    } = got
                    {
                        elected.fetch_add(1, Ordering::SeqCst);
                        // The refresh runs after the response, once every reader of the
                        // race has been served: a reader that comes after it is served the
                        // new value, rightly (a TLS cluster's handshakes, a loaded machine
                        // made a sleep here too short). A reader that panicked is waited
                        // for no longer than a hang guard.
                        let start = std::time::Instant::now();
                        while served_all.load(Ordering::SeqCst) < 12
                            && start.elapsed() < Duration::from_secs(30)
                        {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        assert_eq!(c.refresh_elected(&held, &mut key), Step::Got("new".into()));
                    }
                });
            }
        });
        assert_eq!(elected.load(Ordering::SeqCst), 1, "round {round}");
        assert_eq!(computes.load(Ordering::SeqCst), 1, "round {round}");
        let got = c.get(name.as_bytes(), &mut Key::new(&*s, &computes, Some("x")));
        assert_eq!(served(&got), ("new", How::Fresh, false));
    }
}

#[test]
fn a_refresh_that_fails_keeps_the_stale_value_and_frees_the_election() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    put(&*s, ended(1_000), "old");
    let c = cache(s.clone());
    let mut failing = Key::new(&*s, &computes, None);
    let Got::Served {
        refresh: Some(held),
        ..
    } = c.get(b"lock", &mut failing)
    else {
        panic!("not elected");
    };
    assert_eq!(c.refresh_elected(&held, &mut failing), Step::Failed);
    let got = c.get(b"lock", &mut Key::new(&*s, &computes, Some("new")));
    assert_eq!(
        served(&got),
        ("old", How::Stale, true),
        "the next reader is elected"
    );
}

/// 8 threads past the stale window: one computes, the others wait for it and are
/// served what it stored.
#[test]
fn past_the_stale_window_the_value_is_computed_once() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    put(&*s, ended(61_000), "old");
    let c = cache(s.clone());
    let barrier = Barrier::new(8);
    std::thread::scope(|t| {
        for _ in 0..8 {
            let (c, s, computes, barrier) = (&c, &s, &computes, &barrier);
            t.spawn(move || {
                let mut key = Key::new(&**s, computes, Some("new"));
                key.takes = Duration::from_millis(50);
                barrier.wait();
                let got = c.get(b"lock", &mut key);
                let (value, how, elected) = served(&got);
                assert_eq!(value, "new");
                assert!(matches!(how, How::Computed | How::Fresh), "{how:?}");
                assert!(!elected);
            });
        }
    });
    assert_eq!(computes.load(Ordering::SeqCst), 1);
}

#[test]
fn a_failed_computation_serves_the_old_value_inside_the_error_window_only() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    let c = cache(s.clone());
    put(&*s, ended(61_000), "old");
    let got = c.get(b"lock", &mut Key::new(&*s, &computes, None));
    assert_eq!(served(&got), ("old", How::StaleOnError, false));
    put(&*s, ended(121_000), "old");
    let got = c.get(b"lock", &mut Key::new(&*s, &computes, None));
    assert_eq!(got, Got::Failed);
    s.del(b"k").unwrap();
    assert_eq!(
        c.get(b"lock", &mut Key::new(&*s, &computes, None)),
        Got::Failed
    );
}

#[test]
fn a_deleted_key_is_a_miss_not_stale() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    put(&*s, ended(1_000), "old");
    s.del(b"k").unwrap();
    let got = cache(s.clone()).get(b"lock", &mut Key::new(&*s, &computes, Some("new")));
    assert_eq!(served(&got), ("new", How::Computed, false));
}

#[test]
fn recompute_computes_even_a_fresh_value() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    put(&*s, fresh(), "old");
    let c = cache(s.clone());
    let got = c.recompute(b"lock", &mut Key::new(&*s, &computes, Some("new")));
    assert_eq!(served(&got), ("new", How::Computed, false));
    let got = c.get(b"lock", &mut Key::new(&*s, &computes, Some("x")));
    assert_eq!(served(&got), ("new", How::Fresh, false));
}

/// A miss whose lock is held past the wait computes unprotected, with a warning.
#[test]
fn a_lock_held_too_long_computes_unprotected_with_a_warning() {
    let (_d, s) = shared_store();
    let computes = AtomicUsize::new(0);
    let c = StaleCache {
        wait: Duration::from_millis(20),
        ..cache(s.clone())
    };
    let _holder = c
        .locks
        .acquire(b"lock", Duration::from_secs(10), Duration::ZERO)
        .unwrap()
        .unwrap();
    let mut key = Key::new(&*s, &computes, Some("new"));
    let got = c.get(b"lock", &mut key);
    assert_eq!(served(&got), ("new", How::Computed, false));
    assert_eq!(key.warnings.len(), 1, "{:?}", key.warnings);
    assert!(key.warnings[0].contains("without stampede protection"));
}
