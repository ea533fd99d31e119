//! What monitoring tools and client libraries ask the server about itself: INFO,
//! COMMAND, CONFIG GET, TIME.

use std::fmt::Write;
use std::sync::atomic::Ordering::Relaxed;

use super::{Ctx, Done, Flags, Spec, all, err, plain, unknown_subcommand};
use crate::resp::glob;
use crate::resp::server::Server;

/// The Redis version clients are told (some choose their commands by it): the one whose
/// string commands, options and replies this server gives.
pub const REDIS_VERSION: &str = "7.0.0";

pub const COMMANDS: &[Spec] = &[
    plain("info", -1, Flags::empty(), info),
    plain("command", -1, Flags::NOAUTH, command),
    plain("config", -2, Flags::empty(), config),
    plain("time", 1, Flags::empty(), time),
    plain("function", -2, Flags::empty(), function),
    plain("script", -2, Flags::empty(), script),
];

/// The INFO sections, in Redis' order; the last is only in `all` and `everything`.
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "stats",
    "replication",
    "cpu",
    "keyspace",
    "commandstats",
];

/// INFO [section…]: the named sections (any case, each once), or every one but
/// commandstats; `all` and `everything` add it. A section nobody knows shows nothing.
fn info(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let wanted: Vec<String> = a[1..]
        .iter()
        .map(|w| String::from_utf8_lossy(w).to_ascii_lowercase())
        .collect();
    let named = |w: &str| wanted.iter().any(|x| x == w);
    let all = named("all") || named("everything");
    let default = wanted.is_empty() || named("default");
    let stats = ctx.server.call(|s| s.stats())?;
    let mut out = String::new();
    for &section in SECTIONS {
        let shown = all || named(section) || (default && section != "commandstats");
        if !shown {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        if section == "keyspace" {
            let (keys, expires) = super::keys::live_keys(ctx)?;
            let _ = write!(out, "# Keyspace\r\n");
            if keys > 0 {
                let _ = write!(out, "db0:keys={keys},expires={expires},avg_ttl=0\r\n");
            }
            continue;
        }
        section_text(ctx.server, section, &stats, &mut out);
    }
    ctx.conn.reply.text(&out);
    Ok(())
}

fn section_text(server: &Server, section: &str, stats: &crate::store::Stats, out: &mut String) {
    let c = &server.counters;
    // Writing into a String cannot fail.
    let _ = match section {
        "server" => write!(
            out,
            "# Server\r\nredis_version:{REDIS_VERSION}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_mode:standalone\r\nephpm_version:{}\r\nephpm_store:{}\r\nos:{} {}\r\narch_bits:64\r\nprocess_id:{}\r\ntcp_port:0\r\nlistening:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\n",
            env!("CARGO_PKG_VERSION"),
            server.store.describe(),
            std::env::consts::OS,
            std::env::consts::ARCH,
            std::process::id(),
            server.listening.join(","),
            server.started.elapsed().as_secs(),
            server.started.elapsed().as_secs() / 86400,
        ),
        "clients" => write!(
            out,
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:0\r\n",
            server.clients().len(),
            server.settings.max_clients,
        ),
        "memory" => write!(
            out,
            "# Memory\r\nused_memory:{}\r\nused_memory_human:{}\r\nmaxmemory:{}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:allkeys-lru\r\n",
            stats.memory_used,
            human(stats.memory_used),
            stats.memory_size,
            human(stats.memory_size),
        ),
        "stats" => {
            let at = *crate::resp::lock(&c.reset_at);
            write!(
                out,
                "# Stats\r\ntotal_connections_received:{}\r\nrejected_connections:{}\r\ntotal_commands_processed:{}\r\nauth_failures:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\nevicted_keys:{}\r\nexpired_keys:{}\r\npubsub_channels:{}\r\npubsub_patterns:{}\r\n",
                c.connections_received.load(Relaxed),
                c.rejected_connections.load(Relaxed),
                server.commands_processed().saturating_sub(at.commands),
                c.auth_failures.load(Relaxed),
                stats.hits.saturating_sub(at.hits),
                stats.misses.saturating_sub(at.misses),
                stats.evictions.saturating_sub(at.evictions),
                stats.expirations.saturating_sub(at.expirations),
                server.hub.channels(None).len(),
                server.hub.numpat(),
            )
        }
        "replication" => write!(
            out,
            "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n"
        ),
        "cpu" => {
            let (user, sys) = cpu(libc::RUSAGE_SELF);
            let (cuser, csys) = cpu(libc::RUSAGE_CHILDREN);
            write!(
                out,
                "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:{csys:.6}\r\nused_cpu_user_children:{cuser:.6}\r\n"
            )
        }
        _ => {
            let _ = write!(out, "# Commandstats\r\n");
            let mut entries: Vec<_> = super::all().collect();
            entries.sort_by_key(|e| e.spec.name);
            for e in entries {
                let (calls, failed, rejected) = (
                    e.calls.load(Relaxed),
                    e.failed.load(Relaxed),
                    e.rejected.load(Relaxed),
                );
                if calls + rejected > 0 {
                    let _ = write!(
                        out,
                        "cmdstat_{}:calls={calls},usec=0,usec_per_call=0.00,rejected_calls={rejected},failed_calls={failed}\r\n",
                        e.spec.name
                    );
                }
            }
            Ok(())
        }
    };
}

/// Seconds of CPU used, (user, system), of this process or its children.
fn cpu(who: libc::c_int) -> (f64, f64) {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage that outlives the call.
    if unsafe { libc::getrusage(who, &mut u) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(u.ru_utime), secs(u.ru_stime))
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.2}G", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.2}M", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.2}K", b as f64 / 1024.0),
        b => format!("{b}B"),
    }
}

