//! MULTI/EXEC/DISCARD/WATCH/UNWATCH. EXEC runs the queue holding the server alone: no
//! other client of this server runs a command between two of the transaction's, so
//! among Redis clients it is one step, as on Redis. The store is sharded shared memory
//! written by PHP processes too, and they take no part in this lock: a PHP write may
//! land between two queued commands. WATCH compares each watched key's version (every
//! write, from PHP or from here, gives a new one) when EXEC starts, and aborts if any
//! changed; a PHP write after that check and before the queue ends is not seen.

use super::{Ctx, Done, Flags, Hold, Spec, err, execute, lookup, plain};

pub const COMMANDS: &[Spec] = &[
    plain("multi", 1, Flags::NOQUEUE, multi),
    Spec {
        hold: Hold::Alone,
        ..plain("exec", 1, Flags::NOQUEUE, exec)
    },
    plain("discard", 1, Flags::NOQUEUE, discard),
    Spec {
        keys: (1, -1, 1),
        ..plain("watch", -2, Flags::NOQUEUE, watch)
    },
    plain("unwatch", 1, Flags::NOQUEUE, unwatch),
];

fn multi(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    if ctx.conn.multi.is_some() {
        // Refused, and the transaction stays as it was, as Redis does (Redis 8.0's own
        // test runs EXEC after it; Valkey 8.1 aborts the transaction instead).
        return Err(err("ERR MULTI calls can not be nested"));
    }
    ctx.conn.multi = Some(Vec::new());
    ctx.conn.multi_refused = false;
    ctx.conn.reply.ok();
    Ok(())
}

fn discard(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    if ctx.conn.multi.take().is_none() {
        return Err(err("ERR DISCARD without MULTI"));
    }
    forget_watches(ctx);
    ctx.conn.reply.ok();
    Ok(())
}

fn version(ctx: &Ctx, key: &[u8]) -> Result<u64, super::Fail> {
    Ok(ctx.server.call(|s| s.read(key, &mut |_| {}))?.unwrap_or(0))
}

fn watch(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    if ctx.conn.multi.is_some() {
        return Err(err("ERR WATCH inside MULTI is not allowed"));
    }
    for key in &a[1..] {
        let v = version(ctx, key)?;
        ctx.conn.watched.push((key.to_vec(), v));
        ctx.server.watch(&ctx.conn.client, key);
    }
    ctx.conn.reply.ok();
    Ok(())
}

/// Forgets this connection's WATCHes (EXEC, DISCARD, UNWATCH, RESET).
pub fn forget_watches(ctx: &mut Ctx) {
    ctx.conn.watched.clear();
    ctx.server.unwatch_all(ctx.conn.client.id);
    ctx.conn
        .client
        .watch_touched
        .store(false, std::sync::atomic::Ordering::Relaxed);
}

fn unwatch(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    forget_watches(ctx);
    ctx.conn.reply.ok();
    Ok(())
}

fn exec(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    let Some(queue) = ctx.conn.multi.take() else {
        return Err(err("ERR EXEC without MULTI"));
    };
    let watched = std::mem::take(&mut ctx.conn.watched);
    let touched = ctx
        .conn
        .client
        .watch_touched
        .load(std::sync::atomic::Ordering::Relaxed);
    forget_watches(ctx);
    if std::mem::take(&mut ctx.conn.multi_refused) {
        return Err(err(
            "EXECABORT Transaction discarded because of previous errors.",
        ));
    }
    let mut changed = touched;
    for (key, seen) in &watched {
        changed |= version(ctx, key)? != *seen;
    }
    if changed {
        ctx.conn.reply.null_array();
        return Ok(());
    }
    ctx.conn.reply.array(queue.len());
    for command in &queue {
        let words: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
        // Looked up and checked when queued.
        if let Some(entry) = lookup(words[0]) {
            execute(ctx, entry, &words);
        }
    }
    Ok(())
}
