//! The server's doors. A unix socket (the default) admits only peers whose uid is the
//! server's own — the store's owner, who could open the segment anyway — or, when a
//! group is configured, whose gid is that group's; the kernel tells the peer's
//! credentials (SO_PEERCRED), so nothing the peer sends is trusted for it. A TCP
//! listener admits anyone who can connect, so every command but AUTH, HELLO and QUIT
//! is refused until AUTH gives one of the secret file's passwords.

use std::sync::Arc;

use tokio::net::{TcpListener, UnixListener};

use super::conn;
use super::server::Server;

/// Who may use the unix socket besides the server's own uid.
#[derive(Debug, Clone, Copy, Default)]
pub struct Peers {
    pub group: Option<u32>,
}

/// Accepts on the unix socket until the runtime stops.
pub async fn unix(server: Arc<Server>, listener: UnixListener, peers: Peers) {
    let own = crate::store::shm::euid();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let cred = stream.peer_cred();
        let server = server.clone();
        tokio::spawn(async move {
            let (uid, gid, pid) = match &cred {
                Ok(c) => (c.uid(), c.gid(), c.pid().unwrap_or(0)),
                Err(_) => (u32::MAX, u32::MAX, 0),
            };
            let stranger = uid != own && peers.group.is_none_or(|g| g != gid);
            if stranger && !crate::fault::on("resp-unguarded") {
                refuse(stream, uid).await;
                return;
            }
            // With passwords configured, even the socket's peers log in.
            let authed = server.settings.passwords.is_empty();
            conn::serve(server, stream, format!("unix:uid={uid},pid={pid}"), authed).await;
        });
    }
}

/// Tells a refused peer why, then closes. What it sent meanwhile is read (for a
/// moment) before the close: closing with unread bytes resets the connection, and a
/// reset can reach the peer before the reason does.
async fn refuse(mut stream: tokio::net::UnixStream, uid: u32) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let msg = format!(
        "-NOPERM uid {uid} may not use this store: only its owner's uid (or the group given to ephpm-resp --group) is admitted\r\n"
    );
    if stream.write_all(msg.as_bytes()).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let drain = async {
        let mut total = 0;
        while let Ok(n @ 1..) = stream.read(&mut sink).await {
            total += n;
            if total > 64 << 10 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), drain).await;
}

/// Accepts on the TCP listener until the runtime stops; every connection logs in first,
/// unless `open` (`--allow-insecure-no-auth`, loopback only).
pub async fn tcp(server: Arc<Server>, listener: TcpListener, open: bool) {
    loop {
        let Ok((stream, addr)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(conn::serve(server.clone(), stream, addr.to_string(), open));
    }
}
