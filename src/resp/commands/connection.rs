//! The connection's own commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET, CLIENT.

use std::sync::atomic::Ordering;

use subtle::ConstantTimeEq;

use super::{Ctx, Done, Fail, Flags, Spec, err, int, plain, syntax, unknown_subcommand};
use crate::resp::lock;
use crate::resp::reply::Proto;

/// QUIT and RESET run in any state of a connection: before AUTH, subscribed, inside MULTI.
const ANY_STATE: Flags = Flags::NOAUTH.union(Flags::PUBSUB).union(Flags::NOQUEUE);

pub const COMMANDS: &[Spec] = &[
    plain("ping", -1, Flags::PUBSUB, ping),
    plain("echo", 2, Flags::empty(), echo),
    plain("hello", -1, Flags::NOAUTH, hello),
    plain("auth", -2, Flags::NOAUTH, auth),
    plain("select", 2, Flags::empty(), select),
    plain("quit", -1, ANY_STATE, quit),
    plain("reset", 1, ANY_STATE, reset),
    plain("client", -2, Flags::empty(), client),
];

fn ping(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    if a.len() > 2 {
        return Err(err("ERR wrong number of arguments for 'ping' command"));
    }
    let subscribed = ctx.conn.subscribed();
    let r = &mut ctx.conn.reply;
    // A RESP2 subscriber's PING is answered in the shape of a message.
    if subscribed && r.proto == Proto::Resp2 {
        r.array(2);
        r.bulk(b"pong");
        r.bulk(a.get(1).copied().unwrap_or_default());
        return Ok(());
    }
    match a.get(1) {
        Some(m) => r.bulk(m),
        None => r.simple("PONG"),
    }
    Ok(())
}

fn echo(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    ctx.conn.reply.bulk(a[1]);
    Ok(())
}

/// Whether `password` is one of the configured ones, compared in constant time so that
/// the time a refusal takes tells nothing of how much of it was right.
fn password_ok(ctx: &Ctx, password: &[u8]) -> bool {
    ctx.server
        .settings
        .passwords
        .iter()
        .fold(false, |ok, p| ok | bool::from(p.as_slice().ct_eq(password)))
}

/// Logs in with `[user] password`; the only user is `default`.
fn login(ctx: &mut Ctx, user: &[u8], password: &[u8]) -> Result<(), Fail> {
    if ctx.server.settings.passwords.is_empty() {
        return Err(err(
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
        ));
    }
    if user != b"default" || !password_ok(ctx, password) {
        ctx.server
            .counters
            .auth_failures
            .fetch_add(1, Ordering::Relaxed);
        return Err(err(
            "WRONGPASS invalid username-password pair or user is disabled.",
        ));
    }
    ctx.conn.authed = true;
    Ok(())
}

fn auth(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    match a.len() {
        2 => login(ctx, b"default", a[1])?,
        3 => login(ctx, a[1], a[2])?,
        _ => return Err(syntax()),
    }
    ctx.conn.reply.ok();
    Ok(())
}

/// HELLO [protover [AUTH user pass] [SETNAME name]]
fn hello(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let mut proto = ctx.conn.reply.proto;
    if let Some(v) = a.get(1) {
        proto = match int(v)
            .map_err(|_| err("ERR Protocol version is not an integer or out of range"))?
        {
            2 => Proto::Resp2,
            3 => Proto::Resp3,
            _ => return Err(err("NOPROTO unsupported protocol version")),
        };
    }
    let mut i = 2;
    let mut name = None;
    while i < a.len() {
        match a[i].to_ascii_uppercase().as_slice() {
            b"AUTH" if i + 2 < a.len() => {
                login(ctx, a[i + 1], a[i + 2])?;
                i += 3;
            }
            b"SETNAME" if i + 1 < a.len() => {
                name = Some(a[i + 1]);
                i += 2;
            }
            _ => {
                return Err(err(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(a[i])
                )));
            }
        }
    }
    if !ctx.conn.authed {
        return Err(err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time",
        ));
    }
    if let Some(name) = name {
        set_name(ctx, name)?;
    }
    ctx.conn.reply.proto = proto;
    let r = &mut ctx.conn.reply;
    r.map(7);
    r.bulk(b"server");
    r.bulk(b"redis");
    r.bulk(b"version");
    r.bulk(super::info::REDIS_VERSION.as_bytes());
    r.bulk(b"proto");
    r.int(if proto == Proto::Resp3 { 3 } else { 2 });
    r.bulk(b"id");
    r.int(ctx.conn.client.id as i64);
    r.bulk(b"mode");
    r.bulk(b"standalone");
    r.bulk(b"role");
    r.bulk(b"master");
    r.bulk(b"modules");
    r.array(0);
    Ok(())
}

fn select(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    match int(a[1])? {
        0 => {
            ctx.conn.reply.ok();
            Ok(())
        }
        _ => Err(err("ERR DB index is out of range")),
    }
}

fn quit(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    ctx.conn.close = true;
    {
        ctx.conn.reply.ok();
        Ok(())
    }
}

