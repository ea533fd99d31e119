//! PUBLISH, SUBSCRIBE and their kin, among this server's clients (a PHP process does not
//! take part: it has no subscription to this server).

use super::{Ctx, Done, Flags, Spec, plain, unknown_subcommand};

pub const COMMANDS: &[Spec] = &[
    plain("publish", 3, Flags::empty(), publish),
    plain("subscribe", -2, Flags::PUBSUB, subscribe),
    plain("psubscribe", -2, Flags::PUBSUB, psubscribe),
    plain("unsubscribe", -1, Flags::PUBSUB, unsubscribe),
    plain("punsubscribe", -1, Flags::PUBSUB, punsubscribe),
    plain("pubsub", -2, Flags::empty(), pubsub),
];

fn publish(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let n = ctx.server.hub.publish(a[1], a[2]);
    ctx.conn.reply.int(n);
    Ok(())
}

/// The confirmation a (un)subscription gets: kind, name (or null), subscriptions left.
fn confirm(ctx: &mut Ctx, kind: &[u8], name: Option<&[u8]>) {
    let count = (ctx.conn.channels.len() + ctx.conn.patterns.len()) as i64;
    let r = &mut ctx.conn.reply;
    r.push(3);
    r.bulk(kind);
    match name {
        Some(n) => r.bulk(n),
        None => r.null(),
    }
    r.int(count);
}

fn subscribe(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    for ch in &a[1..] {
        if ctx.conn.channels.insert(ch.to_vec()) {
            ctx.server
                .hub
                .subscribe(ctx.conn.client.id, ch, &ctx.conn.inbox);
        }
        confirm(ctx, b"subscribe", Some(ch));
    }
    Ok(())
}

fn psubscribe(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    for p in &a[1..] {
        if ctx.conn.patterns.insert(p.to_vec()) {
            ctx.server
                .hub
                .psubscribe(ctx.conn.client.id, p, &ctx.conn.inbox);
        }
        confirm(ctx, b"psubscribe", Some(p));
    }
    Ok(())
}

fn unsubscribe(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let names: Vec<Vec<u8>> = match a.len() {
        1 => ctx.conn.channels.iter().cloned().collect(),
        _ => a[1..].iter().map(|c| c.to_vec()).collect(),
    };
    if names.is_empty() {
        confirm(ctx, b"unsubscribe", None);
    }
    for ch in names {
        ctx.conn.channels.remove(&ch);
        ctx.server.hub.unsubscribe(ctx.conn.client.id, &ch);
        confirm(ctx, b"unsubscribe", Some(&ch));
    }
    Ok(())
}

fn punsubscribe(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let names: Vec<Vec<u8>> = match a.len() {
        1 => ctx.conn.patterns.iter().cloned().collect(),
        _ => a[1..].iter().map(|c| c.to_vec()).collect(),
    };
    if names.is_empty() {
        confirm(ctx, b"punsubscribe", None);
    }
    for p in names {
        ctx.conn.patterns.remove(&p);
        ctx.server.hub.punsubscribe(ctx.conn.client.id, &p);
        confirm(ctx, b"punsubscribe", Some(&p));
    }
    Ok(())
}

/// PUBSUB CHANNELS [pattern] | NUMSUB [channel…] | NUMPAT
fn pubsub(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let hub = &ctx.server.hub;
    let r = &mut ctx.conn.reply;
    match a[1].to_ascii_uppercase().as_slice() {
        b"CHANNELS" if a.len() <= 3 => {
            let names = hub.channels(a.get(2).copied());
            r.array(names.len());
            for n in names {
                r.bulk(&n);
            }
        }
        b"NUMSUB" => {
            r.map(a.len() - 2);
            for ch in &a[2..] {
                r.bulk(ch);
                r.int(hub.numsub(ch));
            }
        }
        b"NUMPAT" if a.len() == 2 => r.int(hub.numpat()),
        _ => return Err(unknown_subcommand("pubsub", a[1])),
    }
    Ok(())
}
