//! Strings and counters. The store decides SET NX, INCR/DECR and their kin in one step
//! where the data lives, so a PHP process and a Redis client racing on one key never
//! both win nor lose an update. Commands that read, decide and write (APPEND, SETRANGE,
//! GETSET, GETDEL, GETEX, INCRBYFLOAT, MSETNX, SET with XX, GET or KEEPTTL) hold the
//! server alone: one step among this server's clients, while a PHP process writing the
//! same key at that instant may still land between the read and the write.

use std::time::Duration;

use super::{Ctx, Done, Fail, Flags, Hold, Spec, err, int, on_key, positive_ttl, syntax};
use crate::resp::text;
use crate::store::{KeyTtl, SetNx, Value};

pub const COMMANDS: &[Spec] = &[
    on_key("get", 2, Flags::empty(), Hold::Shared, get),
    on_key("set", -3, Flags::WRITE, Hold::AloneIf(set_reads_first), set),
    on_key("setnx", 3, Flags::WRITE, Hold::Shared, setnx),
    on_key("setex", 4, Flags::WRITE, Hold::Shared, setex),
    on_key("psetex", 4, Flags::WRITE, Hold::Shared, psetex),
    on_key("getset", 3, Flags::WRITE, Hold::Alone, getset),
    on_key("getdel", 2, Flags::WRITE, Hold::Alone, getdel),
    on_key("getex", -2, Flags::WRITE, Hold::Alone, getex),
    Spec {
        keys: (1, -1, 1),
        ..on_key("mget", -2, Flags::empty(), Hold::Shared, mget)
    },
    Spec {
        keys: (1, -1, 2),
        ..on_key("mset", -3, Flags::WRITE, Hold::Shared, mset)
    },
    Spec {
        keys: (1, -1, 2),
        ..on_key("msetnx", -3, Flags::WRITE, Hold::Alone, msetnx)
    },
    on_key("append", 3, Flags::WRITE, Hold::Alone, append),
    on_key("strlen", 2, Flags::empty(), Hold::Shared, strlen),
    on_key("getrange", 4, Flags::empty(), Hold::Shared, getrange),
    on_key("substr", 4, Flags::empty(), Hold::Shared, getrange),
    on_key("setrange", 4, Flags::WRITE, Hold::Alone, setrange),
    on_key("incr", 2, Flags::WRITE, Hold::Shared, incr),
    on_key("decr", 2, Flags::WRITE, Hold::Shared, decr),
    on_key("incrby", 3, Flags::WRITE, Hold::Shared, incrby),
    on_key("decrby", 3, Flags::WRITE, Hold::Shared, decrby),
    on_key("incrbyfloat", 3, Flags::WRITE, Hold::Alone, incrbyfloat),
];

/// The largest string SETRANGE and APPEND may make (Redis' proto-max-bulk-len).
const MAX_STRING: u64 = 512 << 20;

/// The value of `key` as a Redis client reads it, or `None` when absent.
pub fn read(ctx: &Ctx, key: &[u8]) -> Result<Option<Vec<u8>>, Fail> {
    let mut out = Vec::new();
    let found = ctx
        .server
        .call(|s| s.read(key, &mut |v| text::to_bytes(v, &mut out)))?;
    Ok(found.map(|_| out))
}

/// What is left of the key's lifetime (`None`: it has none, or is absent).
pub fn remaining(ctx: &Ctx, key: &[u8]) -> Result<Option<Duration>, Fail> {
    Ok(match ctx.server.call(|s| s.ttl(key))? {
        KeyTtl::Remaining(d) => Some(d),
        _ => None,
    })
}

/// Milliseconds since the epoch, signed for the arithmetic of absolute times.
pub fn now_ms() -> i64 {
    crate::ground::wall::now_ms() as i64
}

fn get(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let reply = &mut ctx.conn.reply;
    let mut scratch = Vec::new();
    let found = ctx.server.call(|s| {
        s.read(a[1], &mut |v| match v {
            Value::Str(b) | Value::Serialized(b) => reply.bulk(b),
            other => {
                text::to_bytes(other, &mut scratch);
                reply.bulk(&scratch);
            }
        })
    })?;
    if found.is_none() {
        reply.null();
    }
    Ok(())
}

