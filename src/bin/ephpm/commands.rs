//! The commands, each turning a store (or the host's segments) into a report: the text
//! for a terminal and the JSON document for `--json`, always both, so that the two
//! cannot drift apart. Every key, value, lock, file and user name in the text goes
//! through `quote::quoted` (any process of the user, or a client's cookie, chose it),
//! and through `Json::bytes` in the JSON.

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use ephpm::config::Config;
use ephpm::store::shm::inventory::{self, Entries, Kind};
use ephpm::store::{Fetched, KeyTtl, ScanEntry, Store, Value};

use super::json::{self, Json};
use super::php_value;
use super::quote::{in_quotes, quoted};
use super::user;

/// What a command prints.
pub struct Report {
    pub text: Vec<u8>,
    pub json: Json,
}

/// Why a command failed (exit code 1), in words for stderr.
pub struct Failure(pub String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

type Done = Result<Report, Failure>;

fn report(text: String, json: Json) -> Done {
    Ok(Report {
        text: text.into_bytes(),
        json,
    })
}

/// The store the options name, which must exist already: looking never creates one.
pub fn open(dsn: &str, config: &Config) -> Result<Arc<dyn Store>, Failure> {
    match ephpm::open::open_existing(dsn, config)? {
        Some(s) => Ok(s),
        None => Err(no_store(dsn, config)),
    }
}

fn no_store(name: &str, config: &Config) -> Failure {
    Failure(format!(
        "no store {} for user {} under {}",
        quoted(name.as_bytes()),
        quoted(user::name_of(ephpm::store::shm::euid()).as_bytes()),
        quoted(config.shm_dir.as_bytes())
    ))
}

pub fn stores(shm_dir: &str, uid: Option<u32>) -> Done {
    let segments = inventory::list(Path::new(shm_dir), uid)?;
    let mut rows = vec![
        [
            "OWNER", "NAME", "KIND", "SIZE", "IN-USE", "PROCS", "ENTRIES",
        ]
        .map(String::from),
    ];
    let mut json = Vec::new();
    for s in &segments {
        let owner = user::name_of(s.owner);
        let kind = match s.kind {
            Kind::Store => "store",
            Kind::Cluster => "cluster",
        };
        let (entries, counted) = match s.entries {
            Entries::Counted(n) => (n.to_string(), Some(n)),
            Entries::Truncated => ("truncated".into(), None),
            Entries::Unknown => ("?".into(), None),
        };
        rows.push([
            quoted(owner.as_bytes()),
            quoted(s.name.as_bytes()),
            kind.into(),
            s.size.to_string(),
            if s.in_use { "yes" } else { "no" }.into(),
            s.processes.map_or("?".into(), |n| n.to_string()),
            entries,
        ]);
        json.push(json::obj(vec![
            ("owner", Json::String(owner)),
            ("uid", Json::from(s.owner)),
            ("name", json::bytes(s.name.as_bytes())),
            ("kind", Json::String(kind.into())),
            ("size", Json::from(s.size)),
            ("in_use", Json::Bool(s.in_use)),
            ("processes", json::opt_u64(s.processes)),
            ("entries", json::opt_u64(counted)),
            ("truncated", Json::Bool(s.entries == Entries::Truncated)),
            ("path", json::bytes(s.path.as_os_str().as_bytes())),
        ]));
    }
    report(table(&rows), Json::Array(json))
}

/// The store's counters, and how its Redis-protocol server is doing (a host store's).
pub fn stats(s: &dyn Store) -> Done {
    let st = s.stats()?;
    let numbers = st.named();
    let backend = s.describe();
    let mut rows = vec![["backend".to_string(), quoted(backend.as_bytes())]];
    let mut json = vec![("backend", Json::String(backend))];
    for (name, n) in numbers {
        rows.push([name.into(), n.to_string()]);
        json.push((name, Json::from(n)));
    }
    if let Some(resp) = ephpm::resp_probe::status_of(s) {
        rows.push(["resp_server".into(), resp.to_string()]);
        json.push(("resp_server", Json::String(resp.to_string())));
    }
    // As Kv::stats(): each shard's [used, size, entries]; in the text, each one's fill.
    let fill = s.shard_fill()?;
    let shown: Vec<String> = fill
        .iter()
        .map(|f| format!("{:.1}%", 100.0 * f.used as f64 / f.size.max(1) as f64))
        .collect();
    rows.push(["shard_fill".into(), shown.join(" ")]);
    json.push((
        "shard_fill",
        Json::Array(
            fill.iter()
                .map(|f| {
                    Json::Array(vec![
                        Json::from(f.used),
                        Json::from(f.size),
                        Json::from(f.entries),
                    ])
                })
                .collect(),
        ),
    ));
    report(table(&rows), json::obj(json))
}

/// Up to `limit` live keys starting with `prefix` that `keep` wants, sorted, each once
/// (a Redis walk may show a key twice), and whether more were left out.
fn walk(
    s: &dyn Store,
    prefix: &[u8],
    limit: usize,
    keep: impl Fn(&ScanEntry) -> bool,
) -> Result<(Vec<ScanEntry>, bool), Failure> {
    let (mut found, mut seen, mut batch) = (Vec::new(), HashSet::new(), Vec::new());
    let mut cursor = 0;
    loop {
        batch.clear();
        cursor = s.scan(prefix, cursor, &mut batch)?;
        for e in batch.drain(..) {
            if !keep(&e) || !seen.insert(e.key.clone()) {
                continue;
            }
            if found.len() == limit {
                found.sort_by(|a: &ScanEntry, b| a.key.cmp(&b.key));
                return Ok((found, true));
            }
            found.push(e);
        }
        if cursor == 0 {
            found.sort_by(|a, b| a.key.cmp(&b.key));
            return Ok((found, false));
        }
    }
}

fn seconds(ttl: KeyTtl) -> Option<f64> {
    match ttl {
        // Milliseconds are what a TTL is set in; the nanoseconds are noise.
        KeyTtl::Remaining(d) => Some(d.as_millis() as f64 / 1000.0),
        _ => None,
    }
}

fn ttl_text(ttl: KeyTtl) -> String {
    seconds(ttl).map_or("-".into(), |s| format!("{s:.1}s"))
}

pub fn keys(s: &dyn Store, prefix: &[u8], limit: usize) -> Done {
    let (found, more) = walk(s, prefix, limit, |_| true)?;
    let mut rows = vec![["KEY", "TTL", "SIZE"].map(String::from)];
    let mut json = Vec::new();
    for e in &found {
        rows.push([quoted(&e.key), ttl_text(e.ttl), e.size.to_string()]);
        json.push(json::obj(vec![
            ("key", json::bytes(&e.key)),
            ("ttl", json::opt_f64(seconds(e.ttl))),
            ("size", Json::from(e.size)),
        ]));
    }
    listing(rows, json, more, limit)
}

pub fn locks(s: &dyn Store, limit: usize) -> Done {
    let (found, more) = walk(s, b"", limit, |e| e.fence.is_some())?;
    let mut rows = vec![["NAME", "TTL", "FENCE"].map(String::from)];
    let mut json = Vec::new();
    for e in &found {
        let fence = e.fence.unwrap_or_default();
        rows.push([quoted(&e.key), ttl_text(e.ttl), fence.to_string()]);
        json.push(json::obj(vec![
            ("name", json::bytes(&e.key)),
            ("ttl", json::opt_f64(seconds(e.ttl))),
            ("fence", Json::from(fence)),
        ]));
    }
    listing(rows, json, more, limit)
}

/// A bounded listing: says on stderr when it stopped at the limit, and in the JSON.
fn listing(rows: Vec<[String; 3]>, items: Vec<Json>, more: bool, limit: usize) -> Done {
    if more {
        eprintln!("ephpm: showing the first {limit} keys; --limit shows more");
    }
    report(
        table(&rows),
        json::obj(vec![
            ("items", Json::Array(items)),
            ("truncated", Json::Bool(more)),
        ]),
    )
}

pub fn get(s: &dyn Store, key: &[u8]) -> Done {
    let mut bytes = Vec::new();
    let Some(hit) = s.get(key, &mut bytes)? else {
        return Err(Failure(format!("no key {}", quoted(key))));
    };
    // A PHP array or object (`Serialized`), or a string that holds one (Symfony's and
    // Laravel's pools store serialize()'s output as a string): shown as PHP shows it.
    let decoded = match hit.value {
        Fetched::Serialized => php_value::parse(&bytes),
        Fetched::Str if looks_serialized(&bytes) => php_value::parse(&bytes),
        _ => None,
    };
    let (kind, value, mut text) = match hit.value {
        Fetched::Str => ("string", json::bytes(&bytes), quoted(&bytes)),
        Fetched::Serialized => ("serialized", json::bytes(&bytes), quoted(&bytes)),
        Fetched::Int(n) => ("int", Json::from(n), n.to_string()),
        Fetched::Float(x) => ("float", json::float(x), x.to_string()),
        Fetched::Bool(b) => ("bool", Json::Bool(b), b.to_string()),
        Fetched::Null => ("null", Json::Null, "null".into()),
    };
    let mut json = vec![
        ("key", json::bytes(key)),
        ("type", Json::String(kind.into())),
        ("value", value),
    ];
    if let Some(v) = &decoded {
        text = php_value::export(v, &php_string);
        if hit.value == Fetched::Str {
            text = format!("/* a string holding serialize()'s output */\n{text}");
        }
        json.push(("php", php_value::to_json(v)));
    }
    report(text + "\n", json::obj(json))
}

/// Whether a string may be `serialize()`'s output of an array or an object (the only
/// values worth decoding: a serialized scalar is as readable as it is).
fn looks_serialized(b: &[u8]) -> bool {
    matches!(b.get(..2), Some(b"a:" | b"O:" | b"C:" | b"E:"))
}

/// A string as var_export writes one — `'...'` with `\'` and `\\` — when it is plain
/// text, else as `quote::quoted` shows bytes everywhere in this tool (in double quotes,
/// C-style escapes), so that no control byte reaches the terminal.
fn php_string(b: &[u8]) -> String {
    let q = quoted(b);
    if q.starts_with('"') && !b.is_empty() {
        q
    } else {
        format!(
            "'{}'",
            String::from_utf8_lossy(b)
                .replace('\\', "\\\\")
                .replace('\'', "\\'")
        )
    }
}

pub fn ttl(s: &dyn Store, key: &[u8]) -> Done {
    let (text, secs) = match s.ttl(key)? {
        KeyTtl::Missing => return Err(Failure(format!("no key {}", quoted(key)))),
        KeyTtl::Persistent => ("none".to_string(), None),
        t => (ttl_text(t), seconds(t)),
    };
    report(
        text + "\n",
        json::obj(vec![
            ("key", json::bytes(key)),
            ("ttl", json::opt_f64(secs)),
        ]),
    )
}

pub fn set(s: &dyn Store, key: &[u8], value: &[u8], ttl: Option<f64>) -> Done {
    let lifetime = ttl.map(std::time::Duration::from_secs_f64);
    s.set(key, Value::Str(value), lifetime)?;
    let after = ttl.map_or(String::new(), |t| format!(" for {t}s"));
    report(
        format!("set {}{after}\n", quoted(key)),
        json::obj(vec![("set", json::bytes(key)), ("ttl", json::opt_f64(ttl))]),
    )
}

pub fn deploy(s: &dyn Store) -> Done {
    let release = ephpm::deploy::bump(s)?;
    report(
        format!("release {release}\n"),
        json::obj(vec![("release", Json::from(release))]),
    )
}

pub fn del(s: &dyn Store, key: &[u8]) -> Done {
    if !s.del(key)? {
        return Err(Failure(format!("no key {}", quoted(key))));
    }
    report(
        format!("deleted {}\n", quoted(key)),
        json::obj(vec![("deleted", json::bytes(key))]),
    )
}

pub fn flush(s: &dyn Store, prefix: &[u8], yes: bool) -> Done {
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(Failure(
                "flush deletes keys: refusing without --yes when stdin is not a terminal".into(),
            ));
        }
        let what = if prefix.is_empty() {
            "every key".to_string()
        } else {
            format!("every key starting with {}", in_quotes(prefix))
        };
        let store = quoted(s.describe().as_bytes());
        eprint!("ephpm: delete {what} of {store}? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err(Failure("nothing deleted".into()));
        }
    }
    let n = s.clear(prefix)?;
    report(
        format!("deleted {n} keys\n"),
        json::obj(vec![("deleted", Json::from(n))]),
    )
}

