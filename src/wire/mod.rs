//! The messages between a PHP process and its host's node (unix socket, plain frames)
//! and between nodes (TCP data plane, sealed frames): one request, one response.
//!
//! A frame is `[length u32 BE][body]`. Numbers are big-endian, byte strings are
//! `[length u32][bytes]`, and a TTL is milliseconds with `u64::MAX` for "none".
//!
//! This module and the ones below it are what the gossip cluster's node
//! (`crate::cluster`) and its client (`store::cluster`, the `cluster://` store) share,
//! below both so that neither imports the other:
//!
//! - `entry`     an entry as the cluster stores it (the owner's stamp, then the value)
//! - `peercred`  who is on the other end of a unix socket
//! - `paths`     where a host store's cluster segment and node socket are
//! - `version`   the data plane's versions, and the one two nodes speak
//!
//! The client reads the cluster segment itself, so this floor stands on `store::shm`.

pub mod entry;
pub mod paths;
pub mod peercred;
pub mod version;

pub use paths::{segment_options, socket_path};

use std::io::{self, Read, Write};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::ground::dsn::Copies;
use crate::ground::fleet::{Health, Member, MemberState};
use crate::store::Stats;
use version::Version;

/// The largest frame either side accepts: a 64 MiB value and its envelope.
pub const MAX_FRAME: usize = (64 << 20) + 4096;

/// A `PutMany` of more than one entry carries at most this many bytes of entries (as
/// encoded, `batch_bytes`): a frame sealed, sent and applied in well under a second, yet
/// tens of thousands of small entries. An entry larger than this travels alone in its
/// batch (up to `MAX_FRAME`, as in a `Put`). A receiver refuses a batch over the bound,
/// so a peer cannot make one request hold a node's stripes for long.
pub const BATCH_BYTES: usize = 1 << 20;
/// The fewest bytes one entry of a batch takes: empty key, empty entry, the TTL.
const MIN_BATCH_ENTRY: usize = 4 + 4 + 8;
/// The fewest bytes one member of a `Health` answer takes.
const MIN_MEMBER: usize = 4 + 1 + 1 + 1 + 8 * 4 + 1 + 4 + 1;

/// Who is asking, which says what the receiving node does with the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A PHP process of the host: the node routes it to the key's owner.
    Client,
    /// A node that found the receiver to be the key's owner: decide it here, or answer
    /// `NotOwner` — never forward it again.
    Owner,
    /// A node asking for this node's own copy (a read from a replica, a replication, a
    /// hand-off): act on the local copy only.
    Here,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Read {
        key: Vec<u8>,
    },
    Set {
        key: Vec<u8>,
        value: Vec<u8>,
        ttl: Option<Duration>,
    },
    SetNx {
        key: Vec<u8>,
        value: Vec<u8>,
        ttl: Option<Duration>,
    },
    Del {
        key: Vec<u8>,
    },
    DelIfEq {
        key: Vec<u8>,
        expected: Vec<u8>,
    },
    IncrBy {
        key: Vec<u8>,
        by: i64,
        ttl: Option<Duration>,
    },
    Expire {
        key: Vec<u8>,
        ttl: Option<Duration>,
    },
    /// Answers once the key's version differs from `version` (true) or after `timeout`.
    Wait {
        key: Vec<u8>,
        version: u64,
        timeout: Duration,
    },
    /// Waits in the line of the exclusive lock `key` at its owner: true once a
    /// release handed this waiter its turn or the lock is free, false after `timeout`.
    LockWait {
        key: Vec<u8>,
        timeout: Duration,
    },
    /// `copies` (on the four lock operations): whether the owner awaits its replicas'
    /// copies of the write before it answers (`Copies`). Encoded as one byte after the
    /// operation's fields, and only when `Async`: a `Sync` request is byte for byte what
    /// older builds send, and an older node refuses an `Async` one as malformed (the
    /// byte is more than it reads), never misreads it. On the data plane only versions
    /// from `version::ASYNC_COPIES` carry it (`Op::spoken_in`).
    LockAcquire {
        key: Vec<u8>,
        token: Vec<u8>,
        ttl: Duration,
        copies: Copies,
    },
    LockExtend {
        key: Vec<u8>,
        token: Vec<u8>,
        ttl: Duration,
        copies: Copies,
    },
    LockRelease {
        key: Vec<u8>,
        token: Vec<u8>,
        copies: Copies,
    },
    Clear {
        prefix: Vec<u8>,
    },
    Stats,
    /// Stores a copy of an entry unless the one held is newer (replication, hand-off).
    Put {
        key: Vec<u8>,
        entry: Entry,
    },
    /// `Put` for each entry, in order, each under the same rule (the hand-off's batches:
    /// `node/batches.rs`). Not atomic: an entry applied stays applied if the connection
    /// ends before the answer, and sending the batch again is harmless, since an entry
    /// never replaces one as new as itself. Encoded as a count (u64) and then each
    /// entry's key and entry; at most `BATCH_BYTES` of them unless there is only one.
    PutMany {
        entries: Vec<(Vec<u8>, Entry)>,
    },
    /// The node ids of the receiver's membership view.
    Members,
    /// What the receiver knows of the fleet's health (`ground::fleet`). A request of
    /// the host's processes only: nodes never ask it of each other.
    Health,
    /// A read/write-lock operation, decided by the key's owner (`crate::rwlock`).
    RwLock {
        key: Vec<u8>,
        op: crate::ground::rwstate::Op,
        copies: Copies,
    },
}

