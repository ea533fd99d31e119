//! `ephpm-node` behaves like a Unix tool: `--help` on stdout, `--version`, unknown
//! options refused with the usage and exit code 2, and settings errors (a missing, weak or
//! unreadable secret) that name its own options and say how to fix them, exit code 1.

use std::process::{Command, Output};

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

#[test]
fn help_goes_to_stdout_and_version_is_printed() {
    let help = node(&["--help"], None);
    assert_eq!(help.status.code(), Some(0));
    assert!(
        text(&help.stdout).starts_with("usage: ephpm-node"),
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
        (&["--bogus"][..], "unknown option --bogus"),
        (&["--version-please"][..], "unknown option --version-please"),
        (&["--store"][..], "--store needs a value"),
        (&["--shm-size", "lots"][..], "--shm-size takes a size"),
    ] {
        let out = node(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(says) && err.contains("usage: ephpm-node"),
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

    std::fs::write(&file, "short\n").expect("write");
    let out = node(&["--gossip", "127.0.0.1:1", "--secret-file", path], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("too weak"));
    std::fs::remove_file(&file).expect("cleanup");
}
