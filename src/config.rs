//! The settings a process runs with (from the `ephpm.*` ini entries), and the parsing of
//! their values. No PHP types here: the php layer reads the ini and builds a `Config`.

/// The settings a store is opened with: the `ephpm.*` entries as they are when it is
/// opened (an FPM pool's `php_admin_value` included), the cluster's as at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `ephpm.dsn`: the store a `new Ephpm\Kv()` without a DSN uses.
    pub dsn: String,
    /// `ephpm.store_name`: the name of the `shm://` store.
    pub store_name: String,
    /// `ephpm.shm_size`, in bytes.
    pub shm_size: u64,
    /// `ephpm.shm_dir`: where each user's private directory of segments is made.
    pub shm_dir: String,
    /// `ephpm.compress_threshold`, in bytes (0 = never compress).
    pub compress_threshold: u64,
    /// `ephpm.cluster.*`.
    pub cluster: ClusterSettings,
}

/// The `ephpm.cluster.*` settings, as written; `crate::cluster::NodeConfig::from_settings`
/// checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    /// `ephpm.cluster.enabled`: this process may run the host's node.
    pub enabled: bool,
    /// `ephpm.cluster.node_id`; empty means the host name.
    pub node_id: String,
    /// `ephpm.cluster.gossip_addr`, IP:PORT (UDP).
    pub gossip_addr: String,
    /// `ephpm.cluster.data_addr`, IP:PORT (TCP); empty means the gossip IP, any port.
    pub data_addr: String,
    /// `ephpm.cluster.seeds`: comma-separated gossip addresses.
    pub seeds: String,
    /// `ephpm.cluster.secret`: one secret, or several comma-separated while rotating.
    pub secret: String,
    /// `ephpm.cluster.secret_file`: a file holding the secret(s), one per line.
    pub secret_file: String,
    pub allow_insecure_no_auth: bool,
    pub replication_factor: u64,
    pub small_key_threshold: u64,
    /// `ephpm.cluster.gossip_interval`, in milliseconds.
    pub gossip_interval_ms: u64,
    /// `ephpm.cluster.push_writes`.
    pub push_writes: bool,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings {
            enabled: false,
            node_id: String::new(),
            gossip_addr: "127.0.0.1:7946".into(),
            data_addr: String::new(),
            seeds: String::new(),
            secret: String::new(),
            secret_file: String::new(),
            allow_insecure_no_auth: false,
            replication_factor: 2,
            small_key_threshold: 512,
            gossip_interval_ms: 1000,
            push_writes: true,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            dsn: "shm://".into(),
            store_name: "default".into(),
            shm_size: 64 << 20,
            shm_dir: "/dev/shm".into(),
            compress_threshold: 64 << 10,
            cluster: ClusterSettings::default(),
        }
    }
}

/// Parses a size in PHP's shorthand: digits with an optional K, M or G suffix (either
/// case), as `memory_limit` and `apc.shm_size` take them.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, shift) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 10),
        b'm' | b'M' => (&s[..s.len() - 1], 20),
        b'g' | b'G' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_php_shorthand() {
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("0"), Some(0));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("-1M"), None);
    }
}
