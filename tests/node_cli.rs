//! `ephpm-node` behaves like a Unix tool: `--help` on stdout, `--version`, unknown
//! options refused with the usage and exit code 2, and settings errors (a missing, weak or
//! unreadable secret, a secret file others may read) that name its own options and say
//! how to fix them, exit code 1.

mod common;

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn node(args: &[&str], secret: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ephpm-node"));
    cmd.args(args);
    match secret {
        Some(s) => cmd.env("EPHPM_CLUSTER_SECRET", s),
        None => cmd.env_remove("EPHPM_CLUSTER_SECRET"),
    };
    cmd.output().expect("run ephpm-node")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `ephpm-node` with `args` and no secret in the environment, killed if it still runs
/// after `limit`: a node that took its settings runs until stopped.
fn node_for(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ephpm-node"))
        .args(args)
        .env_remove("EPHPM_CLUSTER_SECRET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ephpm-node");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().expect("output")
}

/// A secret file with exactly `mode` (whatever the umask).
fn secret_file(path: &Path, secret: &str, mode: u32) {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .expect("open");
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .expect("chmod");
    file.write_all(secret.as_bytes()).expect("write");
}

#[test]
fn help_goes_to_stdout_and_version_is_printed() {
    let help = node(&["--help"], None);
    assert_eq!(help.status.code(), Some(0));
    assert!(
        text(&help.stdout).contains("Usage: ephpm-node [OPTIONS]"),
        "{}",
        text(&help.stdout)
    );
    assert!(text(&help.stdout).contains("exit codes"));
    assert!(help.stderr.is_empty());
    let version = node(&["--version"], None);
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        text(&version.stdout).trim(),
        format!("ephpm-node {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn unknown_options_and_missing_values_are_usage_errors() {
    for (args, says) in [
        (&["--bogus"][..], "unexpected argument '--bogus'"),
        (
            &["--version-please"][..],
            "unexpected argument '--version-please'",
        ),
        (&["--store"][..], "a value is required for '--store <NAME>'"),
        (
            &["--shm-size", "lots"][..],
            "invalid value 'lots' for '--shm-size <SIZE>': a size such as 64M",
        ),
        (
            &["--store", "a/b"][..],
            "invalid value 'a/b' for '--store <NAME>'",
        ),
    ] {
        let out = node(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(says) && err.contains("try '--help'"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn secrets_are_checked_at_startup_with_the_fix_in_the_message() {
    let run = ["--gossip", "127.0.0.1:1"];
    let missing = node(&run, None);
    assert_eq!(missing.status.code(), Some(1));
    let err = text(&missing.stderr);
    assert!(
        err.contains("--secret-file or EPHPM_CLUSTER_SECRET") && !err.contains("ephpm.cluster"),
        "{err}"
    );

    let blank = node(&run, Some("  "));
    assert_eq!(blank.status.code(), Some(1));
    assert!(
        text(&blank.stderr).contains("is empty"),
        "{}",
        text(&blank.stderr)
    );
    for weak in ["x", "hunter2", "phpt-cluster-secret"] {
        let out = node(&run, Some(weak));
        assert_eq!(out.status.code(), Some(1), "{weak:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("128 bits") && err.contains("openssl rand -base64 32"),
            "{weak:?}: {err}"
        );
    }

    let file = std::env::temp_dir().join(format!("ephpm-node-cli-{}.secret", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let path = file.to_str().expect("utf-8");
    let out = node(&["--gossip", "127.0.0.1:1", "--secret-file", path], None);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(path) && err.contains("openssl rand -base64 32 >"),
        "{err}"
    );
    assert!(
        err.contains("--secret-file") && !err.contains("ephpm.cluster"),
        "{err}"
    );

    secret_file(&file, "short\n", 0o600);
    let out = node(&["--gossip", "127.0.0.1:1", "--secret-file", path], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("too weak"));
    std::fs::remove_file(&file).expect("cleanup");
}

/// A secret file its group or other users may read or write is refused, as ssh refuses
/// such a private key: the message names the file, its mode and `chmod 600`.
#[test]
fn a_secret_file_others_may_read_or_write_is_refused() {
    let file = std::env::temp_dir().join(format!("ephpm-node-mode-{}.secret", std::process::id()));
    let path = file.to_str().expect("utf-8");
    // Should a node start after all, it runs on a store of its own.
    let shm = std::env::temp_dir().join(format!("ephpm-node-mode-{}.shm", std::process::id()));
    std::fs::create_dir_all(&shm).expect("mkdir");
    let shm = shm.to_str().expect("utf-8");
    for mode in [0o644, 0o640, 0o666, 0o604, 0o620] {
        secret_file(
            &file,
            "q0LUS+cgzC3pWrhNN6Y1yUqDB7cOhHAtjCDQmjHUOSc=\n",
            mode,
        );
        let out = node_for(
            &[
                "--gossip",
                "127.0.0.1:1",
                "--shm-dir",
                shm,
                "--secret-file",
                path,
            ],
            Duration::from_secs(10),
        );
        assert_eq!(out.status.code(), Some(1), "{mode:o}: {out:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(path)
                && err.contains(&format!("mode {mode:04o}"))
                && err.contains(&format!("chmod 600 {path}"))
                && err.contains("--secret-file")
                && !err.contains("ephpm.cluster"),
            "{mode:o}: {err}"
        );
    }
    // Private again, the file is read: its (weak) secret is what is refused now.
    secret_file(&file, "short\n", 0o600);
    let out = node(&["--gossip", "127.0.0.1:1", "--secret-file", path], None);
    assert!(text(&out.stderr).contains("too weak"), "{out:?}");
    std::fs::remove_file(&file).expect("cleanup");
    std::fs::remove_dir_all(shm).expect("cleanup");
}

/// What the node logs goes by level: `--log-level warn` keeps the warning (no secret)
/// and drops the info lines; under systemd (`JOURNAL_STREAM`) each line starts with the
/// priority journald reads, `<4>` for a warning, `<6>` for info.
#[test]
fn log_lines_go_by_level_with_journalds_priorities_under_systemd() {
    let dir = common::TestDir::new("node-logs");
    let run = |extra: &[&str], journald: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ephpm-node"));
        cmd.args([
            "--store",
            "logs",
            "--gossip",
            "127.0.0.1:0",
            "--allow-insecure-no-auth",
        ])
        .args(["--shm-dir", dir.0.to_str().unwrap()])
        .args(extra)
        .env_remove("EPHPM_CLUSTER_SECRET")
        .env_remove("RUST_LOG")
        .stderr(Stdio::piped());
        if journald {
            cmd.env("JOURNAL_STREAM", "8:1234");
        } else {
            cmd.env_remove("JOURNAL_STREAM");
        }
        let mut child = cmd.spawn().expect("run ephpm-node");
        let started = Instant::now();
        let wanted = "WITHOUT AUTHENTICATION";
        let mut seen = String::new();
        let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        while !seen.contains(wanted) && started.elapsed() < Duration::from_secs(20) {
            let mut line = String::new();
            if std::io::BufRead::read_line(&mut err, &mut line).unwrap_or(0) == 0 {
                break;
            }
            seen.push_str(&line);
        }
        let _ = child.kill();
        let _ = child.wait();
        seen
    };
    let all = run(&[], false);
    assert!(all.contains("ephpm-node: node "), "{all}");
    assert!(all.contains("ephpm-node: WARN: cluster node "), "{all}");
    let warnings = run(&["--log-level", "warn"], false);
    assert!(warnings.contains("WARN: cluster node"), "{warnings}");
    assert!(
        !warnings.contains("waiting for the host's lease"),
        "{warnings}"
    );
    let journal = run(&[], true);
    assert!(journal.starts_with("<6>ephpm-node: node "), "{journal}");
    assert!(journal.contains("\n<4>ephpm-node: WARN: "), "{journal}");
}
