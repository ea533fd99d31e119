//! What a running `ephpm-resp` says of itself, asked over its unix socket: for
//! `php --ri ephpm` and `ephpm stats`, which must show whether Redis clients can reach
//! the store and how many do. A bounded look: a socket that does not answer within a
//! fraction of a second is reported as such, never waited for.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the look may take, each way.
const PATIENCE: Duration = Duration::from_millis(300);

/// The server's default socket for the store whose segment is at `segment`: beside it,
/// `<name>.resp.sock`.
pub fn default_socket(segment: &Path) -> PathBuf {
    let name = segment.file_name().unwrap_or_default().to_string_lossy();
    segment.with_file_name(format!("{name}.resp.sock"))
}

/// What the look found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RespStatus {
    /// No socket: no server for this store (or one with another --socket).
    NotRunning,
    /// A socket nobody answers on (a server that was killed), or an answer that is not
    /// INFO's.
    Silent(String),
    /// It answered but wants AUTH first (a secret file is configured).
    NeedsAuth,
    Serving {
        clients: u64,
        commands: u64,
    },
}

impl std::fmt::Display for RespStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RespStatus::NotRunning => write!(f, "not running"),
            RespStatus::Silent(why) => write!(f, "socket present, no answer ({why})"),
            RespStatus::NeedsAuth => {
                write!(f, "serving (AUTH required: its clients are not shown)")
            }
            RespStatus::Serving { clients, commands } => {
                write!(f, "serving, {clients} clients, {commands} commands")
            }
        }
    }
}

/// Asks the server on `socket` for its clients and commands.
pub fn probe(socket: &Path) -> RespStatus {
    if !socket.exists() {
        return RespStatus::NotRunning;
    }
    match ask(socket) {
        Ok(status) => status,
        Err(why) => RespStatus::Silent(why),
    }
}

fn ask(socket: &Path) -> Result<RespStatus, String> {
    let mut s = UnixStream::connect(socket).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(PATIENCE))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(PATIENCE))
        .map_err(|e| e.to_string())?;
    s.write_all(b"*2\r\n$4\r\nINFO\r\n$3\r\nall\r\n")
        .map_err(|e| e.to_string())?;
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    // A bulk reply: "$<len>\r\n<text>\r\n", or an error line.
    loop {
        let n = s.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..n]);
        if got.starts_with(b"-") && got.ends_with(b"\r\n") {
            break;
        }
        if complete_bulk(&got) || got.len() > 1 << 20 {
            break;
        }
    }
    let text = String::from_utf8_lossy(&got);
    if text.starts_with("-NOAUTH") {
        return Ok(RespStatus::NeedsAuth);
    }
    let field = |name: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(name)?
                .strip_prefix(':')?
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    match (
        field("connected_clients"),
        field("total_commands_processed"),
    ) {
        // The probe itself is one of the clients, and its INFO one of the commands.
        (Some(clients), Some(commands)) => Ok(RespStatus::Serving {
            clients: clients.saturating_sub(1),
            commands: commands.saturating_sub(1),
        }),
        _ => Err(format!(
            "not INFO: {}",
            text.lines().next().unwrap_or("nothing")
        )),
    }
}

fn complete_bulk(got: &[u8]) -> bool {
    let Some(end) = got.iter().position(|&b| b == b'\n') else {
        return false;
    };
    let len = std::str::from_utf8(&got[1..end.saturating_sub(1)])
        .ok()
        .and_then(|s| s.parse::<usize>().ok());
    len.is_some_and(|len| got.len() >= end + 1 + len + 2)
}

/// How the `ephpm-resp` of a host store is doing (asked on its default socket, beside
/// the segment); `None` for a store that is not one host's segment.
pub fn status_of(store: &dyn crate::store::Store) -> Option<RespStatus> {
    let segment = store.segment()?;
    Some(probe(&default_socket(segment)))
}
