//! The data plane's client side: sealed request/response frames to other nodes over
//! TCP, on connections kept per peer. A kept connection that the peer closed (it
//! restarted) is noticed before it is used, so a request is never sent down a dead one.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use tokio::net::TcpStream;

use super::crypto::Sealer;
use super::wire::{self, Op, Response, Route};

pub struct Peers {
    sealer: Sealer,
    idle: Mutex<HashMap<SocketAddr, Vec<TcpStream>>>,
}

/// At most this many idle connections are kept per peer.
const KEEP: usize = 8;

impl Peers {
    pub fn new(sealer: Sealer) -> Self {
        Peers {
            sealer,
            idle: Mutex::new(HashMap::new()),
        }
    }

    pub fn sealer(&self) -> &Sealer {
        &self.sealer
    }

    /// Sends one request and waits at most `timeout` for the whole exchange.
    pub async fn ask(
        &self,
        addr: SocketAddr,
        route: Route,
        op: &Op,
        timeout: Duration,
    ) -> Result<Response, String> {
        match tokio::time::timeout(timeout, self.exchange(addr, route, op)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
        }
    }

    async fn exchange(&self, addr: SocketAddr, route: Route, op: &Op) -> io::Result<Response> {
        let mut conn = match self.take(addr) {
            Some(c) => c,
            None => {
                let c = TcpStream::connect(addr).await?;
                c.set_nodelay(true)?;
                c
            }
        };
        let body = self.sealer.seal(&wire::encode_request(route, op));
        wire::write_frame_async(&mut conn, &body).await?;
        let sealed = wire::read_frame_async(&mut conn).await?;
        let response = self
            .sealer
            .open(&sealed)
            .and_then(|plain| wire::decode_response(&plain))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a reply that fails authentication",
                )
            })?;
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let kept = idle.entry(addr).or_default();
        if kept.len() < KEEP {
            kept.push(conn);
        }
        Ok(response)
    }

    /// An idle connection to `addr` that is still open.
    fn take(&self, addr: SocketAddr) -> Option<TcpStream> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let kept = idle.get_mut(&addr)?;
        while let Some(c) = kept.pop() {
            let mut probe = [0u8; 1];
            // An open, quiet connection has nothing to read; EOF or an error means the
            // peer closed it.
            if matches!(c.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                return Some(c);
            }
        }
        None
    }
}
