//! The command line: options anywhere, the command and its arguments in order, `--`
//! ending the options (for a key that starts with a dash).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use super::quote::{quoted, unquote};

pub const USAGE: &str = "\
usage: ephpm [options] COMMAND [ARGS]

Looks inside and manages this host's ephpm stores.

commands:
  stores              every ephpm segment of the host (as root: every user's; else
                      yours): owner, name, kind, size, in use, entries
  stats               the store's counters (as Ephpm\\Kv::stats())
  keys [PREFIX]       the keys (starting with PREFIX), with TTL and size
  get KEY             the value at KEY (PHP arrays and objects as var_export() shows them)
  ttl KEY             the seconds KEY has left, or \"none\" when it never expires
  set KEY VALUE       stores the string VALUE at KEY (--ttl for a lifetime)
  del KEY             deletes KEY
  locks               the locks held now: name, remaining TTL, fencing number
  flush [PREFIX]      deletes every key (starting with PREFIX); asks first
  rm-store NAME       removes the store NAME's segment; refused while a process maps it
  deploy              raises the store's release number: every PHP worker with
                      ephpm.deploys on clears its stat and realpath caches at its next
                      request, and the first of each php-fpm master invalidates OPcache
  cluster             the cluster's members as this host's node sees them: state
                      (alive, suspect, dead), last heard, share of keys owned, copies
                      pending and dropped, clock skew, data-plane version; and what the
                      node refused, by cause (of --dsn, default cluster://STORE)

options:
  --store NAME        the host store (as ephpm.store_name); default: default
  --dsn DSN           another store instead: redis://..., cluster://..., shm://NAME
  --user USER         (root) act on USER's store, as USER
  --shm-dir DIR       where the users' directories are (as ephpm.shm_dir); default /dev/shm
  --limit N           keys and locks show at most N keys (default 1000)
  --ttl SECONDS       set: the key's lifetime (default: none)
  --yes, -y           flush without asking (needed when stdin is not a terminal)
  --json              one JSON document on stdout
  --help, -h          this text
  --version, -V       the version

Keys, prefixes and values are bytes. One written in double quotes is read as the
output shows such bytes: \\\" \\\\ \\a \\b \\t \\n \\v \\f \\r, \\ooo (octal) and \\xHH,
so that a key with NUL or control bytes that is printed as \"tag\\000x\" is addressed
as '\"tag\\000x\"' (in single quotes for the shell).

exit codes: 0 done, 1 it failed (no such store or key, in use, refused), 2 a usage error
";

#[derive(Debug, PartialEq)]
pub enum Command {
    Stores,
    Stats,
    /// Keys and prefixes are bytes, as given: a key that is not UTF-8 is still that key.
    Keys(Vec<u8>),
    Get(Vec<u8>),
    Ttl(Vec<u8>),
    Set(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
    Locks,
    Flush(Vec<u8>),
    RmStore(String),
    Cluster,
    Deploy,
}

#[derive(Debug)]
pub struct Opts {
    pub command: Command,
    pub store: String,
    pub dsn: Option<String>,
    pub user: Option<String>,
    pub shm_dir: String,
    pub limit: usize,
    /// `set`'s lifetime, in seconds.
    pub ttl: Option<f64>,
    pub yes: bool,
    pub json: bool,
}

/// What the command line asks for.
pub enum Parsed {
    Run(Opts),
    Help,
    Version,
}

/// Parses the arguments as the bytes they are (`args_os`): a key need not be UTF-8, and
/// an argument that is not is never a panic.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Parsed, String> {
    let mut store = "default".to_string();
    let (mut dsn, mut user) = (None, None);
    let mut shm_dir = "/dev/shm".to_string();
    let (mut limit, mut yes, mut json) = (1000, false, false);
    let mut ttl = None;
    let mut words = Vec::new();
    let mut args = args.into_iter().map(OsString::into_vec);
    let mut options_done = false;
    while let Some(arg) = args.next() {
        if options_done || !arg.starts_with(b"-") || arg == b"-" {
            words.push(arg);
            continue;
        }
        match arg.as_slice() {
            b"--" => options_done = true,
            b"--help" | b"-h" => return Ok(Parsed::Help),
            b"--version" | b"-V" => return Ok(Parsed::Version),
            b"--yes" | b"-y" => yes = true,
            b"--json" => json = true,
            b"--store" | b"--dsn" | b"--user" | b"--shm-dir" | b"--limit" | b"--ttl" => {
                let name = String::from_utf8_lossy(&arg).into_owned();
                let value = args.next().ok_or(format!("{name} needs a value"))?;
                let value = text(&name, value)?;
                match name.as_str() {
                    "--store" => store = value,
                    "--dsn" => dsn = Some(value),
                    "--user" => user = Some(value),
                    "--shm-dir" => shm_dir = value,
                    "--ttl" => {
                        ttl = Some(
                            value
                                .parse::<f64>()
                                .ok()
                                .filter(|&t| t > 0.0 && t <= 1e9)
                                .ok_or("--ttl takes seconds, more than 0 and at most 1000000000")?,
                        )
                    }
                    _ => {
                        limit = value
                            .parse()
                            .ok()
                            .filter(|&n| n > 0)
                            .ok_or("--limit takes a number of keys, at least 1")?
                    }
                }
            }
            _ => return Err(format!("unknown option {}", quoted(&arg))),
        }
    }
    let mut words = words.into_iter();
    let Some(name) = words.next() else {
        return Err("no command given".into());
    };
    let command = command(&name, words.collect())?;
    Ok(Parsed::Run(Opts {
        command,
        store,
        dsn,
        user,
        shm_dir,
        limit,
        ttl,
        yes,
        json,
    }))
}

/// An option's value that must be text (a store name, a DSN, a user, a directory).
fn text(option: &str, value: Vec<u8>) -> Result<String, String> {
    String::from_utf8(value)
        .map_err(|e| format!("{option} takes UTF-8 text, not {}", quoted(e.as_bytes())))
}

fn command(name: &[u8], mut rest: Vec<Vec<u8>>) -> Result<Command, String> {
    let (min, max) = match name {
        b"stores" | b"stats" | b"locks" | b"cluster" | b"deploy" => (0, 0),
        b"keys" | b"flush" => (0, 1),
        b"get" | b"ttl" | b"del" | b"rm-store" => (1, 1),
        b"set" => (2, 2),
        _ => return Err(format!("unknown command {}", quoted(name))),
    };
    let shown = quoted(name);
    if rest.len() < min {
        return Err(format!("{shown} needs an argument"));
    }
    if rest.len() > max {
        return Err(format!(
            "{shown}: unexpected argument {}",
            quoted(&rest[max])
        ));
    }
    if name == b"rm-store" {
        return Ok(Command::RmStore(text(
            "rm-store",
            rest.pop().unwrap_or_default(),
        )?));
    }
    // Keys, prefixes and values may be written quoted (see `quote::unquote`).
    let mut rest = rest
        .iter()
        .map(|a| unquote(a))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter();
    let mut arg = || rest.next().unwrap_or_default();
    Ok(match name {
        b"stores" => Command::Stores,
        b"stats" => Command::Stats,
        b"locks" => Command::Locks,
        b"cluster" => Command::Cluster,
        b"deploy" => Command::Deploy,
        b"keys" => Command::Keys(arg()),
        b"flush" => Command::Flush(arg()),
        b"get" => Command::Get(arg()),
        b"ttl" => Command::Ttl(arg()),
        b"set" => {
            let key = arg();
            Command::Set(key, arg())
        }
        _ => Command::Del(arg()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_bytes(args: &[&[u8]]) -> Result<Opts, String> {
        match parse(args.iter().map(|a| OsString::from_vec(a.to_vec())))? {
            Parsed::Run(o) => Ok(o),
            _ => Err("not a run".into()),
        }
    }

    fn run(line: &str) -> Result<Opts, String> {
        let words: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        run_bytes(&words)
    }

    #[test]
    fn options_go_anywhere_and_dashes_end_them() {
        let o = run("keys --json user: --limit 5").expect("parses");
        assert_eq!(
            (o.command, o.json, o.limit),
            (Command::Keys(b"user:".to_vec()), true, 5)
        );
        let o = run("get -- -odd").expect("parses");
        assert_eq!(o.command, Command::Get(b"-odd".to_vec()));
        let o = run("--json cluster").expect("parses");
        assert_eq!((o.command, o.json), (Command::Cluster, true));
        assert!(run("cluster x").is_err());
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(run("get").err().as_deref(), Some("get needs an argument"));
        assert_eq!(
            run("stats x").err().as_deref(),
            Some("stats: unexpected argument x")
        );
        assert_eq!(run("frob").err().as_deref(), Some("unknown command frob"));
        assert_eq!(
            run("stats --store").err().as_deref(),
            Some("--store needs a value")
        );
        assert!(run("keys --limit 0").is_err());
        assert!(run("").is_err());
    }

    #[test]
    fn arguments_are_bytes_and_never_a_panic() {
        let o = run_bytes(&[b"get", b"bin\xff\xfe"]).expect("parses");
        assert_eq!(o.command, Command::Get(b"bin\xff\xfe".to_vec()));
        assert_eq!(
            run_bytes(&[b"--store", b"x\xff"]).err().as_deref(),
            Some(r#"--store takes UTF-8 text, not "x\377""#)
        );
        assert_eq!(
            run_bytes(&[b"--\x1b[2J"]).err().as_deref(),
            Some(r#"unknown option "--\033[2J""#)
        );
        assert!(run_bytes(&[b"rm-store", b"\xff"]).is_err());
    }

    #[test]
    fn keys_and_values_in_quotes_are_read_with_their_escapes() {
        let o = run_bytes(&[b"get", br#""tag\000\x01:x""#]).expect("parses");
        assert_eq!(o.command, Command::Get(b"tag\0\x01:x".to_vec()));
        let o = run_bytes(&[b"set", b"--ttl", b"1.5", br#""a\tb""#, b"v"]).expect("parses");
        assert_eq!(
            (o.command, o.ttl),
            (Command::Set(b"a\tb".to_vec(), b"v".to_vec()), Some(1.5))
        );
        assert_eq!(
            run_bytes(&[b"del", br#""\q""#]).err().as_deref(),
            Some(r#""\"\\q\"": unknown escape (\" \\ \a \b \t \n \v \f \r \ooo \xHH)"#)
        );
        assert!(run("set k").is_err());
        assert!(run("set --ttl 0 k v").is_err());
        assert!(run("ttl").is_err());
    }
}
