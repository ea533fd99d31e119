//! `ephpm`: the operator's view of this host's stores, in the spirit of redis-cli and
//! apc.php: which segments exist and who uses them, a store's counters, its keys and
//! held locks, a cluster's members as its node sees them, and the few changes an operator makes (delete a key, flush, remove an
//! unused store). It is the engine alone, like `ephpm-node`.
//!
//! - `args.rs`      the command line (clap; `../shared/cli.rs` ends a usage error)
//! - `commands.rs`  one function per command, each giving its text and its JSON
//! - `user.rs`      `--user`: acting as another user, as root
//! - `json.rs`      `--json`'s output
//! - `quote.rs`     bytes made safe for a terminal (every text report goes through it),
//!   and read back from an argument written the same way
//! - `php_value.rs` PHP's serialize() format read back, for `get`
//!
//! It behaves like a Unix tool: `--help` prints the usage on stdout and exits 0,
//! `--version` prints the version, a usage error prints what is wrong and the usage on
//! stderr and exits 2, a command that fails (no such store or key, a store in use, a
//! flush not confirmed) says why on stderr and exits 1.

mod args;
#[path = "../shared/cli.rs"]
mod cli;
mod commands;
mod json;
mod php_value;
mod quote;
mod user;

use std::io::Write;
use std::process::ExitCode;

use args::{Command, Opts};
use commands::Failure;
use ephpm::config::Config;

fn main() -> ExitCode {
    let opts = match cli::parse::<Opts>(quote::printable, |_| Ok(())) {
        Ok(o) => o,
        Err(code) => return code,
    };
    match run(&opts) {
        Ok(r) => {
            let mut out = std::io::stdout().lock();
            let written = if opts.json {
                writeln!(out, "{}", json::text(&r.json))
            } else {
                out.write_all(&r.text)
            };
            // A closed pipe (`ephpm keys | head`) is the reader's choice, not a failure.
            match written.and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprintln!("ephpm: {e}");
                    ExitCode::from(1)
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(Failure(why)) => {
            eprintln!("ephpm: {}", quote::printable(&why));
            ExitCode::from(1)
        }
    }
}

fn run(opts: &Opts) -> Result<commands::Report, Failure> {
    let config = Config {
        store_name: opts.store.clone(),
        shm_dir: opts.shm_dir.clone(),
        ..Config::default()
    };
    let me = ephpm::store::shm::euid();
    let target = match &opts.user {
        Some(who) => Some(
            user::lookup(who)
                .ok_or_else(|| Failure(format!("no user {}", quote::quoted(who.as_bytes()))))?,
        ),
        None => None,
    };
    if let Some(u) = &target {
        if u.uid != me && me != 0 {
            return Err(Failure(format!(
                "only root can act on another user's store ({} is not {})",
                quote::quoted(user::name_of(me).as_bytes()),
                quote::quoted(u.name.as_bytes())
            )));
        }
    }
    if opts.command == Command::Stores {
        // Root sees every user's segments, or the one user asked for; others their own.
        let uid = match (&target, me) {
            (Some(u), _) => Some(u.uid),
            (None, 0) => None,
            (None, me) => Some(me),
        };
        return commands::stores(&opts.shm_dir, uid);
    }
    if let Some(u) = target.as_ref().filter(|u| u.uid != me) {
        user::become_user(u).map_err(|e| {
            Failure(format!(
                "cannot act as {}: {e}",
                quote::quoted(u.name.as_bytes())
            ))
        })?;
    }
    if let Command::RmStore { name } = &opts.command {
        return commands::rm_store(name, &config);
    }
    // `cluster` asks the host store's node; everything else looks at the store itself.
    let scheme = match opts.command {
        Command::Cluster => "cluster",
        _ => "shm",
    };
    let dsn = opts
        .dsn
        .clone()
        .unwrap_or_else(|| format!("{scheme}://{}", opts.store));
    let store = commands::open(&dsn, &config)?;
    let s = store.as_ref();
    match &opts.command {
        Command::Stats => commands::stats(s),
        Command::Keys { prefix } => commands::keys(s, prefix, opts.limit),
        Command::Locks => commands::locks(s, opts.limit),
        Command::Get { key } => commands::get(s, key),
        Command::Ttl { key } => commands::ttl(s, key),
        Command::Set { key, value } => commands::set(s, key, value, opts.ttl),
        Command::Del { key } => commands::del(s, key),
        Command::Flush { prefix } => commands::flush(s, prefix, opts.yes),
        Command::Cluster => commands::cluster(s),
        Command::Deploy => commands::deploy(s),
        Command::Stores | Command::RmStore { .. } => unreachable!("handled above"),
    }
}
