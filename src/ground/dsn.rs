//! DSNs that name a store:
//! - `shm://` (the default) and `shm://NAME`: the host-wide shared-memory store;
//! - `redis://[user:pass@]host[:port][/db]` and `unix:///path/to/redis.sock[?db=N]`: a Redis
//!   or Valkey server, with `?timeout=SECONDS` (connect and each command, default 1) and
//!   `?prefix=STRING` (put before every key and channel);
//! - `rediss://…`: the same over TLS, verified against the system's CA certificates or
//!   `?ca=/path/to/ca.pem`; `?cert=/path/client.pem&key=/path/client.key` presents a
//!   client certificate (mutual TLS). `?sni=` is refused: see `TlsFiles`.
//! - `redis-sentinel://[user:pass@]HOST[:PORT][,HOST[:PORT]…]/MASTER[?db=N]`: the master of
//!   the set MASTER, as Redis Sentinel names it (the sentinels listed, port 26379 by
//!   default, are asked; the credentials are the master's); `timeout` and `prefix` as above.
//! - `redis-cluster://[user:pass@]HOST[:PORT][,HOST[:PORT]…]`: a Redis Cluster, through
//!   any of the seeds listed (port 6379 by default); `timeout` and `prefix` as above. The
//!   scheme follows `redis-sentinel://` rather than Symfony's `?redis_cluster=1`, so that
//!   a DSN says what it talks to before its query. `?read_from=replica` sends the reads of
//!   `get`/`get_many` to a replica of the key's slot.
//! - `rediss-sentinel://` and `rediss-cluster://`: the same over TLS, with `ca`, `cert` and
//!   `key` as for `rediss://`; behind Sentinel, the sentinels and the masters they name
//!   all speak TLS with the same CA and client certificate.
//!
//! - `cluster://` and `cluster://NAME`: the gossip cluster, through the node of the host
//!   store NAME (default `ephpm.store_name`), with `?timeout=SECONDS` (default 3: the
//!   node itself waits up to 2.5 s for a key's owner, which waits up to 1 s for its
//!   replicas), `?prefix=STRING` and `?copies=sync|async` (whether the owner of a lock
//!   awaits its replicas' copies before it answers a lock operation; default `sync`:
//!   `Copies`).

use std::time::Duration;

/// A parsed DSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dsn {
    /// The host-wide shared-memory store; `None` means the name from `ephpm.store_name`.
    Shm {
        name: Option<String>,
    },
    Redis(RedisDsn),
    Cluster {
        name: Option<String>,
        timeout: Duration,
        prefix: Vec<u8>,
        copies: Copies,
    },
}

/// `cluster://?copies=`: whether the owner of a lock awaits its replicas' copies of a
/// lock operation (an exclusive lock's acquire, extend and release, every read/write
/// lock operation) before it answers. Carried by each lock operation to the owner
/// (`wire::Op`), so every process chooses for itself.
///
/// What `Async` gives up is written in docs/cluster.md ("Locks without awaited copies") and
/// ARCHITECTURE.md §9.2: a lock taken or extended just before its
/// owner dies may be lost (the replica that takes over never saw it, and another
/// process may acquire it), as a Redis master's acknowledged `SET NX` may be lost in a
/// failover. Kept: while the owner lives, one holder at a time and fences that only
/// grow, since every decision is the owner's alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Copies {
    /// The replicas' copies are awaited (the default): an acknowledged lock survives
    /// its owner's crash on the replica that takes over.
    #[default]
    Sync,
    /// The owner answers once its own copy is written; the replicas' follow.
    Async,
}

impl Copies {
    /// A `?copies=` value.
    fn parse(value: &str) -> Result<Copies, String> {
        match value {
            "sync" => Ok(Copies::Sync),
            "async" => Ok(Copies::Async),
            _ => Err(format!(
                "copies must be \"sync\" or \"async\", not \"{value}\""
            )),
        }
    }
}

