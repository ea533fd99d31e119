//! What only the Redis backend has: the choice of compare-and-delete and -extend by what
//! the server supports (against a fake server that has DELEX, DELIFEQ or SET … IFEQ, and
//! Debian's Redis 7.0 that has none), typed values in Redis strings, expiry with real TTLs, one subscriber per
//! process, and a server that dies and comes back. The backend-generic tests (locks,
//! memo, stale, session) run on Redis too, with `EPHPM_TEST_STORE=redis`.

mod common;

use std::sync::Arc;

use std::time::Duration;

use common::fake_resp::FakeRedis;
use common::no_hang;
use common::redis::RedisServer;
use ephpm::ground::dsn::{self, Dsn};
use ephpm::lock::{Locks, new_token};
use ephpm::store::redis::RedisStore;
use ephpm::store::{Fetched, KeyTtl, Retention, SetNx, Store, StoreError, Value};

fn open(dsn: &str) -> Arc<RedisStore> {
    let Ok(Dsn::Redis(target)) = dsn::parse(dsn) else {
        panic!("not a redis dsn: {dsn}")
    };
    Arc::new(RedisStore::new(target).expect("store"))
}

/// DELEX where the server has it (Redis ≥ 8.4), DELIFEQ where it has that (Valkey ≥ 9),
/// SET … IFEQ to extend where it has that (both of those, and Valkey 8.1), Lua for the
/// rest; asked once per connection, and the lock semantics are the same on every path.
#[test]
fn compare_and_delete_is_native_where_the_server_has_it_and_lua_elsewhere() {
    for (has, release, extend) in [
        (&["DELEX"][..], "DELEX", "IFEQ"),
        (&["DELIFEQ"][..], "DELIFEQ", "IFEQ"),
        (&["IFEQ"][..], "EVALSHA", "IFEQ"),
        (&[][..], "EVALSHA", "EVALSHA"),
    ] {
        let fake = FakeRedis::start(has);
        let store = open(&fake.dsn());
        let (a, b) = (new_token(), new_token());
        let fence = store
            .lock_acquire(b"job", &a, Duration::from_secs(30))
            .unwrap();
        assert_eq!(fence, Some(1), "{has:?}");
        assert_eq!(
            store
                .lock_acquire(b"job", &b, Duration::from_secs(30))
                .unwrap(),
            None
        );
        assert!(
            store
                .lock_extend(b"job", &a, Duration::from_secs(30))
                .unwrap()
        );
        assert!(
            !store
                .lock_extend(b"job", &b, Duration::from_secs(30))
                .unwrap()
        );
        assert!(
            !store.lock_release(b"job", &b).unwrap(),
            "{has:?}: a stranger released it"
        );
        assert!(store.lock_release(b"job", &a).unwrap());
        assert!(!store.exists(b"job").unwrap());
        let log = fake.log();
        let detections = log.iter().filter(|l| l.starts_with("COMMAND INFO")).count();
        assert_eq!(detections, 1, "asked once per connection: {log:?}");
        let docs = log.iter().filter(|l| l.starts_with("COMMAND DOCS")).count();
        let deletes_natively = release != "EVALSHA";
        assert_eq!(
            docs,
            usize::from(!deletes_natively),
            "SET's docs are asked only without DELEX or DELIFEQ: {log:?}"
        );
        let releases: Vec<_> = log
            .iter()
            .filter(|l| l.starts_with(release) && !l.contains("-- ephpm:acquire"))
            .collect();
        assert!(!releases.is_empty(), "{has:?}: no {release} in {log:?}");
        let extends = log
            .iter()
            .filter(|l| l.starts_with("SET job") || l.starts_with("EVALSHA"))
            .any(|l| l.contains(extend));
        assert!(extends, "{has:?}: extend not by {extend}: {log:?}");
        if has.is_empty() {
            assert!(
                !log.iter()
                    .any(|l| l.starts_with("DELEX") || l.starts_with("DELIFEQ"))
            );
        }
    }
    let server = RedisServer::start();
    let store = open(&server.unix_dsn(""));
    assert_eq!(
        store.flavour().unwrap().describe(),
        "compare-and-delete by Lua, compare-and-extend by Lua",
        "Debian's Redis 7.0 has none of them"
    );
    // A server whose ACL refuses COMMAND still works, with the scripts.
    let fake = FakeRedis::start_refusing(&["DELEX"], &["COMMAND"]);
    let store = open(&fake.dsn());
    let token = new_token();
    let fence = store
        .lock_acquire(b"job", &token, Duration::from_secs(30))
        .unwrap();
    assert_eq!(fence, Some(1));
    assert!(store.lock_release(b"job", &token).unwrap());
    assert_eq!(
        store.flavour().unwrap().describe(),
        "compare-and-delete by Lua, compare-and-extend by Lua"
    );
}

