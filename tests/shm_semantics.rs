//! The shm store's single-process semantics: types, TTLs, add, compare-and-delete,
//! compression, prefixes, growth, eviction, fullness and segment adoption.

mod common;

use std::mem::MaybeUninit;
use std::time::Duration;

use common::*;
use ephpm::store::shm::{ShmError, ShmOptions, ShmStore, remove_unused};
use ephpm::store::{Fetched, KeyTtl, Room, SetNx, Store, StoreError, Value};

fn get(s: &dyn Store, key: &[u8]) -> Option<(Fetched, Vec<u8>)> {
    let mut out = Vec::new();
    s.get(key, &mut out).expect("get").map(|h| (h.value, out))
}

/// Every value kind comes back as the kind it was stored as.
#[test]
fn values_keep_their_type() {
    let (_d, s) = store(4 * MB);
    let cases = [
        (Value::Str(b"hello\0world"), Fetched::Str),
        (Value::Str(b""), Fetched::Str),
        (Value::Serialized(b"a:0:{}"), Fetched::Serialized),
        (Value::Int(-42), Fetched::Int(-42)),
        (Value::Int(i64::MAX), Fetched::Int(i64::MAX)),
        (Value::Float(1.5), Fetched::Float(1.5)),
        (Value::Bool(true), Fetched::Bool(true)),
        (Value::Bool(false), Fetched::Bool(false)),
        (Value::Null, Fetched::Null),
    ];
    for (i, (v, want)) in cases.iter().enumerate() {
        let key = format!("k{i}");
        s.set(key.as_bytes(), *v, None).unwrap();
        let (got, bytes) = get(&s, key.as_bytes()).expect("present");
        assert_eq!(got, *want, "{v:?}");
        if let Value::Str(b) | Value::Serialized(b) = v {
            assert_eq!(&bytes[..], *b);
        }
    }
    s.verify().unwrap();
}

/// An entry past its TTL is absent for get, exists, set_nx, del_if_eq, incr and ttl.
#[test]
fn expired_entries_are_absent_for_every_operation() {
    let (_d, s, clock) = store_with_clock(4 * MB);
    let ttl = Some(Duration::from_secs(2));
    s.set(b"a", Value::Str(b"tok"), ttl).unwrap();
    s.set(b"n", Value::Int(5), ttl).unwrap();
    assert!(s.exists(b"a").unwrap());
    assert!(matches!(s.ttl(b"a").unwrap(), KeyTtl::Remaining(d) if d <= Duration::from_secs(2)));
    clock.advance(Duration::from_millis(2001));
    assert!(get(&s, b"a").is_none());
    assert!(!s.exists(b"a").unwrap());
    assert_eq!(s.ttl(b"a").unwrap(), KeyTtl::Missing);
    s.set(b"b", Value::Str(b"tok"), ttl).unwrap();
    clock.advance(Duration::from_secs(3));
    assert!(
        !s.del_if_eq(b"b", b"tok").unwrap(),
        "an expired entry never matches"
    );
    s.set(b"c", Value::Str(b"x"), ttl).unwrap();
    clock.advance(Duration::from_secs(3));
    assert_eq!(
        s.set_nx(b"c", Value::Str(b"y"), None).unwrap(),
        SetNx::Inserted
    );
    assert_eq!(
        s.incr_by(b"n", 1, None).unwrap(),
        1,
        "an expired counter restarts"
    );
    assert_eq!(s.ttl(b"n").unwrap(), KeyTtl::Persistent);
    s.verify().unwrap();
}

/// set_nx inserts only when absent; del_if_eq deletes only on a matching value.
#[test]
fn add_and_compare_and_delete() {
    let (_d, s) = store(4 * MB);
    assert_eq!(
        s.set_nx(b"l", Value::Str(b"A"), None).unwrap(),
        SetNx::Inserted
    );
    assert_eq!(
        s.set_nx(b"l", Value::Str(b"B"), None).unwrap(),
        SetNx::Exists
    );
    assert_eq!(get(&s, b"l").unwrap().1, b"A");
    assert!(!s.del_if_eq(b"l", b"B").unwrap());
    assert!(s.exists(b"l").unwrap());
    assert!(s.del_if_eq(b"l", b"A").unwrap());
    assert!(!s.exists(b"l").unwrap());
    assert!(!s.del_if_eq(b"missing", b"A").unwrap());
    s.set(b"i", Value::Int(7), None).unwrap();
    assert!(
        s.del_if_eq(b"i", b"7").unwrap(),
        "an integer compares as its decimal form"
    );
}

