//! `ephpm-node`: the host's cluster node as a service. It takes the same lease a PHP
//! process with `ephpm.cluster.enabled=1` would (so there is still one node per host
//! store) and runs until it is stopped: SIGTERM or SIGINT stop the node and give the
//! lease up at once.
//!
//! It behaves like a Unix tool: `--help` prints the usage on stdout and exits 0,
//! `--version` prints the version, an unknown option or a missing value prints what is
//! wrong and the usage on stderr and exits 2. Exit codes: 0 stopped by SIGTERM/SIGINT
//! (or --help, --version), 1 the node cannot run (its settings, its secret), 2 a usage
//! error.

use std::process::ExitCode;

use ephpm::cluster::{NodeConfig, lease};
use ephpm::config::{ClusterSettings, parse_size};
use ephpm::store::shm::ShmOptions;

const USAGE: &str = "\
usage: ephpm-node --store NAME --gossip IP:PORT [options]

Runs this host's ephpm cluster node for the host store NAME until SIGTERM or SIGINT.

options:
  --store NAME               the host store (as ephpm.store_name); default: default
  --gossip IP:PORT           where gossip listens (UDP) and what peers are told
  --data IP:PORT             the data plane (TCP); default: the gossip IP, any port
  --seed IP:PORT             a node to join through (repeat for several)
  --node-id ID               this node's id, the same across restarts; default: the host name
  --secret-file PATH         the cluster secret(s), one per line, the first signing
                             (default: the environment variable EPHPM_CLUSTER_SECRET,
                             comma-separated); at least 128 bits: openssl rand -base64 32
  --allow-insecure-no-auth   run without a secret: no authentication, no encryption
  --replication-factor N     copies of each key, owner included (1-16; default 2)
  --small-key-threshold B    entries up to B bytes also travel on gossip (default 512)
  --gossip-interval-ms MS    milliseconds between gossip rounds (default 1000)
  --no-push                  hosts other than the replicas learn writes by gossip only
  --shm-dir DIR              where the user's private directory is (default /dev/shm)
  --shm-size SIZE            the cluster segment's size when it is made (default 64M)
  --help, -h                 this text
  --version, -V              the version

exit codes: 0 stopped by SIGTERM or SIGINT, 1 the node cannot run, 2 a usage error
";

fn usage_error(why: &str) -> ExitCode {
    eprintln!("ephpm-node: {why}\n\n{USAGE}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut s = ClusterSettings {
        enabled: true,
        secret: std::env::var("EPHPM_CLUSTER_SECRET").unwrap_or_default(),
        ..ClusterSettings::default()
    };
    let mut store = ShmOptions::new("default", 64 << 20);
    let mut seeds = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--help" | "-h" => {
                print!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "--version" | "-V" => {
                println!("ephpm-node {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--allow-insecure-no-auth" => {
                s.allow_insecure_no_auth = true;
                continue;
            }
            "--no-push" => {
                s.push_writes = false;
                continue;
            }
            "--store"
            | "--gossip"
            | "--data"
            | "--seed"
            | "--node-id"
            | "--secret-file"
            | "--replication-factor"
            | "--small-key-threshold"
            | "--gossip-interval-ms"
            | "--shm-dir"
            | "--shm-size" => {}
            _ => return usage_error(&format!("unknown option {flag}")),
        }
        let Some(value) = args.next() else {
            return usage_error(&format!("{flag} needs a value"));
        };
        let number = |v: &str| v.parse::<u64>().ok();
        match flag.as_str() {
            "--store" => store.name = value,
            "--gossip" => s.gossip_addr = value,
            "--data" => s.data_addr = value,
            "--seed" => seeds.push(value),
            "--node-id" => s.node_id = value,
            "--secret-file" => {
                s.secret_file = value;
                s.secret.clear(); // the file, not the environment
            }
            "--replication-factor" => match number(&value) {
                Some(n) => s.replication_factor = n,
                None => return usage_error("--replication-factor takes a number"),
            },
            "--small-key-threshold" => match number(&value) {
                Some(n) => s.small_key_threshold = n,
                None => return usage_error("--small-key-threshold takes a number of bytes"),
            },
            "--gossip-interval-ms" => match number(&value) {
                Some(n) => s.gossip_interval_ms = n,
                None => return usage_error("--gossip-interval-ms takes a number"),
            },
            "--shm-dir" => store.dir = value.into(),
            "--shm-size" => match parse_size(&value) {
                Some(n) => store.size = n,
                None => return usage_error("--shm-size takes a size such as 64M"),
            },
            _ => unreachable!("every option that takes a value is listed above"),
        }
    }
    if let Err(e) = ephpm::ground::dsn::valid_name(&store.name) {
        return usage_error(&format!("--store: {e}"));
    }
    s.seeds = seeds.join(",");
    let cfg = match NodeConfig::from_settings(&s, store) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ephpm-node: {}", in_our_words(&e.to_string()));
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("ephpm-node")
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ephpm-node: cannot start a runtime: {e}");
            return ExitCode::from(1);
        }
    };
    eprintln!(
        "ephpm-node: node {} of store {} (gossip {}), waiting for the host's lease",
        cfg.node_id, cfg.store.name, cfg.gossip_addr
    );
    let id = cfg.node_id.clone();
    let stopped = runtime.block_on(async move {
        let keep = lease::keep(cfg, move |why| eprintln!("ephpm-node: {id}: {why}"));
        tokio::select! {
            () = keep => None,
            signal = ephpm::runtime::stop_signal() => Some(signal),
        }
    });
    // Stop the node (its sockets close with the runtime), then give its lease up, so the
    // next process takes over at once instead of after the lease's TTL.
    drop(runtime);
    lease::give_up();
    match stopped {
        Some(name) => {
            eprintln!("ephpm-node: stopped by {name}");
            ExitCode::SUCCESS
        }
        None => ExitCode::from(1),
    }
}

/// A settings error as ephpm-node's user knows the settings: by its own options, not by
/// the php.ini names the shared checks use.
fn in_our_words(message: &str) -> String {
    [
        ("ephpm.cluster.secret_file", "--secret-file"),
        (
            "ephpm.cluster.secret",
            "the secret (--secret-file or EPHPM_CLUSTER_SECRET)",
        ),
        (
            "ephpm.cluster.allow_insecure_no_auth=1",
            "--allow-insecure-no-auth",
        ),
        ("ephpm.cluster.gossip_addr", "--gossip"),
        ("ephpm.cluster.data_addr", "--data"),
        ("ephpm.cluster.node_id", "--node-id"),
        ("ephpm.cluster.replication_factor", "--replication-factor"),
        ("ephpm.cluster.small_key_threshold", "--small-key-threshold"),
        ("ephpm.cluster.gossip_interval", "--gossip-interval-ms"),
        ("ephpm.shm_dir", "--shm-dir"),
    ]
    .iter()
    .fold(message.to_string(), |m, (ini, flag)| m.replace(ini, flag))
}
