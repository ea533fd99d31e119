//! Lock-free readers never return a torn value: reader processes check every value they
//! get (a checksum inside it, and the key it was written for) while writer processes
//! rewrite those keys with values of other lengths, churn other keys of the same shards
//! (index growth and backward-shift deletions), and are SIGKILLed at random instants —
//! some in the middle of a write, leaving a shard's read sequence odd for the next locker
//! to repair. No reader may see a torn value or a miss (every checked key always exists),
//! and none may hang.
//!
//! With the fault point `broken-atomicity` (readers skip the read-sequence check) this
//! test fails: readers see values torn by the writers.

mod common;

use std::time::{Duration, Instant};

use common::child::{self, Rng};
use common::*;
use ephpm::store::shm::{ShmOptions, ShmStore};
use ephpm::store::{Fetched, Store, Value};

/// Keys the readers check, and keys the writers churn beside them.
const CHECKED: u64 = 64;
const CHURNED: u64 = 3000;
/// Values of 16 bytes (checksum, key, length) up to 3 KiB: sizes that split, merge and
/// reuse blocks, within the lock-free path's limit.
const MAX_VALUE: u64 = 3072;
/// Room for everything without evictions (an eviction would be a legitimate miss).
const SIZE: u64 = 16 * MB;
const KILLS: u32 = 100;

fn options(dir: &str) -> ShmOptions {
    ShmOptions {
        dir: dir.into(),
        ..ShmOptions::new("t", SIZE)
    }
}

/// FNV-1a: any change of any byte changes it.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A value for checked key `k`: its checksum, `k`, its own length, then bytes from `rng`.
fn value(k: u64, rng: &mut Rng) -> Vec<u8> {
    let len = 16 + rng.below(MAX_VALUE - 16) as usize;
    let mut v = vec![0u8; len];
    v[8..12].copy_from_slice(&(k as u32).to_le_bytes());
    v[12..16].copy_from_slice(&(len as u32).to_le_bytes());
    let seed = rng.next();
    for (i, b) in v[16..].iter_mut().enumerate() {
        *b = (seed >> (i % 8 * 8)) as u8 ^ i as u8;
    }
    let sum = checksum(&v[8..]);
    v[..8].copy_from_slice(&sum.to_le_bytes());
    v
}

/// What is wrong with `v` as the value of checked key `k`, if anything.
fn torn(k: u64, v: &[u8]) -> Option<String> {
    if v.len() < 16 {
        return Some(format!("{} bytes", v.len()));
    }
    let word = |at: usize| u32::from_le_bytes(v[at..at + 4].try_into().unwrap());
    let sum = u64::from_le_bytes(v[..8].try_into().unwrap());
    if sum != checksum(&v[8..]) || word(8) as u64 != k || word(12) as usize != v.len() {
        return Some(format!(
            "{} bytes, key {} (want {k}), length {}, checksum {}",
            v.len(),
            word(8),
            word(12),
            if sum == checksum(&v[8..]) {
                "ok"
            } else {
                "wrong"
            }
        ));
    }
    None
}

fn checked_key(k: u64) -> String {
    format!("r{k}")
}

/// Child: rewrites checked keys and churns others, until killed.
#[test]
fn child_writer() {
    let Some(dir) = child::job().and_then(|j| j.strip_prefix("writer:").map(String::from)) else {
        return;
    };
    let (s, _) = ShmStore::open(&options(&dir)).unwrap();
    let mut rng = Rng::seeded();
    child::ready();
    loop {
        if rng.below(10) < 7 {
            let k = rng.below(CHECKED);
            let v = value(k, &mut rng);
            s.set(checked_key(k).as_bytes(), Value::Str(&v), None)
                .unwrap();
        } else {
            let c = format!("c{}", rng.below(CHURNED));
            if rng.below(2) == 0 {
                s.del(c.as_bytes()).unwrap();
            } else {
                s.set(c.as_bytes(), Value::Int(rng.next() as i64), None)
                    .unwrap();
            }
        }
    }
}