/// Compression is invisible: values round-trip and del_if_eq compares decompressed bytes.
#[test]
fn compare_through_compression() {
    let dir = TestDir::new("z");
    let opts = ShmOptions {
        compress_threshold: 1024,
        ..dir.options(4 * MB)
    };
    let (s, _) = ShmStore::open(&opts).unwrap();
    let big = b"lock-token-".repeat(2000);
    s.set(b"z", Value::Str(&big), None).unwrap();
    let used = s.stats().unwrap().memory_used;
    assert!(
        used < big.len() as u64,
        "stored compressed: {used} bytes used"
    );
    assert_eq!(get(&s, b"z").unwrap().1, big);
    let mut other = big.clone();
    *other.last_mut().unwrap() = b'X';
    assert!(!s.del_if_eq(b"z", &other).unwrap());
    assert!(!s.del_if_eq(b"z", &big[..big.len() - 1]).unwrap());
    assert!(s.del_if_eq(b"z", &big).unwrap());
}

/// A room that is not the engine's own buffer, as PHP's new string is: it is asked for
/// exactly the value's unpacked length (a compressed value included), and one that
/// refuses (no memory left) still hears of the hit and is given nothing.
struct Recording {
    asked: Vec<(usize, Fetched)>,
    bytes: Vec<MaybeUninit<u8>>,
    filled: Option<usize>,
    refuse: bool,
}

impl Room for Recording {
    fn room(&mut self, len: usize, kind: Fetched) -> Option<&mut [MaybeUninit<u8>]> {
        self.asked.push((len, kind));
        if self.refuse {
            return None;
        }
        self.bytes = vec![MaybeUninit::uninit(); len];
        Some(&mut self.bytes)
    }

    unsafe fn filled(&mut self, len: usize) {
        self.filled = Some(len);
    }
}

impl Recording {
    fn new(refuse: bool) -> Self {
        Recording {
            asked: Vec::new(),
            bytes: Vec::new(),
            filled: None,
            refuse,
        }
    }

    fn value(&self) -> Vec<u8> {
        let len = self.filled.expect("filled");
        // SAFETY: `filled(len)` said the first `len` bytes were written.
        self.bytes[..len]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect()
    }
}

#[test]
fn get_into_a_room_of_the_callers_own() {
    let dir = TestDir::new("room");
    let opts = ShmOptions {
        compress_threshold: 1024,
        ..dir.options(4 * MB)
    };
    let (s, _) = ShmStore::open(&opts).unwrap();
    let big = b"room-".repeat(4000);
    s.set(b"big", Value::Str(&big), None).unwrap();
    s.set(b"small", Value::Serialized(b"a:0:{}"), None).unwrap();
    s.set(b"n", Value::Int(7), None).unwrap();
    for (key, want, kind) in [
        (&b"big"[..], &big[..], Fetched::Str),
        (b"small", b"a:0:{}", Fetched::Serialized),
    ] {
        let mut room = Recording::new(false);
        let hit = s.get_into(key, &mut room).unwrap().expect("hit");
        assert_eq!(hit.value, kind);
        assert_eq!(
            room.asked,
            [(want.len(), kind)],
            "asked once, for the whole value"
        );
        assert_eq!(room.value(), want);
    }
    let mut refusing = Recording::new(true);
    let hit = s
        .get_into(b"big", &mut refusing)
        .unwrap()
        .expect("a hit refused is a hit");
    assert_eq!(hit.value, Fetched::Str);
    assert_eq!(refusing.filled, None);
    let mut room = Recording::new(false);
    assert_eq!(
        s.get_into(b"n", &mut room).unwrap().unwrap().value,
        Fetched::Int(7)
    );
    assert!(s.get_into(b"absent", &mut room).unwrap().is_none());
    assert!(
        room.asked.is_empty(),
        "no room asked for an integer or a miss"
    );
}