/// RESET: the connection as it was when it connected (still logged in only when its peer
/// needs no password), out of MULTI, WATCH and every subscription, back on RESP2.
fn reset(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    let c = &mut *ctx.conn;
    c.multi = None;
    c.multi_refused = false;
    for ch in c.channels.drain() {
        ctx.server.hub.unsubscribe(c.client.id, &ch);
    }
    for p in c.patterns.drain() {
        ctx.server.hub.punsubscribe(c.client.id, &p);
    }
    lock(&c.client.name).clear();
    c.reply.proto = Proto::Resp2;
    if !ctx.server.settings.passwords.is_empty() {
        c.authed = false;
    }
    c.reply.simple("RESET");
    super::multi::forget_watches(ctx);
    Ok(())
}

fn set_name(ctx: &mut Ctx, name: &[u8]) -> Result<(), Fail> {
    if name.iter().any(|&b| b <= b' ' || b > b'~') {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    *lock(&ctx.conn.client.name) = name.to_vec();
    Ok(())
}

/// One line of CLIENT LIST / CLIENT INFO.
fn describe(c: &crate::resp::server::Client) -> String {
    let lib = lock(&c.lib);
    format!(
        "id={} addr={} laddr= fd=0 name={} age={} idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={} user=default redir=-1 resp=2 lib-name={} lib-ver={}\n",
        c.id,
        c.addr,
        String::from_utf8_lossy(&lock(&c.name)),
        c.created.elapsed().as_secs(),
        lock(&c.last_command),
        lib.0,
        lib.1,
    )
}

/// CLIENT SETNAME/GETNAME/ID/INFO/LIST/SETINFO/KILL/NO-EVICT/NO-TOUCH/REPLY/HELP.
fn client(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let sub = a[1].to_ascii_uppercase();
    match (sub.as_slice(), a.len()) {
        (b"SETNAME", 3) => {
            set_name(ctx, a[2])?;
            ctx.conn.reply.ok();
        }
        (b"GETNAME", 2) => {
            let name = lock(&ctx.conn.client.name).clone();
            if name.is_empty() {
                ctx.conn.reply.null();
            } else {
                ctx.conn.reply.bulk(&name);
            }
        }
        (b"ID", 2) => ctx.conn.reply.int(ctx.conn.client.id as i64),
        (b"INFO", 2) => {
            let line = describe(&ctx.conn.client);
            ctx.conn.reply.text(&line);
        }
        (b"LIST", _) => {
            let mut clients: Vec<_> = ctx.server.clients().values().cloned().collect();
            clients.sort_by_key(|c| c.id);
            let text: String = clients.iter().map(|c| describe(c)).collect();
            ctx.conn.reply.text(&text);
        }
        (b"SETINFO", 4) => {
            let value = String::from_utf8_lossy(a[3]).into_owned();
            if value.chars().any(|c| c <= ' ' || c > '~') {
                return Err(err(
                    "ERR lib-name and lib-ver cannot contain spaces, newlines or special characters.",
                ));
            }
            let mut lib = lock(&ctx.conn.client.lib);
            match a[2].to_ascii_uppercase().as_slice() {
                b"LIB-NAME" => lib.0 = value,
                b"LIB-VER" => lib.1 = value,
                _ => {
                    return Err(err(format!(
                        "ERR Unrecognized option '{}'",
                        String::from_utf8_lossy(a[2])
                    )));
                }
            }
            drop(lib);
            ctx.conn.reply.ok();
        }
        (b"KILL", _) => kill(ctx, a)?,
        (b"NO-EVICT" | b"NO-TOUCH", 3) => ctx.conn.reply.ok(),
        (b"HELP", 2) => {
            let lines = [
                "CLIENT <subcommand>",
                "ID",
                "INFO",
                "LIST",
                "GETNAME",
                "SETNAME <name>",
                "SETINFO <LIB-NAME|LIB-VER> <value>",
                "KILL <ip:port> | KILL ID <id> | KILL ADDR <ip:port>",
            ];
            ctx.conn.reply.array(lines.len());
            for l in lines {
                ctx.conn.reply.simple(l);
            }
        }
        _ => return Err(unknown_subcommand("client", a[1])),
    }
    Ok(())
}

/// CLIENT KILL addr | KILL ID id | KILL ADDR addr [...]: the old form answers OK, the new
/// one how many it stopped.
fn kill(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let matches =
        |c: &crate::resp::server::Client, field: &[u8], value: &[u8]| -> Result<bool, Fail> {
            Ok(match field.to_ascii_uppercase().as_slice() {
                b"ID" => Some(c.id as i64) == super::text::parse_int(value),
                b"ADDR" => c.addr.as_bytes() == value,
                b"SKIPME" => true,
                _ => return Err(syntax()),
            })
        };
    let clients: Vec<_> = ctx.server.clients().values().cloned().collect();
    let old_form = a.len() == 3;
    let mut killed = 0;
    for c in clients {
        let hit = if old_form {
            c.addr.as_bytes() == a[2]
        } else {
            let mut all = true;
            for pair in a[2..].chunks(2) {
                let [field, value] = pair else {
                    return Err(syntax());
                };
                all &= matches(&c, field, value)?;
            }
            all
        };
        if hit {
            c.killed.store(true, Ordering::Relaxed);
            c.kill.notify_one();
            killed += 1;
        }
    }
    if old_form {
        if killed == 0 {
            return Err(err("ERR No such client"));
        }
        ctx.conn.reply.ok();
    } else {
        ctx.conn.reply.int(killed);
    }
    Ok(())
}