/// An entry as kept in a segment (`entry.rs`) and its remaining lifetime.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub stored: Vec<u8>,
    pub ttl: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    NotAnInteger = 1,
    Overflow = 2,
    Full = 3,
    Unavailable = 4,
    NotOwner = 5,
    Invalid = 6,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    Entry(Option<Entry>),
    Bool(bool),
    Int(i64),
    Fence(Option<u64>),
    Stats(Stats),
    Members(Vec<String>),
    Health(Health),
    Done,
    Failed(Failure, String),
    RwLock(crate::ground::rwstate::Outcome),
}

impl Op {
    /// The key the operation is about, which decides where it goes.
    pub fn key(&self) -> Option<&[u8]> {
        use Op::*;
        match self {
            Read { key }
            | Set { key, .. }
            | SetNx { key, .. }
            | Del { key }
            | DelIfEq { key, .. }
            | IncrBy { key, .. }
            | Expire { key, .. }
            | Wait { key, .. }
            | LockWait { key, .. }
            | LockAcquire { key, .. }
            | LockExtend { key, .. }
            | LockRelease { key, .. }
            | RwLock { key, .. }
            | Put { key, .. } => Some(key),
            Clear { .. } | Stats | Members | Health | PutMany { .. } => None,
        }
    }

    /// Whether the owner awaits its replicas' copies of this operation's write before
    /// it answers: `Async` only when a lock operation asks for it.
    pub fn copies(&self) -> Copies {
        use Op::*;
        match self {
            LockAcquire { copies, .. }
            | LockExtend { copies, .. }
            | LockRelease { copies, .. }
            | RwLock { copies, .. } => *copies,
            _ => Copies::Sync,
        }
    }

    /// Whether data-plane version `v` carries this operation as it is: `Async` copies
    /// only from `version::ASYNC_COPIES`. A node refuses a request its connection's
    /// version does not carry, as a build of that version would.
    pub fn carried_by(&self, v: Version) -> bool {
        v >= version::ASYNC_COPIES || self.copies() == Copies::Sync
    }

    /// The operation as data-plane version `v` carries it: a lock operation that asks
    /// for `Async` copies goes to an owner of an older version as `Sync`. That owner
    /// then awaits its replicas: slower, and every guarantee of `Async` kept.
    pub fn spoken_in(&self, v: Version) -> std::borrow::Cow<'_, Op> {
        use Op::*;
        if self.carried_by(v) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut op = self.clone();
        if let LockAcquire { copies, .. }
        | LockExtend { copies, .. }
        | LockRelease { copies, .. }
        | RwLock { copies, .. } = &mut op
        {
            *copies = Copies::Sync;
        }
        std::borrow::Cow::Owned(op)
    }
}

struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(&(b.len() as u32).to_be_bytes());
        self.0.extend_from_slice(b);
        self
    }
    fn ttl(&mut self, t: Option<Duration>) -> &mut Self {
        self.u64(t.map_or(u64::MAX, |d| d.as_millis().min(u64::MAX as u128 - 1) as u64))
    }
    /// A number that may be absent: a flag byte, then the number when present.
    fn opt(&mut self, n: Option<u64>) -> &mut Self {
        match n {
            Some(n) => self.u8(1).u64(n),
            None => self.u8(0),
        }
    }
    fn health(&mut self, h: &Health) -> &mut Self {
        self.bytes(h.node.as_bytes()).u64(h.members.len() as u64);
        for m in &h.members {
            self.bytes(m.id.as_bytes())
                .u8(m.state as u8)
                .u8(m.this_node as u8)
                .opt(m.last_heard_ms)
                .u64(m.keys)
                .u64(m.share.to_bits())
                .u64(m.copies_pending)
                .u64(m.copies_dropped)
                .opt(m.clock_skew_ms.map(|s| s as u64))
                .bytes(&m.versions)
                .u8(m.version.unwrap_or(0));
        }
        self.u64(h.refusals.len() as u64);
        for (cause, n) in &h.refusals {
            self.bytes(cause.as_bytes()).u64(*n);
        }
        self
    }
    fn entry(&mut self, e: &Entry) -> &mut Self {
        self.bytes(&e.stored).ttl(e.ttl)
    }
    /// A lock operation's `copies`: nothing for `Sync` (what older builds send), one
    /// byte for `Async`.
    fn copies(&mut self, c: Copies) -> &mut Self {
        match c {
            Copies::Sync => self,
            Copies::Async => self.u8(1),
        }
    }
    fn rw_op(&mut self, op: &crate::ground::rwstate::Op) -> &mut Self {
        use crate::ground::rwstate::{Mode, Op};
        match op {
            Op::Acquire { mode, token, ttl } => {
                let tag = if *mode == Mode::Read { 1 } else { 2 };
                self.u8(tag).bytes(token).ttl(Some(*ttl))
            }
            Op::Extend { token, ttl } => self.u8(3).bytes(token).ttl(Some(*ttl)),
            Op::Release { token } => self.u8(4).bytes(token),
            Op::Probe { token } => self.u8(5).bytes(token),
        }
    }
    fn rw_outcome(&mut self, outcome: &crate::ground::rwstate::Outcome) -> &mut Self {
        use crate::ground::rwstate::{Mode, Outcome};
        match outcome {
            Outcome::Acquired { fence } => self.u8(1).u64(*fence),
            Outcome::Busy { left, version } => self.u8(2).ttl(Some(*left)).u64(*version),
            Outcome::Done(b) => self.u8(3).u8(*b as u8),
            Outcome::Holds(None) => self.u8(4),
            Outcome::Holds(Some(Mode::Read)) => self.u8(5),
            Outcome::Holds(Some(Mode::Write)) => self.u8(6),
        }
    }
}

struct In<'a>(&'a [u8]);