/// increment creates at the increment, keeps a TTL only from creation, rejects
/// non-integers and overflow without changing the value.
#[test]
fn increment_semantics() {
    let (_d, s, clock) = store_with_clock(4 * MB);
    assert_eq!(
        s.incr_by(b"c", 5, Some(Duration::from_secs(10))).unwrap(),
        5
    );
    assert_eq!(
        s.incr_by(b"c", -2, Some(Duration::from_secs(100))).unwrap(),
        3
    );
    assert!(matches!(s.ttl(b"c").unwrap(), KeyTtl::Remaining(d) if d <= Duration::from_secs(10)));
    s.set(b"s", Value::Str(b"41"), None).unwrap();
    assert_eq!(s.incr_by(b"s", 1, None).unwrap(), 42);
    assert_eq!(get(&s, b"s").unwrap().0, Fetched::Int(42));
    s.set(b"w", Value::Str(b"word"), None).unwrap();
    assert!(matches!(
        s.incr_by(b"w", 1, None),
        Err(StoreError::NotAnInteger)
    ));
    s.set(b"m", Value::Int(i64::MAX), None).unwrap();
    assert!(matches!(
        s.incr_by(b"m", 1, None),
        Err(StoreError::Overflow)
    ));
    assert_eq!(get(&s, b"m").unwrap().0, Fetched::Int(i64::MAX));
    clock.advance(Duration::from_secs(11));
    assert!(!s.exists(b"c").unwrap());
}

/// expire sets and removes a TTL; ttl reports missing, persistent and remaining.
#[test]
fn expire_and_ttl() {
    let (_d, s, clock) = store_with_clock(4 * MB);
    assert!(!s.expire(b"x", Some(Duration::from_secs(1))).unwrap());
    s.set(b"x", Value::Null, None).unwrap();
    assert_eq!(s.ttl(b"x").unwrap(), KeyTtl::Persistent);
    assert!(s.expire(b"x", Some(Duration::from_secs(5))).unwrap());
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        s.ttl(b"x").unwrap(),
        KeyTtl::Remaining(Duration::from_secs(4))
    );
    assert!(s.expire(b"x", None).unwrap());
    clock.advance(Duration::from_secs(10));
    assert_eq!(s.ttl(b"x").unwrap(), KeyTtl::Persistent);
}

/// On the kernel's clock (read coarse, a tick of 1–4 ms), an entry with a TTL of 1 ms
/// is gone for every read 2 ms later, as Redis' `SET … PX 1` is (Redis' own test of
/// GETEX checks it).
#[test]
fn a_ttl_of_one_ms_is_gone_two_ms_later() {
    let (_d, s) = store(4 * MB);
    for i in 0..50 {
        s.set(b"short", Value::Int(i), Some(Duration::from_millis(1)))
            .unwrap();
        std::thread::sleep(Duration::from_millis(2));
        assert!(get(&s, b"short").is_none(), "round {i}: still there");
        assert!(!s.exists(b"short").unwrap(), "round {i}");
    }
}

/// clear with a prefix removes only that prefix's keys; without, everything.
#[test]
fn clear_by_prefix_and_all() {
    let (_d, s) = store(4 * MB);
    for i in 0..500 {
        s.set(format!("app:{i}").as_bytes(), Value::Int(i), None)
            .unwrap();
        s.set(format!("other:{i}").as_bytes(), Value::Int(i), None)
            .unwrap();
    }
    assert_eq!(s.clear(b"app:").unwrap(), 500);
    assert!(!s.exists(b"app:7").unwrap());
    assert!(s.exists(b"other:7").unwrap());
    s.verify().unwrap();
    let version = |s: &ShmStore| {
        let mut o = Vec::new();
        s.set(b"v", Value::Null, None).unwrap();
        s.get(b"v", &mut o).unwrap().unwrap().version
    };
    let before = version(&s);
    assert_eq!(s.clear(b"").unwrap(), 501);
    assert_eq!(s.stats().unwrap().entries, 0);
    assert!(
        version(&s) > before,
        "versions keep increasing across a clear"
    );
    s.verify().unwrap();
}

