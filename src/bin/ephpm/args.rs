//! The command line (clap): options anywhere, the command and its arguments in order,
//! `--` ending the options (for a key that starts with a dash). Keys, prefixes and
//! values are taken as the bytes they are (`args_os`), and may be written quoted
//! (`quote::unquote`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::{Parser, Subcommand};

use super::quote::unquote;

const AFTER_HELP: &str = "\
Keys, prefixes and values are bytes. One written in double quotes is read as the
output shows such bytes: \\\" \\\\ \\a \\b \\t \\n \\v \\f \\r, \\ooo (octal) and \\xHH,
so that a key with NUL or control bytes that is printed as \"tag\\000x\" is addressed
as '\"tag\\000x\"' (in single quotes for the shell).

exit codes: 0 done, 1 it failed (no such store or key, in use, refused), 2 a usage error";

/// Looks inside and manages this host's ephpm stores.
#[derive(Debug, Parser)]
#[command(name = "ephpm", version, after_help = AFTER_HELP, subcommand_required = true,
          arg_required_else_help = true)]
pub struct Opts {
    #[command(subcommand)]
    pub command: Command,
    /// The host store (as ephpm.store_name)
    #[arg(long, global = true, value_name = "NAME", default_value = "default")]
    pub store: String,
    /// Another store instead: redis://..., cluster://..., shm://NAME
    #[arg(long, global = true, value_name = "DSN")]
    pub dsn: Option<String>,
    /// As root: act on USER's store, as USER
    #[arg(long, global = true, value_name = "USER")]
    pub user: Option<String>,
    /// Where the users' directories are (as ephpm.shm_dir)
    #[arg(long, global = true, value_name = "DIR", default_value = "/dev/shm")]
    pub shm_dir: String,
    /// At most N keys shown by keys and locks
    #[arg(long, global = true, value_name = "N", default_value_t = 1000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub limit: usize,
    /// The lifetime set gives the key, in seconds [default: none]
    #[arg(long, global = true, value_name = "SECONDS", value_parser = seconds)]
    pub ttl: Option<f64>,
    /// Flush without asking (needed when stdin is not a terminal)
    #[arg(long, short = 'y', global = true)]
    pub yes: bool,
    /// One JSON document on stdout
    #[arg(long, global = true)]
    pub json: bool,
}

/// Bytes as given, or as a quoted argument names them.
type Bytes = Vec<u8>;

#[derive(Debug, PartialEq, Subcommand)]
pub enum Command {
    /// Every ephpm segment of the host (as root: every user's; else yours): owner,
    /// name, kind, size, in use, entries
    Stores,
    /// The store's counters (as Ephpm\Kv::stats())
    Stats,
    /// The keys (starting with PREFIX), with TTL and size
    Keys {
        #[arg(value_parser = bytes(), default_value = "")]
        prefix: Bytes,
    },
    /// The value at KEY (PHP arrays and objects as var_export() shows them)
    Get {
        #[arg(value_parser = bytes())]
        key: Bytes,
    },
    /// The seconds KEY has left, or "none" when it never expires
    Ttl {
        #[arg(value_parser = bytes())]
        key: Bytes,
    },
    /// Stores the string VALUE at KEY (--ttl for a lifetime)
    Set {
        #[arg(value_parser = bytes())]
        key: Bytes,
        #[arg(value_parser = bytes())]
        value: Bytes,
    },
    /// Deletes KEY
    Del {
        #[arg(value_parser = bytes())]
        key: Bytes,
    },
    /// The locks held now: name, remaining TTL, fencing number
    Locks,
    /// Deletes every key (starting with PREFIX); asks first
    Flush {
        #[arg(value_parser = bytes(), default_value = "")]
        prefix: Bytes,
    },
    /// Removes the store NAME's segment; refused while a process maps it
    RmStore { name: String },
    /// Raises the store's release number: every PHP worker with ephpm.deploys on clears
    /// its stat and realpath caches at its next request, and the first of each php-fpm
    /// master invalidates OPcache
    Deploy,
    /// The cluster's members as this host's node sees them: state (alive, suspect,
    /// dead), last heard, share of keys owned, copies pending and dropped, clock skew,
    /// data-plane version; and what the node refused, by cause (of --dsn, default
    /// cluster://STORE)
    Cluster,
}

