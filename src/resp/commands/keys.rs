//! Keys: existence, lifetimes, and walking the keyspace. Every key of the store is one
//! Redis string key in database 0: PHP's entries, sessions and locks included (KEYS and
//! SCAN show them all, as `ephpm keys` does).

use std::time::Duration;

use super::strings::now_ms;
use super::{Ctx, Done, Fail, Flags, Hold, Spec, err, int, on_key, plain, syntax};
use crate::resp::glob;
use crate::store::{KeyTtl, ScanEntry};

pub const COMMANDS: &[Spec] = &[
    Spec {
        keys: (1, -1, 1),
        ..on_key("del", -2, Flags::WRITE, Hold::Shared, del)
    },
    Spec {
        keys: (1, -1, 1),
        ..on_key("unlink", -2, Flags::WRITE, Hold::Shared, del)
    },
    Spec {
        keys: (1, -1, 1),
        ..on_key("exists", -2, Flags::empty(), Hold::Shared, exists)
    },
    on_key("type", 2, Flags::empty(), Hold::Shared, kind),
    on_key(
        "expire",
        -3,
        Flags::WRITE,
        Hold::AloneIf(has_condition),
        expire,
    ),
    on_key(
        "pexpire",
        -3,
        Flags::WRITE,
        Hold::AloneIf(has_condition),
        pexpire,
    ),
    on_key(
        "expireat",
        -3,
        Flags::WRITE,
        Hold::AloneIf(has_condition),
        expireat,
    ),
    on_key(
        "pexpireat",
        -3,
        Flags::WRITE,
        Hold::AloneIf(has_condition),
        pexpireat,
    ),
    on_key("ttl", 2, Flags::empty(), Hold::Shared, ttl),
    on_key("pttl", 2, Flags::empty(), Hold::Shared, pttl),
    on_key("expiretime", 2, Flags::empty(), Hold::Shared, expiretime),
    on_key("pexpiretime", 2, Flags::empty(), Hold::Shared, pexpiretime),
    on_key("persist", 2, Flags::WRITE, Hold::Alone, persist),
    plain("keys", 2, Flags::empty(), keys),
    plain("scan", -2, Flags::empty(), scan),
    plain("randomkey", 1, Flags::empty(), randomkey),
    plain("dbsize", 1, Flags::empty(), dbsize),
    Spec {
        hold: Hold::Alone,
        ..plain("flushdb", -1, Flags::WRITE, flush)
    },
    Spec {
        hold: Hold::Alone,
        ..plain("flushall", -1, Flags::WRITE, flush)
    },
];

fn del(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let mut n = 0;
    for key in &a[1..] {
        n += i64::from(ctx.server.call(|s| s.del(key))?);
    }
    ctx.conn.reply.int(n);
    Ok(())
}

fn exists(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let mut n = 0;
    for key in &a[1..] {
        n += i64::from(ctx.server.call(|s| s.exists(key))?);
    }
    ctx.conn.reply.int(n);
    Ok(())
}

/// Every value is a string to Redis clients (`text.rs`).
fn kind(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let there = ctx.server.call(|s| s.exists(a[1]))?;
    ctx.conn.reply.simple(if there { "string" } else { "none" });
    Ok(())
}

fn has_condition(a: &[&[u8]]) -> bool {
    a.len() > 3
}

