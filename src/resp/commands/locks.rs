//! The store's token locks and compare-and-delete, as commands: a Redis client takes,
//! extends and releases the very locks `Ephpm\MemoLock` takes (the same names, the same
//! fencing numbers), so a worker in another language and a PHP request exclude each
//! other. The store decides each of them in one step.
//!
//! - `EPHPM.LOCK name token ttl-ms` → the fencing number, or nil when somebody holds it
//! - `EPHPM.EXTEND name token ttl-ms` → 1 if `token` still held it and now holds it
//!   `ttl-ms` from now, else 0
//! - `EPHPM.UNLOCK name token` → 1 if `token` held it and released it (waking PHP's
//!   waiters), else 0
//! - `DELIFEQ key value` → 1 if the key held `value` and is gone, else 0 (ePHPm's
//!   compare-and-delete)
//!
//! A lock's name is its key in the store: what MemoLock calls `name` under its prefix
//! (none by default). A token should be random, 16 bytes or more: it is what proves
//! ownership.

use super::{Ctx, Done, Flags, Hold, Spec, on_key, positive_ttl};

pub const COMMANDS: &[Spec] = &[
    on_key("ephpm.lock", 4, Flags::WRITE, Hold::Shared, lock),
    on_key("ephpm.extend", 4, Flags::WRITE, Hold::Shared, extend),
    on_key("ephpm.unlock", 3, Flags::WRITE, Hold::Shared, unlock),
    on_key("delifeq", 3, Flags::WRITE, Hold::Shared, delifeq),
];

fn lock(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let ttl = positive_ttl(a[3], 1, "ephpm.lock")?;
    match ctx.server.call(|s| s.lock_acquire(a[1], a[2], ttl))? {
        Some(fence) => ctx.conn.reply.int(fence as i64),
        None => ctx.conn.reply.null(),
    }
    Ok(())
}

fn extend(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let ttl = positive_ttl(a[3], 1, "ephpm.extend")?;
    let held = ctx.server.call(|s| s.lock_extend(a[1], a[2], ttl))?;
    ctx.conn.reply.int(i64::from(held));
    Ok(())
}

fn unlock(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let released = ctx.server.call(|s| s.lock_release(a[1], a[2]))?;
    ctx.conn.reply.int(i64::from(released));
    Ok(())
}

fn delifeq(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let gone = ctx.server.call(|s| s.del_if_eq(a[1], a[2]))?;
    ctx.conn.reply.int(i64::from(gone));
    Ok(())
}