/// Where a Redis server is and how to talk to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisDsn {
    /// What the `redis` crate connects to: the DSN without ephpm's own parameters.
    pub url: String,
    /// The address for messages: the DSN without its password.
    pub address: String,
    pub timeout: Duration,
    pub prefix: Vec<u8>,
    /// The TLS schemes' files (`rediss://`, `rediss-sentinel://`, `rediss-cluster://`);
    /// None for a scheme without TLS. Boxed: most DSNs have none.
    pub tls: Option<Box<TlsFiles>>,
    /// `?read_from=replica` (`redis[s]-cluster://` only): `get` and `get_many` read from
    /// a replica of the key's slot.
    pub read_from_replica: bool,
    /// `redis-sentinel://`: where to ask for the master (`url` is then unused).
    pub sentinel: Option<SentinelDsn>,
    /// `redis-cluster://`: the seeds' URLs, credentials included (`url` is then unused).
    pub cluster: Option<Vec<String>>,
}

/// The PEM files of a TLS scheme's query. There is no `?sni=`: the redis crate (1.8)
/// sends, and verifies the certificate against, the host name it connects to (the DSN's,
/// or the address a cluster or the sentinels name) and has no setting for another, so
/// the parameter is refused rather than ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// `?ca=`: the CA that signed the servers' certificates, instead of the system's.
    pub ca: Option<String>,
    /// `?cert=` and `?key=`: the client certificate and its key (mutual TLS); both or
    /// neither.
    pub client: Option<(String, String)>,
}

/// The sentinels of a `redis-sentinel://` DSN and what to open on the master they name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentinelDsn {
    /// `host:port` of each sentinel, in the DSN's order.
    pub sentinels: Vec<String>,
    /// The master set's name.
    pub master: String,
    /// `user:pass@` (or empty): the master's credentials.
    pub userinfo: String,
    pub db: u32,
    /// `rediss-sentinel://`: the sentinels and the masters speak TLS.
    pub tls: bool,
}

impl SentinelDsn {
    /// The URL of the master the sentinels named.
    pub fn master_url(&self, host: &str, port: u16) -> String {
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://{}{host}:{port}/{}", self.userinfo, self.db)
    }

    /// The URL of a sentinel (`host:port`).
    pub fn sentinel_url(&self, addr: &str) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://{addr}")
    }
}

/// A command or a connection that takes longer than this fails (`?timeout=`).
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_secs(1);
/// What a PHP process waits for its host's node (`cluster://?timeout=`).
pub const DEFAULT_CLUSTER_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DsnError {
    #[error(
        "\"{0}\" is not a store DSN: expected shm://, shm://NAME, redis://HOST[:PORT][/DB], \
         rediss://HOST[:PORT][/DB], unix:///PATH, redis-sentinel://HOST[,HOST…]/MASTER, \
         rediss-sentinel://HOST[,HOST…]/MASTER, redis-cluster://HOST[,HOST…], \
         rediss-cluster://HOST[,HOST…] or cluster://[NAME]"
    )]
    Malformed(String),
    #[error("\"{dsn}\": {why}")]
    BadParameter { dsn: String, why: String },
    #[error(
        "\"{0}\" is not a valid store name: use 1 to 64 letters, digits, '.', '_' or '-', \
         not starting with '.'"
    )]
    BadName(String),
}

pub fn parse(dsn: &str) -> Result<Dsn, DsnError> {
    let Some((scheme, rest)) = dsn.split_once("://") else {
        return Err(DsnError::Malformed(dsn.into()));
    };
    match scheme {
        "shm" if rest.is_empty() => Ok(Dsn::Shm { name: None }),
        "shm" => Ok(Dsn::Shm {
            name: Some(valid_name(rest)?.into()),
        }),
        "redis" | "rediss" | "unix" => parse_redis(dsn, scheme, rest).map(Dsn::Redis),
        "redis-sentinel" | "rediss-sentinel" => parse_sentinel(dsn, scheme, rest).map(Dsn::Redis),
        "redis-cluster" | "rediss-cluster" => {
            parse_redis_cluster(dsn, scheme, rest).map(Dsn::Redis)
        }
        "cluster" => parse_cluster(dsn, rest),
        _ => Err(DsnError::Malformed(dsn.into())),
    }
}

