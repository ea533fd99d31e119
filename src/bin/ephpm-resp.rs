//! `ephpm-resp`: the store served over the Redis protocol (see `ephpm::resp`), so that
//! any Redis client shares it with PHP. A Unix tool like `ephpm-node` (clap,
//! `shared/cli.rs`): `--help` on stdout and exit 0, a usage error on stderr and exit 2,
//! exit 1 when it cannot serve, exit 0 when stopped by SIGTERM or SIGINT.

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/service_args.rs"]
mod service_args;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use ephpm::config::Config;
use ephpm::ground::dsn::{self, Dsn};
use ephpm::resp::listen::{self, Peers};
use ephpm::resp::server::{Server, Settings};
use service_args::ServiceArgs;

/// Serves an ephpm store over the Redis protocol (RESP2 and RESP3) until SIGTERM or
/// SIGINT: redis-cli -s SOCKET, or any Redis client, reads and writes what PHP processes
/// share.
#[derive(Parser)]
#[command(
    name = "ephpm-resp",
    version,
    after_help = "exit codes: 0 stopped by SIGTERM or SIGINT, 1 it cannot serve, 2 a usage error"
)]
struct Args {
    /// Another store: shm://NAME, or cluster://NAME through this host's node [default:
    /// shm://NAME of --store]
    #[arg(long, value_name = "DSN")]
    dsn: Option<String>,
    /// The unix socket [default: <shm-dir>/ephpm-<uid>/NAME.resp.sock] (only this user's
    /// processes are admitted)
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Also admit the socket's peers of this group (mode 0660); the socket must then be
    /// somewhere the group can reach (--socket)
    #[arg(long, value_name = "GROUP")]
    group: Option<String>,
    /// No unix socket (with --tcp)
    #[arg(long)]
    no_socket: bool,
    /// Also listen on TCP (every client must AUTH: needs --secret-file)
    #[arg(long, value_name = "IP:PORT")]
    tcp: Option<String>,
    /// AUTH's password(s), one per line, at least 128 bits each (openssl rand -base64 32),
    /// the file private to its owner
    #[arg(long, value_name = "PATH")]
    secret_file: Option<PathBuf>,
    /// TCP on a loopback address without AUTH: whoever can connect to it — any user of
    /// this host — uses the store (test suites that cannot log in, benchmarks); refused
    /// for any other address
    #[arg(long, requires = "tcp", conflicts_with = "secret_file")]
    allow_insecure_no_auth: bool,
    /// Connections at once
    #[arg(long, value_name = "N", default_value_t = Settings::default().max_clients,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_clients: usize,
    /// Close a client idle this long (0: never)
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    timeout: u64,
    #[command(flatten)]
    service: ServiceArgs,
}

/// What clap's rules cannot say, or not with the reason: TCP needs a way to log in, no
/// login only on loopback, something to listen on, a socket the group can reach.
fn check(a: &Args) -> Result<(), String> {
    if a.no_socket && a.tcp.is_none() {
        return Err("--no-socket leaves nothing to listen on: give --tcp".into());
    }
    if a.group.is_some() && a.socket.is_none() {
        return Err("--group needs --socket: the default socket is in the user's private directory, which the group cannot reach".into());
    }
    match &a.tcp {
        Some(_) if a.secret_file.is_none() && !a.allow_insecure_no_auth => Err(
            "--tcp needs --secret-file: a TCP client must AUTH (or --allow-insecure-no-auth on loopback)"
                .into(),
        ),
        Some(addr) if a.allow_insecure_no_auth && !loopback(addr) => Err(format!(
            "--allow-insecure-no-auth is for loopback addresses only, not {addr}"
        )),
        _ => Ok(()),
    }
}

/// What ends the program, said whatever --log-level lets through.
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
    log_level: Option<String>,
}

fn parse_args() -> Result<Options, ExitCode> {
    let a = cli::parse::<Args>(str::to_string, check)?;
    Ok(Options {
        config: Config {
            store_name: a.service.store,
            shm_dir: a.service.shm_dir,
            shm_size: a.service.shm_size,
            ..Config::default()
        },
        dsn: a.dsn,
        socket: a.socket,
        no_socket: a.no_socket,
        group: a.group,
        tcp: a.tcp,
        secret_file: a.secret_file,
        no_auth: a.allow_insecure_no_auth,
        settings: Settings {
            max_clients: a.max_clients,
            idle_timeout: (a.timeout > 0).then(|| Duration::from_secs(a.timeout)),
            ..Settings::default()
        },
        log_level: a.service.log_level,
    })
}

/// Whether `addr` (IP:PORT) is on a loopback address.
fn loopback(addr: &str) -> bool {
    addr.parse::<std::net::SocketAddr>()
        .is_ok_and(|a| a.ip().is_loopback())
}

/// The gid of a group name (or number), from the group database (nix).
fn group_id(name: &str) -> Option<u32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    nix::unistd::Group::from_name(name)
        .ok()
        .flatten()
        .map(|g| g.gid.as_raw())
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(code) => return code,
    };
    ephpm::logging::init("ephpm-resp", o.log_level.as_deref());
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
        tracing::warn!("{w}");
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
        tracing::info!(
            "serving {} on {}",
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
            tracing::info!("stopped by {signal}");
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
