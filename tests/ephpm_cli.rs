//! The `ephpm` CLI on a store the engine made (in a private shm directory of the test):
//! `stores` shows it in use with its entry count, and a file that is no segment with no
//! count; `keys`, `locks` and `stats` show what the store holds; `rm-store` is refused
//! while the store is mapped and removes it once it is not; looking never creates a store.
//! Keys, values, lock and file names that somebody else chose reach the terminal quoted,
//! `--json` keeps binary keys apart, arguments are bytes, and `stores` lives through a
//! segment truncated under it.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use base64::Engine;
use common::{MB, TestDir};
use ephpm::store::shm::ShmStore;
use ephpm::store::{Store, Value};

/// The tests run as threads of one process, and a child being spawned holds a copy of
/// every descriptor of the process until it execs — a dropped store's segment among them,
/// whose use lock then still looks held. So every spawn holds this lock's read side to
/// the child's exit, and a test closes a store under its write side (`close`).
static SPAWNS: RwLock<()> = RwLock::new(());

/// Drops `store` while no child is being spawned, so that no copy of its descriptor
/// outlives it: `stores` then shows it unused.
fn close(store: ShmStore) {
    let _quiet = SPAWNS.write().unwrap_or_else(|e| e.into_inner());
    drop(store);
}

fn ephpm<S: AsRef<OsStr>>(dir: &TestDir, args: &[S]) -> Output {
    let _spawning = SPAWNS.read().unwrap_or_else(|e| e.into_inner());
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
    assert_eq!(row(&stores, "t").as_deref(), Some("store 16777216 yes 1 3"));

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
    close(store);
    assert_eq!(
        row(&ephpm(&dir, &["stores"]), "t").as_deref(),
        Some("store 16777216 no 0 3")
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
    assert_eq!(row(&stores, "stray").as_deref(), Some("store 8192 no 0 ?"));
}

/// An OSC 52 escape: a terminal that obeys it puts "hi" on the clipboard.
const OSC52: &[u8] = b"\x1b]52;c;aGk=\x07";

/// Output a terminal may show: UTF-8 with no control character but the line ends and no
/// bidi override, so no escape sequence, carriage return or reordering gets through.
fn assert_terminal_safe(what: &str, out: &[u8]) {
    let text = std::str::from_utf8(out).unwrap_or_else(|e| panic!("{what}: not UTF-8: {e}"));
    let bad = text
        .chars()
        .find(|&c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c));
    assert_eq!(bad, None, "{what}: {text:?}");
}