/// A lifetime option of SET or GETEX.
enum Expiry {
    /// None given: SET clears the lifetime, GETEX leaves it.
    Unset,
    KeepTtl,
    Persist,
    In(Duration),
    /// An absolute time already past: the key goes.
    Past,
}

/// Reads the option at `a[i]` if it is a lifetime one; returns it and how many words it
/// took.
fn expiry(a: &[&[u8]], i: usize, command: &str) -> Result<Option<(Expiry, usize)>, Fail> {
    let word = a[i].to_ascii_uppercase();
    let unit = match word.as_slice() {
        b"KEEPTTL" => return Ok(Some((Expiry::KeepTtl, 1))),
        b"PERSIST" => return Ok(Some((Expiry::Persist, 1))),
        b"EX" | b"PX" | b"EXAT" | b"PXAT" => word,
        _ => return Ok(None),
    };
    let arg = a.get(i + 1).ok_or_else(syntax)?;
    let e = match unit.as_slice() {
        b"EX" => Expiry::In(positive_ttl(arg, 1000, command)?),
        b"PX" => Expiry::In(positive_ttl(arg, 1, command)?),
        _ => {
            let at = positive_ttl(arg, if unit == b"EXAT" { 1000 } else { 1 }, command)?;
            match (at.as_millis() as i64).checked_sub(now_ms()) {
                Some(left) if left > 0 => Expiry::In(Duration::from_millis(left as u64)),
                _ => Expiry::Past,
            }
        }
    };
    Ok(Some((e, 2)))
}

/// SET reads before it writes when told XX, GET or KEEPTTL.
fn set_reads_first(a: &[&[u8]]) -> bool {
    a[3..].iter().any(|w| {
        w.eq_ignore_ascii_case(b"XX")
            || w.eq_ignore_ascii_case(b"GET")
            || w.eq_ignore_ascii_case(b"KEEPTTL")
    })
}

/// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]
fn set(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let (key, value) = (a[1], a[2]);
    let (mut nx, mut xx, mut get, mut exp) = (false, false, false, None);
    let mut i = 3;
    while i < a.len() {
        if let Some((e, took)) = expiry(a, i, "set")? {
            if exp.is_some() || matches!(e, Expiry::Persist) {
                return Err(syntax());
            }
            exp = Some(e);
            i += took;
            continue;
        }
        match a[i].to_ascii_uppercase().as_slice() {
            b"NX" if !xx => nx = true,
            b"XX" if !nx => xx = true,
            b"GET" => get = true,
            _ => return Err(syntax()),
        }
        i += 1;
    }
    let exp = exp.unwrap_or(Expiry::Unset);
    // The common lock pattern, decided by the store in one step.
    if nx && !get {
        let ttl = match exp {
            Expiry::In(d) => Some(d),
            Expiry::Past => Some(Duration::from_millis(1)),
            _ => None,
        };
        return match ctx.server.call(|s| s.set_nx(key, Value::Str(value), ttl))? {
            SetNx::Inserted => {
                ctx.conn.reply.ok();
                Ok(())
            }
            SetNx::Exists => {
                ctx.conn.reply.null();
                Ok(())
            }
        };
    }
    let old = if get || nx || xx {
        read(ctx, key)?
    } else {
        None
    };
    let answer = |ctx: &mut Ctx, old: Option<Vec<u8>>, wrote: bool| match (get, old) {
        (true, Some(v)) => ctx.conn.reply.bulk(&v),
        (true, None) => ctx.conn.reply.null(),
        (false, _) if wrote => ctx.conn.reply.ok(),
        (false, _) => ctx.conn.reply.null(),
    };
    if (nx && old.is_some()) || (xx && old.is_none()) {
        answer(ctx, old, false);
        return Ok(());
    }
    let ttl = match exp {
        Expiry::Unset | Expiry::Persist => None,
        Expiry::KeepTtl => remaining(ctx, key)?,
        Expiry::In(d) => Some(d),
        Expiry::Past => {
            ctx.server.call(|s| s.del(key))?;
            answer(ctx, old, true);
            return Ok(());
        }
    };
    ctx.server.call(|s| s.set(key, Value::Str(value), ttl))?;
    answer(ctx, old, true);
    Ok(())
}