/// The members of the cluster as the host's node sees them, and what it refused.
pub fn cluster(s: &dyn Store) -> Done {
    let Some(h) = s.health()? else {
        return Err(Failure(format!(
            "{} is no cluster: `ephpm cluster` asks a host's node (--store NAME for \
             cluster://NAME, or --dsn cluster://...)",
            quoted(s.describe().as_bytes())
        )));
    };
    let mut rows = vec![
        [
            "MEMBER", "STATE", "HEARD", "SHARE", "KEYS", "PENDING", "DROPPED", "SKEW", "VERSION",
        ]
        .map(String::from),
    ];
    let mut members = Vec::new();
    for m in &h.members {
        let mark = if m.this_node { " (this node)" } else { "" };
        rows.push([
            format!("{}{mark}", quoted(m.id.as_bytes())),
            m.state.name().into(),
            m.last_heard_ms
                .map_or("-".into(), |ms| format!("{:.1}s ago", ms as f64 / 1000.0)),
            format!("{:.1}%", m.share * 100.0),
            m.keys.to_string(),
            m.copies_pending.to_string(),
            m.copies_dropped.to_string(),
            m.clock_skew_ms.map_or("-".into(), |ms| format!("{ms:+}ms")),
            match m.version {
                Some(v) => v.to_string(),
                None => format!("none of {:?}", m.versions),
            },
        ]);
        members.push(json::obj(vec![
            ("id", json::bytes(m.id.as_bytes())),
            ("state", Json::String(m.state.name().into())),
            ("this_node", Json::Bool(m.this_node)),
            ("last_heard_ms", json::opt_u64(m.last_heard_ms)),
            ("share", json::float(m.share)),
            ("keys", Json::from(m.keys)),
            ("copies_pending", Json::from(m.copies_pending)),
            ("copies_dropped", Json::from(m.copies_dropped)),
            (
                "clock_skew_ms",
                m.clock_skew_ms.map_or(Json::Null, Json::from),
            ),
            (
                "versions",
                Json::Array(
                    m.versions
                        .iter()
                        .map(|&v| Json::from(u64::from(v)))
                        .collect(),
                ),
            ),
            ("version", json::opt_u64(m.version.map(u64::from))),
        ]));
    }
    let refused: Vec<String> = h.refusals.iter().map(|(c, n)| format!("{c} {n}")).collect();
    let text = format!(
        "{}refused since the node started: {}\n",
        table(&rows),
        refused.join(", ")
    );
    let json = json::obj(vec![
        ("node", json::bytes(h.node.as_bytes())),
        ("members", Json::Array(members)),
        (
            "refusals",
            json::obj(h.refusals.iter().map(|(c, n)| (c.clone(), Json::from(*n)))),
        ),
    ]);
    report(text, json)
}

pub fn rm_store(name: &str, config: &Config) -> Done {
    if !ephpm::open::remove_host_store(Some(name.into()), config)? {
        return Err(no_store(name, config));
    }
    report(
        format!("removed {}\n", quoted(name.as_bytes())),
        json::obj(vec![("removed", Json::String(name.into()))]),
    )
}

/// Rows as columns two spaces apart, the last one unpadded.
fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut width = [0; N];
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i + 1 < N {
                out += &format!("{cell:<w$}  ", w = width[i]);
            } else {
                out += cell;
            }
        }
        out.push('\n');
    }
    out
}
