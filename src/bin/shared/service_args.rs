//! The options ephpm-node and ephpm-resp share: which host store, where its segment
//! lives and how large it is made, and what they log. Flattened into each one's clap
//! arguments.

use clap::Args;

#[derive(Args)]
pub struct ServiceArgs {
    /// The host store (as ephpm.store_name)
    #[arg(long, value_name = "NAME", default_value = "default", value_parser = store_name)]
    pub store: String,
    /// Where the user's private directory is
    #[arg(long, value_name = "DIR", default_value = "/dev/shm")]
    pub shm_dir: String,
    /// The segment's size when it is made
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = size)]
    pub shm_size: u64,
    /// What to log: error, warn, info, debug, trace, or a filter such as
    /// "warn,ephpm::cluster=debug" [default: RUST_LOG, else info]
    #[arg(long, value_name = "FILTER", value_parser = log_filter)]
    pub log_level: Option<String>,
}

/// `--store`: a name the host store may have.
fn store_name(v: &str) -> Result<String, String> {
    ephpm::ground::dsn::valid_name(v).map_err(|e| e.to_string())?;
    Ok(v.to_string())
}

/// `--shm-size`: a size such as 64M.
fn size(v: &str) -> Result<u64, String> {
    ephpm::config::parse_size(v).ok_or_else(|| "a size such as 64M".to_string())
}

/// `--log-level`: a filter `ephpm::logging` takes.
fn log_filter(v: &str) -> Result<String, String> {
    ephpm::logging::valid_filter(v)?;
    Ok(v.to_string())
}