/// Every kind comes back as itself; integers are Redis integers (INCRBY works on them,
/// other clients see digits); an increment of a non-integer is refused.
#[test]
fn values_keep_their_kind_and_integers_stay_redis_integers() {
    let server = RedisServer::start();
    let store = open(&server.tcp_dsn("?prefix=app:"));
    let mut out = Vec::new();
    let kinds = [
        Value::Str(b"hello"),
        Value::Str(b"42"),
        Value::Str(b""),
        Value::Serialized(b"a:1:{i:0;i:1;}"),
        Value::Int(-7),
        Value::Float(2.5),
        Value::Bool(false),
        Value::Null,
    ];
    for (i, v) in kinds.iter().enumerate() {
        let key = format!("k{i}");
        store.set(key.as_bytes(), *v, None).unwrap();
        let hit = store.get(key.as_bytes(), &mut out).unwrap().unwrap();
        let expected = v.copy_into(&mut Vec::new());
        assert_eq!(hit.value, expected, "{v:?}");
        if matches!(v, Value::Str(_)) {
            assert_eq!(
                out,
                match v {
                    Value::Str(b) => b.to_vec(),
                    _ => unreachable!(),
                }
            );
        }
    }
    assert_eq!(store.incr_by(b"k4", 10, None).unwrap(), 3);
    assert_eq!(
        store
            .incr_by(b"fresh", 5, Some(Duration::from_secs(60)))
            .unwrap(),
        5
    );
    assert!(matches!(store.ttl(b"fresh").unwrap(), KeyTtl::Remaining(_)));
    assert!(matches!(
        store.incr_by(b"k0", 1, None),
        Err(StoreError::NotAnInteger)
    ));
    store.set(b"max", Value::Int(i64::MAX), None).unwrap();
    assert!(matches!(
        store.incr_by(b"max", 1, None),
        Err(StoreError::Overflow)
    ));
    let got = store.get(b"max", &mut out).unwrap().unwrap();
    assert_eq!(got.value, Fetched::Int(i64::MAX));
    // As on shm://, a string that holds an integer counts as one, and becomes one.
    for (text, after) in [(&b"41"[..], 42), (b"+5", 6), (b"007", 8), (b"-0", 1)] {
        store
            .set(b"s", Value::Str(text), Some(Duration::from_secs(60)))
            .unwrap();
        assert_eq!(store.incr_by(b"s", 1, None).unwrap(), after, "{text:?}");
        assert_eq!(
            store.get(b"s", &mut out).unwrap().unwrap().value,
            Fetched::Int(after)
        );
        assert!(
            matches!(store.ttl(b"s").unwrap(), KeyTtl::Remaining(_)),
            "the TTL stays"
        );
    }
    // deleteIfEquals matches a string by its bytes and an integer by its digits, and never
    // mistakes a tag byte for a kind.
    store.set(b"n", Value::Int(5), None).unwrap();
    assert!(!store.del_if_eq(b"n", b"05").unwrap());
    assert!(store.del_if_eq(b"n", b"5").unwrap());
    store.set(b"n", Value::Str(b"5"), None).unwrap();
    assert!(store.del_if_eq(b"n", b"5").unwrap());
    store.set(b"n", Value::Serialized(b"abc"), None).unwrap();
    assert!(!store.del_if_eq(b"n", b"\x02abc").unwrap());
    assert!(store.exists(b"n").unwrap());
}