fn os(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// A cookie's session id, a value, a lock name and a file name, each with escapes in
/// it, come out quoted git-style (octal escapes, one line per row).
#[test]
fn hostile_keys_values_and_file_names_are_quoted() {
    let dir = TestDir::new("cli-hostile");
    let (store, _) = ShmStore::open(&dir.options(16 * MB)).expect("open");
    let session = [b"session:".as_slice(), OSC52].concat();
    store
        .set(&session, Value::Str(b"\rroot\x1b[2J\nline\xff"), None)
        .expect("set");
    store
        .lock_acquire(b"job\x1b[31m\xe2\x80\xae", b"t", Duration::from_secs(600))
        .expect("lock")
        .expect("free");
    std::fs::write(
        store
            .path()
            .with_file_name(os(b"evil\x1b]0;x\x07\nroot t store 1 yes 9\xff")),
        [0u8; 8192],
    )
    .expect("plant a file");

    let keys = ephpm(&dir, &["keys", "session:"]);
    assert_terminal_safe("keys", &keys.stdout);
    assert_eq!(
        String::from_utf8_lossy(&keys.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.split("  ").next()),
        Some(r#""session:\033]52;c;aGk=\a""#)
    );
    let get = ephpm(&dir, &[os(b"get"), os(&session)]);
    assert_eq!(stdout(&get), "\"\\rroot\\033[2J\\nline\\377\"\n");
    let locks = ephpm(&dir, &["locks"]);
    assert_terminal_safe("locks", &locks.stdout);
    assert!(
        stdout(&locks).contains(r#""job\033[31m\342\200\256""#),
        "{}",
        stdout(&locks)
    );
    let stores = ephpm(&dir, &["stores"]);
    assert_terminal_safe("stores", &stores.stdout);
    assert_eq!(stdout(&stores).lines().count(), 3, "{}", stdout(&stores));
    assert!(
        stdout(&stores).contains(r#""evil\033]0;x\a\nroot t store 1 yes 9\377""#),
        "{}",
        stdout(&stores)
    );
    for json in [
        &["--json", "keys"][..],
        &["--json", "locks"],
        &["--json", "stores"],
    ] {
        assert_terminal_safe(&json.join(" "), &ephpm(&dir, json).stdout);
    }
    let missing = ephpm(&dir, &[os(b"get"), os(OSC52)]);
    assert_eq!(missing.status.code(), Some(1));
    assert_terminal_safe("stderr", &missing.stderr);
}

/// Two keys whose bytes are not UTF-8 stay two in `--json` (base64 where not UTF-8), and
/// a key given as bytes that are not UTF-8 addresses exactly that key.
#[test]
fn binary_keys_stay_apart_in_json_and_as_arguments() {
    let dir = TestDir::new("cli-binary");
    let (store, _) = ShmStore::open(&dir.options(16 * MB)).expect("open");
    store
        .set(b"bin\xff\xfe", Value::Str(b"first\xff"), None)
        .expect("set");
    store
        .set(b"bin\xfe\xff", Value::Str(b"second"), None)
        .expect("set");

    let keys = stdout(&ephpm(&dir, &["--json", "keys", "bin"]));
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    assert_eq!(
        keys,
        format!(
            "{{\"items\":[{{\"key\":{{\"base64\":\"{}\"}},\"ttl\":null,\"size\":6}},\
             {{\"key\":{{\"base64\":\"{}\"}},\"ttl\":null,\"size\":6}}],\"truncated\":false}}\n",
            b64(b"bin\xfe\xff"),
            b64(b"bin\xff\xfe")
        )
    );
    let get = ephpm(&dir, &[os(b"--json"), os(b"get"), os(b"bin\xff\xfe")]);
    assert_eq!(
        stdout(&get),
        format!(
            "{{\"key\":{{\"base64\":\"{}\"}},\"type\":\"string\",\"value\":{{\"base64\":\"{}\"}}}}\n",
            b64(b"bin\xff\xfe"),
            b64(b"first\xff")
        )
    );
    assert_eq!(
        stdout(&ephpm(&dir, &[os(b"get"), os(b"bin\xfe\xff")])),
        "second\n"
    );
    let del = ephpm(&dir, &[os(b"del"), os(b"bin\xfe\xff")]);
    assert_eq!(stdout(&del), "deleted \"bin\\376\\377\"\n");
    assert!(store.exists(b"bin\xff\xfe").expect("exists"));
    assert!(!store.exists(b"bin\xfe\xff").expect("exists"));

    let bad = ephpm(&dir, &[os(b"--store"), os(b"t\xff"), os(b"stats")]);
    assert_eq!(bad.status.code(), Some(2), "not a panic: {bad:?}");
}

/// A segment shorter than its header says is listed as truncated.
#[test]
fn a_truncated_segment_is_listed_as_such() {
    let dir = TestDir::new("cli-short");
    let (store, _) = ShmStore::open(&dir.options(16 * MB)).expect("open");
    let path = store.path().to_path_buf();
    close(store);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_len(4096))
        .expect("truncate");
    let stores = ephpm(&dir, &["stores"]);
    assert_eq!(
        row(&stores, "t").as_deref(),
        Some("store 4096 no 0 truncated")
    );
    let json = stdout(&ephpm(&dir, &["--json", "stores"]));
    assert!(
        json.contains(r#""entries":null,"truncated":true"#),
        "{json}"
    );
}

/// Root's `stores` reads another user's segment while that user truncates it and grows
/// it again, round after round: every run lists it and exits 0, none dies of SIGBUS.
#[test]
fn stores_lives_through_a_segment_truncated_while_it_reads() {
    let dir = TestDir::new("cli-truncating");
    let (store, _) = ShmStore::open(&dir.options(16 * MB)).expect("open");
    let path = store.path().to_path_buf();
    close(store);
    let stop = Arc::new(AtomicBool::new(false));
    let truncating = {
        let stop = stop.clone();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                file.set_len(4096).expect("shrink");
                file.set_len(16 * MB).expect("grow");
            }
        })
    };
    for round in 0..300 {
        let out = ephpm(&dir, &["stores"]);
        assert_eq!(out.status.signal(), None, "round {round}: {out:?}");
        assert_eq!(out.status.code(), Some(0), "round {round}: {out:?}");
        assert!(row(&out, "t").is_some(), "round {round}: {}", stdout(&out));
    }
    stop.store(true, Ordering::Relaxed);
    truncating.join().expect("the truncating thread");
}
