//! The locking session handler: a session is handed from one request to the next on
//! close, no update is lost, and a request whose lock expired can neither write nor
//! release the next holder's lock.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use ephpm::keyspace::Keyspace;
use ephpm::session::{
    Handler, MAX_LOCK_SECONDS, OnTimeout, SessionError, Settings, lock_ttl, lock_wait,
};

const SETTINGS: Settings = Settings {
    locking: true,
    lock_ttl: Duration::from_secs(10),
    lock_wait: Duration::from_secs(10),
    on_timeout: OnTimeout::Fail,
};

fn space() -> (Guard, Keyspace) {
    let (g, s) = any_store();
    (g, Keyspace::new(s, b"app:"))
}

fn read(h: &mut Handler, id: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    assert_eq!(h.read(id, &mut out).unwrap(), None);
    out
}

#[test]
fn a_new_session_reads_empty_and_keeps_what_is_written() {
    let (_d, space) = space();
    let mut h = Handler::new(space.clone(), SETTINGS);
    assert_eq!(read(&mut h, b"abc"), b"");
    h.write(b"abc", b"n|i:1;", 1440).unwrap();
    assert!(h.close());
    let mut next = Handler::new(space, SETTINGS);
    assert_eq!(read(&mut next, b"abc"), b"n|i:1;");
    assert!(next.exists(b"abc").unwrap());
    assert!(!next.exists(b"other").unwrap());
}

/// 8 threads each read a counter, wait, and write it + 1: with the lock, none is lost.
#[test]
fn concurrent_requests_on_one_session_lose_no_update() {
    let (_d, space) = space();
    std::thread::scope(|t| {
        for _ in 0..8 {
            let space = space.clone();
            t.spawn(move || {
                for _ in 0..5 {
                    let mut h = Handler::new(space.clone(), SETTINGS);
                    let n: u32 = String::from_utf8(read(&mut h, b"s"))
                        .unwrap()
                        .parse()
                        .unwrap_or(0);
                    std::thread::sleep(Duration::from_millis(1));
                    h.write(b"s", (n + 1).to_string().as_bytes(), 1440).unwrap();
                    assert!(h.close());
                }
            });
        }
    });
    let mut h = Handler::new(space, SETTINGS);
    assert_eq!(read(&mut h, b"s"), b"40");
}

/// The second request's read returns only once the first has closed.
#[test]
fn a_waiting_request_gets_the_session_when_the_holder_closes() {
    let (_d, space) = space();
    let mut first = Handler::new(space.clone(), SETTINGS);
    read(&mut first, b"s");
    let closed = AtomicBool::new(false);
    std::thread::scope(|t| {
        let waiter = t.spawn(|| {
            let mut second = Handler::new(space.clone(), SETTINGS);
            read(&mut second, b"s");
            closed.load(Ordering::SeqCst)
        });
        std::thread::sleep(Duration::from_millis(50));
        first.write(b"s", b"x", 1440).unwrap();
        closed.store(true, Ordering::SeqCst);
        first.close();
        assert!(
            waiter.join().unwrap(),
            "the read returned before the holder closed"
        );
    });
}

/// Request A's lock expires, B takes it, A writes and closes: A's stale write is refused
/// and B's lock is untouched.
#[test]
fn session_lock_release_cannot_delete_a_lock_it_no_longer_holds() {
    let (_d, space) = space();
    let short = Settings {
        lock_ttl: Duration::from_millis(50),
        ..SETTINGS
    };
    let mut a = Handler::new(space.clone(), short);
    read(&mut a, b"s");
    std::thread::sleep(Duration::from_millis(100));
    let mut b = Handler::new(space.clone(), SETTINGS);
    read(&mut b, b"s");
    assert!(matches!(
        a.write(b"s", b"from A", 1440),
        Err(SessionError::LockLost(_))
    ));
    a.close();
    let mut c = Handler::new(
        space.clone(),
        Settings {
            lock_wait: Duration::ZERO,
            ..SETTINGS
        },
    );
    assert!(
        matches!(
            c.read(b"s", &mut Vec::new()),
            Err(SessionError::LockTimeout { .. })
        ),
        "B's lock was freed by A"
    );
    b.write(b"s", b"from B", 1440).unwrap();
    assert!(b.close());
    assert_eq!(read(&mut Handler::new(space, SETTINGS), b"s"), b"from B");
}