/// The index grows with its keys: 200,000 keys are all found, and the store stays sound.
#[test]
fn index_grows_to_hundreds_of_thousands_of_keys() {
    let (_d, s) = store(128 * MB);
    let n = 200_000;
    for i in 0..n {
        s.set(
            format!("key:{i}").as_bytes(),
            Value::Str(&[b'v'; 100]),
            None,
        )
        .unwrap();
    }
    let st = s.stats().unwrap();
    assert_eq!(st.entries, n);
    assert_eq!(st.evictions, 0);
    for i in (0..n).step_by(997) {
        assert!(s.exists(format!("key:{i}").as_bytes()).unwrap());
    }
    assert_eq!(s.verify().unwrap(), n);
}

/// Under memory pressure entries are evicted, but never a held lock (set_nx with a TTL),
/// and a write that could only succeed by evicting locks fails, keeping the old value.
#[test]
fn eviction_under_pressure_never_removes_a_held_lock() {
    let (_d, s) = store(MB);
    let locks: Vec<String> = (0..200).map(|i| format!("lock:{i}")).collect();
    for l in &locks {
        assert_eq!(
            s.set_nx(
                l.as_bytes(),
                Value::Str(b"token"),
                Some(Duration::from_secs(60))
            )
            .unwrap(),
            SetNx::Inserted
        );
    }
    for i in 0..20_000 {
        s.set(
            format!("cache:{i}").as_bytes(),
            Value::Str(&[b'x'; 300]),
            None,
        )
        .unwrap();
    }
    let st = s.stats().unwrap();
    assert!(st.evictions > 0, "pressure caused evictions");
    for l in &locks {
        assert!(s.exists(l.as_bytes()).unwrap(), "{l} was evicted");
    }
    s.verify().unwrap();

    // Fill a shard's arena with locks only: a big write then has nothing it may evict.
    let (_d2, s2) = store(MB);
    let mut i = 0;
    while s2
        .set_nx(
            format!("L{i}").as_bytes(),
            Value::Str(&[b'l'; 200]),
            Some(Duration::from_secs(60)),
        )
        .is_ok()
    {
        i += 1;
    }
    s2.set(b"L0", Value::Str(b"small"), None).unwrap_or(());
    let before = get(&s2, b"L1").unwrap().1;
    let err = s2
        .set(b"L1", Value::Str(&[b'y'; 40_000]), None)
        .unwrap_err();
    assert!(matches!(err, StoreError::Full { .. }), "{err}");
    assert_eq!(get(&s2, b"L1").unwrap().1, before, "the old value stays");
    s2.verify().unwrap();
}

/// A value larger than a shard fails with Full and evicts nothing.
#[test]
fn a_value_larger_than_a_shard_fails_without_evicting() {
    let (_d, s) = store(MB);
    s.set(b"keep", Value::Str(b"me"), None).unwrap();
    let err = s
        .set(b"huge", Value::Str(&vec![0u8; 2 * MB as usize]), None)
        .unwrap_err();
    assert!(matches!(err, StoreError::Full { .. }));
    assert!(s.exists(b"keep").unwrap());
    assert_eq!(s.stats().unwrap().evictions, 0);
}

/// A live segment is never replaced: a process asking for another size adopts it as it
/// is, with a warning naming both sizes, and sees the same keys; resizing is an explicit
/// removal that refuses while anybody maps it; a damaged header is set aside only when
/// nobody maps the segment.
#[test]
fn a_live_segment_is_adopted_never_replaced() {
    let dir = TestDir::new("adopt");
    let (a, w) = ShmStore::open(&dir.options(2 * MB)).unwrap();
    assert!(w.is_empty());
    a.set(b"k", Value::Int(1), None).unwrap();
    assert!(
        a.lock_acquire(b"L", b"a", Duration::from_secs(60))
            .unwrap()
            .is_some()
    );

    let (b, w) = ShmStore::open(&dir.options(4 * MB)).unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("asks for 4194304") && w[0].contains("made with 2097152"),
        "{}",
        w[0]
    );
    assert!(b.exists(b"k").unwrap(), "the same store, not a fresh one");
    assert_eq!(
        b.lock_acquire(b"L", b"b", Duration::from_secs(60)).unwrap(),
        None
    );
    assert_eq!(b.stats().unwrap().memory_size, 2 * MB);

    assert!(matches!(
        remove_unused(&dir.options(2 * MB)),
        Err(ShmError::InUse { .. })
    ));
    drop((a, b));
    assert!(
        remove_unused(&dir.options(2 * MB)).unwrap(),
        "unused: removed"
    );
    let (s, w) = ShmStore::open(&dir.options(4 * MB)).unwrap();
    assert!(w.is_empty());
    assert_eq!(
        s.stats().unwrap().memory_size,
        4 * MB,
        "made anew at its size"
    );

    // A damaged header while the store is in use: an error, and the segment stays.
    let path = dir.options(4 * MB).path().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let Err(e) = ShmStore::open(&dir.options(4 * MB)) else {
        panic!("an unreadable segment in use was replaced");
    };
    assert!(e.to_string().contains("in use"), "{e}");
    drop(s);
    let (_s, w) = ShmStore::open(&dir.options(4 * MB)).unwrap();
    assert!(w[0].contains("initialisation never completed"), "{}", w[0]);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
}

