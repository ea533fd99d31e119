//! The engine's floors run one way (`src/lib.rs`, "Layout, from the ground up"): every
//! `crate::`, `super::` and `self::` path in `src/` is resolved to the module it names,
//! and this test fails when
//! - a module uses one on a higher floor, or another module of its own floor (the
//!   backends stay beside each other), or
//! - modules reach each other in a circle (a module using what an enclosing module
//!   declares — `super::Error` — is no circle: that is how Rust modules are built).
//!
//! It reads source text: comments are left out, and a path is taken to be a module path
//! as far as a file for it exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, lowest first. A module belongs to the longest prefix listed here.
const FLOORS: &[&[&str]] = &[
    &["ground", "codec", "config", "runtime", "logging", "fault"],
    &["store"],
    &["store::shm", "store::redis"],
    &["wire"],
    &["store::cluster", "cluster"],
    &["open"],
    &["keyspace", "lock", "rwlock", "resp_probe"],
    &["memo", "session", "deploy"],
    &["stale"],
    &["resp"],
    &["php"],
];

type Module = Vec<String>;

#[test]
fn imports_never_run_up_a_floor_nor_between_neighbours() {
    let files = modules();
    let mut wrong = Vec::new();
    for (module, file) in &files {
        let (floor, unit) = floor_of(module);
        for used in uses(module, file, &files) {
            let (used_floor, used_unit) = floor_of(&used);
            if used_floor > floor || (used_floor == floor && used_unit != unit) {
                wrong.push(format!("{} uses {}", name(module), name(&used)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the floors:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_files_reach_each_other_in_a_circle() {
    let files = modules();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, file) in &files {
        let targets = uses(module, file, &files)
            .into_iter()
            .filter(|used| !module.starts_with(used))
            .collect();
        edges.insert(module.clone(), targets);
    }
    let circles: Vec<String> = edges
        .keys()
        .filter_map(|start| circle_from(start, &edges))
        .map(|c| c.iter().map(name).collect::<Vec<_>>().join(" -> "))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(circles.is_empty(), "circles:\n{}", circles.join("\n"));
}

/// The check itself can fail: a made-up module graph with an upward use and a circle.
#[test]
fn the_checks_see_an_upward_use_and_a_circle() {
    assert!(floor_of(&path("store::shm::shard")) > floor_of(&path("store")));
    assert!(floor_of(&path("cluster::node")).0 > floor_of(&path("store::shm")).0);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    edges.insert(path("php::call"), [path("php::error")].into());
    edges.insert(path("php::error"), [path("php::call")].into());
    assert!(circle_from(&path("php::call"), &edges).is_some());
}

/// Every module of `src/` (but the binaries and the crate root) and its source file.
fn modules() -> BTreeMap<Module, PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("an entry").path();
            let rel = path.strip_prefix(&src).expect("below src/").to_path_buf();
            if rel.starts_with("bin") {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && rel != Path::new("lib.rs") {
                let mut module: Module = rel
                    .with_extension("")
                    .iter()
                    .map(|s| s.to_string_lossy().into_owned())
                    .collect();
                if module.last().is_some_and(|s| s == "mod") {
                    module.pop();
                }
                out.insert(module, path);
            }
        }
    }
    out
}

fn path(s: &str) -> Module {
    s.split("::").map(String::from).collect()
}

fn name(m: &Module) -> String {
    m.join("::")
}

/// The floor of a module, and the listed prefix it belongs to.
fn floor_of(module: &Module) -> (usize, String) {
    let whole = name(module);
    FLOORS
        .iter()
        .enumerate()
        .flat_map(|(i, units)| units.iter().map(move |u| (i, *u)))
        .filter(|(_, u)| whole == *u || whole.starts_with(&format!("{u}::")))
        .max_by_key(|(_, u)| u.len())
        .map(|(i, u)| (i, u.to_string()))
        .unwrap_or_else(|| panic!("{whole} is on no floor: add it to FLOORS"))
}

/// The modules of the crate that `file` (module `module`) names in its code.
fn uses(module: &Module, file: &Path, files: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let code = without_comments(&std::fs::read_to_string(file).expect("readable"));
    let mut found = BTreeSet::new();
    for raw in paths_in(&code) {
        let mut segs: Vec<&str> = raw.split("::").collect();
        let mut base: Module = match segs.first() {
            Some(&"crate") => Vec::new(),
            Some(&"self") => module.clone(),
            Some(&"super") => module[..module.len().saturating_sub(1)].to_vec(),
            _ => continue,
        };
        segs.remove(0);
        while segs.first() == Some(&"super") {
            base.pop();
            segs.remove(0);
        }
        // The longest module named: as far as a file exists for it.
        let mut target = base.clone();
        for s in segs {
            let mut next = target.clone();
            next.push(s.to_string());
            if files.contains_key(&next) {
                target = next;
            } else {
                break;
            }
        }
        if !target.is_empty() && &target != module {
            found.insert(target);
        }
    }
    found
}

/// Source without `//` comments (doc comments included) and string literals' contents.
fn without_comments(source: &str) -> String {
    let mut out = String::new();
    for line in source.lines() {
        let mut in_str = false;
        let mut prev = '\0';
        let mut kept = String::new();
        for c in line.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str && c == '/' && prev == '/' {
                kept.pop();
                break;
            }
            if !in_str {
                kept.push(c);
            }
            prev = if prev == '\\' && c == '\\' { '\0' } else { c };
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// Every `crate::…`, `super::…` and `self::…` path, groups (`crate::a::{b, c::d}`)
/// expanded into one path each.
fn paths_in(code: &str) -> Vec<String> {
    let bytes: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        if at_word
            && (rest.starts_with("crate::")
                || rest.starts_with("super::")
                || rest.starts_with("self::"))
        {
            i = read_path(&bytes, i, String::new(), &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// Reads one path (or group) from `at`, with `prefix` before it; returns where it ends.
fn read_path(c: &[char], mut at: usize, prefix: String, out: &mut Vec<String>) -> usize {
    let mut path = prefix;
    loop {
        let start = at;
        while at < c.len() && (c[at].is_alphanumeric() || c[at] == '_') {
            at += 1;
        }
        path.extend(&c[start..at]);
        if c.get(at) == Some(&':') && c.get(at + 1) == Some(&':') {
            at += 2;
            if c.get(at) == Some(&'{') {
                at += 1;
                loop {
                    while at < c.len() && (c[at].is_whitespace() || c[at] == ',') {
                        at += 1;
                    }
                    if at >= c.len() || c[at] == '}' {
                        return at + 1;
                    }
                    at = read_path(c, at, format!("{path}::"), out);
                    // `a as b` inside a group: skip the alias.
                    while at < c.len() && !matches!(c[at], ',' | '}') {
                        at += 1;
                    }
                }
            }
            path.push_str("::");
        } else {
            out.push(path);
            return at;
        }
    }
}

/// A circle through `start`, if there is one (depth-first, each module once).
fn circle_from(start: &Module, edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    let mut stack = vec![(start.clone(), vec![start.clone()])];
    let mut seen = BTreeSet::new();
    while let Some((at, trail)) = stack.pop() {
        for next in edges.get(&at).into_iter().flatten() {
            if next == start {
                let mut circle = trail.clone();
                circle.push(start.clone());
                // One spelling per circle: it starts at its smallest module.
                return (trail.iter().min() == Some(start)).then_some(circle);
            }
            if seen.insert(next.clone()) {
                let mut longer = trail.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}