#[test]
fn a_lock_that_cannot_be_had_fails_or_warns() {
    let (_d, space) = space();
    let mut holder = Handler::new(space.clone(), SETTINGS);
    read(&mut holder, b"s");
    let quick = Settings {
        lock_wait: Duration::from_millis(20),
        ..SETTINGS
    };
    let mut failing = Handler::new(space.clone(), quick);
    assert!(matches!(
        failing.read(b"s", &mut Vec::new()),
        Err(SessionError::LockTimeout { .. })
    ));
    let mut warning = Handler::new(
        space,
        Settings {
            on_timeout: OnTimeout::Warn,
            ..quick
        },
    );
    let w = warning.read(b"s", &mut Vec::new()).unwrap();
    assert!(w.is_some_and(|w| w.contains("going on without it")));
}

#[test]
fn destroy_deletes_and_releases() {
    let (_d, space) = space();
    let mut h = Handler::new(space.clone(), SETTINGS);
    read(&mut h, b"s");
    h.write(b"s", b"x", 1440).unwrap();
    h.destroy(b"s").unwrap();
    let mut next = Handler::new(
        space,
        Settings {
            lock_wait: Duration::ZERO,
            ..SETTINGS
        },
    );
    assert_eq!(read(&mut next, b"s"), b"");
}

#[test]
fn lazy_write_touch_keeps_the_data_and_renews_its_lifetime() {
    let (_d, space) = space();
    let mut h = Handler::new(space.clone(), SETTINGS);
    read(&mut h, b"s");
    h.write(b"s", b"x", 5).unwrap();
    h.touch(b"s", b"x", 1440).unwrap();
    match space.ttl(b"session:s").unwrap() {
        ephpm::store::KeyTtl::Remaining(d) => assert!(d > Duration::from_secs(1000)),
        other => panic!("{other:?}"),
    }
    h.touch(b"new", b"y", 1440).unwrap();
    assert_eq!(read(&mut Handler::new(space, SETTINGS), b"new"), b"y");
}

#[test]
fn a_created_id_is_never_one_in_use() {
    let (_d, space) = space();
    let mut h = Handler::new(space, SETTINGS);
    let mut ids = vec![b"taken".to_vec(), b"taken".to_vec(), b"fresh".to_vec()].into_iter();
    assert_eq!(
        h.create_id(|| ids.next(), 1440).unwrap(),
        Some(b"taken".to_vec())
    );
    assert_eq!(
        h.create_id(|| ids.next(), 1440).unwrap(),
        Some(b"fresh".to_vec())
    );
    assert!(matches!(
        h.create_id(|| Some(b"taken".to_vec()), 1440),
        Err(SessionError::NoFreeId(16))
    ));
}

/// PHP checks a new id with validate_sid right after create_sid (session_create_id()
/// while a session is active, session_regenerate_id() in strict mode): the handler's
/// own reservation is no collision, or PHP fails or retries, leaving reservations
/// behind; for every other handler the id is taken.
#[test]
fn its_own_new_id_is_no_collision_for_a_handler_but_is_taken_for_others() {
    let (_d, space) = space();
    let mut h = Handler::new(space.clone(), SETTINGS);
    let other = Handler::new(space.clone(), SETTINGS);
    let id = h
        .create_id(|| Some(b"new".to_vec()), 1440)
        .unwrap()
        .unwrap();
    assert!(!h.exists(&id).unwrap());
    assert!(other.exists(&id).unwrap());
    // Once closed, or written, it is a session like any other for its handler too.
    h.close();
    assert!(h.exists(&id).unwrap());
    let id = h
        .create_id(|| Some(b"new2".to_vec()), 1440)
        .unwrap()
        .unwrap();
    read(&mut h, &id);
    h.write(&id, b"n|i:1;", 1440).unwrap();
    assert!(h.exists(&id).unwrap());
}

