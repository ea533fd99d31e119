//! Bytes written into a live segment by something else (another program with this
//! user's rights, a bug) may lose data, but must never wedge or crash the store: every
//! later call returns — a value, or an error — and a lock word that names no real holder
//! is recovered, not waited on forever.
//!
//! Each trial fills a store, scribbles on it, then runs every operation from two fresh
//! processes at once. A process that hangs is killed by the watchdog and fails the
//! trial; one that dies by a signal fails it too. The bound is a hang detector, not a
//! timing claim: the slowest call is printed, never asserted on.

mod common;

use std::os::unix::fs::FileExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::{Duration, Instant};

use common::child::{self, Rng};
use common::*;
use ephpm::store::shm::{ShmOptions, ShmStore};
use ephpm::store::{Store, Value};

const MB: u64 = 1 << 20;
const SIZE: u64 = 2 * MB;
const TRIALS: u64 = 50;
const KEYS: u32 = 600;
/// A process still running after this has hung (a healthy one needs well under a second).
const WATCHDOG: Duration = Duration::from_secs(30);

fn options(dir: &str) -> ShmOptions {
    ShmOptions {
        dir: dir.into(),
        ..ShmOptions::new("t", SIZE)
    }
}

/// Where the shards begin and how far apart they are, from the segment header.
fn geometry(file: &std::fs::File) -> (u64, u64) {
    let mut buf = [0u8; 48];
    file.read_exact_at(&mut buf, 0).expect("header");
    let stride = u64::from_ne_bytes(buf[32..40].try_into().expect("8 bytes"));
    // SHARDS_OFFSET: the wait table (4096 + 1024 words of 8 bytes), page-rounded.
    (4096 + 8192, stride)
}

/// Writes `n` random bytes: half into the first 2 KiB of each shard (its mutex, header,
/// index and first entries, where damage hurts most), half anywhere in the shards. One
/// trial in four also plants a lock word naming a thread that does not exist.
fn scribble(path: &Path, rng: &mut Rng, n: usize, trial: u64) {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open segment");
    let (shards_at, stride) = geometry(&file);
    for i in 0..n {
        let shard = rng.below(16);
        let off = if i % 2 == 0 {
            shards_at + shard * stride + rng.below(2048)
        } else {
            shards_at + rng.below(16 * stride)
        };
        file.write_all_at(&[rng.next() as u8], off).expect("write");
    }
    if trial % 4 == 0 {
        let shard = rng.below(16);
        let ghost = 0x3fff_0000u32 | rng.below(0xffff) as u32;
        file.write_all_at(&ghost.to_ne_bytes(), shards_at + shard * stride)
            .expect("write");
    }
}

fn fill(s: &ShmStore, rng: &mut Rng) {
    for k in 0..KEYS {
        let key = format!("key{k}");
        let value = vec![b'v'; 1 + rng.below(3000) as usize];
        let _ = s.set(key.as_bytes(), Value::Str(&value), None);
        if k % 50 == 0 {
            let _ = s.lock_acquire(
                format!("lock{k}").as_bytes(),
                b"tok",
                Duration::from_secs(60),
            );
        }
    }
}

/// Every operation on every key, each allowed to fail (a corrupt shard says so by an
/// error or a caught panic, as the PHP layer catches them); returns the errors seen and
/// the slowest call.
fn exercise(s: &ShmStore) -> (u32, Duration) {
    let mut errors = 0;
    let mut slowest = Duration::ZERO;
    let mut call = |f: &mut dyn FnMut() -> bool| {
        let t = Instant::now();
        if !catch_unwind(AssertUnwindSafe(&mut *f)).unwrap_or(false) {
            errors += 1;
        }
        slowest = slowest.max(t.elapsed());
    };
    for k in 0..KEYS {
        let key = format!("key{k}");
        let key = key.as_bytes();
        let mut out = Vec::new();
        call(&mut || s.get(key, &mut out).is_ok());
        call(&mut || {
            s.set(key, Value::Int(k as i64), Some(Duration::from_secs(60)))
                .is_ok()
        });
        call(&mut || s.set_nx(key, Value::Null, None).is_ok());
        call(&mut || s.incr_by(key, 1, None).is_ok());
        call(&mut || s.del_if_eq(key, b"x").is_ok());
        call(&mut || s.lock_acquire(key, b"t", Duration::from_secs(5)).is_ok());
        call(&mut || s.lock_release(key, b"t").is_ok());
        call(&mut || s.del(key).is_ok());
    }
    call(&mut || s.stats().is_ok());
    call(&mut || s.clear(b"key1").is_ok());
    (errors, slowest)
}