impl In<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_at_checked(8)?;
        self.0 = rest;
        Some(u64::from_be_bytes(head.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let (len, rest) = self.0.split_at_checked(4)?;
        let len = u32::from_be_bytes(len.try_into().ok()?) as usize;
        let (b, rest) = rest.split_at_checked(len)?;
        self.0 = rest;
        Some(b.to_vec())
    }
    fn ttl(&mut self) -> Option<Option<Duration>> {
        let ms = self.u64()?;
        Some((ms != u64::MAX).then(|| Duration::from_millis(ms)))
    }
    fn duration(&mut self) -> Option<Duration> {
        self.ttl()?
    }
    fn opt(&mut self) -> Option<Option<u64>> {
        Some(match self.u8()? {
            0 => None,
            1 => Some(self.u64()?),
            _ => return None,
        })
    }
    fn text(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?).ok()
    }
    /// A count of items, refused when the bytes left cannot hold that many of at least
    /// `min` bytes each (before anything is allocated for them).
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.0.len() / min).then_some(n)
    }
    fn health(&mut self) -> Option<Health> {
        let node = self.text()?;
        let mut members = Vec::new();
        for _ in 0..self.count(MIN_MEMBER)? {
            members.push(Member {
                id: self.text()?,
                state: match self.u8()? {
                    1 => MemberState::Alive,
                    2 => MemberState::Suspect,
                    3 => MemberState::Dead,
                    _ => return None,
                },
                this_node: self.u8()? != 0,
                last_heard_ms: self.opt()?,
                keys: self.u64()?,
                share: f64::from_bits(self.u64()?),
                copies_pending: self.u64()?,
                copies_dropped: self.u64()?,
                clock_skew_ms: self.opt()?.map(|s| s as i64),
                versions: self.bytes()?,
                version: Some(self.u8()?).filter(|&v| v != 0),
            });
        }
        let mut refusals = Vec::new();
        for _ in 0..self.count(4 + 8)? {
            refusals.push((self.text()?, self.u64()?));
        }
        Some(Health {
            node,
            members,
            refusals,
        })
    }
    /// A lock operation's `copies`, its last field: none is `Sync`; a byte other than
    /// `Async`'s is a mode this build does not know, and the request is refused.
    fn copies(&mut self) -> Option<Copies> {
        match self.0 {
            [] => Some(Copies::Sync),
            _ => match self.u8()? {
                1 => Some(Copies::Async),
                _ => None,
            },
        }
    }
    fn entry(&mut self) -> Option<Entry> {
        Some(Entry {
            stored: self.bytes()?,
            ttl: self.ttl()?,
        })
    }
    fn token(&mut self) -> Option<crate::ground::Token> {
        self.bytes()?.try_into().ok()
    }
    fn rw_op(&mut self) -> Option<crate::ground::rwstate::Op> {
        use crate::ground::rwstate::{Mode, Op};
        Some(match self.u8()? {
            tag @ (1 | 2) => Op::Acquire {
                mode: if tag == 1 { Mode::Read } else { Mode::Write },
                token: self.token()?,
                ttl: self.duration()?,
            },
            3 => Op::Extend {
                token: self.token()?,
                ttl: self.duration()?,
            },
            4 => Op::Release {
                token: self.token()?,
            },
            5 => Op::Probe {
                token: self.token()?,
            },
            _ => return None,
        })
    }
    fn rw_outcome(&mut self) -> Option<crate::ground::rwstate::Outcome> {
        use crate::ground::rwstate::{Mode, Outcome};
        Some(match self.u8()? {
            1 => Outcome::Acquired { fence: self.u64()? },
            2 => Outcome::Busy {
                left: self.duration()?,
                version: self.u64()?,
            },
            3 => Outcome::Done(self.u8()? != 0),
            4 => Outcome::Holds(None),
            5 => Outcome::Holds(Some(Mode::Read)),
            6 => Outcome::Holds(Some(Mode::Write)),
            _ => return None,
        })
    }
    /// A `PutMany`'s entries. The count is only a claim: refused when the bytes left
    /// cannot hold that many entries, before anything is allocated for them; and a
    /// batch of several entries over `BATCH_BYTES` is refused.
    fn batch(&mut self) -> Option<Vec<(Vec<u8>, Entry)>> {
        let count = usize::try_from(self.u64()?).ok()?;
        if count > self.0.len() / MIN_BATCH_ENTRY {
            return None;
        }
        let mut entries = Vec::with_capacity(count);
        let mut bytes = 0;
        for _ in 0..count {
            let key = self.bytes()?;
            let entry = self.entry()?;
            bytes += batch_bytes(&key, &entry);
            entries.push((key, entry));
        }
        (count <= 1 || bytes <= BATCH_BYTES).then_some(entries)
    }
    fn end<T>(&self, v: T) -> Option<T> {
        self.0.is_empty().then_some(v)
    }
}

pub fn encode_request(route: Route, op: &Op) -> Vec<u8> {
    let mut o = Out(Vec::with_capacity(64));
    o.u8(route as u8);
    match op {
        Op::Read { key } => o.u8(1).bytes(key),
        Op::Set { key, value, ttl } => o.u8(2).bytes(key).bytes(value).ttl(*ttl),
        Op::SetNx { key, value, ttl } => o.u8(3).bytes(key).bytes(value).ttl(*ttl),
        Op::Del { key } => o.u8(4).bytes(key),
        Op::DelIfEq { key, expected } => o.u8(5).bytes(key).bytes(expected),
        Op::IncrBy { key, by, ttl } => o.u8(6).bytes(key).u64(*by as u64).ttl(*ttl),
        Op::Expire { key, ttl } => o.u8(7).bytes(key).ttl(*ttl),
        Op::Wait {
            key,
            version,
            timeout,
        } => o.u8(8).bytes(key).u64(*version).ttl(Some(*timeout)),
        Op::LockAcquire {
            key,
            token,
            ttl,
            copies,
        } => o
            .u8(9)
            .bytes(key)
            .bytes(token)
            .ttl(Some(*ttl))
            .copies(*copies),
        Op::LockExtend {
            key,
            token,
            ttl,
            copies,
        } => o
            .u8(10)
            .bytes(key)
            .bytes(token)
            .ttl(Some(*ttl))
            .copies(*copies),
        Op::LockRelease { key, token, copies } => o.u8(11).bytes(key).bytes(token).copies(*copies),
        Op::Clear { prefix } => o.u8(12).bytes(prefix),
        Op::Stats => o.u8(13),
        Op::Put { key, entry } => o.u8(14).bytes(key).entry(entry),
        Op::Members => o.u8(15),
        Op::Health => o.u8(19),
        Op::RwLock { key, op, copies } => o.u8(16).bytes(key).rw_op(op).copies(*copies),
        Op::LockWait { key, timeout } => o.u8(18).bytes(key).ttl(Some(*timeout)),
        Op::PutMany { entries } => {
            o.u8(17).u64(entries.len() as u64);
            for (key, entry) in entries {
                o.bytes(key).entry(entry);
            }
            &mut o
        }
    };
    o.0
}

