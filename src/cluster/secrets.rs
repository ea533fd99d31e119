//! The cluster's secrets: where they come from and how strong they must be.
//!
//! Every key of the cluster is derived from a secret (`crypto/mod.rs`), so a guessable one
//! is an open cluster. A secret must carry at least 128 bits: 16 bytes written as base64
//! (22 or more characters, what `openssl rand -base64 32` prints), as hex (32 or more
//! digits), or any other string of 32 or more characters.
//!
//! Several secrets may be given at once — `ephpm.cluster.secret = "NEW,OLD"`, or one per
//! line of `ephpm.cluster.secret_file` — so that a fleet rotates without downtime: the
//! first one signs what this node sends, every one of them is accepted from peers. Move
//! every node to "OLD,NEW" (each still signs with OLD, which all accept), then every node
//! to "NEW,OLD" (all accept NEW by now), then to "NEW" alone (nobody signs with OLD any
//! more). The file keeps the secret out of `ini_get()`, phpinfo() and `php --re`, and a
//! running node takes a changed file within a second (`keyring.rs`), so the three steps
//! need no restart; in php.ini, quote a secret that ends in `=`.
//!
//! A secret file that its group or other users may read or write is refused, as ssh
//! refuses such a private key: whoever reads it is a member of the cluster, and whoever
//! writes it chooses the next secret.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use base64::Engine;

use super::ClusterError;
use crate::config::ClusterSettings;

/// Bytes of key material a secret must carry.
const MIN_BYTES: usize = 16;

const HOW: &str = "make one with `openssl rand -base64 32`";

/// The secrets the settings name, first one first: the file's lines when
/// `secret_file` is set, else the comma-separated `secret`.
pub fn from_settings(s: &ClusterSettings) -> Result<Vec<Vec<u8>>, ClusterError> {
    if s.secret_file.trim().is_empty() {
        return Ok(parse(s.secret.split(',')));
    }
    if !s.secret.is_empty() {
        return Err(ClusterError::Config(
            "ephpm.cluster.secret and ephpm.cluster.secret_file are both set: keep one".into(),
        ));
    }
    read_file(Path::new(s.secret_file.trim()))
}

/// The secrets of a secret file, one per line, first one first (what a running node
/// reads again when the file changes: `keyring.rs`). The file must be private to its
/// owner (see the module doc); its mode is checked on the descriptor it is read from.
pub fn read_file(path: &Path) -> Result<Vec<Vec<u8>>, ClusterError> {
    let unreadable = |e: std::io::Error| {
        let path = path.display();
        ClusterError::Config(format!(
            "ephpm.cluster.secret_file {path} cannot be read: {e}; put the secret in it \
             (one per line while rotating), readable only by this user: \
             openssl rand -base64 32 > {path}; chmod 600 {path}"
        ))
    };
    let mut file = File::open(path).map_err(unreadable)?;
    let mode = file.metadata().map_err(unreadable)?.permissions().mode();
    check_private(path, mode)?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(unreadable)?;
    Ok(parse(text.lines()))
}

/// Refuses a secret file that group or others may read or write (mode & 0o077).
fn check_private(path: &Path, mode: u32) -> Result<(), ClusterError> {
    if mode & 0o077 == 0 {
        return Ok(());
    }
    let path = path.display();
    Err(ClusterError::Config(format!(
        "ephpm.cluster.secret_file {path} has mode {:04o}: its group or other users can \
         read or write it, and whoever reads it is a member of the cluster; \
         make it private to its owner: chmod 600 {path}",
        mode & 0o7777
    )))
}

fn parse<'a>(listed: impl Iterator<Item = &'a str>) -> Vec<Vec<u8>> {
    listed
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.as_bytes().to_vec())
        .collect()
}

/// Refuses a secret with less than 128 bits (see the module doc).
pub fn check_strength(secret: &[u8]) -> Result<(), ClusterError> {
    let decoded = |engine: &base64::engine::GeneralPurpose| engine.decode(secret).ok();
    let base64_bytes = decoded(&base64::engine::general_purpose::STANDARD)
        .or_else(|| decoded(&base64::engine::general_purpose::STANDARD_NO_PAD))
        .map_or(0, |b| b.len());
    let hex_bytes = if secret.iter().all(u8::is_ascii_hexdigit) {
        secret.len() / 2
    } else {
        0
    };
    let strong =
        base64_bytes >= MIN_BYTES || hex_bytes >= MIN_BYTES || secret.len() >= 2 * MIN_BYTES;
    if strong {
        return Ok(());
    }
    Err(ClusterError::Config(format!(
        "a cluster secret of {} characters is too weak: it needs at least 128 bits (16 random \
         bytes: 22+ base64 characters, 32+ hex digits or 32+ characters); {HOW}",
        secret.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_secrets_are_refused_and_strong_ones_taken() {
        for weak in [
            "",
            "x",
            " ",
            "hunter2",
            "phpt-cluster-secret",
            "0123456789abcdef",
        ] {
            assert!(check_strength(weak.as_bytes()).is_err(), "{weak:?}");
        }
        for strong in [
            "q0LUS+cgzC3pWrhNN6Y1yUqDB7cOhHAtjCDQmjHUOSc=", // openssl rand -base64 32
            "q0LUS+cgzC3pWrhNN6Y1yQ",                       // 16 bytes, unpadded
            "00112233445566778899aabbccddeeff",             // 16 bytes of hex
            "correct horse battery staple and more",        // 32+ characters
        ] {
            assert!(check_strength(strong.as_bytes()).is_ok(), "{strong:?}");
        }
    }

    #[test]
    fn several_secrets_come_first_one_first() {
        let s = ClusterSettings {
            secret: " new-one , old-one ,".into(),
            ..ClusterSettings::default()
        };
        assert_eq!(
            from_settings(&s).unwrap_or_default(),
            vec![b"new-one".to_vec(), b"old-one".to_vec()]
        );
    }

    #[test]
    fn only_a_private_secret_file_is_taken() {
        let path = Path::new("/etc/ephpm/cluster.secret");
        assert!(check_private(path, 0o100600).is_ok());
        assert!(check_private(path, 0o100400).is_ok());
        for mode in [0o644, 0o640, 0o604, 0o660, 0o666, 0o602, 0o620] {
            let e = check_private(path, 0o100000 | mode)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.contains(&format!("mode {mode:04o}"))
                    && e.contains("/etc/ephpm/cluster.secret")
                    && e.contains("chmod 600"),
                "{mode:o}: {e}"
            );
        }
    }

    #[test]
    fn a_missing_secret_file_says_how_to_make_one() {
        let s = ClusterSettings {
            secret_file: "/nonexistent/ephpm.secret".into(),
            ..ClusterSettings::default()
        };
        let e = from_settings(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("/nonexistent/ephpm.secret") && e.contains("openssl rand"),
            "{e}"
        );
    }
}
