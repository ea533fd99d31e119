//! Helpers shared by the engine's integration tests: a private store per test, in its
//! own directory under /dev/shm, removed when the test ends.
#![allow(dead_code)]

pub mod child;
pub mod cluster;
pub mod fake_resp;
pub mod redis;
pub mod redis_cluster;
pub mod resp_client;
pub mod tls;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use ephpm::store::shm::{Clock, ShmOptions, ShmStore};

pub struct TestDir(pub PathBuf);

impl TestDir {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = PathBuf::from(format!(
            "/dev/shm/ephpm-test-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("create test dir");
        TestDir(dir)
    }

    pub fn options(&self, size: u64) -> ShmOptions {
        ShmOptions {
            dir: self.0.clone(),
            ..ShmOptions::new("t", size)
        }
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh store of `size` bytes with the real clock.
pub fn store(size: u64) -> (TestDir, ShmStore) {
    let dir = TestDir::new("s");
    let (s, warnings) = ShmStore::open(&dir.options(size)).expect("open store");
    assert!(warnings.is_empty(), "{warnings:?}");
    (dir, s)
}

/// A fresh store whose clock the test moves by hand.
pub fn store_with_clock(size: u64) -> (TestDir, ShmStore, Clock) {
    let dir = TestDir::new("c");
    let clock = Clock::manual(1_000_000_000);
    let opts = ShmOptions {
        clock: clock.clone(),
        ..dir.options(size)
    };
    let (s, _) = ShmStore::open(&opts).expect("open store");
    (dir, s, clock)
}

pub const MB: u64 = 1 << 20;

/// Which backend the backend-generic tests run on: `EPHPM_TEST_STORE=redis` selects the
/// shared redis-server (over its unix socket; `redis-tcp`: its loopback port),
/// `redis-cluster` the shared Redis Cluster (`redis-cluster-tls`: one that speaks TLS
/// only and asks for a client certificate), `cluster` the shared 3-node gossip cluster
/// (through a different node for each test; `cluster-async`: the same, with lock
/// operations that do not await their replicas' copies, `?copies=async`), anything else
/// a private shm store.
pub fn backend() -> String {
    std::env::var("EPHPM_TEST_STORE").unwrap_or_else(|_| "shm".into())
}

/// What keeps a test's store alive and cleans it up.
pub enum Guard {
    Shm(TestDir),
    /// A store shared with other tests, under a key prefix of this test's: cleared.
    Shared(std::sync::Arc<dyn ephpm::store::Store>),
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Guard::Shared(s) = self {
            let _ = s.clear(b"");
        }
    }
}

/// A fresh store of the selected backend (4 MiB for shm; a private key prefix on Redis
/// and on the cluster).
pub fn any_store() -> (Guard, std::sync::Arc<dyn ephpm::store::Store>) {
    use std::sync::Arc;
    match backend().as_str() {
        b @ ("redis" | "redis-tcp" | "redis-cluster" | "redis-cluster-tls") => {
            static N: AtomicU32 = AtomicU32::new(0);
            let base = match b {
                "redis" => &redis::shared().0,
                "redis-tcp" => &redis::shared().1,
                "redis-cluster" => redis_cluster::shared(false),
                _ => redis_cluster::shared(true),
            };
            let sep = if base.contains('?') { '&' } else { '?' };
            let dsn = format!(
                "{base}{sep}prefix=t{}-{}:",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            );
            let Ok(ephpm::ground::dsn::Dsn::Redis(target)) = ephpm::ground::dsn::parse(&dsn) else {
                panic!("bad test dsn {dsn}")
            };
            let s: Arc<dyn ephpm::store::Store> =
                Arc::new(ephpm::store::redis::RedisStore::new(target).expect("redis store"));
            (Guard::Shared(s.clone()), s)
        }
        b @ ("cluster" | "cluster-async") => {
            static N: AtomicU32 = AtomicU32::new(0);
            let n = N.fetch_add(1, Ordering::SeqCst);
            let nodes = cluster::shared();
            let prefix = format!("t{}-{n}:", std::process::id());
            let copies = match b {
                "cluster" => ephpm::ground::dsn::Copies::Sync,
                _ => ephpm::ground::dsn::Copies::Async,
            };
            let (s, _) = ephpm::store::cluster::ClusterStore::open(
                &nodes[n as usize % nodes.len()],
                std::time::Duration::from_secs(3),
                prefix.as_bytes(),
                copies,
            )
            .expect("cluster store");
            let s: Arc<dyn ephpm::store::Store> = Arc::new(s);
            (Guard::Shared(s.clone()), s)
        }
        _ => {
            let (d, s) = store(4 << 20);
            (Guard::Shm(d), Arc::new(s))
        }
    }
}

/// A waiter of the lock `lock` on a thread of its own: takes it once (waiting up to
/// `wait`), checks through `inside` that nobody else holds it meanwhile, holds it a
/// moment (so that the other waiters are asleep when it releases, as behind a request),
/// releases it, and returns its fence.
pub fn take_once(
    store: std::sync::Arc<dyn ephpm::store::Store>,
    lock: &'static [u8],
    ttl: std::time::Duration,
    wait: std::time::Duration,
    inside: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    let locks = ephpm::lock::Locks::new(store);
    std::thread::spawn(move || {
        let held = locks
            .acquire(lock, ttl, wait)
            .expect("acquire")
            .expect("the lock within the wait");
        assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
        std::thread::sleep(std::time::Duration::from_millis(2));
        inside.store(false, Ordering::SeqCst);
        assert!(locks.release(&held).expect("release"));
        held.fence
    })
}

/// Runs `f` on another thread and fails the test if it has not returned within a
/// minute: a bound on a hang, not a measurement.
pub fn no_hang<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the call hung")
}
