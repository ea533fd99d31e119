//! The server-side steps that must be atomic, and the ways a server can do the
//! compare-and-delete and compare-and-extend of a lock: `DELEX … IFEQ` (Redis ≥ 8.4) or
//! `DELIFEQ` (Valkey ≥ 9) to delete, `SET … IFEQ … PX` (Redis ≥ 8.4, Valkey ≥ 8.1) to
//! extend, Lua for what a server lacks (Debian 12's Redis 7.0 lacks both). Which ones a
//! server has is asked once per connection.
//!
//! Every script names its keys in KEYS (so it runs on Redis Cluster when they share a
//! slot) and starts with a `-- ephpm:NAME` line, which the tests' fake server goes by.

use std::sync::LazyLock;

use redis::{Script, Value};

/// How a connection's server deletes by comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteBy {
    /// `DELEX key IFEQ value` (Redis ≥ 8.4).
    Delex,
    /// `DELIFEQ key value` (Valkey ≥ 9).
    Delifeq,
    /// The `RELEASE` script below.
    Lua,
}

/// How a connection's server extends by comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtendBy {
    /// `SET key value IFEQ value PX ms` (Redis ≥ 8.4, Valkey ≥ 8.1).
    SetIfeq,
    /// The `EXTEND` script below.
    Lua,
}

/// What a connection's server has of the native comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flavour {
    pub delete: DeleteBy,
    pub extend: ExtendBy,
}

impl Flavour {
    /// The scripts, which every server runs (and Redis Cluster, in one round trip).
    pub const LUA: Flavour = Flavour {
        delete: DeleteBy::Lua,
        extend: ExtendBy::Lua,
    };

    /// Asks the server which commands it has: `COMMAND INFO` answers nil for a command it
    /// does not know. Both delete commands came with `SET … IFEQ`; without them, the
    /// `IFEQ` token in `COMMAND DOCS SET` says whether `SET` has it (Valkey 8.1). Error
    /// kinds are not relied on ("unknown command" is a plain error): a server that
    /// refuses to answer (an ACL without `COMMAND`, a proxy, a server older than 7.0
    /// without `COMMAND DOCS`) gets the scripts for what it did not say it has.
    pub fn detect(con: &mut dyn redis::ConnectionLike) -> redis::RedisResult<Flavour> {
        let Some(info) = refused_as_none(
            redis::cmd("COMMAND")
                .arg("INFO")
                .arg("DELEX")
                .arg("DELIFEQ")
                .query::<Vec<Value>>(con),
        )?
        else {
            return Ok(Flavour::LUA);
        };
        let known = |i: usize| info.get(i).is_some_and(|v| !matches!(v, Value::Nil));
        let delete = if known(0) {
            DeleteBy::Delex
        } else if known(1) {
            DeleteBy::Delifeq
        } else {
            DeleteBy::Lua
        };
        let set_has_ifeq = delete != DeleteBy::Lua
            || refused_as_none(
                redis::cmd("COMMAND")
                    .arg("DOCS")
                    .arg("SET")
                    .query::<Value>(con),
            )?
            .is_some_and(|docs| names_token(&docs, b"IFEQ"));
        Ok(Flavour {
            delete,
            extend: if set_has_ifeq {
                ExtendBy::SetIfeq
            } else {
                ExtendBy::Lua
            },
        })
    }

    /// What `php --ri ephpm` shows: "compare-and-delete by D, compare-and-extend by E".
    pub fn describe(self) -> String {
        let delete = match self.delete {
            DeleteBy::Delex => "DELEX IFEQ",
            DeleteBy::Delifeq => "DELIFEQ",
            DeleteBy::Lua => "Lua",
        };
        let extend = match self.extend {
            ExtendBy::SetIfeq => "SET IFEQ",
            ExtendBy::Lua => "Lua",
        };
        format!("compare-and-delete by {delete}, compare-and-extend by {extend}")
    }
}

