//! `cluster://`: the gossip cluster, as a PHP process sees it. Reads are served from
//! the host's cluster segment when it holds the key (the node keeps it current from
//! replication and gossip); everything else goes to the host's node over its unix
//! socket, which routes it to the key's owner (`crate::cluster`).

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::shm::{ShmOptions, ShmStore, euid, open_shared};
use super::{
    Event, KeyTtl, Result, ScanEntry, SetNx, ShardFill, Stats, Store, StoreError, Value, bytes,
};
use crate::ground::dsn::Copies;
use crate::wire::entry::{self, State};
use crate::wire::peercred::peer_uid;
use crate::wire::{self, Entry, Failure, Op, Response, Route};
use crate::wire::{segment_options, socket_path};

pub struct ClusterStore {
    local: Arc<ShmStore>,
    socket: PathBuf,
    timeout: Duration,
    /// `?prefix=`: put before every key.
    prefix: Vec<u8>,
    /// `?copies=`: carried by every lock operation to the lock's owner.
    copies: Copies,
    /// Idle connections to the node, with the pid that opened them: a forked child
    /// never shares its parent's.
    idle: Mutex<Vec<(u32, UnixStream)>>,
    /// Requests sent to the node (for the tests that count a lock's round trips).
    requests: AtomicU64,
}

impl ClusterStore {
    pub fn open(
        store: &ShmOptions,
        timeout: Duration,
        prefix: &[u8],
        copies: Copies,
    ) -> Result<(Self, Vec<String>)> {
        let (local, warnings) = open_shared(&segment_options(store))?;
        Ok((
            ClusterStore {
                local,
                socket: socket_path(store)?,
                timeout,
                prefix: prefix.to_vec(),
                copies,
                idle: Mutex::new(Vec::new()),
                requests: AtomicU64::new(0),
            },
            warnings,
        ))
    }

    fn unavailable(&self, cause: String) -> StoreError {
        StoreError::Unavailable {
            address: format!("the cluster node at {}", self.socket.display()),
            cause,
        }
    }

