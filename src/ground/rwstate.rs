//! The read/write lock's state and its transitions, as a pure function: no store, no
//! clock, no PHP. Every backend runs `apply` atomically on the lock's key (under the
//! shard lock, in one compare-and-swap on Redis, at the key's owner in a cluster), so
//! this file is the one place the rules live.
//!
//! # The state
//! One key per lock name holds the mode (read or write), the holders (a token and an
//! expiry each: every holder has its own TTL, so a killed reader frees only its own
//! share, when its TTL runs out) and the last fencing number handed out. In write mode
//! there is exactly one holder. No holders means free.
//!
//! # The rules (symfony/lock 5.4's, as its RedisStore applies them)
//! - A read is granted unless another token holds the write lock. A token that holds
//!   the write lock and asks to read is demoted: it becomes a reader, and other readers
//!   may join.
//! - A write is granted when nobody else holds the lock. A token that is the only reader
//!   and asks to write is promoted; a reader among others must wait for them.
//! - Release and extend act on the caller's token only: a stale token touches nothing.
//! - Expired holders are dropped by every operation before it decides.
//! - Every grant (acquisition, promotion, demotion, re-entry) gets a fencing number
//!   greater than the state's last one and not below the backend's `floor` (Redis: its
//!   clock in µs, so numbers keep increasing after the state expired; shm numbers
//!   grants by the entry's write sequence instead).
//!
//! Readers are not queued behind a waiting writer (neither are symfony/lock's): a
//! stream of overlapping readers can keep a writer waiting. The waiter is bounded by
//! its own deadline.

use std::time::Duration;

use super::token::Token;

/// How a lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    Write,
}

/// One holder: its token and when its share ends, in the backend's clock (ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    pub token: Token,
    pub expires_ms: u64,
}

/// A lock's state as stored in its key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct State {
    /// The last fencing number granted while this state lived.
    pub fence: u64,
    /// Write mode: `holders` has exactly one share, the writer's.
    pub write: bool,
    pub holders: Vec<Share>,
}

/// What a caller asks of a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Take (or keep, promote, demote) the lock in `mode` for `token`, for `ttl`.
    Acquire {
        mode: Mode,
        token: Token,
        ttl: Duration,
    },
    /// Give `token`'s share `ttl` from now.
    Extend { token: Token, ttl: Duration },
    /// Drop `token`'s share.
    Release { token: Token },
    /// How `token` holds the lock now, if it does.
    Probe { token: Token },
}

/// What the caller learns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Granted, with its fencing number.
    Acquired { fence: u64 },
    /// Held by others. `left` is the longest remaining TTL among the holders in the
    /// way (a waiter never sleeps past it: nobody signals an expiry), and `version`
    /// the key's version when this was decided, for `Store::wait_for_change` (the
    /// backend fills it in).
    Busy { left: Duration, version: u64 },
    /// Release and extend: whether the token still held its share.
    Done(bool),
    /// Probe: how the token holds the lock.
    Holds(Option<Mode>),
}

/// What the backend must do with the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Keep,
    /// Store this state; the key may expire `ttl` from now (its last holder's expiry).
    /// `frees`: a release or a demotion that may let a waiter in (backends that signal
    /// only such changes, like Redis, publish then).
    Write {
        state: State,
        ttl: Duration,
        frees: bool,
    },
    /// Nobody holds the lock any more; `fence` is the last one granted (a backend whose
    /// versions are not ordered keeps it a while, see `apply`'s `floor`).
    Delete {
        fence: u64,
    },
}

/// The key holds something that is not a read/write lock's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the key holds a value that is not a read/write lock")]
pub struct Foreign;