fn setnx(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let won = ctx
        .server
        .call(|s| s.set_nx(a[1], Value::Str(a[2]), None))?;
    ctx.conn.reply.int(i64::from(won == SetNx::Inserted));
    Ok(())
}

fn setex(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let ttl = positive_ttl(a[2], 1000, "setex")?;
    ctx.server
        .call(|s| s.set(a[1], Value::Str(a[3]), Some(ttl)))?;
    {
        ctx.conn.reply.ok();
        Ok(())
    }
}

fn psetex(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let ttl = positive_ttl(a[2], 1, "psetex")?;
    ctx.server
        .call(|s| s.set(a[1], Value::Str(a[3]), Some(ttl)))?;
    {
        ctx.conn.reply.ok();
        Ok(())
    }
}

fn getset(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let old = read(ctx, a[1])?;
    ctx.server.call(|s| s.set(a[1], Value::Str(a[2]), None))?;
    bulk_or_null(ctx, old);
    Ok(())
}

fn getdel(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let old = read(ctx, a[1])?;
    if old.is_some() {
        ctx.server.call(|s| s.del(a[1]))?;
    }
    bulk_or_null(ctx, old);
    Ok(())
}

/// GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]
fn getex(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let exp = match a.len() {
        2 => Expiry::Unset,
        _ => match expiry(a, 2, "getex")? {
            Some((Expiry::KeepTtl, _)) | None => return Err(syntax()),
            Some((e, took)) if 2 + took == a.len() => e,
            Some(_) => return Err(syntax()),
        },
    };
    let old = read(ctx, a[1])?;
    if old.is_some() {
        match exp {
            Expiry::Unset | Expiry::KeepTtl => {}
            Expiry::Persist => _ = ctx.server.call(|s| s.expire(a[1], None))?,
            Expiry::In(d) => _ = ctx.server.call(|s| s.expire(a[1], Some(d)))?,
            Expiry::Past => _ = ctx.server.call(|s| s.del(a[1]))?,
        }
        if !matches!(exp, Expiry::Unset | Expiry::KeepTtl) {
            ctx.server.touch(a[1]);
        }
    }
    bulk_or_null(ctx, old);
    Ok(())
}

fn bulk_or_null(ctx: &mut Ctx, v: Option<Vec<u8>>) {
    match v {
        Some(v) => ctx.conn.reply.bulk(&v),
        None => ctx.conn.reply.null(),
    }
}

fn mget(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let keys = &a[1..];
    let mut found: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
    ctx.server.call(|s| {
        s.get_many(keys, &mut |i, hit, bytes| {
            let mut out = Vec::new();
            text::to_bytes(hit.value.with(bytes), &mut out);
            found[i] = Some(out);
        })
    })?;
    ctx.conn.reply.array(keys.len());
    for v in found {
        bulk_or_null(ctx, v);
    }
    Ok(())
}

/// The key/value pairs of MSET and MSETNX.
fn pairs<'a>(a: &[&'a [u8]], command: &str) -> Result<Vec<(&'a [u8], Value<'a>)>, Fail> {
    if a.len() % 2 == 0 {
        return Err(err(format!(
            "ERR wrong number of arguments for '{command}' command"
        )));
    }
    Ok(a[1..].chunks(2).map(|p| (p[0], Value::Str(p[1]))).collect())
}

fn mset(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let entries = pairs(a, "mset")?;
    ctx.server.call(|s| s.set_many(&entries, None))?;
    {
        ctx.conn.reply.ok();
        Ok(())
    }
}