fn parse_cluster(dsn: &str, rest: &str) -> Result<Dsn, DsnError> {
    let (name, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut timeout = DEFAULT_CLUSTER_TIMEOUT;
    let mut prefix = Vec::new();
    let mut copies = Copies::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let bad = |why: String| DsnError::BadParameter {
            dsn: dsn.into(),
            why,
        };
        match pair.split_once('=').unwrap_or((pair, "")) {
            ("timeout", value) => timeout = seconds(value).map_err(bad)?,
            ("prefix", value) => {
                prefix = percent_decode(value)
                    .ok_or_else(|| bad("prefix is not valid percent-encoding".into()))?
            }
            ("copies", value) => copies = Copies::parse(value).map_err(bad)?,
            (name, _) => return Err(bad(format!("unknown parameter \"{name}\""))),
        }
    }
    let name = match name {
        "" => None,
        n => Some(valid_name(n)?.to_string()),
    };
    Ok(Dsn::Cluster {
        name,
        timeout,
        prefix,
        copies,
    })
}

/// A `?timeout=` value: seconds above 0, at most an hour.
fn seconds(value: &str) -> Result<Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 3600.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("timeout must be a number of seconds above 0 and at most 3600, not \"{value}\"")
        })
}

/// Splits off ephpm's query parameters (`timeout`, `prefix`) and passes the rest, which
/// the `redis` crate understands (`db`, `user`, `pass` for unix sockets), through.
fn parse_redis(dsn: &str, scheme: &str, rest: &str) -> Result<RedisDsn, DsnError> {
    let bad = |why: String| DsnError::BadParameter {
        dsn: hide_password(dsn),
        why,
    };
    let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
    let host_part = location.split('/').next().unwrap_or("");
    if (scheme != "unix" && host_part.rsplit('@').next().is_none_or(str::is_empty))
        || (scheme == "unix" && !location.starts_with('/'))
    {
        return Err(DsnError::Malformed(hide_password(dsn)));
    }
    let mut timeout = DEFAULT_REDIS_TIMEOUT;
    let mut prefix = Vec::new();
    let mut tls = TlsQuery::new(scheme == "rediss");
    let mut passed = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "timeout" => timeout = seconds(value).map_err(bad)?,
            "prefix" => {
                prefix = percent_decode(value)
                    .ok_or_else(|| bad("prefix is not valid percent-encoding".into()))?
            }
            "db" | "user" | "pass" | "protocol" => passed.push(pair),
            _ if tls.take(name, value).map_err(bad)? => {}
            _ => return Err(bad(format!("unknown parameter \"{name}\""))),
        }
    }
    let tls = tls.finish().map_err(bad)?;
    let mut url = format!("{scheme}://{location}");
    if !passed.is_empty() {
        url.push('?');
        url.push_str(&passed.join("&"));
    }
    Ok(RedisDsn {
        address: hide_password(&format!("{scheme}://{location}")),
        url,
        timeout,
        prefix,
        tls,
        read_from_replica: false,
        sentinel: None,
        cluster: None,
    })
}

/// The TLS parameters of a query, gathered one by one (`take`), checked at the end.
struct TlsQuery {
    /// The scheme speaks TLS: without it, the parameters are unknown ones.
    on: bool,
    files: TlsFiles,
    cert: Option<String>,
    key: Option<String>,
}

impl TlsQuery {
    fn new(on: bool) -> TlsQuery {
        TlsQuery {
            on,
            files: TlsFiles::default(),
            cert: None,
            key: None,
        }
    }

    /// Takes `name=value` if it is a TLS parameter (true), or leaves it (false).
    fn take(&mut self, name: &str, value: &str) -> Result<bool, String> {
        if !self.on || !matches!(name, "ca" | "cert" | "key" | "sni") {
            return Ok(false);
        }
        if name == "sni" {
            return Err(
                "sni is not supported: the redis crate sends and verifies the host \
                        name it connects to and has no setting for another; use a certificate \
                        whose name (or IP address) is the one the DSN or the cluster names"
                    .into(),
            );
        }
        let path = percent_decode(value)
            .and_then(|p| String::from_utf8(p).ok())
            .filter(|p| !p.is_empty())
            .ok_or_else(|| format!("{name} must be a percent-encoded file path"))?;
        match name {
            "ca" => self.files.ca = Some(path),
            "cert" => self.cert = Some(path),
            _ => self.key = Some(path),
        }
        Ok(true)
    }