pub fn decode_request(b: &[u8]) -> Option<(Route, Op)> {
    let mut i = In(b);
    let route = match i.u8()? {
        0 => Route::Client,
        1 => Route::Owner,
        2 => Route::Here,
        _ => return None,
    };
    let op = match i.u8()? {
        1 => Op::Read { key: i.bytes()? },
        2 => Op::Set {
            key: i.bytes()?,
            value: i.bytes()?,
            ttl: i.ttl()?,
        },
        3 => Op::SetNx {
            key: i.bytes()?,
            value: i.bytes()?,
            ttl: i.ttl()?,
        },
        4 => Op::Del { key: i.bytes()? },
        5 => Op::DelIfEq {
            key: i.bytes()?,
            expected: i.bytes()?,
        },
        6 => Op::IncrBy {
            key: i.bytes()?,
            by: i.u64()? as i64,
            ttl: i.ttl()?,
        },
        7 => Op::Expire {
            key: i.bytes()?,
            ttl: i.ttl()?,
        },
        8 => Op::Wait {
            key: i.bytes()?,
            version: i.u64()?,
            timeout: i.duration()?,
        },
        18 => Op::LockWait {
            key: i.bytes()?,
            timeout: i.duration()?,
        },
        9 => Op::LockAcquire {
            key: i.bytes()?,
            token: i.bytes()?,
            ttl: i.duration()?,
            copies: i.copies()?,
        },
        10 => Op::LockExtend {
            key: i.bytes()?,
            token: i.bytes()?,
            ttl: i.duration()?,
            copies: i.copies()?,
        },
        11 => Op::LockRelease {
            key: i.bytes()?,
            token: i.bytes()?,
            copies: i.copies()?,
        },
        12 => Op::Clear { prefix: i.bytes()? },
        13 => Op::Stats,
        14 => Op::Put {
            key: i.bytes()?,
            entry: i.entry()?,
        },
        15 => Op::Members,
        19 => Op::Health,
        16 => Op::RwLock {
            key: i.bytes()?,
            op: i.rw_op()?,
            copies: i.copies()?,
        },
        17 => Op::PutMany {
            entries: i.batch()?,
        },
        _ => return None,
    };
    i.end((route, op))
}

/// The bytes `key` and `entry` take in a `PutMany`.
pub fn batch_bytes(key: &[u8], entry: &Entry) -> usize {
    4 + key.len() + 4 + entry.stored.len() + 8
}

pub fn encode_response(r: &Response) -> Vec<u8> {
    let mut o = Out(Vec::with_capacity(32));
    match r {
        Response::Entry(None) => o.u8(1),
        Response::Entry(Some(e)) => o.u8(2).entry(e),
        Response::Bool(b) => o.u8(3).u8(*b as u8),
        Response::Int(n) => o.u8(4).u64(*n as u64),
        Response::Fence(None) => o.u8(5),
        Response::Fence(Some(f)) => o.u8(6).u64(*f),
        Response::Stats(s) => o
            .u8(7)
            .u64(s.memory_size)
            .u64(s.memory_used)
            .u64(s.entries)
            .u64(s.hits)
            .u64(s.misses)
            .u64(s.evictions)
            .u64(s.expirations)
            .u64(s.repairs)
            .u64(s.resets)
            .u64(s.shards)
            .u64(s.evictions_anonymous)
            .u64(s.evictions_cache)
            .u64(s.evictions_session)
            .u64(s.age_seconds)
            .u64(s.max_item_size)
            .u64(s.lock_waits)
            .u64(s.lock_timeouts)
            .u64(s.stampedes_avoided)
            .u64(s.full_refusals),
        Response::Members(ids) => {
            o.u8(8).u64(ids.len() as u64);
            for id in ids {
                o.bytes(id.as_bytes());
            }
            &mut o
        }
        Response::Done => o.u8(9),
        Response::Failed(f, why) => o.u8(10).u8(*f as u8).bytes(why.as_bytes()),
        Response::RwLock(outcome) => o.u8(11).rw_outcome(outcome),
        Response::Health(h) => o.u8(12).health(h),
    };
    o.0
}

