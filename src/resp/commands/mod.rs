//! The command table and the one path every request takes: look the command up, check
//! its arity, authentication, pub/sub mode and MULTI, take the server's lock the
//! command needs, run it, and turn a failure into the error reply Redis would give.

mod connection;
mod info;
mod keys;
mod locks;
mod multi;
mod pubsub;
mod strings;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use super::lock;
use super::reply::Proto;
use super::server::Server;
use super::state::Conn;
use super::text;
use crate::store::StoreError;

bitflags::bitflags! {
    /// What a command may do besides its arity says.
    #[derive(Clone, Copy)]
    pub struct Flags: u8 {
        /// It may run before AUTH.
        const NOAUTH = 1;
        /// It writes (COMMAND INFO's "write"; otherwise "readonly" for key commands).
        const WRITE = 2;
        /// A RESP2 client in subscribed mode may send it.
        const PUBSUB = 4;
        /// Inside MULTI it runs at once instead of being queued (EXEC, DISCARD, WATCH…).
        const NOQUEUE = 8;
    }
}

/// Which of the server's locks a command holds while it runs.
#[derive(Clone, Copy)]
pub enum Hold {
    /// Alongside other commands.
    Shared,
    /// Alone among this server's commands: it reads, decides and writes.
    Alone,
    /// Alone when the function says so of its arguments (SET with XX, GET or KEEPTTL).
    AloneIf(fn(&[&[u8]]) -> bool),
}

pub struct Spec {
    /// Lowercase, as COMMAND shows it.
    pub name: &'static str,
    /// Redis' convention: n exactly, -n at least n (the name counted).
    pub arity: i32,
    pub flags: Flags,
    pub hold: Hold,
    /// Key positions for COMMAND (first, last: -1 the last argument, step).
    pub keys: (i32, i32, i32),
    pub run: Run,
}

/// A command on no key that runs alongside others (connection, server, pub/sub commands).
pub const fn plain(name: &'static str, arity: i32, flags: Flags, run: Run) -> Spec {
    Spec {
        name,
        arity,
        flags,
        hold: Hold::Shared,
        keys: (0, 0, 0),
        run,
    }
}

/// A command on the key its first argument names.
pub const fn on_key(name: &'static str, arity: i32, flags: Flags, hold: Hold, run: Run) -> Spec {
    Spec {
        name,
        arity,
        flags,
        hold,
        keys: (1, 1, 1),
        run,
    }
}

/// What runs a command.
pub type Run = fn(&mut Ctx, &[&[u8]]) -> Done;

/// A command's outcome: it wrote its reply, or it failed with this.
pub type Done = Result<(), Fail>;

#[derive(Debug)]
pub enum Fail {
    /// An error reply, its code first ("ERR …").
    Reply(String),
    Store(StoreError),
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        Fail::Store(e)
    }
}

pub fn err(text: impl Into<String>) -> Fail {
    Fail::Reply(text.into())
}

pub fn syntax() -> Fail {
    err("ERR syntax error")
}

pub fn not_an_integer() -> Fail {
    err("ERR value is not an integer or out of range")
}

/// What a command runs with.
pub struct Ctx<'a> {
    pub server: &'a Server,
    pub conn: &'a mut Conn,
}

/// An argument as a 64-bit integer.
pub fn int(arg: &[u8]) -> Result<i64, Fail> {
    text::parse_int(arg).ok_or_else(not_an_integer)
}

/// An argument as a positive count of seconds or milliseconds, as a TTL: by Redis'
/// rule, one that would end past i64::MAX milliseconds since the epoch is invalid.
pub fn positive_ttl(arg: &[u8], unit_ms: u64, command: &str) -> Result<Duration, Fail> {
    let invalid = || err(format!("ERR invalid expire time in '{command}' command"));
    let n = int(arg)?;
    if n <= 0 {
        return Err(invalid());
    }
    let ms = n.checked_mul(unit_ms as i64).ok_or_else(invalid)?;
    ms.checked_add(strings::now_ms()).ok_or_else(invalid)?;
    Ok(Duration::from_millis(ms as u64))
}

/// A command and its counters (INFO commandstats).
pub struct Entry {
    pub spec: &'static Spec,
    pub calls: AtomicU64,
    /// Ran and answered an error.
    pub failed: AtomicU64,
    /// Not run: wrong arity, not logged in, not allowed in this mode.
    pub rejected: AtomicU64,
}

fn table() -> &'static HashMap<&'static str, Entry> {
    static TABLE: OnceLock<HashMap<&'static str, Entry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        [
            strings::COMMANDS,
            keys::COMMANDS,
            connection::COMMANDS,
            info::COMMANDS,
            pubsub::COMMANDS,
            multi::COMMANDS,
            locks::COMMANDS,
        ]
        .into_iter()
        .flatten()
        .map(|spec| {
            let entry = Entry {
                spec,
                calls: AtomicU64::new(0),
                failed: AtomicU64::new(0),
                rejected: AtomicU64::new(0),
            };
            (spec.name, entry)
        })
        .collect()
    })
}