/// A server's error reply to a question about its commands, as "it did not say".
fn refused_as_none<T>(asked: redis::RedisResult<T>) -> redis::RedisResult<Option<T>> {
    match asked {
        Ok(v) => Ok(Some(v)),
        Err(e)
            if matches!(
                e.kind(),
                redis::ErrorKind::Server(_) | redis::ErrorKind::Extension
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Whether a `COMMAND DOCS` reply (nested arrays or maps, RESP2 or RESP3) has `token`
/// as one of its strings: the `"token"` of an argument.
fn names_token(v: &Value, token: &[u8]) -> bool {
    match v {
        Value::BulkString(b) => b.eq_ignore_ascii_case(token),
        Value::SimpleString(s) => s.as_bytes().eq_ignore_ascii_case(token),
        Value::Array(items) | Value::Set(items) => items.iter().any(|i| names_token(i, token)),
        Value::Map(pairs) => pairs
            .iter()
            .any(|(k, v)| names_token(k, token) || names_token(v, token)),
        _ => false,
    }
}

/// Takes a free lock and hands out its fencing number. KEYS: lock, counter. ARGV: token,
/// TTL in ms, the counter's TTL in ms. Returns the fence, or 0 when the lock is held.
///
/// The fence is the server's clock in µs, or the last fence plus one if that is not
/// greater. The counter expires an hour after the lock's last use (a counter kept
/// forever per name would leak one key per session id), and the clock keeps fences
/// increasing across that. Both stay below 2^53, so Lua's numbers carry them exactly.
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:acquire
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
local now = redis.call('TIME')
local fence = tonumber(now[1] .. string.format('%06d', tonumber(now[2])))
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if fence <= last then fence = last + 1 end
redis.call('SET', KEYS[2], string.format('%d', fence), 'PX', ARGV[3])
return fence",
    )
});

/// Hands a released lock to the first waiter in its line (`queue.rs`): pops the next
/// ticket of KEYS[2] and publishes it (with the command in the script's local `publish`)
/// on the mailbox channel it names (`mailbox:id`), so that one waiter wakes, not all. A
/// ticket whose waiter is gone wakes nobody; the others look again within a slice. The
/// publish is a `pcall`: a ticket a process queued with the other kind of publishing
/// (a rolling upgrade; on a sharded cluster its mailbox is in another slot) must not
/// fail a release that has already deleted the lock; that waiter looks again.
const HAND_OVER: &str = r"
local t = redis.call('LPOP', KEYS[2])
if t then redis.pcall(publish, string.match(t, '^(.*):'), t) end";

/// How a connection's server publishes a lock's wake-ups (`wakeups.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publish {
    /// `PUBLISH`: a single server, or a cluster without sharded Pub/Sub (every node then
    /// copies every message to every other over the cluster bus).
    Classic,
    /// `SPUBLISH` (Redis ≥ 7.0 on a cluster): the message stays on the shard of the
    /// channel's slot, which is the lock's: channels are named after the lock.
    Sharded,
}

impl Publish {
    /// Sharded on a Redis Cluster whose server has `SPUBLISH`; classic otherwise, and
    /// when the server will not say (as in `Flavour::detect`).
    pub fn detect(con: &mut dyn redis::ConnectionLike) -> redis::RedisResult<Publish> {
        let info = refused_as_none(
            redis::cmd("COMMAND")
                .arg("INFO")
                .arg("SPUBLISH")
                .query::<Vec<Value>>(con),
        )?;
        Ok(match info {
            Some(info) if info.first().is_some_and(|v| !matches!(v, Value::Nil)) => {
                Publish::Sharded
            }
            _ => Publish::Classic,
        })
    }

    /// The command, as the scripts take it.
    pub fn command(self) -> &'static str {
        match self {
            Publish::Classic => "PUBLISH",
            Publish::Sharded => "SPUBLISH",
        }
    }
}

/// Deletes a key whose value is ARGV[1] (or ARGV[4], when given: an integer matches as its
/// Redis integer and as a string ephpm tagged), publishes on the channel ARGV[2] (every
/// waiter for a change of the key) with the command ARGV[3] (`Publish::command`) and
/// hands the lock to the first waiter in the line KEYS[2]. KEYS: key, line. Returns 1
/// when it deleted.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        r"-- ephpm:release
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] and (ARGV[4] == nil or v ~= ARGV[4]) then return 0 end
redis.call('DEL', KEYS[1])
local publish = ARGV[3]
redis.call(publish, ARGV[2], ''){HAND_OVER}
return 1"
    ))
});

/// The hand-over after a server's native compare-and-delete (sent with it in one
/// pipeline, by EVAL: a pipeline cannot reload a script the server lost). KEYS: lock,
/// line. Hands over only while the lock is absent: if somebody took it between the
/// delete and this, that holder's release hands it over instead. Single servers only
/// (the native commands are not used on a cluster; the `broken-atomicity` test build
/// uses it everywhere), so the publishing is classic.
pub static HAND_OVER_IF_FREE: LazyLock<String> = LazyLock::new(|| {
    format!(
        r"-- ephpm:hand_over
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local publish = 'PUBLISH'{HAND_OVER}
return 1"
    )
});

