//! What an owner decides: each operation against the key's current entry, as a pure
//! function (the node calls it under the key's stripe lock, and it is tested here
//! without a network). The same rules as the shm store's: an expired or deleted key is
//! absent for everything, `incr_by` counts a string that spells an integer, and a value
//! equals the expected bytes when it is that string or an integer with those digits.

use std::time::Duration;

use crate::store::{Value, bytes};
use crate::wire::entry::{self, State};
use crate::wire::{Failure, Op, Response};

/// How long a delete is remembered, so that an older copy (a late replication, a
/// hand-off from a node that was away, a slow gossip update) cannot bring the key back.
pub const TOMBSTONE_GRACE: Duration = Duration::from_secs(60);

/// What the owner stores after deciding: the new entry and its lifetime.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    pub entry: Vec<u8>,
    pub ttl: Option<Duration>,
}

/// The key's entry as the owner holds it, with its remaining lifetime.
pub struct Current<'a> {
    pub entry: &'a [u8],
    pub ttl: Option<Duration>,
}

/// Decides `op` against `current`; `stamp` gives the write's stamp (called only when
/// something is written, once). Reads, waits and the node-level operations are not
/// decisions and answer `Invalid` here.
pub fn decide(
    op: &Op,
    current: Option<Current<'_>>,
    stamp: impl Fn() -> u64,
) -> (Response, Option<Write>) {
    let live = current.as_ref().and_then(|c| match entry::parse(c.entry) {
        Some((_, State::Value(v))) => Some((v, c.ttl)),
        _ => None,
    });
    let store = |encoded: &[u8], ttl| {
        Some(Write {
            entry: entry::from_encoded(stamp(), encoded, false),
            ttl,
        })
    };
    match op {
        Op::Set { value, ttl, .. } => (Response::Done, store(value, *ttl)),
        Op::SetNx { value, ttl, .. } => match live {
            Some(_) => (Response::Bool(false), None),
            None => (Response::Bool(true), store(value, *ttl)),
        },
        Op::Del { .. } => delete_if(live.is_some(), &stamp),
        Op::DelIfEq { expected, .. }
        | Op::LockRelease {
            token: expected, ..
        } => delete_if(live.is_some_and(|(v, _)| equals(v, expected)), &stamp),
        Op::IncrBy { by, ttl, .. } => {
            let (now, ttl) = match live {
                None => (0, *ttl),
                Some((Value::Int(n), left)) => (n, left),
                Some((Value::Str(b), left)) => {
                    match std::str::from_utf8(b)
                        .ok()
                        .and_then(|s| s.parse::<i64>().ok())
                    {
                        Some(n) => (n, left),
                        None => return failed(Failure::NotAnInteger, "not an integer"),
                    }
                }
                Some(_) => return failed(Failure::NotAnInteger, "not an integer"),
            };
            let Some(next) = now.checked_add(*by) else {
                return failed(Failure::Overflow, "overflow");
            };
            let mut encoded = Vec::new();
            bytes::encode(Value::Int(next), &mut encoded);
            (Response::Int(next), store(&encoded, ttl))
        }
        Op::Expire { ttl, .. } => match (live, current.as_ref()) {
            (Some(_), Some(c)) => (Response::Bool(true), store(entry::body(c.entry), *ttl)),
            _ => (Response::Bool(false), None),
        },
        Op::LockAcquire { token, ttl, .. } => match live {
            Some(_) => (Response::Fence(None), None),
            None => {
                // The acquisition's stamp is its fencing number: the node's clock only
                // grows, and it passes every stamp the node received, so a new owner
                // that was handed the lock's history numbers above the old one.
                let fence = stamp();
                let mut encoded = Vec::new();
                bytes::encode(Value::Str(token), &mut encoded);
                let write = Write {
                    entry: entry::from_encoded(fence, &encoded, true),
                    ttl: Some(*ttl),
                };
                (Response::Fence(Some(fence)), Some(write))
            }
        },
        Op::LockExtend { token, ttl, .. } => match (live, current.as_ref()) {
            (Some((v, _)), Some(c)) if equals(v, token) => {
                let write = Write {
                    entry: entry::from_encoded(
                        stamp(),
                        entry::body(c.entry),
                        entry::is_lock(c.entry),
                    ),
                    ttl: Some(*ttl),
                };
                (Response::Bool(true), Some(write))
            }
            _ => (Response::Bool(false), None),
        },
        Op::RwLock { op, .. } => read_write_lock(op, current.as_ref(), live, &stamp),
        _ => failed(Failure::Invalid, "not an owner's decision"),
    }
}