/// Decides `op` against the stored bytes (`None`: the key is absent), at `now_ms` in the
/// backend's clock. Releases and changes of holders wake the key's waiters through the
/// backend (a `Write` or `Delete` is a change).
pub fn apply(
    stored: Option<&[u8]>,
    op: &Op,
    now_ms: u64,
    floor: u64,
) -> Result<(Change, Outcome), Foreign> {
    let original = match stored {
        Some(bytes) => decode(bytes).ok_or(Foreign)?,
        None => State::default(),
    };
    let mut s = original.clone();
    s.holders.retain(|h| h.expires_ms > now_ms);
    if s.holders.is_empty() {
        s.write = false;
    }
    let until =
        |ttl: &Duration| now_ms.saturating_add(ttl.as_millis().min(u64::MAX as u128) as u64);
    let outcome = match op {
        Op::Acquire { mode, token, ttl } => {
            let mine = s.holders.iter().any(|h| &h.token == token);
            let others = s.holders.iter().filter(|h| &h.token != token);
            let blocked = match mode {
                // Only another token's write lock keeps a reader out.
                Mode::Read => s.write && !mine,
                // Anybody else keeps a writer out.
                Mode::Write => others.clone().next().is_some(),
            };
            if blocked {
                let last = others.map(|h| h.expires_ms).max().unwrap_or(now_ms);
                let left = Duration::from_millis(last.saturating_sub(now_ms));
                // Nothing is written: a refusal must not wake the other waiters.
                return Ok((Change::Keep, Outcome::Busy { left, version: 0 }));
            }
            s.holders.retain(|h| &h.token != token);
            s.holders.push(Share {
                token: *token,
                expires_ms: until(ttl),
            });
            s.write = *mode == Mode::Write;
            s.fence = s.fence.saturating_add(1).max(floor);
            Outcome::Acquired { fence: s.fence }
        }
        Op::Extend { token, ttl } => match s.holders.iter_mut().find(|h| &h.token == token) {
            Some(h) => {
                h.expires_ms = until(ttl);
                Outcome::Done(true)
            }
            None => Outcome::Done(false),
        },
        Op::Release { token } => {
            let before = s.holders.len();
            s.holders.retain(|h| &h.token != token);
            if s.holders.is_empty() {
                s.write = false;
            }
            Outcome::Done(s.holders.len() != before)
        }
        Op::Probe { token } => Outcome::Holds(
            s.holders
                .iter()
                .any(|h| &h.token == token)
                .then_some(if s.write { Mode::Write } else { Mode::Read }),
        ),
    };
    let frees = outcome == Outcome::Done(true) && matches!(op, Op::Release { .. })
        || original.write && !s.write;
    let change = if s == original {
        Change::Keep
    } else {
        match s.holders.iter().map(|h| h.expires_ms).max() {
            None => Change::Delete { fence: s.fence },
            Some(last) => Change::Write {
                ttl: Duration::from_millis(last.saturating_sub(now_ms).max(1)),
                state: s,
                frees,
            },
        }
    };
    Ok((change, outcome))
}

/// The stored form: a tag that no other ephpm value starts with, the version of the
/// format, the fence, the mode, then each holder's token and expiry.
const MAGIC: &[u8; 5] = b"\x00ERW1";
const SHARE_LEN: usize = 32 + 8;

/// The bytes a state is stored as.
pub fn encode(s: &State) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 9 + s.holders.len() * SHARE_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&s.fence.to_le_bytes());
    out.push(u8::from(s.write));
    for h in &s.holders {
        out.extend_from_slice(&h.token);
        out.extend_from_slice(&h.expires_ms.to_le_bytes());
    }
    out
}