/// COMMAND [COUNT | INFO name… | DOCS [name…] | LIST]: enough for redis-cli's hints and
/// for clients that read key positions.
fn command(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let sub = a.get(1).map(|w| w.to_ascii_uppercase());
    match sub.as_deref() {
        None => {
            let specs: Vec<_> = all().map(|e| e.spec).collect();
            ctx.conn.reply.array(specs.len());
            for s in specs {
                describe(ctx, s);
            }
        }
        Some(b"COUNT") => ctx.conn.reply.int(all().count() as i64),
        Some(b"LIST") => {
            let names: Vec<_> = all().map(|e| e.spec.name).collect();
            ctx.conn.reply.array(names.len());
            for n in names {
                ctx.conn.reply.bulk(n.as_bytes());
            }
        }
        Some(b"INFO") => {
            ctx.conn.reply.array(a.len() - 2);
            for name in &a[2..] {
                match super::lookup(name) {
                    Some(e) => describe(ctx, e.spec),
                    None => ctx.conn.reply.null_array(),
                }
            }
        }
        // No documentation is served; an empty map tells redis-cli to go without hints.
        Some(b"DOCS") => ctx.conn.reply.map(0),
        Some(_) => return Err(unknown_subcommand("command", a[1])),
    }
    Ok(())
}

/// One command as COMMAND describes it: name, arity, flags, first key, last key, step.
fn describe(ctx: &mut Ctx, s: &Spec) {
    let r = &mut ctx.conn.reply;
    r.array(6);
    r.bulk(s.name.as_bytes());
    r.int(s.arity.into());
    let mut flags = vec![if s.flags.contains(Flags::WRITE) {
        "write"
    } else {
        "readonly"
    }];
    if s.flags.contains(Flags::NOAUTH) {
        flags.push("noauth");
    }
    if s.flags.contains(Flags::PUBSUB) {
        flags.push("pubsub");
    }
    r.set(flags.len());
    for f in flags {
        r.simple(f);
    }
    r.int(s.keys.0.into());
    r.int(s.keys.1.into());
    r.int(s.keys.2.into());
}

/// The settings by which Redis chooses how to encode small lists, hashes, sets, sorted
/// sets and streams: types this server does not hold, so there is nothing for them to
/// change. CONFIG SET takes them (and CONFIG GET shows what it took) instead of refusing
/// them, so that a script or test suite that tunes them around its own work goes on.
pub const ENCODINGS: &[&str] = &[
    "list-max-listpack-size",
    "list-max-ziplist-size",
    "list-compress-depth",
    "hash-max-listpack-entries",
    "hash-max-listpack-value",
    "hash-max-ziplist-entries",
    "hash-max-ziplist-value",
    "set-max-intset-entries",
    "set-max-listpack-entries",
    "set-max-listpack-value",
    "zset-max-listpack-entries",
    "zset-max-listpack-value",
    "zset-max-ziplist-entries",
    "zset-max-ziplist-value",
    "stream-node-max-bytes",
    "stream-node-max-entries",
];

