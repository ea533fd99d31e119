//! The data plane's client side: request/response frames to other nodes over TCP, each
//! connection with a session of its own (`crypto/handshake.rs`: fresh keys, a sequence
//! number per frame) in the version both sides speak (`wire/version.rs`), kept per peer
//! and version. A kept connection that the peer closed (it
//! restarted, or timed it out) is noticed before it is used, so a request is never sent
//! down a dead one.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use super::crypto::handshake::{self, Session};
use super::keyring::{Keyring, Keys};
use crate::wire::version::Version;
use crate::wire::{self, Op, Response, Route};

pub struct Peers {
    keyring: Arc<Keyring>,
    idle: Mutex<HashMap<(SocketAddr, Version), Vec<Kept>>>,
}

struct Kept {
    conn: TcpStream,
    session: Session,
    since: Instant,
}

/// At most this many idle connections are kept per peer.
const KEEP: usize = 8;
/// A kept connection idle longer than this is closed rather than used: well below the
/// time after which the other side closes it (`node/serve.rs`, `IDLE`), so a request is
/// never sent just as the peer hangs up.
const KEEP_FOR: Duration = Duration::from_secs(20);

impl Peers {
    /// Connections that prove the keyring's current secrets (the first; see
    /// `session.rs`); none: plain.
    pub fn new(keyring: Arc<Keyring>) -> Self {
        Peers {
            keyring,
            idle: Mutex::new(HashMap::new()),
        }
    }

    /// The secrets new connections use now (`keyring.rs`).
    pub fn keys(&self) -> Arc<Keys> {
        self.keyring.current()
    }

    /// Sends one request in version `v` and waits at most `timeout` for the whole
    /// exchange (a new connection's handshake included).
    pub async fn ask(
        &self,
        (addr, v): (SocketAddr, Version),
        route: Route,
        op: &Op,
        timeout: Duration,
    ) -> Result<Response, String> {
        match tokio::time::timeout(timeout, self.exchange((addr, v), route, op)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
        }
    }

    async fn exchange(
        &self,
        (addr, v): (SocketAddr, Version),
        route: Route,
        op: &Op,
    ) -> Result<Response, handshake::Refused> {
        let (mut conn, mut session) = match self.take((addr, v)) {
            Some(k) => (k.conn, k.session),
            None => {
                let mut c = TcpStream::connect(addr).await?;
                c.set_nodelay(true)?;
                let s = handshake::initiate(&mut c, &self.keys().secrets, v).await?;
                (c, s)
            }
        };
        let body = session.seal(&wire::encode_request(route, op));
        wire::write_frame_async(&mut conn, &body).await?;
        let sealed = wire::read_frame_async(&mut conn).await?;
        let response = wire::decode_response(&session.open(&sealed)?)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a malformed response"))?;
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let kept = idle.entry((addr, v)).or_default();
        if kept.len() < KEEP {
            kept.push(Kept {
                conn,
                session,
                since: Instant::now(),
            });
        }
        Ok(response)
    }

    /// An idle connection to `addr` in version `v` that is still open and not too old.
    fn take(&self, to: (SocketAddr, Version)) -> Option<Kept> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let kept = idle.get_mut(&to)?;
        while let Some(k) = kept.pop() {
            let mut probe = [0u8; 1];
            // An open, quiet connection has nothing to read; EOF or an error means the
            // peer closed it.
            let open = matches!(k.conn.try_read(&mut probe),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock);
            if open && k.since.elapsed() < KEEP_FOR {
                return Some(k);
            }
        }
        None
    }
}