/// A stored state, or `None` when the bytes are not one.
pub fn decode(bytes: &[u8]) -> Option<State> {
    let rest = bytes.strip_prefix(MAGIC)?;
    if rest.len() < 9 || (rest.len() - 9) % SHARE_LEN != 0 {
        return None;
    }
    let fence = u64::from_le_bytes(rest[..8].try_into().ok()?);
    let write = match rest[8] {
        0 => false,
        1 => true,
        _ => return None,
    };
    let holders: Vec<Share> = rest[9..]
        .chunks_exact(SHARE_LEN)
        .map(|c| Share {
            token: c[..32].try_into().unwrap_or([0; 32]),
            expires_ms: u64::from_le_bytes(c[32..].try_into().unwrap_or_default()),
        })
        .collect();
    if write && holders.len() != 1 {
        return None;
    }
    Some(State {
        fence,
        write,
        holders,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_millis(1000);

    fn tok(n: u8) -> Token {
        [b'a' + n; 32]
    }

    /// Runs `op` on `stored` at `now`, storing what it changes.
    fn run(stored: &mut Option<Vec<u8>>, op: Op, now: u64) -> Outcome {
        let (change, outcome) = apply(stored.as_deref(), &op, now, 0).expect("a state");
        match change {
            Change::Keep => {}
            Change::Delete { .. } => *stored = None,
            Change::Write { state, .. } => *stored = Some(encode(&state)),
        }
        outcome
    }

    fn acquire(mode: Mode, n: u8) -> Op {
        Op::Acquire {
            mode,
            token: tok(n),
            ttl: T,
        }
    }

    fn granted(o: Outcome) -> bool {
        matches!(o, Outcome::Acquired { .. })
    }

    #[test]
    fn readers_share_and_a_writer_waits_for_all_of_them() {
        let mut k = None;
        for n in 0..5 {
            assert!(granted(run(&mut k, acquire(Mode::Read, n), 0)));
        }
        assert!(!granted(run(&mut k, acquire(Mode::Write, 9), 0)));
        for n in 0..4 {
            assert_eq!(
                run(&mut k, Op::Release { token: tok(n) }, 0),
                Outcome::Done(true)
            );
            assert!(!granted(run(&mut k, acquire(Mode::Write, 9), 0)));
        }
        assert_eq!(
            run(&mut k, Op::Release { token: tok(4) }, 0),
            Outcome::Done(true)
        );
        assert_eq!(k, None, "the last release deletes the key");
        assert!(granted(run(&mut k, acquire(Mode::Write, 9), 0)));
    }

    #[test]
    fn a_writer_excludes_readers_and_writers() {
        let mut k = None;
        assert!(granted(run(&mut k, acquire(Mode::Write, 0), 0)));
        assert_eq!(
            run(&mut k, acquire(Mode::Read, 1), 400),
            Outcome::Busy {
                left: Duration::from_millis(600),
                version: 0
            }
        );
        assert!(!granted(run(&mut k, acquire(Mode::Write, 1), 400)));
    }

    #[test]
    fn each_holder_expires_on_its_own() {
        let mut k = None;
        run(&mut k, acquire(Mode::Read, 0), 0);
        run(&mut k, acquire(Mode::Read, 1), 500);
        // Reader 0 is gone at 1000, reader 1 still holds until 1500.
        assert_eq!(
            run(&mut k, acquire(Mode::Write, 2), 1000),
            Outcome::Busy {
                left: Duration::from_millis(500),
                version: 0
            }
        );
        assert_eq!(
            run(&mut k, Op::Probe { token: tok(0) }, 1000),
            Outcome::Holds(None)
        );
        assert!(granted(run(&mut k, acquire(Mode::Write, 2), 1500)));
    }

    #[test]
    fn a_stale_token_touches_nothing() {
        let mut k = None;
        run(&mut k, acquire(Mode::Write, 0), 0);
        // 0's share expired; 1 took the lock.
        assert!(granted(run(&mut k, acquire(Mode::Write, 1), 1000)));
        let before = k.clone();
        assert_eq!(
            run(&mut k, Op::Release { token: tok(0) }, 1001),
            Outcome::Done(false)
        );
        assert_eq!(
            run(
                &mut k,
                Op::Extend {
                    token: tok(0),
                    ttl: T
                },
                1001
            ),
            Outcome::Done(false)
        );
        assert_eq!(k, before);
    }

    #[test]
    fn promotion_needs_the_other_readers_gone() {
        let mut k = None;
        run(&mut k, acquire(Mode::Read, 0), 0);
        run(&mut k, acquire(Mode::Read, 1), 0);
        assert!(!granted(run(&mut k, acquire(Mode::Write, 0), 0)));
        assert_eq!(
            run(&mut k, Op::Probe { token: tok(0) }, 0),
            Outcome::Holds(Some(Mode::Read))
        );
        run(&mut k, Op::Release { token: tok(1) }, 0);
        assert!(granted(run(&mut k, acquire(Mode::Write, 0), 0)));
        assert_eq!(
            run(&mut k, Op::Probe { token: tok(0) }, 0),
            Outcome::Holds(Some(Mode::Write))
        );
        assert!(!granted(run(&mut k, acquire(Mode::Read, 1), 0)));
    }

    #[test]
    fn demotion_lets_readers_in() {
        let mut k = None;
        run(&mut k, acquire(Mode::Write, 0), 0);
        assert!(granted(run(&mut k, acquire(Mode::Read, 0), 0)));
        assert!(granted(run(&mut k, acquire(Mode::Read, 1), 0)));
        assert_eq!(
            run(&mut k, Op::Probe { token: tok(0) }, 0),
            Outcome::Holds(Some(Mode::Read))
        );
    }

    #[test]
    fn fences_increase_and_respect_the_floor() {
        let mut k = None;
        let fence = |o| match o {
            Outcome::Acquired { fence } => fence,
            o => panic!("{o:?}"),
        };
        let a = fence(run(&mut k, acquire(Mode::Read, 0), 0));
        let b = fence(run(&mut k, acquire(Mode::Read, 1), 0));
        assert!(b > a);
        let (_, o) = apply(k.as_deref(), &acquire(Mode::Read, 2), 0, 1_000_000).unwrap();
        assert_eq!(fence(o), 1_000_000);
    }

    #[test]
    fn foreign_bytes_are_refused_and_states_round_trip() {
        assert_eq!(
            apply(Some(b"token"), &acquire(Mode::Read, 0), 0, 0),
            Err(Foreign)
        );
        let s = State {
            fence: 7,
            write: false,
            holders: vec![
                Share {
                    token: tok(0),
                    expires_ms: 5,
                },
                Share {
                    token: tok(1),
                    expires_ms: 9,
                },
            ],
        };
        assert_eq!(decode(&encode(&s)), Some(s));
        assert_eq!(decode(&encode(&State::default())[..8]), None);
    }
}