/// EXPIRE and its kin: `when` turns the argument into a lifetime from now (`None`: the
/// time is already past, and the key goes).
fn set_expiry(
    ctx: &mut Ctx,
    a: &[&[u8]],
    command: &str,
    when: fn(i64) -> Option<Option<i64>>,
) -> Done {
    let n = int(a[2])?;
    let Some(left_ms) = when(n) else {
        return Err(err(format!(
            "ERR invalid expire time in '{command}' command"
        )));
    };
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for w in &a[3..] {
        match w.to_ascii_uppercase().as_slice() {
            b"NX" => nx = true,
            b"XX" => xx = true,
            b"GT" => gt = true,
            b"LT" => lt = true,
            _ => {
                return Err(err(format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(w)
                )));
            }
        }
    }
    if nx && (xx || gt || lt) {
        return Err(err(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(err(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    if nx || xx || gt || lt {
        // A key without a lifetime has an infinite one, for GT and LT.
        let current = match ctx.server.call(|s| s.ttl(a[1]))? {
            KeyTtl::Missing => {
                ctx.conn.reply.int(0);
                return Ok(());
            }
            KeyTtl::Persistent => None,
            KeyTtl::Remaining(d) => Some(d.as_millis() as i64),
        };
        let new = left_ms.unwrap_or(0);
        let allowed = match current {
            // XX wants a lifetime; LT takes "none" for an infinite one.
            None => nx || (lt && !xx),
            Some(c) => !nx && (!gt || new > c) && (!lt || new < c),
        };
        if !allowed {
            ctx.conn.reply.int(0);
            return Ok(());
        }
    }
    let done = match left_ms {
        Some(ms) if ms > 0 => {
            let ttl = Some(Duration::from_millis(ms as u64));
            ctx.server.call(|s| s.expire(a[1], ttl))?
        }
        _ => ctx.server.call(|s| s.del(a[1]))?,
    };
    if done {
        ctx.server.touch(a[1]);
    }
    ctx.conn.reply.int(i64::from(done));
    Ok(())
}

/// Milliseconds left until a time (`n` in `unit_ms` from now, or from the epoch when
/// `absolute`), by Redis' rules: a count of seconds beyond ±i64::MAX/1000, or a relative
/// time beyond i64::MAX from now, is invalid (`None`); an absolute time however far in
/// the past is just past.
fn left(n: i64, unit_ms: i64, absolute: bool) -> Option<Option<i64>> {
    let ms = n.checked_mul(unit_ms)?;
    let now = now_ms();
    Some(Some(if absolute {
        ms.saturating_sub(now)
    } else {
        ms.checked_add(now)?;
        ms
    }))
}

fn expire(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    set_expiry(ctx, a, "expire", |n| left(n, 1000, false))
}

fn pexpire(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    set_expiry(ctx, a, "pexpire", |n| left(n, 1, false))
}

fn expireat(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    set_expiry(ctx, a, "expireat", |n| left(n, 1000, true))
}

fn pexpireat(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    set_expiry(ctx, a, "pexpireat", |n| left(n, 1, true))
}

/// -2 absent, -1 no lifetime, else what `shown` makes of the milliseconds left.
fn lifetime(ctx: &mut Ctx, key: &[u8], shown: fn(i64) -> i64) -> Done {
    let n = match ctx.server.call(|s| s.ttl(key))? {
        KeyTtl::Missing => -2,
        KeyTtl::Persistent => -1,
        KeyTtl::Remaining(d) => shown(d.as_millis() as i64),
    };
    ctx.conn.reply.int(n);
    Ok(())
}

fn ttl(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    lifetime(ctx, a[1], |ms| (ms + 500) / 1000)
}

fn pttl(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    lifetime(ctx, a[1], |ms| ms)
}

fn expiretime(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    lifetime(ctx, a[1], |ms| (now_ms() + ms) / 1000)
}

fn pexpiretime(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    lifetime(ctx, a[1], |ms| now_ms() + ms)
}

fn persist(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let had = matches!(ctx.server.call(|s| s.ttl(a[1]))?, KeyTtl::Remaining(_));
    if had {
        ctx.server.call(|s| s.expire(a[1], None))?;
        ctx.server.touch(a[1]);
    }
    ctx.conn.reply.int(i64::from(had));
    Ok(())
}

/// One batch of the store's walk from `cursor`, of the keys `pattern` matches.
fn walk(ctx: &Ctx, pattern: &[u8], cursor: u64, out: &mut Vec<ScanEntry>) -> Result<u64, Fail> {
    let start = out.len();
    let next = ctx
        .server
        .call(|s| s.scan(glob::literal_prefix(pattern), cursor, out))?;
    let mut i = start;
    while i < out.len() {
        if glob::matches(pattern, &out[i].key) {
            i += 1;
        } else {
            out.swap_remove(i);
        }
    }
    Ok(next)
}

fn keys(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let mut found = Vec::new();
    let mut cursor = 0;
    loop {
        cursor = walk(ctx, a[1], cursor, &mut found)?;
        if cursor == 0 {
            break;
        }
    }
    ctx.conn.reply.array(found.len());
    for e in found {
        ctx.conn.reply.bulk(&e.key);
    }
    Ok(())
}

/// SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: the cursor is the store's (a
/// shard number), so a key present for the whole walk is shown, once.
fn scan(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let cursor = std::str::from_utf8(a[1])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| err("ERR invalid cursor"))?;
    let (mut pattern, mut count, mut strings) = (&b"*"[..], 10i64, true);
    let mut i = 2;
    while i < a.len() {
        let value = a.get(i + 1).ok_or_else(syntax)?;
        match a[i].to_ascii_uppercase().as_slice() {
            b"MATCH" => pattern = value,
            b"COUNT" => {
                count = int(value)?;
                if count < 1 {
                    return Err(syntax());
                }
            }
            b"TYPE" => strings = value.eq_ignore_ascii_case(b"string"),
            _ => return Err(syntax()),
        }
        i += 2;
    }
    let mut found = Vec::new();
    let mut next = cursor;
    loop {
        next = walk(ctx, pattern, next, &mut found)?;
        if next == 0 || found.len() as i64 >= count {
            break;
        }
    }
    if !strings {
        found.clear();
    }
    let r = &mut ctx.conn.reply;
    r.array(2);
    r.bulk(next.to_string().as_bytes());
    r.array(found.len());
    for e in found {
        r.bulk(&e.key);
    }
    Ok(())
}

fn randomkey(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    let shards = ctx.server.call(|s| s.stats())?.shards.max(1);
    // Where to start is not a secret: the clock's nanoseconds spread it well enough.
    let nanos = u64::from(crate::ground::wall::since_epoch().subsec_nanos());
    let mut found = Vec::new();
    for start in [nanos % shards, 0] {
        let mut cursor = start;
        loop {
            cursor = walk(ctx, b"*", cursor, &mut found)?;
            if cursor == 0 || !found.is_empty() {
                break;
            }
        }
        if let Some(e) = found.get(nanos as usize % found.len().max(1)) {
            ctx.conn.reply.bulk(&e.key);
            return Ok(());
        }
    }
    ctx.conn.reply.null();
    Ok(())
}

/// The live keys and how many of them have a lifetime, counted by a walk: an entry past
/// its TTL that nothing has touched yet is not counted (the store reclaims it lazily).
/// O(keys), one shard's lock at a time.
pub fn live_keys(ctx: &Ctx) -> Result<(u64, u64), Fail> {
    let (mut keys, mut expires) = (0, 0);
    let mut batch = Vec::new();
    let mut cursor = 0;
    loop {
        batch.clear();
        cursor = ctx.server.call(|s| s.scan(b"", cursor, &mut batch))?;
        keys += batch.len() as u64;
        expires += batch
            .iter()
            .filter(|e| matches!(e.ttl, KeyTtl::Remaining(_)))
            .count() as u64;
        if cursor == 0 {
            return Ok((keys, expires));
        }
    }
}

fn dbsize(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    let (keys, _) = live_keys(ctx)?;
    ctx.conn.reply.int(keys as i64);
    Ok(())
}

/// FLUSHDB and FLUSHALL [ASYNC|SYNC]: the whole store, PHP's entries included.
fn flush(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    match a.get(1).map(|w| w.to_ascii_uppercase()) {
        None => {}
        Some(w) if a.len() == 2 && (w == b"ASYNC" || w == b"SYNC") => {}
        Some(_) => return Err(syntax()),
    }
    ctx.server.call(|s| s.clear(b""))?;
    ctx.conn.reply.ok();
    Ok(())
}