pub fn decode_response(b: &[u8]) -> Option<Response> {
    let mut i = In(b);
    let r = match i.u8()? {
        1 => Response::Entry(None),
        2 => Response::Entry(Some(i.entry()?)),
        3 => Response::Bool(i.u8()? != 0),
        4 => Response::Int(i.u64()? as i64),
        5 => Response::Fence(None),
        6 => Response::Fence(Some(i.u64()?)),
        7 => Response::Stats(Stats {
            memory_size: i.u64()?,
            memory_used: i.u64()?,
            entries: i.u64()?,
            hits: i.u64()?,
            misses: i.u64()?,
            evictions: i.u64()?,
            expirations: i.u64()?,
            repairs: i.u64()?,
            resets: i.u64()?,
            shards: i.u64()?,
            evictions_anonymous: i.u64()?,
            evictions_cache: i.u64()?,
            evictions_session: i.u64()?,
            // Not on the wire: a node's shards are its own host's business (`ephpm stores`).
            shards_locked: 0,
            shards_writing: 0,
            // Added later, at the end: a node of an older build sends none (then 0).
            age_seconds: i.u64().unwrap_or(0),
            max_item_size: i.u64().unwrap_or(0),
            lock_waits: i.u64().unwrap_or(0),
            lock_timeouts: i.u64().unwrap_or(0),
            stampedes_avoided: i.u64().unwrap_or(0),
            full_refusals: i.u64().unwrap_or(0),
        }),
        8 => {
            let n = i.u64()?.min(65_536);
            let mut ids = Vec::new();
            for _ in 0..n {
                ids.push(String::from_utf8(i.bytes()?).ok()?);
            }
            Response::Members(ids)
        }
        9 => Response::Done,
        10 => {
            let f = match i.u8()? {
                1 => Failure::NotAnInteger,
                2 => Failure::Overflow,
                3 => Failure::Full,
                4 => Failure::Unavailable,
                5 => Failure::NotOwner,
                _ => Failure::Invalid,
            };
            Response::Failed(f, String::from_utf8_lossy(&i.bytes()?).into_owned())
        }
        11 => Response::RwLock(i.rw_outcome()?),
        12 => Response::Health(i.health()?),
        _ => return None,
    };
    i.end(r)
}

fn too_large(len: usize, max: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("a frame of {len} bytes is larger than the {max} allowed"),
    )
}

pub fn write_frame(w: &mut impl Write, body: &[u8]) -> io::Result<()> {
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(body);
    w.write_all(&buf)
}

pub fn read_frame(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = checked_len(len, MAX_FRAME)?;
    let mut body = Vec::with_capacity(len.min(FIRST_ALLOCATION));
    r.take(len as u64).read_to_end(&mut body)?;
    complete(body, len)
}

pub async fn write_frame_async(w: &mut (impl AsyncWrite + Unpin), body: &[u8]) -> io::Result<()> {
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(body);
    w.write_all(&buf).await
}

pub async fn read_frame_async(r: &mut (impl AsyncRead + Unpin)) -> io::Result<Vec<u8>> {
    read_frame_async_max(r, MAX_FRAME).await
}

/// A frame of at most `max` bytes (a peer that has not authenticated yet gets a small
/// bound).
pub async fn read_frame_async_max(
    r: &mut (impl AsyncRead + Unpin),
    max: usize,
) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let len = checked_len(len, max)?;
    let mut body = Vec::with_capacity(len.min(FIRST_ALLOCATION));
    r.take(len as u64).read_to_end(&mut body).await?;
    complete(body, len)
}

