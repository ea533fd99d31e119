//! `ephpm-node`: the host's cluster node as a service. It takes the same lease a PHP
//! process with `ephpm.cluster.enabled=1` would (so there is still one node per host
//! store) and runs until it is stopped: SIGTERM or SIGINT stop the node and give the
//! lease up at once.
//!
//! It behaves like a Unix tool (clap, `shared/cli.rs`): `--help` prints the usage on
//! stdout and exits 0, `--version` prints the version, an unknown option or a missing
//! value prints what is wrong on stderr and exits 2. Exit codes: 0 stopped by SIGTERM/SIGINT
//! (or --help, --version), 1 the node cannot run (its settings, its secret), 2 a usage
//! error.

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/service_args.rs"]
mod service_args;

use std::process::ExitCode;

use clap::Parser;
use ephpm::cluster::{NodeConfig, lease};
use ephpm::config::ClusterSettings;
use ephpm::store::shm::ShmOptions;
use service_args::ServiceArgs;

/// Runs this host's ephpm cluster node for the host store NAME until SIGTERM or SIGINT.
#[derive(Parser)]
#[command(
    name = "ephpm-node",
    version,
    after_help = "exit codes: 0 stopped by SIGTERM or SIGINT, 1 the node cannot run, 2 a usage error"
)]
struct Args {
    /// Where gossip listens (UDP) and what peers are told
    #[arg(long, value_name = "IP:PORT", default_value_t = ClusterSettings::default().gossip_addr)]
    gossip: String,
    /// The data plane (TCP) [default: the gossip IP, any port]
    #[arg(long, value_name = "IP:PORT")]
    data: Option<String>,
    /// A node to join through (repeat for several)
    #[arg(long = "seed", value_name = "IP:PORT")]
    seeds: Vec<String>,
    /// This node's id, the same across restarts [default: the host name]
    #[arg(long, value_name = "ID")]
    node_id: Option<String>,
    /// The cluster secret(s), one per line, the first signing [default: the environment
    /// variable EPHPM_CLUSTER_SECRET, comma-separated]; at least 128 bits: openssl rand
    /// -base64 32
    #[arg(long, value_name = "PATH")]
    secret_file: Option<String>,
    /// Run without a secret: no authentication, no encryption
    #[arg(long)]
    allow_insecure_no_auth: bool,
    /// Copies of each key, owner included (1-16)
    #[arg(long, value_name = "N", default_value_t = ClusterSettings::default().replication_factor)]
    replication_factor: u64,
    /// Entries up to B bytes also travel on gossip
    #[arg(long, value_name = "B", default_value_t = ClusterSettings::default().small_key_threshold)]
    small_key_threshold: u64,
    /// Milliseconds between gossip rounds
    #[arg(long, value_name = "MS", default_value_t = ClusterSettings::default().gossip_interval_ms)]
    gossip_interval_ms: u64,
    /// Hosts other than the replicas learn writes by gossip only
    #[arg(long)]
    no_push: bool,
    #[command(flatten)]
    service: ServiceArgs,
}

fn main() -> ExitCode {
    let a = match cli::parse::<Args>(str::to_string, |_| Ok(())) {
        Ok(a) => a,
        Err(code) => return code,
    };
    ephpm::logging::init("ephpm-node", a.service.log_level.as_deref());
    let s = ClusterSettings {
        enabled: true,
        // The file, when given; else the environment.
        secret: match a.secret_file {
            Some(_) => String::new(),
            None => std::env::var("EPHPM_CLUSTER_SECRET").unwrap_or_default(),
        },
        secret_file: a.secret_file.unwrap_or_default(),
        allow_insecure_no_auth: a.allow_insecure_no_auth,
        push_writes: !a.no_push,
        gossip_addr: a.gossip,
        data_addr: a.data.unwrap_or_default(),
        seeds: a.seeds.join(","),
        node_id: a.node_id.unwrap_or_default(),
        replication_factor: a.replication_factor,
        small_key_threshold: a.small_key_threshold,
        gossip_interval_ms: a.gossip_interval_ms,
    };
    let store = ShmOptions {
        dir: a.service.shm_dir.into(),
        ..ShmOptions::new(&a.service.store, a.service.shm_size)
    };
    let cfg = match NodeConfig::from_settings(&s, store) {
        Ok(c) => c,
        Err(e) => {
            // What ends the program is said whatever --log-level lets through.
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
    tracing::info!(
        "node {} of store {} (gossip {}), waiting for the host's lease",
        cfg.node_id,
        cfg.store.name,
        cfg.gossip_addr
    );
    let stopped = runtime.block_on(async move {
        let keep = lease::keep(cfg);
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
            tracing::info!("stopped by {name}");
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