/// Every command, for COMMAND and INFO commandstats.
pub fn all() -> impl Iterator<Item = &'static Entry> {
    table().values()
}

/// The command a request names, its name in any case.
pub fn lookup(name: &[u8]) -> Option<&'static Entry> {
    let mut lower = [0u8; 24];
    let lower = lower.get_mut(..name.len())?;
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    table().get(std::str::from_utf8(lower).ok()?)
}

/// The arity rule of `spec` allows `n` words.
fn arity_ok(spec: &Spec, n: usize) -> bool {
    let n = n as i32;
    if spec.arity >= 0 {
        n == spec.arity
    } else {
        n >= -spec.arity
    }
}

/// Answers one request.
pub fn run(server: &Server, conn: &mut Conn, args: &[&[u8]]) {
    use std::sync::atomic::Ordering::Relaxed;
    conn.client.commands.fetch_add(1, Relaxed);
    let Some(entry) = lookup(args[0]) else {
        let shown: Vec<String> = args[1..]
            .iter()
            .take(8)
            .map(|a| format!("'{}'", String::from_utf8_lossy(a)))
            .collect();
        refuse(
            conn,
            &format!(
                "ERR unknown command '{}', with args beginning with: {}",
                String::from_utf8_lossy(args[0]),
                shown.join(" ")
            ),
        );
        return;
    };
    let spec = entry.spec;
    if !conn.authed && !spec.flags.contains(Flags::NOAUTH) && !crate::fault::on("resp-unguarded") {
        entry.rejected.fetch_add(1, Relaxed);
        conn.reply.error("NOAUTH Authentication required.");
        return;
    }
    if !arity_ok(spec, args.len()) {
        entry.rejected.fetch_add(1, Relaxed);
        let msg = format!("ERR wrong number of arguments for '{}' command", spec.name);
        refuse(conn, &msg);
        return;
    }
    if conn.subscribed() && conn.reply.proto == Proto::Resp2 && !spec.flags.contains(Flags::PUBSUB)
    {
        entry.rejected.fetch_add(1, Relaxed);
        conn.reply.error(&format!(
            "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
            spec.name
        ));
        return;
    }
    if let (Some(queue), false) = (conn.multi.as_mut(), spec.flags.contains(Flags::NOQUEUE)) {
        queue.push(args.iter().map(|a| a.to_vec()).collect());
        conn.reply.simple("QUEUED");
        return;
    }
    *lock(&conn.client.last_command) = spec.name;
    let alone = match spec.hold {
        Hold::Shared => false,
        Hold::Alone => true,
        Hold::AloneIf(f) => f(args),
    };
    let mut ctx = Ctx { server, conn };
    if alone {
        let _g = server.alone();
        execute(&mut ctx, entry, args);
    } else {
        let _g = server.shared();
        execute(&mut ctx, entry, args);
    }
}

/// Runs a command whose checks passed, under the lock its caller holds (EXEC runs its
/// queue through here, holding the server alone).
pub fn execute(ctx: &mut Ctx, entry: &Entry, args: &[&[u8]]) {
    use std::sync::atomic::Ordering::Relaxed;
    entry.calls.fetch_add(1, Relaxed);
    let mark = ctx.conn.reply.out.len();
    if let Err(f) = (entry.spec.run)(ctx, args) {
        entry.failed.fetch_add(1, Relaxed);
        // A command that failed part-way must not leave half a reply behind.
        ctx.conn.reply.out.truncate(mark);
        let text = match f {
            Fail::Reply(text) => text,
            Fail::Store(e) => store_error(&e),
        };
        ctx.conn.reply.error(&text);
    }
}

/// A store error as a Redis client expects to read it.
fn store_error(e: &StoreError) -> String {
    match e {
        StoreError::NotAnInteger => "ERR value is not an integer or out of range".into(),
        StoreError::Overflow => "ERR increment or decrement would overflow".into(),
        StoreError::Full { .. } => format!("OOM {e}"),
        _ => format!("ERR {e}"),
    }
}

/// An error for a request that is not run; inside MULTI it also dooms the EXEC.
fn refuse(conn: &mut Conn, text: &str) {
    if conn.multi.is_some() {
        conn.multi_refused = true;
    }
    conn.reply.error(text);
}

/// A subcommand nobody knows, in Redis' words.
pub fn unknown_subcommand(command: &str, sub: &[u8]) -> Fail {
    err(format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        String::from_utf8_lossy(sub),
        command.to_ascii_uppercase()
    ))
}
