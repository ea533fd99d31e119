//! The order the shm store evicts in when memory runs short: expired entries, then
//! anonymous ones (`reserve`, `Retention::Anonymous`), then cache entries, then written
//! sessions (`Retention::Session`) — never a held lock — and `stats()` counting the
//! evictions of each class.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use ephpm::keyspace::Keyspace;
use ephpm::session::{Handler, OnTimeout, Settings};
use ephpm::store::shm::ShmStore;
use ephpm::store::{Retention, SetNx, Stats, Store, Value};

const VALUE: [u8; 300] = [b'v'; 300];

fn count_present(s: &ShmStore, keys: &[String]) -> usize {
    keys.iter()
        .filter(|k| s.exists(k.as_bytes()).unwrap())
        .count()
}

fn names(kind: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{kind}:{i}")).collect()
}

fn set_all(s: &ShmStore, keys: &[String], retention: Retention) {
    for k in keys {
        s.set_with_retention(k.as_bytes(), Value::Str(&VALUE), None, retention)
            .unwrap();
    }
}

fn reserve_all(s: &ShmStore, keys: &[String]) {
    for k in keys {
        let done = s.reserve(k.as_bytes(), Value::Str(b""), None).unwrap();
        assert_eq!(done, SetNx::Inserted, "{k}");
    }
}

fn by_class(st: &Stats) -> [u64; 3] {
    [
        st.evictions_anonymous,
        st.evictions_cache,
        st.evictions_session,
    ]
}

/// A 1 MiB store holding sessions, cache entries and locks, flooded three times: with
/// anonymous reservations (only reservations go), then with cache writes (every
/// reservation goes before the first cache entry, no session goes), then with new
/// sessions (every cache entry goes before the first session). The locks stay through
/// all of it, and `stats()` counts each class's evictions, summing to `evictions`.
#[test]
fn eviction_takes_anonymous_entries_then_cache_entries_then_sessions() {
    let (_d, s) = store(MB);
    let sessions = names("session", 100);
    let cache = names("cache", 300);
    let locks = names("lock", 50);
    set_all(&s, &sessions, Retention::Session);
    set_all(&s, &cache, Retention::Cache);
    for l in &locks {
        let ttl = Some(Duration::from_secs(600));
        assert_eq!(
            s.set_nx(l.as_bytes(), Value::Str(b"token"), ttl).unwrap(),
            SetNx::Inserted
        );
    }
    assert_eq!(s.stats().unwrap().evictions, 0, "room for all of it");

    // 1. New visitors: 20,000 ids reserved, far more than the store holds.
    let anonymous = names("anonymous", 20_000);
    reserve_all(&s, &anonymous);
    let st = s.stats().unwrap();
    assert!(st.evictions_anonymous > 0, "{st:?}");
    assert_eq!(by_class(&st)[1..], [0, 0], "{st:?}");
    assert_eq!(count_present(&s, &sessions), sessions.len());
    assert_eq!(count_present(&s, &cache), cache.len());
    s.verify().unwrap();

    // 2. A cache flood: the reservations go first, then cache entries, never a session.
    let more_cache = names("more-cache", 20_000);
    set_all(&s, &more_cache, Retention::Cache);
    let st = s.stats().unwrap();
    assert!(st.evictions_cache > 0, "{st:?}");
    assert_eq!(st.evictions_session, 0, "{st:?}");
    assert_eq!(
        count_present(&s, &anonymous),
        0,
        "no reservation outlives a cache entry"
    );
    assert_eq!(count_present(&s, &sessions), sessions.len());
    s.verify().unwrap();

    // 3. More sessions than fit: every cache entry goes before the first session.
    let more_sessions = names("more-session", 20_000);
    set_all(&s, &more_sessions, Retention::Session);
    let st = s.stats().unwrap();
    assert!(st.evictions_session > 0, "{st:?}");
    assert_eq!(
        count_present(&s, &cache) + count_present(&s, &more_cache),
        0,
        "no cache entry outlives a session"
    );
    assert_eq!(
        count_present(&s, &locks),
        locks.len(),
        "locks are never evicted"
    );
    assert_eq!(st.evictions, by_class(&st).iter().sum::<u64>(), "{st:?}");
    s.verify().unwrap();
}

