//! `ephpm-resp`: the store served over the Redis protocol (see `ephpm::resp`), so that
//! any Redis client shares it with PHP. A Unix tool like `ephpm-node`: `--help` on
//! stdout and exit 0, a usage error on stderr and exit 2, exit 1 when it cannot serve,
//! exit 0 when stopped by SIGTERM or SIGINT.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ephpm::config::{Config, parse_size};
use ephpm::ground::dsn::{self, Dsn};
use ephpm::resp::listen::{self, Peers};
use ephpm::resp::server::{Server, Settings};

const USAGE: &str = "\
usage: ephpm-resp [options]

Serves an ephpm store over the Redis protocol (RESP2 and RESP3) until SIGTERM or SIGINT:
redis-cli -s SOCKET, or any Redis client, reads and writes what PHP processes share.

options:
  --store NAME          the host store (as ephpm.store_name); default: default
  --dsn DSN             another store: shm://NAME, or cluster://NAME through this host's
                        node (default: shm://NAME of --store)
  --socket PATH         the unix socket; default: <shm-dir>/ephpm-<uid>/NAME.resp.sock
                        (only this user's processes are admitted)
  --group GROUP         also admit the socket's peers of this group (mode 0660); the
                        socket must then be somewhere the group can reach (--socket)
  --no-socket           no unix socket (with --tcp)
  --tcp IP:PORT         also listen on TCP (every client must AUTH; needs --secret-file)
  --secret-file PATH    AUTH's password(s), one per line, at least 128 bits each
                        (openssl rand -base64 32), the file private to its owner
  --allow-insecure-no-auth
                        TCP on a loopback address without AUTH: whoever can connect to
                        it — any user of this host — uses the store (test suites that
                        cannot log in, benchmarks); refused for any other address
  --max-clients N       connections at once (default 10000)
  --timeout SECONDS     close a client idle this long (default 0: never)
  --shm-dir DIR         where the user's private directory is (default /dev/shm)
  --shm-size SIZE       the store's size when it is made (default 64M)
  --help, -h            this text
  --version, -V         the version

exit codes: 0 stopped by SIGTERM or SIGINT, 1 it cannot serve, 2 a usage error
";

fn usage_error(why: &str) -> ExitCode {
    eprintln!("ephpm-resp: {why}\n\n{USAGE}");
    ExitCode::from(2)
}

fn fail(why: &str) -> ExitCode {
    eprintln!("ephpm-resp: {why}");
    ExitCode::from(1)
}

/// The command line, checked.
struct Options {
    config: Config,
    dsn: Option<String>,
    socket: Option<PathBuf>,
    no_socket: bool,
    group: Option<String>,
    tcp: Option<String>,
    secret_file: Option<PathBuf>,
    no_auth: bool,
    settings: Settings,
}

fn parse_args() -> Result<Options, ExitCode> {
    let mut o = Options {
        config: Config::default(),
        dsn: None,
        socket: None,
        no_socket: false,
        group: None,
        tcp: None,
        secret_file: None,
        no_auth: false,
        settings: Settings::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--help" | "-h" => {
                print!("{USAGE}");
                return Err(ExitCode::SUCCESS);
            }
            "--version" | "-V" => {
                println!("ephpm-resp {}", env!("CARGO_PKG_VERSION"));
                return Err(ExitCode::SUCCESS);
            }
            "--no-socket" => {
                o.no_socket = true;
                continue;
            }
            "--allow-insecure-no-auth" => {
                o.no_auth = true;
                continue;
            }
            "--store" | "--dsn" | "--socket" | "--group" | "--tcp" | "--secret-file"
            | "--max-clients" | "--timeout" | "--shm-dir" | "--shm-size" => {}
            _ => return Err(usage_error(&format!("unknown option {flag}"))),
        }
        let Some(value) = args.next() else {
            return Err(usage_error(&format!("{flag} needs a value")));
        };
        match flag.as_str() {
            "--store" => o.config.store_name = value,
            "--dsn" => o.dsn = Some(value),
            "--socket" => o.socket = Some(value.into()),
            "--group" => o.group = Some(value),
            "--tcp" => o.tcp = Some(value),
            "--secret-file" => o.secret_file = Some(value.into()),
            "--max-clients" => match value.parse::<usize>() {
                Ok(n) if n > 0 => o.settings.max_clients = n,
                _ => return Err(usage_error("--max-clients takes a number above 0")),
            },
            "--timeout" => match value.parse::<u64>() {
                Ok(0) => o.settings.idle_timeout = None,
                Ok(n) => o.settings.idle_timeout = Some(Duration::from_secs(n)),
                Err(_) => return Err(usage_error("--timeout takes a number of seconds")),
            },
            "--shm-dir" => o.config.shm_dir = value,
            "--shm-size" => match parse_size(&value) {
                Some(n) => o.config.shm_size = n,
                None => return Err(usage_error("--shm-size takes a size such as 64M")),
            },
            _ => unreachable!("every option that takes a value is listed above"),
        }
    }
    if let Err(e) = dsn::valid_name(&o.config.store_name) {
        return Err(usage_error(&format!("--store: {e}")));
    }
    match (&o.tcp, o.secret_file.is_some(), o.no_auth) {
        (Some(_), false, false) => {
            return Err(usage_error(
                "--tcp needs --secret-file: a TCP client must AUTH (or --allow-insecure-no-auth on loopback)",
            ));
        }
        (Some(addr), false, true) if !loopback(addr) => {
            return Err(usage_error(&format!(
                "--allow-insecure-no-auth is for loopback addresses only, not {addr}"
            )));
        }
        (_, true, true) => {
            return Err(usage_error(
                "--allow-insecure-no-auth and --secret-file contradict each other",
            ));
        }
        (None, _, true) => return Err(usage_error("--allow-insecure-no-auth needs --tcp")),
        _ => {}
    }
    if o.no_socket && o.tcp.is_none() {
        return Err(usage_error(
            "--no-socket leaves nothing to listen on: give --tcp",
        ));
    }
    if o.group.is_some() && o.socket.is_none() {
        return Err(usage_error(
            "--group needs --socket: the default socket is in the user's private directory, which the group cannot reach",
        ));
    }
    Ok(o)
}