/// A read/write-lock operation (`crate::ground::rwstate`) on the owner's entry. Holders'
/// expiries are in the owner's wall clock (ms), so that an owner that takes the key over
/// after a membership change reads them in nearly the same clock. A grant's fence is
/// its write's stamp, as for exclusive locks; a refusal carries the version a `Wait`
/// compares (the fingerprint of the entry).
fn read_write_lock(
    op: &crate::ground::rwstate::Op,
    current: Option<&Current<'_>>,
    live: Option<(Value<'_>, Option<Duration>)>,
    stamp: &dyn Fn() -> u64,
) -> (Response, Option<Write>) {
    use crate::ground::rwstate::Outcome;
    use crate::ground::rwstate::{self, Change};
    let stored = match live {
        Some((Value::Str(b), _)) => Some(b),
        // Not a state: `apply` refuses it as foreign.
        Some(_) => Some(&b"-"[..]),
        None => None,
    };
    let now_ms = crate::ground::wall::now_ms();
    let (change, mut outcome) = match rwstate::apply(stored, op, now_ms, 0) {
        Ok(decided) => decided,
        Err(e) => return failed(Failure::Invalid, &e.to_string()),
    };
    let write = match change {
        Change::Keep => None,
        Change::Delete { .. } => delete_if(true, stamp).1,
        Change::Write { mut state, ttl, .. } => {
            let at = stamp();
            if let Outcome::Acquired { fence } = &mut outcome {
                *fence = at;
                state.fence = at;
            }
            let mut encoded = Vec::new();
            bytes::encode(Value::Str(&rwstate::encode(&state)), &mut encoded);
            Some(Write {
                entry: entry::from_encoded(at, &encoded, true),
                ttl: Some(ttl),
            })
        }
    };
    if let Outcome::Busy { version, .. } = &mut outcome {
        *version = current.map_or(0, |c| bytes::fingerprint(c.entry));
    }
    (Response::RwLock(outcome), write)
}

fn delete_if(yes: bool, stamp: &dyn Fn() -> u64) -> (Response, Option<Write>) {
    if !yes {
        return (Response::Bool(false), None);
    }
    let write = Write {
        entry: entry::tombstone(stamp()),
        ttl: Some(TOMBSTONE_GRACE),
    };
    (Response::Bool(true), Some(write))
}

fn failed(f: Failure, why: &str) -> (Response, Option<Write>) {
    (Response::Failed(f, why.into()), None)
}

fn equals(v: Value<'_>, expected: &[u8]) -> bool {
    match v {
        Value::Str(b) => b == expected,
        Value::Int(n) => n.to_string().as_bytes() == expected,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: Value<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        bytes::encode(v, &mut out);
        out
    }

    fn k() -> Vec<u8> {
        b"k".to_vec()
    }

    #[test]
    fn set_nx_and_locks_only_take_an_absent_or_deleted_key() {
        let held = entry::value(5, Value::Str(b"tok"));
        let gone = entry::tombstone(6);
        let op = Op::LockAcquire {
            key: k(),
            token: b"t2".to_vec(),
            ttl: Duration::from_secs(1),
            copies: Default::default(),
        };
        assert_eq!(decide(&op, cur(&held), || 9).0, Response::Fence(None));
        let (r, w) = decide(&op, cur(&gone), || 9);
        assert_eq!(r, Response::Fence(Some(9)));
        let w = w.unwrap();
        assert_eq!(w.ttl, Some(Duration::from_secs(1)));
        assert!(entry::is_lock(&w.entry), "a lock is kept pinned");
        let nx = Op::SetNx {
            key: k(),
            value: enc(Value::Int(1)),
            ttl: None,
        };
        assert_eq!(decide(&nx, None, || 1).0, Response::Bool(true));
        assert_eq!(decide(&nx, cur(&held), || 1).0, Response::Bool(false));
    }

    #[test]
    fn a_release_with_another_token_changes_nothing() {
        let held = entry::value(5, Value::Str(b"new-holder"));
        let cur = Some(Current {
            entry: &held,
            ttl: Some(Duration::from_secs(3)),
        });
        let stale = Op::LockRelease {
            key: k(),
            token: b"old-holder".to_vec(),
            copies: Default::default(),
        };
        assert_eq!(decide(&stale, cur, || 7), (Response::Bool(false), None));
        let cur = Some(Current {
            entry: &held,
            ttl: Some(Duration::from_secs(3)),
        });
        let mine = Op::LockRelease {
            key: k(),
            token: b"new-holder".to_vec(),
            copies: Default::default(),
        };
        let (r, w) = decide(&mine, cur, || 7);
        assert_eq!(r, Response::Bool(true));
        assert_eq!(entry::parse(&w.unwrap().entry), Some((7, State::Deleted)));
    }

    #[test]
    fn increments_count_integers_and_integer_strings_and_keep_the_ttl() {
        let ttl = Some(Duration::from_secs(9));
        let n = entry::value(1, Value::Int(41));
        let op = Op::IncrBy {
            key: k(),
            by: 1,
            ttl: None,
        };
        let (r, w) = decide(&op, Some(Current { entry: &n, ttl }), || 2);
        assert_eq!(r, Response::Int(42));
        assert_eq!(w.unwrap().ttl, ttl);
        let s = entry::value(1, Value::Str(b"+5"));
        assert_eq!(
            decide(
                &op,
                Some(Current {
                    entry: &s,
                    ttl: None
                }),
                || 2
            )
            .0,
            Response::Int(6)
        );
        let bad = entry::value(1, Value::Str(b"five"));
        assert!(matches!(
            decide(
                &op,
                Some(Current {
                    entry: &bad,
                    ttl: None
                }),
                || 2
            )
            .0,
            Response::Failed(Failure::NotAnInteger, _)
        ));
        let max = entry::value(1, Value::Int(i64::MAX));
        assert!(matches!(
            decide(
                &op,
                Some(Current {
                    entry: &max,
                    ttl: None
                }),
                || 2
            )
            .0,
            Response::Failed(Failure::Overflow, _)
        ));
        assert_eq!(decide(&op, None, || 2).0, Response::Int(1));
    }

    #[test]
    fn compare_and_delete_matches_strings_and_integer_digits() {
        let n = entry::value(1, Value::Int(7));
        let op = Op::DelIfEq {
            key: k(),
            expected: b"7".to_vec(),
        };
        assert_eq!(
            decide(
                &op,
                Some(Current {
                    entry: &n,
                    ttl: None
                }),
                || 2
            )
            .0,
            Response::Bool(true)
        );
        let f = entry::value(1, Value::Float(7.0));
        assert_eq!(
            decide(
                &op,
                Some(Current {
                    entry: &f,
                    ttl: None
                }),
                || 2
            )
            .0,
            Response::Bool(false)
        );
    }

    fn cur(entry: &[u8]) -> Option<Current<'_>> {
        Some(Current { entry, ttl: None })
    }
}