/// A few cache entries among many sessions are still found and evicted first: the
/// sample of eviction candidates goes on past sessions until it has seen entries of the
/// lowest class present, however sparse they are.
#[test]
fn a_sparse_cache_entry_goes_before_any_of_many_sessions() {
    let (_d, s) = store(MB);
    // About ten cache entries per shard, among thousands of sessions written after
    // them (so by LRU alone the cache entries would not be the ones to go).
    let cache = names("cache", 160);
    set_all(&s, &cache, Retention::Cache);
    let mut i = 0;
    while s.stats().unwrap().evictions == 0 {
        let key = format!("session:{i}");
        s.set_with_retention(key.as_bytes(), Value::Str(&VALUE), None, Retention::Session)
            .unwrap();
        i += 1;
    }
    let st = s.stats().unwrap();
    assert!(st.evictions_cache > 0, "{st:?}");
    assert_eq!(st.evictions_session, 0, "{st:?}");
    s.verify().unwrap();
}

/// A reservation written over (a session saved under a reserved id) takes the class of
/// what is written, and the per-class counts follow entries as they are replaced,
/// deleted and cleared (`verify` checks them against the index).
#[test]
fn classes_follow_entries_through_replace_delete_and_clear() {
    let (_d, s) = store(4 * MB);
    reserve_all(&s, &names("id", 100));
    for (i, k) in names("id", 100).iter().enumerate() {
        let retention = [Retention::Session, Retention::Cache, Retention::Anonymous][i % 3];
        s.set_with_retention(k.as_bytes(), Value::Str(b"x"), None, retention)
            .unwrap();
        if i % 5 == 0 {
            s.del(k.as_bytes()).unwrap();
        }
    }
    s.verify().unwrap();
    s.clear(b"id:1").unwrap();
    s.verify().unwrap();
    s.clear(b"").unwrap();
    s.verify().unwrap();
}

/// A new visitor as PHP drives the handler in strict mode: a new id (reserved), its
/// read, then at the end of the request, with nothing put in `$_SESSION`, a write of
/// the empty data (`session.lazy_write=0`; 9 in 10 here) or a touch (`lazy_write`, the
/// default), and close.
fn anonymous_visit(h: &mut Handler, n: u64) {
    let id = format!("{n:032x}").into_bytes();
    let id = h.create_id(|| Some(id.clone()), 1440).unwrap().unwrap();
    let mut out = Vec::new();
    h.read(&id, &mut out).unwrap();
    assert_eq!(out, b"");
    if n % 10 == 0 {
        h.touch(&id, b"", 1440).unwrap();
    } else {
        h.write(&id, b"", 1440).unwrap();
    }
    assert!(h.close());
}

/// 50,000 new visitors on a 4 MiB store, after 200 users logged in (180 of them idle
/// since, 20 active throughout): every logged-in user's session survives, with its data;
/// only anonymous entries were evicted — the visitors' empty sessions included, which
/// are anonymous too (written as sessions, 45,000 of them would not fit).
#[test]
fn a_flood_of_new_visitors_never_logs_a_user_out() {
    let (_d, s) = store(4 * MB);
    let s: Arc<dyn Store> = Arc::new(s);
    let space = Keyspace::new(s.clone(), b"");
    let settings = Settings {
        locking: true,
        lock_ttl: Duration::from_secs(30),
        lock_wait: Duration::from_secs(1),
        on_timeout: OnTimeout::Fail,
    };
    let mut h = Handler::new(space, settings);
    let users: Vec<Vec<u8>> = (0..200)
        .map(|i| format!("user{i:028}").into_bytes())
        .collect();
    let data = |i: usize| format!("user|s:{}:\"user{i}\";", 4 + i.to_string().len());
    for (i, id) in users.iter().enumerate() {
        h.read(id, &mut Vec::new()).unwrap();
        h.write(id, data(i).as_bytes(), 1440).unwrap();
        assert!(h.close());
    }
    for n in 0..50_000u64 {
        anonymous_visit(&mut h, n);
        // The 20 active users come back now and then (lazy_write: a touch).
        if n % 500 == 0 {
            let i = 180 + (n / 500) as usize % 20;
            h.read(&users[i], &mut Vec::new()).unwrap();
            h.touch(&users[i], data(i).as_bytes(), 1440).unwrap();
            assert!(h.close());
        }
    }
    let st = s.stats().unwrap();
    assert!(
        st.evictions_anonymous > 0,
        "the flood filled the store: {st:?}"
    );
    for (i, id) in users.iter().enumerate() {
        let mut out = Vec::new();
        h.read(id, &mut out).unwrap();
        assert_eq!(out, data(i).as_bytes(), "user {i} was logged out: {st:?}");
        h.close();
    }
    assert_eq!([st.evictions_cache, st.evictions_session], [0, 0], "{st:?}");
}