/// getMany is one MGET and setMany one pipeline: values keep their kinds, a missing key
/// is skipped, the TTL applies to every entry.
#[test]
fn get_many_is_one_mget_and_set_many_one_pipeline() {
    let server = RedisServer::start();
    let store = open(&server.unix_dsn("?prefix=m:"));
    let entries = [
        (&b"a"[..], Value::Str(b"one")),
        (b"b", Value::Int(2)),
        (b"c", Value::Serialized(b"a:0:{}")),
    ];
    store
        .set_many(&entries, Some(Duration::from_secs(60)))
        .unwrap();
    assert!(matches!(store.ttl(b"c").unwrap(), KeyTtl::Remaining(_)));
    let mut found = Vec::new();
    store
        .get_many(&[b"a", b"missing", b"b", b"c"], &mut |i, hit, bytes| {
            found.push((i, hit.value, bytes.to_vec()))
        })
        .unwrap();
    assert_eq!(
        found,
        [
            (0, Fetched::Str, b"one".to_vec()),
            (2, Fetched::Int(2), Vec::new()),
            (3, Fetched::Serialized, b"a:0:{}".to_vec()),
        ]
    );
    let stats = redis_cli(&server, &["INFO", "commandstats"]);
    assert!(stats.contains("cmdstat_mget:calls=1,"), "{stats}");
    store.get_many(&[], &mut |_, _, _| unreachable!()).unwrap();
    store.set_many(&[], None).unwrap();
}

/// Expiry with real TTLs, persist, and a clear that takes only its prefix.
#[test]
fn ttl_expire_and_clear_by_prefix() {
    let server = RedisServer::start();
    let store = open(&server.unix_dsn("?prefix=a:"));
    let other = open(&server.unix_dsn("?prefix=b:"));
    store
        .set(b"x", Value::Int(1), Some(Duration::from_millis(30)))
        .unwrap();
    assert_eq!(
        store.set_nx(b"x", Value::Int(2), None).unwrap(),
        SetNx::Exists
    );
    std::thread::sleep(Duration::from_millis(80));
    assert!(!store.exists(b"x").unwrap());
    assert_eq!(
        store.set_nx(b"x", Value::Int(2), None).unwrap(),
        SetNx::Inserted
    );
    assert!(store.expire(b"x", Some(Duration::from_secs(100))).unwrap());
    assert!(store.expire(b"x", None).unwrap());
    assert_eq!(store.ttl(b"x").unwrap(), KeyTtl::Persistent);
    assert!(!store.expire(b"nothing", None).unwrap());
    assert_eq!(store.ttl(b"nothing").unwrap(), KeyTtl::Missing);
    for i in 0..1200 {
        store
            .set(format!("user:{i}").as_bytes(), Value::Int(i), None)
            .unwrap();
    }
    store.set(b"user*glob", Value::Int(0), None).unwrap();
    other.set(b"user:1", Value::Int(1), None).unwrap();
    assert_eq!(store.clear(b"user:").unwrap(), 1200);
    assert!(store.exists(b"user*glob").unwrap());
    assert!(store.exists(b"x").unwrap());
    assert!(
        other.exists(b"user:1").unwrap(),
        "another prefix is not touched"
    );
}