/// Puts the ticket ARGV[1] at the end of the lock's line unless it is in it already,
/// and gives the line a TTL of ARGV[2] ms (an abandoned line goes away). KEYS: lock,
/// line. Returns the lock's PTTL (-1: no TTL), or -2 when the lock is free: then the
/// ticket is taken out of the line instead, and the caller races for the lock.
pub static ENQUEUE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:enqueue
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then
  redis.call('LREM', KEYS[2], 1, ARGV[1])
  return -2
end
if not redis.call('LPOS', KEYS[2], ARGV[1]) then redis.call('RPUSH', KEYS[2], ARGV[1]) end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return ttl",
    )
});

/// Gives a key whose value is ARGV[1] a TTL of ARGV[2] ms. KEYS: key. Returns 1 when it
/// did.
pub static EXTEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:extend
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])",
    )
});

/// Writes a value while a lock is held: gives the lock KEYS[1], if its value is ARGV[1],
/// a TTL of ARGV[2] ms, and sets KEYS[2] to ARGV[3] with a TTL of ARGV[4] ms (0: none).
/// Returns 1 when it did, 0 (and writes nothing) when the lock is not ARGV[1]'s. Single
/// servers only: on a cluster the two keys are in different slots.
pub static SET_IF_LOCKED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:set_if_locked
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[4] == '0' then
  redis.call('SET', KEYS[2], ARGV[3])
else
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
end
return 1",
    )
});

/// INCRBY that gives a key it creates a TTL. KEYS: key. ARGV: increment, TTL in ms.
/// Returns the new value as a string: Lua numbers are doubles, and would round it.
pub static INCR_WITH_TTL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:incr
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], '0', 'PX', ARGV[2]) end
redis.call('INCRBY', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])",
    )
});

/// The increment of a string that holds an integer in another spelling ("+5", "007", or a
/// string ephpm tagged because it reads as one): INCRBY refuses those, `shm://` counts
/// them. KEYS: key. ARGV: increment. Rewrites the number canonically (keeping the TTL),
/// adds, and returns the new value as a string.
pub static INCR_TEXT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:incr_text
local refused = 'ERR value is not an integer or out of range'
local v = redis.call('GET', KEYS[1])
if not v then return redis.error_reply(refused) end
if string.byte(v, 1) == 1 then v = string.sub(v, 2) end
local sign, digits = string.match(v, '^([+-]?)(%d+)$')
if not digits then return redis.error_reply(refused) end
digits = (string.gsub(digits, '^0+', ''))
if digits == '' then digits = '0' end
if sign == '+' or digits == '0' then sign = '' end
redis.call('SET', KEYS[1], sign .. digits, 'KEEPTTL')
redis.call('INCRBY', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])",
    )
});

/// Reads a read/write lock's state with the server's clock. KEYS: key. Returns
/// `{exists, state, seconds, microseconds}` (a script rather than a GET and TIME
/// pipeline: a Redis Cluster pipeline cannot carry TIME, which has no key).
pub static RW_READ: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:rw_read
local v = redis.call('GET', KEYS[1])
local t = redis.call('TIME')
return {v and 1 or 0, v or '', t[1], t[2]}",
    )
});

/// Replaces a read/write lock's state if it is still the one the caller decided on
/// (`crate::ground::rwstate::apply` runs in Rust; this is its atomic half). KEYS: key.
/// ARGV: the state decided on ('' when absent), the new state, its TTL in ms, the
/// channel to publish on ('' for none) and the command (`Publish::command`). Returns `{1}` when it replaced; when the state
/// had changed meanwhile, `{0, exists, state, seconds, microseconds}`: what the caller
/// decides on again, with the server's clock, without another round trip.
pub static RW_SWAP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"-- ephpm:rw_swap
local v = redis.call('GET', KEYS[1])
if (v or '') ~= ARGV[1] then
  local t = redis.call('TIME')
  return {0, v and 1 or 0, v or '', t[1], t[2]}
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if ARGV[4] ~= '' then redis.call(ARGV[5], ARGV[4], '') end
return {1}",
    )
});
