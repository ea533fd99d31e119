//! The `ephpm` CLI on a store the engine made (in a private shm directory of the test):
//! `stores` shows it in use with its entry count, and a file that is no segment with no
//! count; `keys`, `locks` and `stats` show what the store holds; `rm-store` is refused
//! while the store is mapped and removes it once it is not; looking never creates a store.

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::{MB, TestDir};
use ephpm::store::shm::ShmStore;
use ephpm::store::{Store, Value};

fn ephpm(dir: &TestDir, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ephpm"))
        .arg("--shm-dir")
        .arg(&dir.0)
        .arg("--store")
        .arg("t")
        .args(args)
        .output()
        .expect("run ephpm")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The row of `stores` for `name`, its columns joined by one space.
fn row(o: &Output, name: &str) -> Option<String> {
    stdout(o)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|cols| cols.get(1) == Some(&name))
        .map(|cols| cols[2..].join(" "))
}

#[test]
fn the_cli_sees_a_live_store_and_removes_it_only_when_unused() {
    let dir = TestDir::new("cli");
    let (store, _) = ShmStore::open(&dir.options(16 * MB)).expect("open");
    store
        .set(b"user:1", Value::Str(b"alice"), None)
        .expect("set");
    store
        .set(b"user:2", Value::Int(7), Some(Duration::from_secs(600)))
        .expect("set");
    let fence = store
        .lock_acquire(b"job", b"token", Duration::from_secs(600))
        .expect("lock")
        .expect("free");

    let stores = ephpm(&dir, &["stores"]);
    assert_eq!(stores.status.code(), Some(0));
    assert_eq!(row(&stores, "t").as_deref(), Some("store 16777216 yes 3"));

    let keys = stdout(&ephpm(&dir, &["keys", "user:"]));
    let names: Vec<_> = keys
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["user:1", "user:2"], "{keys}");

    let locks = stdout(&ephpm(&dir, &["--json", "locks"]));
    assert!(locks.contains("\"name\":\"job\""), "{locks}");
    assert!(locks.contains(&format!("\"fence\":{fence}}}")), "{locks}");

    let stats = stdout(&ephpm(&dir, &["--json", "stats"]));
    assert!(stats.contains("\"entries\":3,"), "{stats}");

    let refused = ephpm(&dir, &["rm-store", "t"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("in use"));
    drop(store);
    assert_eq!(
        row(&ephpm(&dir, &["stores"]), "t").as_deref(),
        Some("store 16777216 no 3")
    );
    let removed = ephpm(&dir, &["rm-store", "t"]);
    assert_eq!(removed.status.code(), Some(0), "{removed:?}");
    assert_eq!(row(&ephpm(&dir, &["stores"]), "t"), None);
}

#[test]
fn looking_creates_nothing_and_a_foreign_file_has_no_count() {
    let dir = TestDir::new("cli-empty");
    let stats = ephpm(&dir, &["stats"]);
    assert_eq!(stats.status.code(), Some(1));
    assert_eq!(
        std::fs::read_dir(&dir.0).expect("ls").count(),
        0,
        "nothing made"
    );

    let (store, _) = ShmStore::open(&dir.options(16 * MB)).expect("open");
    let stray = store.path().with_file_name("stray");
    std::fs::write(&stray, vec![0u8; 8192]).expect("write");
    let stores = ephpm(&dir, &["stores"]);
    assert_eq!(row(&stores, "stray").as_deref(), Some("store 8192 no ?"));
}
