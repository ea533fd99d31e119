//! The commands, each turning a store (or the host's segments) into a report: the text
//! for a terminal and the JSON document for `--json`, always both, so that the two
//! cannot drift apart.

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use ephpm::config::Config;
use ephpm::store::shm::inventory::{self, Entries, Kind};
use ephpm::store::{self, Fetched, KeyTtl, ScanEntry, Store};

use super::json::Json;
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
    match store::open_existing(dsn, config)? {
        Some(s) => Ok(s),
        None => Err(Failure(format!(
            "no store {dsn} for user {} under {}",
            user::name_of(ephpm::store::shm::euid()),
            config.shm_dir
        ))),
    }
}

pub fn stores(shm_dir: &str, uid: Option<u32>) -> Done {
    let segments = inventory::list(Path::new(shm_dir), uid)?;
    let mut rows = vec![["OWNER", "NAME", "KIND", "SIZE", "IN-USE", "ENTRIES"].map(String::from)];
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
        let name = s.name.to_string_lossy().into_owned();
        rows.push([
            owner.clone(),
            name.clone(),
            kind.into(),
            s.size.to_string(),
            if s.in_use { "yes" } else { "no" }.into(),
            entries,
        ]);
        json.push(Json::Obj(vec![
            ("owner", Json::Str(owner)),
            ("uid", Json::Uint(s.owner.into())),
            ("name", Json::Str(name)),
            ("kind", Json::Str(kind.into())),
            ("size", Json::Uint(s.size)),
            ("in_use", Json::Bool(s.in_use)),
            ("entries", Json::opt_u64(counted)),
            ("truncated", Json::Bool(s.entries == Entries::Truncated)),
            ("path", Json::Str(s.path.display().to_string())),
        ]));
    }
    report(table(&rows), Json::Arr(json))
}

pub fn stats(s: &dyn Store) -> Done {
    let st = s.stats()?;
    let numbers = st.named();
    let backend = s.describe();
    let mut rows = vec![["backend".to_string(), backend.clone()]];
    let mut json = vec![("backend", Json::Str(backend))];
    for (name, n) in numbers {
        rows.push([name.into(), n.to_string()]);
        json.push((name, Json::Uint(n)));
    }
    report(table(&rows), Json::Obj(json))
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

fn shown(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

pub fn keys(s: &dyn Store, prefix: &str, limit: usize) -> Done {
    let (found, more) = walk(s, prefix.as_bytes(), limit, |_| true)?;
    let mut rows = vec![["KEY", "TTL", "SIZE"].map(String::from)];
    let mut json = Vec::new();
    for e in &found {
        rows.push([shown(&e.key), ttl_text(e.ttl), e.size.to_string()]);
        json.push(Json::Obj(vec![
            ("key", Json::bytes(&e.key)),
            ("ttl", Json::opt_f64(seconds(e.ttl))),
            ("size", Json::Uint(e.size)),
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
        rows.push([shown(&e.key), ttl_text(e.ttl), fence.to_string()]);
        json.push(Json::Obj(vec![
            ("name", Json::bytes(&e.key)),
            ("ttl", Json::opt_f64(seconds(e.ttl))),
            ("fence", Json::Uint(fence)),
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
        Json::Obj(vec![
            ("items", Json::Arr(items)),
            ("truncated", Json::Bool(more)),
        ]),
    )
}

pub fn get(s: &dyn Store, key: &str) -> Done {
    let mut bytes = Vec::new();
    let Some(hit) = s.get(key.as_bytes(), &mut bytes)? else {
        return Err(Failure(format!("no key {key}")));
    };
    let (kind, value, mut text) = match hit.value {
        Fetched::Str => ("string", Json::bytes(&bytes), bytes.clone()),
        Fetched::Serialized => ("serialized", Json::bytes(&bytes), bytes.clone()),
        Fetched::Int(n) => ("int", Json::Int(n), n.to_string().into_bytes()),
        Fetched::Float(x) => ("float", Json::Float(x), x.to_string().into_bytes()),
        Fetched::Bool(b) => ("bool", Json::Bool(b), b.to_string().into_bytes()),
        Fetched::Null => ("null", Json::Null, b"null".to_vec()),
    };
    text.push(b'\n');
    Ok(Report {
        text,
        json: Json::Obj(vec![
            ("key", Json::Str(key.into())),
            ("type", Json::Str(kind.into())),
            ("value", value),
        ]),
    })
}

pub fn del(s: &dyn Store, key: &str) -> Done {
    if !s.del(key.as_bytes())? {
        return Err(Failure(format!("no key {key}")));
    }
    report(
        format!("deleted {key}\n"),
        Json::Obj(vec![("deleted", Json::Str(key.into()))]),
    )
}

pub fn flush(s: &dyn Store, prefix: &str, yes: bool) -> Done {
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(Failure(
                "flush deletes keys: refusing without --yes when stdin is not a terminal".into(),
            ));
        }
        let what = if prefix.is_empty() {
            "every key".to_string()
        } else {
            format!("every key starting with {prefix:?}")
        };
        eprint!("ephpm: delete {what} of {}? [y/N] ", s.describe());
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Err(Failure("nothing deleted".into()));
        }
    }
    let n = s.clear(prefix.as_bytes())?;
    report(
        format!("deleted {n} keys\n"),
        Json::Obj(vec![("deleted", Json::Uint(n))]),
    )
}

pub fn rm_store(name: &str, config: &Config) -> Done {
    if !store::remove_host_store(Some(name.into()), config)? {
        return Err(Failure(format!(
            "no store {name} for user {} under {}",
            user::name_of(ephpm::store::shm::euid()),
            config.shm_dir
        )));
    }
    report(
        format!("removed {name}\n"),
        Json::Obj(vec![("removed", Json::Str(name.into()))]),
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