/// wait_for_change returns at once when the version already differs, times out when
/// nothing changes, and is woken by a write from another thread.
#[test]
fn wait_for_change_is_woken_by_a_write() {
    let (_d, s) = store(4 * MB);
    assert!(
        !s.wait_for_change(b"w", 0, Duration::from_millis(30))
            .unwrap()
    );
    s.set(b"w", Value::Int(1), None).unwrap();
    assert!(s.wait_for_change(b"w", 0, Duration::ZERO).unwrap());
    let mut out = Vec::new();
    let v = s.get(b"w", &mut out).unwrap().unwrap().version;
    std::thread::scope(|t| {
        t.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            s.set(b"w", Value::Int(2), None).unwrap();
        });
        assert!(s.wait_for_change(b"w", v, Duration::from_secs(10)).unwrap());
    });
    assert!(s.del(b"w").unwrap());
    assert!(
        s.wait_for_change(b"w", v + 1, Duration::ZERO).unwrap(),
        "a delete changes the version"
    );
}

/// A shard whose index must grow while locks and a large value fragment its arena still
/// makes room by evicting cache entries.
#[test]
fn index_growth_under_pressure_evicts_instead_of_failing() {
    let dir = TestDir::new("g");
    let opts = ShmOptions {
        compress_threshold: 64 << 10,
        ..dir.options(MB)
    };
    let (s, _) = ShmStore::open(&opts).unwrap();
    s.set(b"k", Value::Str(&vec![b'x'; 1 << 20]), None).unwrap();
    for i in 0..100 {
        s.set_nx(
            format!("lock:{i}").as_bytes(),
            Value::Str(b"token"),
            Some(Duration::from_secs(60)),
        )
        .unwrap();
    }
    for i in 0..20_000 {
        if let Err(e) = s.set(
            format!("cache:{i}").as_bytes(),
            Value::Str(&[b'c'; 200]),
            None,
        ) {
            panic!("set {i}: {e}; {:?}", s.stats().unwrap());
        }
    }
    s.verify().unwrap();
}

/// A refused write is counted (`full_refusals`) for every process, and `max_item_size`
/// says what fits: one byte more than it is refused, it is stored.
#[test]
fn refused_writes_are_counted_and_max_item_size_is_what_fits() {
    let (_d, s) = store(MB);
    let st = s.stats().unwrap();
    assert_eq!(st.full_refusals, 0);
    assert!(st.age_seconds >= 1, "a fresh segment has a time base");
    let max = st.max_item_size as usize;
    assert!(max > 0 && max < MB as usize, "{max}");
    // Incompressible bytes (a value the size of a shard would compress otherwise).
    let bytes: Vec<u8> = (0..max + 1)
        .map(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes()[7])
        .collect();
    let err = s.set(b"k", Value::Str(&bytes), None).unwrap_err();
    assert!(matches!(err, StoreError::Full { .. }), "{err}");
    assert_eq!(s.stats().unwrap().full_refusals, 1);
    s.set(b"k", Value::Str(&bytes[..max]), None).unwrap();
    assert_eq!(s.stats().unwrap().full_refusals, 1);
}