    /// One request to the node. A kept connection that fails before any answer is
    /// replaced once for a read (the node may have been restarted); a write that fails
    /// is `Unavailable`, since it may have landed.
    ///
    /// The whole call — connecting, sending, the answer — is bounded by the store's
    /// timeout (plus the wait a `Wait` asks for): a node that is stopped (SIGSTOP) or
    /// stuck makes the call `Unavailable` within it, never later.
    fn call(&self, op: &Op) -> Result<Response> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let wait = match op {
            Op::Wait { timeout, .. } | Op::LockWait { timeout, .. } => *timeout,
            _ => Duration::ZERO,
        };
        let deadline = Instant::now() + wait + self.timeout;
        let idempotent = matches!(
            op,
            Op::Read { .. }
                | Op::Wait { .. }
                | Op::LockWait { .. }
                | Op::Stats
                | Op::Members
                | Op::Health
        );
        let body = wire::encode_request(Route::Client, op);
        let pid = crate::runtime::pid();
        loop {
            let kept = {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                idle.retain(|(p, _)| *p == pid);
                idle.pop().map(|(_, c)| c)
            };
            let was_kept = kept.is_some();
            let mut conn = match kept {
                Some(c) => c,
                None => self.connect(deadline)?,
            };
            let answer = remaining(deadline)
                .and_then(|left| conn.set_write_timeout(Some(left)))
                .and_then(|()| wire::write_frame(&mut conn, &body))
                .and_then(|_| remaining(deadline))
                .and_then(|left| conn.set_read_timeout(Some(left)))
                .and_then(|()| wire::read_frame(&mut conn));
            match answer {
                Ok(frame) => {
                    let response = wire::decode_response(&frame).ok_or_else(|| {
                        self.unavailable("the node sent a malformed answer".into())
                    })?;
                    self.idle
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((pid, conn));
                    return failure(response);
                }
                Err(_) if was_kept && idempotent && Instant::now() < deadline => continue,
                Err(e) => return Err(self.unavailable(e.to_string())),
            }
        }
    }

    /// Requests this store sent to the node so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The node ids the host's node sees as members.
    pub fn members(&self) -> Result<Vec<String>> {
        match self.call(&Op::Members)? {
            Response::Members(m) => Ok(m),
            other => Err(unexpected(other)),
        }
    }

    /// Connects to the node, waiting until `deadline` for one to serve: a node is
    /// starting (this host's first process, or a takeover after its holder died). Nothing
    /// was sent yet, so waiting is safe for every request. The node must be a process of
    /// this user (SO_PEERCRED): anything else listening there is refused, never spoken to.
    fn connect(&self, deadline: Instant) -> Result<UnixStream> {
        loop {
            match UnixStream::connect(&self.socket) {
                Ok(c) => {
                    let uid = peer_uid(&c).map_err(|e| self.unavailable(e.to_string()))?;
                    if uid != euid() {
                        return Err(self.unavailable(format!(
                            "the process listening there is uid {uid}, not this user ({}): \
                             refusing to talk to it; remove the socket",
                            euid()
                        )));
                    }
                    return Ok(c);
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(self.unavailable(format!("no node serves this host's store ({e})")));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    fn entry(&self, key: &[u8]) -> Result<Option<Entry>> {
        match self.call(&Op::Read {
            key: self.full(key),
        })? {
            Response::Entry(e) => Ok(e),
            other => Err(unexpected(other)),
        }
    }

    fn boolean(&self, op: Op) -> Result<bool> {
        match self.call(&op)? {
            Response::Bool(b) => Ok(b),
            other => Err(unexpected(other)),
        }
    }

    fn full(&self, key: &[u8]) -> Vec<u8> {
        [&self.prefix[..], key].concat()
    }

    /// Shows the segment's copy of `key` to `visit`: its version, or `None` when the
    /// segment has no live value for it (absent, deleted, or a large value held elsewhere)
    /// or, with `locks` false, when it holds a lock.
    fn read_local(
        &self,
        key: &[u8],
        locks: bool,
        visit: &mut dyn FnMut(Value<'_>),
    ) -> Result<Option<u64>> {
        let mut version = None;
        let key = self.full(key);
        self.local.read(&key, &mut |v| {
            if let Value::Str(e) = v {
                if !locks && entry::is_lock(e) {
                    return;
                }
                if let Some((_, State::Value(value))) = entry::parse(e) {
                    version = Some(bytes::fingerprint(e));
                    visit(value);
                }
            }
        })?;
        Ok(version)
    }
}

/// What is left until `deadline`, or a timeout error when nothing is.
fn remaining(deadline: Instant) -> std::io::Result<Duration> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(left) if !left.is_zero() => Ok(left),
        _ => Err(std::io::ErrorKind::TimedOut.into()),
    }
}

fn encoded(value: Value<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    bytes::encode(value, &mut out);
    out
}

fn failure(r: Response) -> Result<Response> {
    let Response::Failed(kind, why) = r else {
        return Ok(r);
    };
    Err(match kind {
        Failure::NotAnInteger => StoreError::NotAnInteger,
        Failure::Overflow => StoreError::Overflow,
        Failure::Unavailable | Failure::NotOwner => StoreError::Unavailable {
            address: "the cluster".into(),
            cause: why,
        },
        Failure::Full | Failure::Invalid => StoreError::Remote {
            address: "the cluster".into(),
            reply: why,
        },
    })
}

fn unexpected(r: Response) -> StoreError {
    StoreError::Remote {
        address: "the cluster node".into(),
        reply: format!("an answer that does not fit the request: {r:?}"),
    }
}

fn lifetime(ttl: Option<Duration>) -> KeyTtl {
    ttl.map_or(KeyTtl::Persistent, KeyTtl::Remaining)
}

impl Store for ClusterStore {
    fn read(&self, key: &[u8], visit: &mut dyn FnMut(Value<'_>)) -> Result<Option<u64>> {
        // With `copies=async` this process's own lock operations reach the segment a
        // batch after they were answered (`cluster/node/copies.rs`), so a lock's entry
        // there may be older than what this process did: it is read at the owner.
        let locks = self.copies == Copies::Sync;
        if let Some(v) = self.read_local(key, locks, visit)? {
            return Ok(Some(v));
        }
        let Some(e) = self.entry(key)? else {
            return Ok(None);
        };
        match entry::parse(&e.stored) {
            Some((_, State::Value(value))) => {
                visit(value);
                Ok(Some(bytes::fingerprint(&e.stored)))
            }
            _ => Ok(None),
        }
    }

    fn exists(&self, key: &[u8]) -> Result<bool> {
        Ok(self.read(key, &mut |_| {})?.is_some())
    }

    fn set(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<()> {
        let op = Op::Set {
            key: self.full(key),
            value: encoded(value),
            ttl,
        };
        self.call(&op).map(|_| ())
    }

    fn set_nx(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<SetNx> {
        let op = Op::SetNx {
            key: self.full(key),
            value: encoded(value),
            ttl,
        };
        Ok(if self.boolean(op)? {
            SetNx::Inserted
        } else {
            SetNx::Exists
        })
    }

    fn del(&self, key: &[u8]) -> Result<bool> {
        self.boolean(Op::Del {
            key: self.full(key),
        })
    }

    fn del_if_eq(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
        self.boolean(Op::DelIfEq {
            key: self.full(key),
            expected: expected.to_vec(),
        })
    }

    fn incr_by(&self, key: &[u8], by: i64, ttl: Option<Duration>) -> Result<i64> {
        match self.call(&Op::IncrBy {
            key: self.full(key),
            by,
            ttl,
        })? {
            Response::Int(n) => Ok(n),
            other => Err(unexpected(other)),
        }
    }

    fn expire(&self, key: &[u8], ttl: Option<Duration>) -> Result<bool> {
        self.boolean(Op::Expire {
            key: self.full(key),
            ttl,
        })
    }

    fn ttl(&self, key: &[u8]) -> Result<KeyTtl> {
        Ok(match self.entry(key)? {
            Some(e) => lifetime(e.ttl),
            None => KeyTtl::Missing,
        })
    }

    /// Asks the owner, not the segment: a waiter must compare against what the owner
    /// will wait on.
    fn version_and_ttl(&self, key: &[u8]) -> Result<Option<(u64, KeyTtl)>> {
        Ok(self
            .entry(key)?
            .map(|e| (bytes::fingerprint(&e.stored), lifetime(e.ttl))))
    }

    fn clear(&self, prefix: &[u8]) -> Result<u64> {
        match self.call(&Op::Clear {
            prefix: self.full(prefix),
        })? {
            Response::Int(n) => Ok(n.max(0) as u64),
            other => Err(unexpected(other)),
        }
    }

    /// The host's cluster segment: the keys this host holds a live copy of (those it
    /// owns, its replicas, and the small entries gossip spread), not the whole cluster's;
    /// deletions' tombstones are skipped. Locks are decided at their owners and shown
    /// without a fence.
    fn scan(&self, prefix: &[u8], cursor: u64, out: &mut Vec<ScanEntry>) -> Result<u64> {
        let start = out.len();
        let next = self.local.scan(&self.full(prefix), cursor, out)?;
        let mut found = out.split_off(start);
        for mut e in found.drain(..) {
            let key = e.key.split_off(self.prefix.len());
            if self.read_local(&key, true, &mut |_| {})?.is_some() {
                out.push(ScanEntry {
                    key,
                    fence: None,
                    ..e
                });
            }
        }
        Ok(next)
    }

    fn stats(&self) -> Result<Stats> {
        match self.call(&Op::Stats) {
            Ok(Response::Stats(s)) => Ok(s),
            Ok(other) => Err(unexpected(other)),
            // Without a node, the segment's own counters.
            Err(StoreError::Unavailable { .. }) => self.local.stats(),
            Err(e) => Err(e),
        }
    }

    /// This host's copy's shards.
    fn shard_fill(&self) -> Result<Vec<ShardFill>> {
        self.local.shard_fill()
    }

    /// Counted in this host's segment, whose counters the host's node reports.
    fn note(&self, event: Event) {
        self.local.note(event);
    }

    fn wait_for_change(&self, key: &[u8], last_version: u64, timeout: Duration) -> Result<bool> {
        self.boolean(Op::Wait {
            key: self.full(key),
            version: last_version,
            timeout,
        })
    }

    fn lock_acquire(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<Option<u64>> {
        match self.call(&Op::LockAcquire {
            key: self.full(name),
            token: token.to_vec(),
            ttl,
            copies: self.copies,
        })? {
            Response::Fence(f) => Ok(f),
            other => Err(unexpected(other)),
        }
    }

    /// In line at the lock's owner: a release wakes one waiter (`cluster::node::lines`).
    fn lock_wait(&self, name: &[u8], timeout: Duration) -> Result<bool> {
        self.boolean(Op::LockWait {
            key: self.full(name),
            timeout,
        })
    }

    fn lock_extend(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<bool> {
        self.boolean(Op::LockExtend {
            key: self.full(name),
            token: token.to_vec(),
            ttl,
            copies: self.copies,
        })
    }

    fn lock_release(&self, name: &[u8], token: &[u8]) -> Result<bool> {
        self.boolean(Op::LockRelease {
            key: self.full(name),
            token: token.to_vec(),
            copies: self.copies,
        })
    }

    fn rw_lock(
        &self,
        name: &[u8],
        op: &crate::ground::rwstate::Op,
    ) -> Result<crate::ground::rwstate::Outcome> {
        match self.call(&Op::RwLock {
            key: self.full(name),
            op: op.clone(),
            copies: self.copies,
        })? {
            Response::RwLock(outcome) => Ok(outcome),
            other => Err(unexpected(other)),
        }
    }

    /// What the host's node knows of the fleet (`Op::Health`).
    fn health(&self) -> Result<Option<crate::ground::fleet::Health>> {
        match self.call(&Op::Health)? {
            Response::Health(h) => Ok(Some(h)),
            other => Err(unexpected(other)),
        }
    }

    fn describe(&self) -> String {
        match self.members() {
            Ok(m) => format!(
                "cluster (node socket {}, {} members: {})",
                self.socket.display(),
                m.len(),
                m.join(", ")
            ),
            _ => format!(
                "cluster (node socket {}, no node running)",
                self.socket.display()
            ),
        }
    }
}