    fn finish(self) -> Result<Option<Box<TlsFiles>>, String> {
        if !self.on {
            return Ok(None);
        }
        let mut files = self.files;
        files.client = match (self.cert, self.key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err("cert and key go together (a client certificate and its key)".into()),
        };
        Ok(Some(Box::new(files)))
    }
}

/// What `redis-sentinel://` and `redis-cluster://` have in common: credentials, a list
/// of `HOST[:PORT]` (`default_port` where none is given), a path, and the query.
struct HostList {
    userinfo: String,
    hosts: Vec<String>,
    path: String,
    timeout: Duration,
    prefix: Vec<u8>,
    db: u32,
    tls: Option<Box<TlsFiles>>,
    read_from_replica: bool,
    /// `scheme://userinfo@hosts[/path]` with the password hidden.
    address: String,
}

fn parse_host_list(
    dsn: &str,
    scheme: &str,
    rest: &str,
    default_port: u16,
) -> Result<HostList, DsnError> {
    let bad = |why: String| DsnError::BadParameter {
        dsn: hide_password(dsn),
        why,
    };
    let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (userinfo, location) = match location.rsplit_once('@') {
        Some((u, l)) => (format!("{u}@"), l),
        None => (String::new(), location),
    };
    let (hosts, path) = location.split_once('/').unwrap_or((location, ""));
    if hosts.split(',').any(str::is_empty) {
        return Err(DsnError::Malformed(hide_password(dsn)));
    }
    let hosts = hosts
        .split(',')
        .map(|h| match h.rsplit_once(':') {
            Some((_, port)) if !h.ends_with(']') && port.parse::<u16>().is_ok() => h.to_string(),
            _ => format!("{h}:{default_port}"),
        })
        .collect();
    let mut timeout = DEFAULT_REDIS_TIMEOUT;
    let mut prefix = Vec::new();
    let mut db = 0;
    let mut tls = TlsQuery::new(scheme.starts_with("rediss"));
    let mut read_from_replica = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=').unwrap_or((pair, "")) {
            ("timeout", value) => timeout = seconds(value).map_err(bad)?,
            ("prefix", value) => {
                prefix = percent_decode(value)
                    .ok_or_else(|| bad("prefix is not valid percent-encoding".into()))?
            }
            ("db", value) => {
                db = value
                    .parse()
                    .map_err(|_| bad(format!("db must be a number, not \"{value}\"")))?
            }
            ("read_from", value) if scheme.ends_with("-cluster") => {
                read_from_replica = match value {
                    "replica" => true,
                    "master" => false,
                    _ => {
                        return Err(bad(format!(
                            "read_from must be replica or master, not \"{value}\""
                        )));
                    }
                }
            }
            (name, value) if tls.take(name, value).map_err(bad)? => {}
            (name, _) => return Err(bad(format!("unknown parameter \"{name}\""))),
        }
    }
    let tls = tls.finish().map_err(bad)?;
    Ok(HostList {
        address: hide_password(&format!("{scheme}://{userinfo}{location}")),
        userinfo,
        hosts,
        path: path.to_string(),
        timeout,
        prefix,
        db,
        tls,
        read_from_replica,
    })
}

/// `redis[s]-sentinel://[user:pass@]HOST[:PORT][,…]/MASTER[?db=N&timeout=S&prefix=P]`.
fn parse_sentinel(dsn: &str, scheme: &str, rest: &str) -> Result<RedisDsn, DsnError> {
    let h = parse_host_list(dsn, scheme, rest, 26379)?;
    if h.path.is_empty() || h.path.contains('/') {
        return Err(DsnError::Malformed(hide_password(dsn)));
    }
    Ok(RedisDsn {
        url: h.address.clone(),
        address: h.address,
        timeout: h.timeout,
        prefix: h.prefix,
        sentinel: Some(SentinelDsn {
            sentinels: h.hosts,
            master: h.path,
            userinfo: h.userinfo,
            db: h.db,
            tls: h.tls.is_some(),
        }),
        tls: h.tls,
        read_from_replica: false,
        cluster: None,
    })
}