/// A key, prefix or value argument: its bytes (never text: a key need not be UTF-8),
/// unquoted.
fn bytes() -> impl TypedValueParser<Value = Bytes> {
    OsStringValueParser::new().try_map(|a: OsString| unquote(&a.into_vec()))
}

/// `--ttl`: seconds, more than 0 and at most 10⁹.
fn seconds(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|&t| t > 0.0 && t <= 1e9)
        .ok_or_else(|| "seconds, more than 0 and at most 1000000000".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_bytes(args: &[&[u8]]) -> Result<Opts, String> {
        let line = std::iter::once(OsString::from("ephpm"))
            .chain(args.iter().map(|a| OsString::from_vec(a.to_vec())));
        Opts::try_parse_from(line).map_err(|e| e.to_string())
    }

    fn run(line: &str) -> Result<Opts, String> {
        let words: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        run_bytes(&words)
    }

    fn says(line: &str) -> String {
        run(line).err().unwrap_or_default()
    }

    #[test]
    fn options_go_anywhere_and_dashes_end_them() {
        let o = run("keys --json user: --limit 5").expect("parses");
        assert_eq!(
            (o.command, o.json, o.limit),
            (
                Command::Keys {
                    prefix: b"user:".to_vec()
                },
                true,
                5
            )
        );
        let o = run("get -- -odd").expect("parses");
        assert_eq!(
            o.command,
            Command::Get {
                key: b"-odd".to_vec()
            }
        );
        let o = run("--json cluster").expect("parses");
        assert_eq!((o.command, o.json), (Command::Cluster, true));
        assert!(run("cluster x").is_err());
        assert_eq!(
            run("keys").expect("parses").command,
            Command::Keys { prefix: vec![] }
        );
    }

    #[test]
    fn mistakes_are_named() {
        assert!(says("get").contains("<KEY>"), "{}", says("get"));
        assert!(says("stats x").contains("unexpected argument 'x'"));
        assert!(says("frob").contains("unrecognized subcommand 'frob'"));
        assert!(says("stats --store").contains("a value is required for '--store <NAME>'"));
        assert!(says("keys --limit 0").contains("invalid value '0' for '--limit <N>'"));
        assert!(run("").is_err());
    }

    #[test]
    fn arguments_are_bytes_and_never_a_panic() {
        let o = run_bytes(&[b"get", b"bin\xff\xfe"]).expect("parses");
        assert_eq!(
            o.command,
            Command::Get {
                key: b"bin\xff\xfe".to_vec()
            }
        );
        assert!(run_bytes(&[b"stats", b"--store", b"x\xff"]).is_err());
        assert!(run_bytes(&[b"--\x1b[2J"]).is_err());
        assert!(run_bytes(&[b"rm-store", b"\xff"]).is_err());
    }

    #[test]
    fn keys_and_values_in_quotes_are_read_with_their_escapes() {
        let o = run_bytes(&[b"get", br#""tag\000\x01:x""#]).expect("parses");
        assert_eq!(
            o.command,
            Command::Get {
                key: b"tag\0\x01:x".to_vec()
            }
        );
        let o = run_bytes(&[b"set", b"--ttl", b"1.5", br#""a\tb""#, b"v"]).expect("parses");
        assert_eq!(
            (o.command, o.ttl),
            (
                Command::Set {
                    key: b"a\tb".to_vec(),
                    value: b"v".to_vec()
                },
                Some(1.5)
            )
        );
        assert!(
            run_bytes(&[b"del", br#""\q""#])
                .err()
                .unwrap_or_default()
                .contains(r#"unknown escape (\" \\ \a \b \t \n \v \f \r \ooo \xHH)"#)
        );
        assert!(run("set k").is_err());
        assert!(run("set --ttl 0 k v").is_err());
        assert!(run("ttl").is_err());
    }
}