fn msetnx(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let entries = pairs(a, "msetnx")?;
    for (key, _) in &entries {
        if ctx.server.call(|s| s.exists(key))? {
            ctx.conn.reply.int(0);
            return Ok(());
        }
    }
    ctx.server.call(|s| s.set_many(&entries, None))?;
    ctx.conn.reply.int(1);
    Ok(())
}

/// Writes a string made from the old one, keeping the key's lifetime.
fn rewrite(ctx: &mut Ctx, key: &[u8], value: &[u8]) -> Done {
    if value.len() as u64 > MAX_STRING {
        return Err(err(
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
        ));
    }
    let ttl = remaining(ctx, key)?;
    ctx.server.call(|s| s.set(key, Value::Str(value), ttl))?;
    Ok(())
}

fn append(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let mut v = read(ctx, a[1])?.unwrap_or_default();
    v.extend_from_slice(a[2]);
    rewrite(ctx, a[1], &v)?;
    ctx.conn.reply.int(v.len() as i64);
    Ok(())
}

fn strlen(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let n = read(ctx, a[1])?.map_or(0, |v| v.len());
    ctx.conn.reply.int(n as i64);
    Ok(())
}

fn getrange(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let (start, end) = (int(a[2])?, int(a[3])?);
    let v = read(ctx, a[1])?.unwrap_or_default();
    let len = v.len() as i64;
    let from = |i: i64| if i < 0 { (len + i).max(0) } else { i };
    let (s, e) = (from(start), from(end).min(len - 1));
    if len == 0 || s > e || (start < 0 && end < 0 && start > end) {
        ctx.conn.reply.bulk(b"");
    } else {
        ctx.conn.reply.bulk(&v[s as usize..=e as usize]);
    }
    Ok(())
}

fn setrange(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let offset = int(a[2])?;
    if offset < 0 {
        return Err(err("ERR offset is out of range"));
    }
    let patch = a[3];
    let old = read(ctx, a[1])?;
    if patch.is_empty() {
        ctx.conn.reply.int(old.map_or(0, |v| v.len() as i64));
        return Ok(());
    }
    if offset as u64 + patch.len() as u64 > MAX_STRING {
        return Err(err(
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
        ));
    }
    let mut v = old.unwrap_or_default();
    let end = offset as usize + patch.len();
    if v.len() < end {
        v.resize(end, 0);
    }
    v[offset as usize..end].copy_from_slice(patch);
    rewrite(ctx, a[1], &v)?;
    ctx.conn.reply.int(v.len() as i64);
    Ok(())
}

fn incr_by(ctx: &mut Ctx, key: &[u8], by: i64) -> Done {
    let n = ctx.server.call(|s| s.incr_by(key, by, None))?;
    ctx.conn.reply.int(n);
    Ok(())
}

fn incr(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    incr_by(ctx, a[1], 1)
}

fn decr(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    incr_by(ctx, a[1], -1)
}

fn incrby(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    incr_by(ctx, a[1], int(a[2])?)
}

fn decrby(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let by = int(a[2])?;
    incr_by(
        ctx,
        a[1],
        by.checked_neg()
            .ok_or_else(|| err("ERR decrement would overflow"))?,
    )
}

fn incrbyfloat(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let by = text::parse_float(a[2]).ok_or_else(|| err("ERR value is not a valid float"))?;
    let mut current = Ok(0.0);
    ctx.server.call(|s| {
        s.read(a[1], &mut |v| {
            current = match v {
                Value::Int(n) => Ok(n as f64),
                Value::Float(x) => Ok(x),
                Value::Str(b) => text::parse_float(b).ok_or(()),
                _ => Err(()),
            }
        })
    })?;
    let current = current.map_err(|()| err("ERR value is not a valid float"))?;
    let sum = current + by;
    if !sum.is_finite() {
        return Err(err("ERR increment would produce NaN or Infinity"));
    }
    let shown = text::format_float(sum);
    rewrite(ctx, a[1], shown.as_bytes())?;
    ctx.conn.reply.bulk(shown.as_bytes());
    Ok(())
}