/// CONFIG GET pattern… answers the settings clients probe; CONFIG RESETSTAT zeroes INFO's
/// counters (Redis' own test suite sends one before every block since Redis 7.2); CONFIG
/// SET takes only `ENCODINGS`, and it and REWRITE refuse the rest (the server's settings
/// are its command line's).
fn config(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    let sub = a[1].to_ascii_uppercase();
    match sub.as_slice() {
        b"SET" if a.len() >= 4 && a.len() % 2 == 0 => {
            let mut taken = Vec::new();
            for pair in a[2..].chunks(2) {
                let name = pair[0].to_ascii_lowercase();
                match ENCODINGS.iter().find(|e| e.as_bytes() == name.as_slice()) {
                    Some(e) => taken.push((*e, pair[1].to_vec())),
                    None => {
                        return Err(err(format!(
                            "ERR CONFIG SET {} is not supported: ephpm-resp takes its settings from its command line",
                            String::from_utf8_lossy(pair[0])
                        )));
                    }
                }
            }
            crate::resp::lock(&ctx.server.encodings).extend(taken);
            ctx.conn.reply.ok();
            Ok(())
        }
        b"GET" if a.len() > 2 => {
            let size = ctx.server.call(|s| s.stats())?.memory_size;
            let s = &ctx.server.settings;
            let encodings = crate::resp::lock(&ctx.server.encodings).clone();
            let taken = encodings
                .iter()
                .map(|(n, v)| (*n, String::from_utf8_lossy(v).into_owned()));
            let settings = [
                ("databases", "1".to_string()),
                ("maxmemory", size.to_string()),
                ("maxmemory-policy", "allkeys-lru".into()),
                ("maxclients", s.max_clients.to_string()),
                (
                    "timeout",
                    s.idle_timeout.map_or(0, |d| d.as_secs()).to_string(),
                ),
                ("proto-max-bulk-len", s.limits.max_bulk.to_string()),
                ("save", String::new()),
                ("appendonly", "no".into()),
                ("cluster-enabled", "no".into()),
            ];
            let settings: Vec<_> = settings.into_iter().chain(taken).collect();
            let found: Vec<_> = settings
                .iter()
                .filter(|(name, _)| {
                    a[2..]
                        .iter()
                        .any(|p| glob::matches(&p.to_ascii_lowercase(), name.as_bytes()))
                })
                .collect();
            ctx.conn.reply.map(found.len());
            for (name, value) in found {
                ctx.conn.reply.bulk(name.as_bytes());
                ctx.conn.reply.bulk(value.as_bytes());
            }
            Ok(())
        }
        b"RESETSTAT" if a.len() == 2 => {
            let stats = ctx.server.call(|s| s.stats())?;
            ctx.server.reset_stats(&stats);
            for e in all() {
                for n in [&e.calls, &e.failed, &e.rejected] {
                    n.store(0, Relaxed);
                }
            }
            ctx.conn.reply.ok();
            Ok(())
        }
        b"SET" | b"REWRITE" => Err(err(format!(
            "ERR CONFIG {} is not supported: ephpm-resp takes its settings from its command line",
            String::from_utf8_lossy(&sub)
        ))),
        _ => Err(unknown_subcommand("config", a[1])),
    }
}

/// FUNCTION FLUSH [ASYNC|SYNC] and FUNCTION LIST: no functions are kept here, so a
/// flush has nothing to do (Redis' own test suite sends one before every block).
fn function(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    match a[1].to_ascii_uppercase().as_slice() {
        b"FLUSH" if a.len() <= 3 => ctx.conn.reply.ok(),
        b"LIST" => ctx.conn.reply.array(0),
        _ => return Err(unknown_subcommand("function", a[1])),
    }
    Ok(())
}

/// SCRIPT FLUSH [ASYNC|SYNC]: no scripts run here (EVAL is not served), so a flush has
/// nothing to do (Redis' own test suite sends one before every block since Redis 7.2).
fn script(ctx: &mut Ctx, a: &[&[u8]]) -> Done {
    match a[1].to_ascii_uppercase().as_slice() {
        b"FLUSH" if a.len() <= 3 => ctx.conn.reply.ok(),
        _ => return Err(unknown_subcommand("script", a[1])),
    }
    Ok(())
}

fn time(ctx: &mut Ctx, _: &[&[u8]]) -> Done {
    let now = crate::ground::wall::since_epoch();
    let r = &mut ctx.conn.reply;
    r.array(2);
    r.bulk(now.as_secs().to_string().as_bytes());
    r.bulk(now.subsec_micros().to_string().as_bytes());
    Ok(())
}