/// Child: gets checked keys until the key "stop" appears, checking each value; exits 3 at
/// the first torn value, 4 at the end if it missed a key, else adds its count of reads to
/// "reads".
#[test]
fn child_reader() {
    let Some(dir) = child::job().and_then(|j| j.strip_prefix("reader:").map(String::from)) else {
        return;
    };
    let (s, _) = ShmStore::open(&options(&dir)).unwrap();
    let mut rng = Rng::seeded();
    child::ready();
    let mut out = Vec::new();
    let (mut reads, mut misses) = (0i64, 0u64);
    loop {
        for _ in 0..1000 {
            let k = rng.below(CHECKED);
            let wrong = match s.get(checked_key(k).as_bytes(), &mut out).unwrap() {
                Some(hit) if hit.value == Fetched::Str => torn(k, &out),
                Some(hit) => Some(format!("a {:?}", hit.value)),
                None => {
                    misses += 1;
                    None
                }
            };
            if let Some(what) = wrong {
                eprintln!("reader {}: key {k} read as {what}", std::process::id());
                std::process::exit(3);
            }
        }
        reads += 1000;
        if s.exists(b"stop").unwrap() {
            if misses > 0 {
                eprintln!("reader {}: {misses} misses", std::process::id());
                std::process::exit(4);
            }
            s.incr_by(b"reads", reads, None).unwrap();
            std::process::exit(0);
        }
    }
}

#[test]
fn readers_never_see_a_torn_value_while_writers_rewrite_and_die() {
    if child::job().is_some() {
        return;
    }
    let dir = TestDir::new("r");
    let (s, _) = ShmStore::open(&options(&dir.0.to_string_lossy())).unwrap();
    let mut rng = Rng::seeded();
    for k in 0..CHECKED {
        let v = value(k, &mut rng);
        s.set(checked_key(k).as_bytes(), Value::Str(&v), None)
            .unwrap();
    }
    let readers_job = format!("reader:{}", dir.0.display());
    let writers_job = format!("writer:{}", dir.0.display());
    let mut readers: Vec<_> = (0..3)
        .map(|_| child::spawn("child_reader", &readers_job))
        .collect();
    let mut writers = vec![
        child::spawn("child_writer", &writers_job),
        child::spawn("child_writer", &writers_job),
    ];
    for _ in 0..KILLS {
        std::thread::sleep(Duration::from_micros(rng.below(4000)));
        let victim = rng.below(2) as usize;
        let pid = writers[victim].id() as i32;
        // SAFETY: kill(2) has no memory preconditions; the pid is our own live child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
        writers[victim].wait().unwrap();
        writers[victim] = child::spawn("child_writer", &writers_job);
        if let Some((i, status)) = readers
            .iter_mut()
            .enumerate()
            .find_map(|(i, r)| r.try_wait().unwrap().map(|st| (i, st)))
        {
            panic!("reader {i} stopped early: {status}");
        }
    }
    for w in &mut writers {
        w.kill().unwrap();
        w.wait().unwrap();
    }
    s.set(b"stop", Value::Bool(true), None).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    for (i, r) in readers.iter_mut().enumerate() {
        let status = loop {
            if let Some(st) = r.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "reader {i} hangs");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(
            status.success(),
            "reader {i}: {status} (3: a torn value, 4: misses; see its stderr)"
        );
    }
    let mut out = Vec::new();
    let reads = match s.get(b"reads", &mut out).unwrap().map(|h| h.value) {
        Some(Fetched::Int(n)) => n,
        other => panic!("reads: {other:?}"),
    };
    let st = s.stats().unwrap();
    eprintln!("{reads} checked reads; {st:?}");
    assert!(reads >= 30_000, "only {reads} reads were checked");
    assert!(
        st.repairs > 0,
        "no kill landed inside a write: {st:?} (rerun)"
    );
    // Every shard is consistent and its read sequence even again.
    s.verify().unwrap();
    for k in 0..CHECKED {
        assert!(
            s.get(checked_key(k).as_bytes(), &mut out)
                .unwrap()
                .is_some()
        );
        assert_eq!(torn(k, &out), None);
    }
}
