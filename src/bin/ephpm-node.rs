//! `ephpm-node`: the host's cluster node as a service. It takes the same lease a PHP
//! process with `ephpm.cluster.enabled=1` would (so there is still one node per host
//! store) and runs until it is stopped: SIGTERM or SIGINT stop the node and give the
//! lease up at once.
//!
//! ```text
//! ephpm-node --store NAME --gossip IP:PORT [--data IP:PORT] [--seed IP:PORT]...
//!            [--node-id ID] [--secret-file PATH | env EPHPM_CLUSTER_SECRET]
//!            [--allow-insecure-no-auth] [--replication-factor N]
//!            [--small-key-threshold BYTES] [--gossip-interval-ms MS]
//!            [--no-push] [--shm-dir DIR] [--shm-size BYTES]
//! ```

use std::process::ExitCode;

use ephpm::cluster::{NodeConfig, lease};
use ephpm::config::{ClusterSettings, parse_size};
use ephpm::store::shm::ShmOptions;

fn usage(why: &str) -> ExitCode {
    eprintln!("ephpm-node: {why}");
    eprintln!(
        "usage: ephpm-node --store NAME --gossip IP:PORT [--data IP:PORT] [--seed IP:PORT]... \
         [--node-id ID] [--secret-file PATH] [--allow-insecure-no-auth] \
         [--replication-factor N] [--small-key-threshold BYTES] [--gossip-interval-ms MS] \
         [--no-push] [--shm-dir DIR] [--shm-size BYTES]\n\
         The secret is read from --secret-file or from the environment variable \
         EPHPM_CLUSTER_SECRET."
    );
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
        if flag == "--allow-insecure-no-auth" {
            s.allow_insecure_no_auth = true;
            continue;
        }
        if flag == "--help" || flag == "-h" {
            usage("runs this host's ephpm cluster node");
            return ExitCode::SUCCESS;
        }
        if flag == "--no-push" {
            s.push_writes = false;
            continue;
        }
        let Some(value) = args.next() else {
            return usage(&format!("{flag} needs a value"));
        };
        let number = |v: &str| v.parse::<u64>().ok();
        match flag.as_str() {
            "--store" => store.name = value,
            "--gossip" => s.gossip_addr = value,
            "--data" => s.data_addr = value,
            "--seed" => seeds.push(value),
            "--node-id" => s.node_id = value,
            "--secret-file" => match std::fs::read_to_string(&value) {
                Ok(secret) => s.secret = secret.trim_end_matches(['\r', '\n']).to_string(),
                Err(e) => return usage(&format!("cannot read {value}: {e}")),
            },
            "--replication-factor" => match number(&value) {
                Some(n) => s.replication_factor = n,
                None => return usage("--replication-factor takes a number"),
            },
            "--small-key-threshold" => match number(&value) {
                Some(n) => s.small_key_threshold = n,
                None => return usage("--small-key-threshold takes a number of bytes"),
            },
            "--gossip-interval-ms" => match number(&value) {
                Some(n) => s.gossip_interval_ms = n,
                None => return usage("--gossip-interval-ms takes a number"),
            },
            "--shm-dir" => store.dir = value.into(),
            "--shm-size" => match parse_size(&value) {
                Some(n) => store.size = n,
                None => return usage("--shm-size takes a size such as 64M"),
            },
            _ => return usage(&format!("unknown option {flag}")),
        }
    }
    if let Err(e) = ephpm::store::dsn::valid_name(&store.name) {
        return usage(&e.to_string());
    }
    s.seeds = seeds.join(",");
    let cfg = match NodeConfig::from_settings(&s, store) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ephpm-node: {e}");
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
            signal = stop_signal() => Some(signal),
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

/// SIGTERM (systemd, kill) or SIGINT (Ctrl-C); never, if they cannot be caught.
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}