/// `redis[s]-cluster://[user:pass@]HOST[:PORT][,HOST[:PORT]…][?timeout=S&prefix=P]`: the
/// seeds of a Redis Cluster (any of its nodes; the client learns the rest). Redis
/// Cluster has database 0 only, so `db` is refused rather than ignored.
fn parse_redis_cluster(dsn: &str, scheme: &str, rest: &str) -> Result<RedisDsn, DsnError> {
    let h = parse_host_list(dsn, scheme, rest, 6379)?;
    if !h.path.is_empty() {
        return Err(DsnError::Malformed(hide_password(dsn)));
    }
    if h.db != 0 {
        return Err(DsnError::BadParameter {
            dsn: hide_password(dsn),
            why: "Redis Cluster has database 0 only".into(),
        });
    }
    let seed_scheme = if h.tls.is_some() { "rediss" } else { "redis" };
    let seeds = h
        .hosts
        .iter()
        .map(|host| format!("{seed_scheme}://{}{host}", h.userinfo))
        .collect();
    Ok(RedisDsn {
        url: h.address.clone(),
        address: h.address,
        timeout: h.timeout,
        prefix: h.prefix,
        tls: h.tls,
        read_from_replica: h.read_from_replica,
        sentinel: None,
        cluster: Some(seeds),
    })
}