/// Whether `addr` (IP:PORT) is on a loopback address.
fn loopback(addr: &str) -> bool {
    addr.parse::<std::net::SocketAddr>()
        .is_ok_and(|a| a.ip().is_loopback())
}

/// The gid of a group name (or number).
fn group_id(name: &str) -> Option<u32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call; getgrnam returns
    // NULL or a pointer to static storage that is read before any other getgr* call.
    let g = unsafe { libc::getgrnam(c.as_ptr()) };
    // SAFETY: `g` is non-null, so it points at a valid group record (see above).
    (!g.is_null()).then(|| unsafe { (*g).gr_gid })
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(code) => return code,
    };
    let dsn = o
        .dsn
        .clone()
        .unwrap_or_else(|| format!("shm://{}", o.config.store_name));
    // A store reached over the network blocks the thread that calls it.
    let store_blocks = !matches!(dsn::parse(&dsn), Ok(Dsn::Shm { .. }));
    let (store, warnings) = match ephpm::open::open(&dsn, &o.config) {
        Ok(s) => s,
        Err(e) => return fail(&format!("the store {dsn} cannot be opened: {e}")),
    };
    for w in warnings {
        eprintln!("ephpm-resp: {w}");
    }
    let mut settings = o.settings.clone();
    if let Some(path) = &o.secret_file {
        match ephpm::cluster::secrets::read_file(path) {
            Ok(list) if !list.is_empty() => {
                for p in &list {
                    if let Err(e) = ephpm::cluster::secrets::check_strength(p) {
                        return fail(&format!(
                            "--secret-file: {}",
                            e.to_string().replace("cluster secret", "password")
                        ));
                    }
                }
                settings.passwords = list;
            }
            Ok(_) => {
                return fail(&format!(
                    "--secret-file {}: it holds no password",
                    path.display()
                ));
            }
            Err(e) => {
                // The cluster's check, in this server's words.
                let said = e
                    .to_string()
                    .replace("ephpm.cluster.secret_file", "--secret-file")
                    .replace("is a member of the cluster", "can log in to this server")
                    .replace("chooses the next secret", "chooses the next password");
                return fail(&said);
            }
        }
    }
    let peers = match &o.group {
        None => Peers::default(),
        Some(g) => match group_id(g) {
            Some(gid) => Peers { group: Some(gid) },
            None => return fail(&format!("--group {g}: no such group")),
        },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("ephpm-resp")
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start a runtime: {e}")),
    };
    let stopped = runtime.block_on(async move {
        let mut server = Server::new(store, store_blocks, settings);
        let (mut unix, mut unix_path) = (None, None);
        if !o.no_socket {
            let path = match &o.socket {
                Some(p) => p.clone(),
                None => socket_path(&o.config)?,
            };
            unix = Some(bind_unix(&path, peers.group)?);
            server.listening.push(format!("unix:{}", path.display()));
            unix_path = Some(path);
        }
        let mut tcp = None;
        if let Some(addr) = &o.tcp {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("--tcp {addr}: {e}"))?;
            let bound = l.local_addr().map_or(addr.clone(), |a| a.to_string());
            server.listening.push(format!("tcp:{bound}"));
            tcp = Some(l);
        }
        eprintln!(
            "ephpm-resp: serving {} on {}",
            server.store.describe(),
            server.listening.join(", ")
        );
        let server = Arc::new(server);
        if let Some(l) = unix {
            tokio::spawn(listen::unix(server.clone(), l, peers));
        }
        if let Some(l) = tcp {
            tokio::spawn(listen::tcp(server.clone(), l, o.no_auth));
        }
        let signal = ephpm::runtime::stop_signal().await;
        if let Some(path) = unix_path {
            let _ = std::fs::remove_file(path);
        }
        Ok::<&str, String>(signal)
    });
    drop(runtime);
    match stopped {
        Ok(signal) => {
            eprintln!("ephpm-resp: stopped by {signal}");
            ExitCode::SUCCESS
        }
        Err(why) => fail(&why),
    }
}

/// `<shm-dir>/ephpm-<uid>/<store>.resp.sock`, beside the store's segment.
fn socket_path(config: &Config) -> Result<PathBuf, String> {
    let opts = ephpm::store::shm::ShmOptions {
        dir: config.shm_dir.clone().into(),
        ..ephpm::store::shm::ShmOptions::new(&config.store_name, config.shm_size)
    };
    let segment = opts.path().map_err(|e| e.to_string())?;
    Ok(ephpm::resp_probe::default_socket(&segment))
}

/// Binds the unix socket: a stale one (nobody answers on it) is replaced, a live one is
/// another server's and left alone. Mode 0600, or 0660 and owned by the group.
fn bind_unix(path: &PathBuf, group: Option<u32>) -> Result<tokio::net::UnixListener, String> {
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(format!(
            "{} is in use: another ephpm-resp serves this store",
            path.display()
        ));
    }
    let _ = std::fs::remove_file(path);
    let l = tokio::net::UnixListener::bind(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let shown = |e: std::io::Error| format!("{}: {e}", path.display());
    if let Some(gid) = group {
        std::os::unix::fs::chown(path, None, Some(gid)).map_err(shown)?;
    }
    let mode = if group.is_some() { 0o660 } else { 0o600 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(shown)?;
    Ok(l)
}