/// The overrun case with real TTLs: A's lock expires, B takes it, A's release and extend
/// are refused, B keeps it, and fences keep growing across releases and expiries.
#[test]
fn release_after_expiry_cannot_free_the_next_holders_lock() {
    let server = RedisServer::start();
    let store: Arc<dyn Store> = open(&server.unix_dsn(""));
    let locks = Locks::new(store.clone());
    let a = locks
        .acquire(b"job", Duration::from_millis(30), Duration::ZERO)
        .unwrap()
        .unwrap();
    std::thread::sleep(Duration::from_millis(80));
    let b = locks
        .acquire(b"job", Duration::from_secs(30), Duration::ZERO)
        .unwrap()
        .unwrap();
    assert!(!locks.release(&a).unwrap(), "A released B's lock");
    assert!(!locks.extend(&a, Duration::from_secs(30)).unwrap());
    assert!(locks.is_held(&b).unwrap());
    assert!(b.fence > a.fence);
    let mut last = b.fence;
    assert!(locks.release(&b).unwrap());
    for i in 0..20 {
        let h = locks
            .acquire(b"job", Duration::from_millis(5), Duration::ZERO)
            .unwrap()
            .unwrap();
        assert!(h.fence > last, "acquisition {i}: {} after {last}", h.fence);
        last = h.fence;
        if i % 2 == 0 {
            locks.release(&h).unwrap();
        } else {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // The counter expired too: the clock floor keeps fences growing.
    store.clear(b"").unwrap();
    let h = locks
        .acquire(b"job", Duration::from_secs(1), Duration::ZERO)
        .unwrap()
        .unwrap();
    assert!(h.fence > last);
}

/// Eight threads wait for the releases of eight different locks (as MemoLock's waiters
/// do: an exclusive lock's waiters wait in a line instead, `tests/lock_handoff.rs`):
/// the process has one subscriber connection for all of them, and each waiter gets its
/// lock when it is released.
#[test]
fn one_subscriber_serves_every_waiter_of_the_process() {
    let server = RedisServer::start();
    let store: Arc<dyn Store> = open(&server.unix_dsn(""));
    let locks = Locks::new(store.clone());
    let held: Vec<_> = (0..8)
        .map(|i| {
            let name = format!("lock:{i}");
            locks
                .acquire(name.as_bytes(), Duration::from_secs(60), Duration::ZERO)
                .unwrap()
                .unwrap()
        })
        .collect();
    std::thread::scope(|t| {
        let waiters: Vec<_> = (0..8)
            .map(|i| {
                let locks = locks.clone();
                t.spawn(move || {
                    let name = format!("lock:{i}");
                    assert!(
                        locks
                            .wait_until_free(name.as_bytes(), Duration::from_secs(50))
                            .unwrap()
                    );
                    locks
                        .acquire(
                            name.as_bytes(),
                            Duration::from_secs(60),
                            Duration::from_secs(50),
                        )
                        .unwrap()
                })
            })
            .collect();
        let admin = open(&server.unix_dsn(""));
        // Wait until all eight channels are subscribed, then count subscriber connections.
        let subscribers = loop {
            let list: String = redis_cli(&server, &["CLIENT", "LIST"]);
            let subs: Vec<&str> = list.lines().filter(|l| !l.contains(" sub=0 ")).collect();
            // Eight channels and the process's mailbox (`wakeups.rs`).
            if subs.iter().any(|l| l.contains(" sub=9 ")) {
                break subs.len();
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(subscribers, 1, "one subscriber connection per process");
        drop(admin);
        for h in &held {
            assert!(locks.release(h).unwrap());
        }
        for (w, h) in waiters.into_iter().zip(&held) {
            let got = w.join().unwrap().expect("the waiter got its lock");
            assert!(got.fence > h.fence);
        }
    });
}

fn redis_cli(server: &RedisServer, args: &[&str]) -> String {
    let out = std::process::Command::new("redis-cli")
        .arg("-s")
        .arg(&server.socket)
        .args(args)
        .output()
        .expect("redis-cli");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The server is killed: every call fails at once with `Unavailable` naming the address
/// (no hang), a waiter returns by its deadline, and once the server is back the same
/// store works again without being reopened.
#[test]
fn a_dead_server_fails_fast_and_the_store_recovers_when_it_is_back() {
    let mut server = RedisServer::start();
    let store: Arc<dyn Store> = open(&server.unix_dsn("?timeout=0.5"));
    let locks = Locks::new(store.clone());
    store.set(b"k", Value::Int(1), None).unwrap();
    let held = locks
        .acquire(b"l", Duration::from_secs(60), Duration::ZERO)
        .unwrap()
        .unwrap();
    server.kill();
    let s = store.clone();
    let err = no_hang(move || s.get(b"k", &mut Vec::new())).unwrap_err();
    match &err {
        StoreError::Unavailable { address, .. } => assert!(address.contains("redis.sock"), "{err}"),
        other => panic!("expected Unavailable, got {other}"),
    }
    let l = locks.clone();
    assert!(
        no_hang(move || l.acquire(b"l", Duration::from_secs(1), Duration::from_millis(300)))
            .is_err()
    );
    let s = store.clone();
    let waited = no_hang(move || s.wait_for_change(b"k", 1, Duration::from_millis(300)));
    assert!(waited.is_err() || waited.is_ok_and(|changed| !changed));
    server.restart();
    store.set(b"k", Value::Int(2), None).unwrap();
    assert_eq!(
        store.get(b"k", &mut Vec::new()).unwrap().unwrap().value,
        Fetched::Int(2)
    );
    // The lock died with the server (no persistence); it can be had again.
    let again = locks
        .acquire(b"l", Duration::from_secs(60), Duration::ZERO)
        .unwrap();
    assert!(again.is_some());
    assert!(!locks.release(&held).unwrap());
    // And waiters are woken again: the subscriber reconnected by itself.
    let h = again.unwrap();
    std::thread::scope(|t| {
        let w = t.spawn(|| {
            locks
                .acquire(b"l", Duration::from_secs(60), Duration::from_secs(50))
                .unwrap()
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(locks.release(&h).unwrap());
        assert!(w.join().unwrap().is_some());
    });
}

/// A session whose store cannot be reached follows `lock_timeout`: `fail` fails the
/// read; `warn` starts it empty with a warning and drops its writes, so that the stored
/// session is never overwritten by one this request did not read.
#[test]
fn a_session_whose_store_is_down_follows_lock_timeout() {
    use ephpm::keyspace::Keyspace;
    use ephpm::session::{Handler, OnTimeout, Settings};
    let mut server = RedisServer::start();
    let store: Arc<dyn Store> = open(&server.unix_dsn("?timeout=0.5"));
    let space = Keyspace::new(store.clone(), b"app:");
    let settings = |on_timeout| Settings {
        locking: true,
        lock_ttl: Duration::from_secs(30),
        lock_wait: Duration::from_secs(1),
        on_timeout,
    };
    let mut h = Handler::new(space.clone(), settings(OnTimeout::Warn));
    h.read(b"s1", &mut Vec::new()).unwrap();
    h.write(b"s1", b"n|i:1;", 0).unwrap();
    h.close();
    server.kill();
    let mut out = b"junk".to_vec();
    let mut down = Handler::new(space.clone(), settings(OnTimeout::Fail));
    assert!(down.read(b"s1", &mut out).is_err());
    let mut warned = Handler::new(space.clone(), settings(OnTimeout::Warn));
    let warning = warned.read(b"s1", &mut out).unwrap().expect("a warning");
    assert!(warning.contains("will not be saved"), "{warning}");
    assert!(out.is_empty());
    // Redis comes back before the request ends: its write is dropped.
    server.restart();
    warned.write(b"s1", b"n|i:99;", 0).unwrap();
    warned.close();
    assert!(
        !store.exists(b"app:session:s1").unwrap(),
        "nothing was written"
    );
}

/// rediss://: commands and the subscriber both go over TLS, verified against the CA
/// given with `?ca=`; a server whose certificate that CA did not sign is unavailable,
/// never trusted.
#[test]
fn rediss_talks_tls_and_refuses_a_server_it_cannot_verify() {
    let server = RedisServer::start_tls();
    let store: Arc<dyn Store> = open(&server.tls_dsn());
    store.set(b"k", Value::Str(b"over tls"), None).unwrap();
    let mut out = Vec::new();
    store.get(b"k", &mut out).unwrap().unwrap();
    assert_eq!(out, b"over tls");
    let locks = Locks::new(store.clone());
    let h = locks
        .acquire(b"l", Duration::from_secs(60), Duration::ZERO)
        .unwrap()
        .unwrap();
    std::thread::scope(|t| {
        let w = t.spawn(|| {
            // A wait for the release (MemoLock's), which the subscriber serves.
            assert!(
                locks
                    .wait_until_free(b"l", Duration::from_secs(50))
                    .unwrap()
            );
            locks
                .acquire(b"l", Duration::from_secs(60), Duration::from_secs(50))
                .unwrap()
        });
        // Released once the waiter's subscription (over TLS too) is live.
        while !redis_cli(&server, &["PUBSUB", "CHANNELS"]).contains("{l}:ephpm:wake") {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(locks.release(&h).unwrap());
        assert!(w.join().unwrap().is_some());
    });
    // Another CA: the handshake fails, and the store says why.
    let other = RedisServer::start_tls();
    let (port, _) = server.tls.as_ref().unwrap();
    let (_, wrong_ca) = other.tls.as_ref().unwrap();
    let untrusting = open(&format!(
        "rediss://127.0.0.1:{port}?ca={}",
        wrong_ca.display()
    ));
    match untrusting.get(b"k", &mut out) {
        Err(StoreError::Unavailable { cause, .. }) => {
            assert!(cause.to_lowercase().contains("certificate"), "{cause}")
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

/// Redis restarts while the process is idle: the connection it kept is dead, and the
/// first read or plain write after the restart still succeeds (it is retried once on a
/// new connection); an increment is not retried, since the first try may have landed.
#[test]
fn the_first_call_after_a_restart_while_idle_succeeds() {
    let mut server = RedisServer::start();
    let store = open(&server.tcp_dsn(""));
    store.set(b"k", Value::Int(1), None).unwrap();
    server.restart();
    assert_eq!(
        store.get(b"k", &mut Vec::new()).unwrap(),
        None,
        "read: no error, and gone"
    );
    server.restart();
    store.set(b"k", Value::Int(2), None).unwrap();
    assert!(store.exists(b"k").unwrap());
}

/// A session's hand-over in fewer round trips: the lock taken and the data read in one
/// pipeline, and the data written by one script only while the lock is still the
/// writer's (after the lock changed hands, nothing is written). A pipeline cannot load a
/// script, so a server that lost its scripts (`SCRIPT FLUSH`, a restart) gets it loaded
/// and the call still succeeds.
#[test]
fn a_lock_taken_with_its_data_and_data_written_only_under_the_lock() {
    let server = RedisServer::start();
    let store = open(&server.unix_dsn("?prefix=s:"));
    let ttl = Duration::from_secs(30);
    store.set(b"data", Value::Str(b"v1"), None).unwrap();
    let (a, b) = (new_token(), new_token());
    let mut out = Vec::new();
    redis_cli(&server, &["SCRIPT", "FLUSH"]);
    let (fence, hit) = store
        .lock_acquire_and_get(b"lock", &a, ttl, b"data", &mut out)
        .unwrap()
        .expect("a free lock");
    assert!(fence > 0);
    assert!(matches!(hit.map(|h| h.value), Some(Fetched::Str)));
    assert_eq!(out, b"v1");
    assert!(
        store
            .lock_acquire_and_get(b"lock", &b, ttl, b"data", &mut out)
            .unwrap()
            .is_none()
    );

    redis_cli(&server, &["SCRIPT", "FLUSH"]);
    let short = Duration::from_secs(100);
    assert!(
        store
            .set_if_locked(
                b"lock",
                &a,
                short,
                b"data",
                Value::Str(b"v2"),
                Some(ttl),
                Retention::Session
            )
            .unwrap()
    );
    assert!(store.get(b"data", &mut out).unwrap().is_some());
    assert_eq!(out, b"v2");
    let lock_ttl: i64 = redis_cli(&server, &["PTTL", "s:lock"])
        .trim()
        .parse()
        .unwrap();
    assert!(
        lock_ttl > 30_000,
        "the lock was not extended: {lock_ttl} ms"
    );
    let data_ttl: i64 = redis_cli(&server, &["PTTL", "s:data"])
        .trim()
        .parse()
        .unwrap();
    assert!((1..=30_000).contains(&data_ttl), "data TTL {data_ttl} ms");

    // Another token (the lock went to somebody else): nothing written.
    assert!(
        !store
            .set_if_locked(
                b"lock",
                &b,
                ttl,
                b"data",
                Value::Str(b"v3"),
                None,
                Retention::Session
            )
            .unwrap()
    );
    store.get(b"data", &mut out).unwrap();
    assert_eq!(out, b"v2");
    assert!(store.lock_release(b"lock", &a).unwrap());
    assert!(
        !store
            .set_if_locked(
                b"lock",
                &a,
                ttl,
                b"data",
                Value::Str(b"v4"),
                None,
                Retention::Session
            )
            .unwrap()
    );
    store.get(b"data", &mut out).unwrap();
    assert_eq!(out, b"v2");

    // The read after the acquisition fails (WRONGTYPE): the error reaches the caller and
    // the lock it had just taken is not left behind.
    redis_cli(&server, &["RPUSH", "s:listy", "x"]);
    let locks = Locks::new(store.clone());
    let failed = locks.acquire_and_get(b"lock2", ttl, Duration::ZERO, b"listy", &mut out);
    assert!(failed.is_err(), "{failed:?}");
    assert!(store.lock_acquire(b"lock2", &b, ttl).unwrap().is_some());
}

/// What an operator reads of a Redis store: its server's figures (used memory, no
/// `maxmemory` as a size of 0, its keys, its uptime), and the counters it does not have
/// named as such, by the names `Stats::named` gives them, so that their 0 is never shown
/// as a figure.
#[test]
fn stats_show_the_servers_figures_and_name_what_redis_does_not_count() {
    let server = RedisServer::start();
    let store = open(&server.unix_dsn(""));
    store.set(b"k", Value::Int(1), None).unwrap();
    let st = store.stats().unwrap();
    assert_eq!(st.memory_size, 0, "the test server has no maxmemory");
    assert!(st.memory_used > 0);
    assert!(st.entries >= 1);
    let names: Vec<&str> = st.named().iter().map(|(n, _)| *n).collect();
    let not_counted = store.not_counted();
    assert!(not_counted.contains(&"evictions_cache") && not_counted.contains(&"repairs"));
    for n in not_counted {
        assert!(names.contains(n), "{n} is not a name of Stats::named");
    }
    assert!(!not_counted.contains(&"hits") && !not_counted.contains(&"evictions"));
}