/// Settings from php.ini or an options array can say anything: waits and TTLs are
/// bounded so that a clock can add them, NaN and negatives wait 0, and a lifetime of
/// i64::MAX seconds (session.gc_maxlifetime) is stored and read back.
#[test]
fn lock_waits_ttls_and_lifetimes_are_bounded() {
    let max = Duration::from_secs(u64::from(MAX_LOCK_SECONDS));
    assert_eq!(lock_wait(f64::NAN), Duration::ZERO);
    assert_eq!(lock_wait(-1.0), Duration::ZERO);
    assert_eq!(lock_wait(2.5), Duration::from_millis(2500));
    assert_eq!(lock_wait(1e20), max);
    assert_eq!(lock_wait(f64::INFINITY), max);
    assert_eq!(lock_ttl(1e20, 0.0), max);
    assert_eq!(lock_ttl(f64::NAN, f64::NAN), Duration::from_secs(30));
    let (_d, space) = space();
    let longest = Settings {
        lock_ttl: max,
        lock_wait: max,
        ..SETTINGS
    };
    let mut h = Handler::new(space.clone(), longest);
    read(&mut h, b"long");
    h.write(b"long", b"x", i64::MAX).unwrap();
    h.touch(b"long", b"x", i64::MAX).unwrap();
    assert!(h.close());
    assert_eq!(read(&mut Handler::new(space, longest), b"long"), b"x");
}

#[test]
fn without_locking_nothing_is_locked() {
    let (_d, space) = space();
    let off = Settings {
        locking: false,
        lock_wait: Duration::ZERO,
        ..SETTINGS
    };
    let mut a = Handler::new(space.clone(), off);
    let mut b = Handler::new(space, off);
    read(&mut a, b"s");
    read(&mut b, b"s");
    a.write(b"s", b"a", 1440).unwrap();
    b.write(b"s", b"b", 1440).unwrap();
}

#[test]
fn the_lock_ttl_falls_back_to_max_execution_time_then_30_seconds() {
    assert_eq!(lock_ttl(5.0, 60.0), Duration::from_secs(5));
    assert_eq!(lock_ttl(0.0, 60.0), Duration::from_secs(60));
    assert_eq!(lock_ttl(0.0, 0.0), Duration::from_secs(30));
    assert_eq!(lock_ttl(-1.0, 0.0), Duration::from_secs(30));
}

/// Every key the store holds, the keyspace's and any other (a walk of the whole store).
fn keys(space: &Keyspace) -> Vec<Vec<u8>> {
    let (mut out, mut cursor) = (Vec::new(), 0);
    loop {
        cursor = space.store().scan(b"", cursor, &mut out).unwrap();
        if cursor == 0 {
            return out.into_iter().map(|e| e.key).collect();
        }
    }
}

/// Ids PHP's own handlers refuse (`php_session_valid_key`: 1 to 256 of `A-Za-z0-9,-`)
/// are refused here too, by read, write and touch, never exist, and never become a key
/// — neither a session nor its lock; ids PHP's generator makes pass.
#[test]
fn invalid_session_ids_are_refused_and_never_become_keys() {
    let (_d, space) = space();
    let long = vec![b'a'; 10_000];
    let just_over = vec![b'a'; 257];
    let odd: [&[u8]; 8] = [
        b"../../x",
        b"a\0b",
        b"\xff\xfe",
        b"abc;def",
        b"",
        b"a b",
        &long,
        &just_over,
    ];
    let mut h = Handler::new(space.clone(), SETTINGS);
    for id in odd {
        let shown = String::from_utf8_lossy(&id[..id.len().min(20)]).into_owned();
        let mut out = Vec::new();
        assert!(
            matches!(h.read(id, &mut out), Err(SessionError::InvalidId)),
            "read {shown}"
        );
        assert!(
            matches!(h.write(id, b"n|i:1;", 1440), Err(SessionError::InvalidId)),
            "write {shown}"
        );
        assert!(
            matches!(h.touch(id, b"n|i:1;", 1440), Err(SessionError::InvalidId)),
            "touch {shown}"
        );
        assert!(!h.exists(id).unwrap(), "exists {shown}");
        h.destroy(id).unwrap();
        assert!(!ephpm::session::valid_id(id), "{shown}");
    }
    assert!(h.close());
    assert_eq!(keys(&space), Vec::<Vec<u8>>::new());

    // The longest and the odd-looking ids PHP's generator can make are sessions.
    let longest = vec![b'Z'; 256];
    for id in [&longest[..], b"a,b-C9", b"0"] {
        read(&mut h, id);
        h.write(id, b"n|i:1;", 1440).unwrap();
        assert!(h.close());
        assert!(h.exists(id).unwrap());
    }
}