/// What a frame's body gets before any of it has arrived: a length prefix is only a
/// claim, so the buffer grows with the bytes that actually come.
const FIRST_ALLOCATION: usize = 64 << 10;

fn checked_len(prefix: [u8; 4], max: usize) -> io::Result<usize> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len > max {
        return Err(too_large(len, max));
    }
    Ok(len)
}

fn complete(body: Vec<u8>, len: usize) -> io::Result<Vec<u8>> {
    if body.len() < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the connection ended inside a frame",
        ));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_round_trip_and_junk_is_refused() {
        let ops = [
            Op::Set {
                key: b"k".to_vec(),
                value: b"v".to_vec(),
                ttl: Some(Duration::from_millis(1500)),
            },
            Op::IncrBy {
                key: b"n".to_vec(),
                by: -5,
                ttl: None,
            },
            Op::Wait {
                key: b"k".to_vec(),
                version: 9,
                timeout: Duration::from_secs(2),
            },
            Op::LockWait {
                key: b"k".to_vec(),
                timeout: Duration::from_millis(250),
            },
            Op::Put {
                key: b"k".to_vec(),
                entry: Entry {
                    stored: vec![1, 2],
                    ttl: None,
                },
            },
            Op::Stats,
            Op::RwLock {
                key: b"k".to_vec(),
                op: crate::ground::rwstate::Op::Acquire {
                    mode: crate::ground::rwstate::Mode::Read,
                    token: [b'a'; 32],
                    ttl: Duration::from_millis(700),
                },
                copies: Copies::Sync,
            },
            Op::RwLock {
                key: b"k".to_vec(),
                op: crate::ground::rwstate::Op::Release { token: [b'b'; 32] },
                copies: Copies::Async,
            },
            lock_acquire(Copies::Async),
            Op::LockRelease {
                key: b"k".to_vec(),
                token: b"t".to_vec(),
                copies: Copies::Async,
            },
        ];
        for op in ops {
            let b = encode_request(Route::Owner, &op);
            let cut = decode_request(&b[..b.len() - 1]);
            // Without its last byte an `Async` lock operation is the `Sync` one (frames
            // arrive whole or not at all: their length, and on the data plane their
            // seal, say so); anything else cut is refused.
            let sync = (op.copies() == Copies::Async).then(|| op.spoken_in(version::LEGACY));
            assert_eq!(cut, sync.map(|o| (Route::Owner, o.into_owned())));
            assert_eq!(decode_request(&b), Some((Route::Owner, op)));
        }
        for r in [
            Response::Fence(Some(42)),
            Response::Members(vec!["a".into(), "b".into()]),
            Response::Failed(Failure::NotOwner, "moved".into()),
            Response::RwLock(crate::ground::rwstate::Outcome::Busy {
                left: Duration::from_millis(30),
                version: 7,
            }),
            Response::RwLock(crate::ground::rwstate::Outcome::Holds(Some(
                crate::ground::rwstate::Mode::Write,
            ))),
            Response::Entry(Some(Entry {
                stored: b"x".to_vec(),
                ttl: Some(Duration::from_millis(5)),
            })),
            Response::Health(health()),
        ] {
            assert_eq!(decode_response(&encode_response(&r)), Some(r));
        }
        assert_eq!(decode_request(b"\x09\x01"), None);
    }

    fn lock_acquire(copies: Copies) -> Op {
        Op::LockAcquire {
            key: b"lock".to_vec(),
            token: b"t".to_vec(),
            ttl: Duration::from_secs(5),
            copies,
        }
    }

    #[test]
    fn sync_copies_are_the_older_encoding_and_async_is_refused_by_it() {
        let sync = encode_request(Route::Client, &lock_acquire(Copies::Sync));
        let with_async = encode_request(Route::Client, &lock_acquire(Copies::Async));
        // One byte more, at the end: what a build that reads no `copies` would refuse
        // as malformed, since it ends its request before that byte.
        assert_eq!(&with_async[..sync.len()], &sync[..]);
        assert_eq!(with_async.len(), sync.len() + 1);
        // A mode this build does not know is refused, not read as another.
        let mut unknown = sync.clone();
        unknown.push(2);
        assert_eq!(decode_request(&unknown), None);
        // Version 2 of the data plane cannot say `Async`: such a request goes as
        // `Sync`, and a version-2 connection refuses it as it is.
        let op = lock_acquire(Copies::Async);
        assert!(!op.carried_by(version::LEGACY));
        assert!(op.carried_by(version::ASYNC_COPIES));
        assert_eq!(*op.spoken_in(version::LEGACY), lock_acquire(Copies::Sync));
        assert_eq!(*op.spoken_in(version::ASYNC_COPIES), op);
        assert_eq!(Op::Stats.copies(), Copies::Sync);
    }

    fn health() -> Health {
        let member = |id: &str, state, skew| Member {
            id: id.into(),
            state,
            this_node: id == "a",
            last_heard_ms: (id != "a").then_some(1200),
            keys: 7,
            share: 0.25,
            copies_pending: 1,
            copies_dropped: 3,
            clock_skew_ms: skew,
            versions: vec![2, 3],
            version: (state != MemberState::Dead).then_some(3),
        };
        Health {
            node: "a".into(),
            members: vec![
                member("a", MemberState::Alive, None),
                member("b", MemberState::Suspect, Some(-12)),
                member("c", MemberState::Dead, Some(40)),
            ],
            refusals: vec![("unauthentic".into(), 4), ("version".into(), 1)],
        }
    }

    #[test]
    fn a_health_answer_round_trips_and_a_cut_or_a_false_count_is_refused() {
        let b = encode_response(&Response::Health(health()));
        for cut in 0..b.len() {
            assert_eq!(decode_response(&b[..cut]), None);
        }
        // A member count the bytes cannot hold.
        let mut claim = vec![12];
        claim.extend_from_slice(&[0, 0, 0, 1, b'a']);
        claim.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(decode_response(&claim), None);
        let req = encode_request(Route::Client, &Op::Health);
        assert_eq!(decode_request(&req), Some((Route::Client, Op::Health)));
    }

    fn batch(sizes: &[usize]) -> Op {
        let entries = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let entry = Entry {
                    stored: vec![i as u8; n],
                    ttl: (i % 2 == 0).then(|| Duration::from_millis(1000 + i as u64)),
                };
                (format!("key:{i}").into_bytes(), entry)
            })
            .collect();
        Op::PutMany { entries }
    }

    #[test]
    fn a_batch_round_trips_and_a_bad_or_oversized_one_is_refused() {
        let op = batch(&[9, 0, 30, 9]);
        let b = encode_request(Route::Here, &op);
        assert_eq!(decode_request(&b), Some((Route::Here, op)));
        // Every cut of it, and every byte changed to junk, is refused or read as some
        // other request, never a panic.
        for cut in 0..b.len() {
            assert_eq!(decode_request(&b[..cut]), None);
        }
        for at in 2..b.len() {
            let mut junk = b.clone();
            junk[at] = 0xff;
            let _ = decode_request(&junk);
        }
        // A count that the bytes cannot hold: refused before anything is allocated.
        let mut claim = vec![Route::Here as u8, 17];
        claim.extend_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(decode_request(&claim), None);
        claim[2..10].copy_from_slice(&(1u64 << 40).to_be_bytes());
        claim.extend_from_slice(&[0; 64]);
        assert_eq!(decode_request(&claim), None);
        // One entry may be as large as a Put's; several only up to BATCH_BYTES.
        let alone = batch(&[BATCH_BYTES + 10]);
        let b = encode_request(Route::Here, &alone);
        assert_eq!(decode_request(&b), Some((Route::Here, alone)));
        let fits = batch(&[BATCH_BYTES / 2, BATCH_BYTES / 2 - 100]);
        assert!(decode_request(&encode_request(Route::Here, &fits)).is_some());
        let over = batch(&[BATCH_BYTES / 2, BATCH_BYTES / 2]);
        assert_eq!(decode_request(&encode_request(Route::Here, &over)), None);
        assert_eq!(batch(&[9]).key(), None);
    }

    #[test]
    fn a_frame_is_only_as_long_as_what_arrives_and_never_over_its_bound() {
        let mut short = (48u32 << 20).to_be_bytes().to_vec();
        short.extend_from_slice(b"ten bytes!");
        let e = read_frame(&mut &short[..]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let e = rt
            .block_on(read_frame_async_max(&mut &short[..], 1024))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let mut whole = Vec::new();
        write_frame(&mut whole, b"body").unwrap();
        assert_eq!(
            rt.block_on(read_frame_async(&mut &whole[..])).unwrap(),
            b"body"
        );
    }
}
