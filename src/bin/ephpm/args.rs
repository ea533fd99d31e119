//! The command line: options anywhere, the command and its arguments in order, `--`
//! ending the options (for a key that starts with a dash).

pub const USAGE: &str = "\
usage: ephpm [options] COMMAND [ARGS]

Looks inside and manages this host's ephpm stores.

commands:
  stores              every ephpm segment of the host (as root: every user's; else
                      yours): owner, name, kind, size, in use, entries
  stats               the store's counters (as Ephpm\\Kv::stats())
  keys [PREFIX]       the keys (starting with PREFIX), with TTL and size
  get KEY             the value at KEY
  del KEY             deletes KEY
  locks               the locks held now: name, remaining TTL, fencing number
  flush [PREFIX]      deletes every key (starting with PREFIX); asks first
  rm-store NAME       removes the store NAME's segment; refused while a process maps it

options:
  --store NAME        the host store (as ephpm.store_name); default: default
  --dsn DSN           another store instead: redis://..., cluster://..., shm://NAME
  --user USER         (root) act on USER's store, as USER
  --shm-dir DIR       where the users' directories are (as ephpm.shm_dir); default /dev/shm
  --limit N           keys and locks show at most N keys (default 1000)
  --yes, -y           flush without asking (needed when stdin is not a terminal)
  --json              one JSON document on stdout
  --help, -h          this text
  --version, -V       the version

exit codes: 0 done, 1 it failed (no such store or key, in use, refused), 2 a usage error
";

#[derive(Debug, PartialEq)]
pub enum Command {
    Stores,
    Stats,
    Keys(String),
    Get(String),
    Del(String),
    Locks,
    Flush(String),
    RmStore(String),
}

#[derive(Debug)]
pub struct Opts {
    pub command: Command,
    pub store: String,
    pub dsn: Option<String>,
    pub user: Option<String>,
    pub shm_dir: String,
    pub limit: usize,
    pub yes: bool,
    pub json: bool,
}

/// What the command line asks for.
pub enum Parsed {
    Run(Opts),
    Help,
    Version,
}

pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
    let mut store = "default".to_string();
    let (mut dsn, mut user) = (None, None);
    let mut shm_dir = "/dev/shm".to_string();
    let (mut limit, mut yes, mut json) = (1000, false, false);
    let mut words = Vec::new();
    let mut args = args.into_iter();
    let mut options_done = false;
    while let Some(arg) = args.next() {
        if options_done || !arg.starts_with('-') || arg == "-" {
            words.push(arg);
            continue;
        }
        match arg.as_str() {
            "--" => options_done = true,
            "--help" | "-h" => return Ok(Parsed::Help),
            "--version" | "-V" => return Ok(Parsed::Version),
            "--yes" | "-y" => yes = true,
            "--json" => json = true,
            "--store" | "--dsn" | "--user" | "--shm-dir" | "--limit" => {
                let value = args.next().ok_or(format!("{arg} needs a value"))?;
                match arg.as_str() {
                    "--store" => store = value,
                    "--dsn" => dsn = Some(value),
                    "--user" => user = Some(value),
                    "--shm-dir" => shm_dir = value,
                    _ => {
                        limit = value
                            .parse()
                            .ok()
                            .filter(|&n| n > 0)
                            .ok_or("--limit takes a number of keys, at least 1")?
                    }
                }
            }
            _ => return Err(format!("unknown option {arg}")),
        }
    }
    let mut words = words.into_iter();
    let Some(name) = words.next() else {
        return Err("no command given".into());
    };
    let rest: Vec<String> = words.collect();
    let command = command(&name, rest)?;
    Ok(Parsed::Run(Opts {
        command,
        store,
        dsn,
        user,
        shm_dir,
        limit,
        yes,
        json,
    }))
}

fn command(name: &str, mut rest: Vec<String>) -> Result<Command, String> {
    let (min, max) = match name {
        "stores" | "stats" | "locks" => (0, 0),
        "keys" | "flush" => (0, 1),
        "get" | "del" | "rm-store" => (1, 1),
        _ => return Err(format!("unknown command {name}")),
    };
    if rest.len() < min {
        return Err(format!("{name} needs an argument"));
    }
    if rest.len() > max {
        return Err(format!("{name}: unexpected argument {}", rest[max]));
    }
    let arg = rest.pop().unwrap_or_default();
    Ok(match name {
        "stores" => Command::Stores,
        "stats" => Command::Stats,
        "locks" => Command::Locks,
        "keys" => Command::Keys(arg),
        "flush" => Command::Flush(arg),
        "get" => Command::Get(arg),
        "del" => Command::Del(arg),
        _ => Command::RmStore(arg),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Result<Opts, String> {
        match parse(line.split_whitespace().map(String::from))? {
            Parsed::Run(o) => Ok(o),
            _ => Err("not a run".into()),
        }
    }

    #[test]
    fn options_go_anywhere_and_dashes_end_them() {
        let o = run("keys --json user: --limit 5").expect("parses");
        assert_eq!(
            (o.command, o.json, o.limit),
            (Command::Keys("user:".into()), true, 5)
        );
        let o = run("get -- -odd").expect("parses");
        assert_eq!(o.command, Command::Get("-odd".into()));
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
}