/// The DSN with its password replaced by `***`, for messages.
pub fn hide_password(dsn: &str) -> String {
    let Some((scheme, rest)) = dsn.split_once("://") else {
        return dsn.into();
    };
    let (location, query) = match rest.split_once('?') {
        Some((l, q)) => (l, Some(q)),
        None => (rest, None),
    };
    let location = match location.split_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("***@{host}"),
        },
        None => location.into(),
    };
    let query = query.map(|q| {
        q.split('&')
            .map(|p| {
                if p.starts_with("pass=") {
                    "pass=***"
                } else {
                    p
                }
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    match query {
        Some(q) => format!("{scheme}://{location}?{q}"),
        None => format!("{scheme}://{location}"),
    }
}

/// `%XX` escapes decoded, or None for a malformed one. Not the percent-encoding crate's
/// decoder: it passes a malformed `%zz` through unchanged, where a DSN must refuse it (and
/// form_urlencoded would read a `+` in a prefix as a space).
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Checks a store name (it becomes part of a file name under /dev/shm).
pub fn valid_name(name: &str) -> Result<&str, DsnError> {
    let ok = (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(name)
    } else {
        Err(DsnError::BadName(name.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_redis_dsns_and_keeps_ephpms_parameters() {
        let Ok(Dsn::Redis(r)) =
            parse("redis://app:s3cret@127.0.0.1:6380/2?timeout=0.25&prefix=a%3Ab:")
        else {
            panic!("not a redis dsn")
        };
        assert_eq!(r.url, "redis://app:s3cret@127.0.0.1:6380/2");
        assert_eq!(r.address, "redis://app:***@127.0.0.1:6380/2");
        assert_eq!(r.timeout, Duration::from_millis(250));
        assert_eq!(r.prefix, b"a:b:");
        let Ok(Dsn::Redis(u)) = parse("unix:///run/redis.sock?db=3&pass=pw") else {
            panic!("not a unix dsn")
        };
        assert_eq!(u.url, "unix:///run/redis.sock?db=3&pass=pw");
        assert_eq!(u.address, "unix:///run/redis.sock");
        assert_eq!(u.timeout, DEFAULT_REDIS_TIMEOUT);
        let Ok(Dsn::Redis(t)) = parse("rediss://h:6380?ca=/etc/ca%20dir/ca.pem") else {
            panic!("not a rediss dsn")
        };
        assert_eq!(
            (t.url.as_str(), t.tls.and_then(|f| f.ca).as_deref()),
            ("rediss://h:6380", Some("/etc/ca dir/ca.pem"))
        );
        assert!(matches!(
            parse("redis://h?ca=/x.pem"),
            Err(DsnError::BadParameter { .. })
        ));
        assert!(matches!(
            parse("redis://h?timeout=0"),
            Err(DsnError::BadParameter { .. })
        ));
        assert!(matches!(
            parse("redis://h?colour=blue"),
            Err(DsnError::BadParameter { .. })
        ));
        assert_eq!(
            parse("redis://"),
            Err(DsnError::Malformed("redis://".into()))
        );
        assert_eq!(
            parse("unix://relative"),
            Err(DsnError::Malformed("unix://relative".into()))
        );
        assert_eq!(hide_password("redis://:pw@h:1?x=1"), "redis://:***@h:1?x=1");
    }

    #[test]
    fn parses_redis_cluster_dsns() {
        let Ok(Dsn::Redis(r)) = parse("redis-cluster://:pw@10.0.0.1,10.0.0.2:7001?prefix=p:")
        else {
            panic!("not a cluster dsn")
        };
        assert_eq!(
            r.cluster.as_deref(),
            Some(
                &[
                    "redis://:pw@10.0.0.1:6379".to_string(),
                    "redis://:pw@10.0.0.2:7001".into()
                ][..]
            )
        );
        assert_eq!(r.address, "redis-cluster://:***@10.0.0.1,10.0.0.2:7001");
        assert_eq!(r.prefix, b"p:");
        for malformed in [
            "redis-cluster://h1,,h2",
            "redis-cluster://h1/0",
            "redis-cluster://",
        ] {
            assert_eq!(parse(malformed), Err(DsnError::Malformed(malformed.into())));
        }
        assert!(matches!(
            parse("redis-cluster://h1?db=2"),
            Err(DsnError::BadParameter { .. })
        ));
    }

    #[test]
    fn parses_tls_cluster_and_sentinel_dsns() {
        let Ok(Dsn::Redis(r)) = parse(
            "rediss-cluster://:pw@10.0.0.1:7001?ca=/c/ca.pem&cert=/c/me.pem&key=/c/me.key&read_from=replica",
        ) else {
            panic!("not a cluster dsn")
        };
        assert_eq!(
            r.cluster.as_deref(),
            Some(&["rediss://:pw@10.0.0.1:7001".to_string()][..])
        );
        assert_eq!(
            r.tls,
            Some(Box::new(TlsFiles {
                ca: Some("/c/ca.pem".into()),
                client: Some(("/c/me.pem".into(), "/c/me.key".into())),
            }))
        );
        assert!(r.read_from_replica);
        assert_eq!(r.address, "rediss-cluster://:***@10.0.0.1:7001");
        let Ok(Dsn::Redis(plain)) = parse("redis-cluster://h?read_from=master") else {
            panic!("not a cluster dsn")
        };
        assert_eq!((plain.tls, plain.read_from_replica), (None, false));

        let Ok(Dsn::Redis(s)) = parse("rediss-sentinel://h1,h2:26380/m?ca=/ca.pem") else {
            panic!("not a sentinel dsn")
        };
        let sentinel = s.sentinel.expect("sentinels");
        assert_eq!(sentinel.sentinel_url("h1:26379"), "rediss://h1:26379");
        assert_eq!(
            sentinel.master_url("10.0.0.3", 6379),
            "rediss://10.0.0.3:6379/0"
        );
        assert_eq!(s.tls.and_then(|f| f.ca).as_deref(), Some("/ca.pem"));

        // TLS parameters on schemes without TLS, half a client certificate, a server
        // name the crate cannot send, replicas behind Sentinel.
        for refused in [
            "redis-cluster://h?ca=/ca.pem",
            "redis-sentinel://h/m?cert=/c.pem&key=/c.key",
            "rediss-cluster://h?cert=/c.pem",
            "rediss://h?key=/c.key",
            "rediss-cluster://h?sni=redis.example",
            "rediss://h?sni=redis.example",
            "rediss-sentinel://h/m?read_from=replica",
            "redis://h?read_from=replica",
            "redis-cluster://h?read_from=nearest",
        ] {
            assert!(
                matches!(parse(refused), Err(DsnError::BadParameter { .. })),
                "{refused}"
            );
        }
        let Err(e) = parse("rediss-cluster://h?sni=x") else {
            panic!("sni accepted")
        };
        assert!(e.to_string().contains("sni is not supported"), "{e}");
        let Err(e) = parse("memcached://h") else {
            panic!("memcached accepted")
        };
        for scheme in [
            "shm://",
            "redis://",
            "rediss://",
            "unix://",
            "redis-sentinel://",
            "rediss-sentinel://",
            "redis-cluster://",
            "rediss-cluster://",
            "cluster://",
        ] {
            assert!(e.to_string().contains(scheme), "{e} names no {scheme}");
        }
    }

    #[test]
    fn parses_sentinel_dsns() {
        let Ok(Dsn::Redis(r)) =
            parse("redis-sentinel://:pw@10.0.0.1,10.0.0.2:26380/mymaster?db=2&timeout=0.5")
        else {
            panic!("not a sentinel dsn")
        };
        let s = r.sentinel.expect("sentinels");
        assert_eq!(s.sentinels, ["10.0.0.1:26379", "10.0.0.2:26380"]);
        assert_eq!(s.master, "mymaster");
        assert_eq!(
            s.master_url("10.0.0.3", 6379),
            "redis://:pw@10.0.0.3:6379/2"
        );
        assert_eq!(s.master_url("::1", 6379), "redis://:pw@[::1]:6379/2");
        assert_eq!(
            r.address,
            "redis-sentinel://:***@10.0.0.1,10.0.0.2:26380/mymaster"
        );
        assert_eq!(r.timeout, Duration::from_millis(500));
        for malformed in [
            "redis-sentinel://h1:26379",
            "redis-sentinel://h1,,h2/m",
            "redis-sentinel:///m",
        ] {
            assert_eq!(parse(malformed), Err(DsnError::Malformed(malformed.into())));
        }
        assert!(matches!(
            parse("redis-sentinel://h/m?db=x"),
            Err(DsnError::BadParameter { .. })
        ));
    }

    #[test]
    fn parses_shm_dsns_and_refuses_the_rest() {
        assert_eq!(parse("shm://"), Ok(Dsn::Shm { name: None }));
        assert_eq!(
            parse("shm://jobs"),
            Ok(Dsn::Shm {
                name: Some("jobs".into())
            })
        );
        assert_eq!(
            parse("shm://../etc"),
            Err(DsnError::BadName("../etc".into()))
        );
        assert_eq!(parse("shm://a/b"), Err(DsnError::BadName("a/b".into())));
        assert_eq!(
            parse("cluster://"),
            Ok(Dsn::Cluster {
                name: None,
                timeout: DEFAULT_CLUSTER_TIMEOUT,
                prefix: vec![],
                copies: Copies::Sync,
            })
        );
        assert_eq!(
            parse("cluster://web?timeout=0.5&prefix=app%3A&copies=async"),
            Ok(Dsn::Cluster {
                name: Some("web".into()),
                timeout: Duration::from_millis(500),
                prefix: b"app:".to_vec(),
                copies: Copies::Async,
            })
        );
        assert_eq!(parse("cluster://a/b"), Err(DsnError::BadName("a/b".into())));
        assert!(matches!(
            parse("cluster://?seeds=x"),
            Err(DsnError::BadParameter { .. })
        ));
        let Err(bad) = parse("cluster://web?copies=later") else {
            panic!("copies=later was taken")
        };
        assert_eq!(
            bad.to_string(),
            "\"cluster://web?copies=later\": copies must be \"sync\" or \"async\", not \"later\""
        );
        assert_eq!(
            parse("memcached"),
            Err(DsnError::Malformed("memcached".into()))
        );
    }
}