/// The child: opens the scribbled store and exercises it.
#[test]
fn child_exercises_a_scribbled_store() {
    let Some(dir) = child::job() else { return };
    std::panic::set_hook(Box::new(|_| {}));
    child::ready();
    let opened = catch_unwind(|| ShmStore::open(&options(&dir)));
    let (errors, slowest) = match opened {
        Ok(Ok((s, _))) => exercise(&s),
        // A damaged header is refused at open: an error, which is fine.
        _ => (1, Duration::ZERO),
    };
    println!("errors {errors} slowest {slowest:?}");
}

fn wait_or_kill(mut c: std::process::Child) -> Result<std::process::ExitStatus, String> {
    let start = Instant::now();
    loop {
        if let Some(status) = c.try_wait().expect("wait") {
            return Ok(status);
        }
        if start.elapsed() > WATCHDOG {
            let _ = c.kill();
            let _ = c.wait();
            return Err(format!("still running after {WATCHDOG:?}: hung"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn scribbled_bytes_never_wedge_or_crash_the_store() {
    if child::job().is_some() {
        return;
    }
    let mut rng = Rng::seeded();
    println!("seed {}", rng.0);
    for trial in 0..TRIALS {
        let dir = TestDir::new("scribble");
        let opts = options(dir.0.to_str().expect("utf-8 path"));
        let (s, _) = ShmStore::open(&opts).expect("open");
        fill(&s, &mut rng);
        scribble(&opts.path().expect("path"), &mut rng, 2000, trial);
        let job = dir.0.to_str().expect("utf-8 path");
        let kids = [
            child::spawn("child_exercises_a_scribbled_store", job),
            child::spawn("child_exercises_a_scribbled_store", job),
        ];
        for kid in kids {
            let status = wait_or_kill(kid).unwrap_or_else(|e| panic!("trial {trial}: {e}"));
            assert!(status.success(), "trial {trial}: child ended with {status}");
        }
        // This process, which mapped the store before the scribble, carries on too.
        let watchdog = Instant::now();
        let _ = exercise(&s);
        assert!(
            watchdog.elapsed() < WATCHDOG,
            "trial {trial}: this process hung"
        );
    }
}

/// The reproduced wedge: a LIVE block header at the arena's very end and the repair flag
/// set made the repair read past the arena and panic while it held the shard lock, so
/// every process then blocked forever. The repair now runs under the guard that unlocks,
/// and bounds-checks every entry.
#[test]
fn a_corrupt_block_at_the_arena_end_is_repaired_without_wedging() {
    if child::job().is_some() {
        return;
    }
    let dir = TestDir::new("wedge");
    let opts = options(dir.0.to_str().expect("utf-8 path"));
    let (s, _) = ShmStore::open(&opts).expect("open");
    s.set(b"k", Value::Int(1), None).expect("set");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(opts.path().expect("path"))
        .expect("open segment");
    let (shards_at, stride) = geometry(&file);
    // Shard 0's arena ends where shard 1 begins; its length is the u32 after the 40-byte
    // mutex and the u32 `needs_repair`. The arena becomes one FREE block up to its last
    // 16 bytes, which become a LIVE block of 16 bytes (smaller than any entry), and
    // `needs_repair` is set.
    let end = shards_at + stride;
    let mut len = [0u8; 4];
    file.read_exact_at(&mut len, shards_at + 44).expect("read");
    let arena_len = u32::from_ne_bytes(len) as u64;
    let arena = end - arena_len;
    let header = |size: u64, state: u32| {
        let mut h = [0u8; 8];
        h[..4].copy_from_slice(&(size as u32).to_ne_bytes());
        h[4..].copy_from_slice(&state.to_ne_bytes());
        h
    };
    const FREE: u32 = 0x4652_4545;
    const LIVE: u32 = 0x4c49_5645;
    file.write_all_at(&header(arena_len - 16 - 16, FREE), arena + 16)
        .expect("write");
    file.write_all_at(&header(16, LIVE), end - 16)
        .expect("write");
    file.write_all_at(&1u32.to_ne_bytes(), shards_at + 40)
        .expect("write");
    let kid = child::spawn(
        "child_exercises_a_scribbled_store",
        dir.0.to_str().expect("utf-8"),
    );
    let status = wait_or_kill(kid).expect("no wedge");
    assert!(status.success(), "child ended with {status}");
    let st = s.stats().expect("stats");
    assert!(st.repairs >= 1, "the shard was repaired: {st:?}");
}
