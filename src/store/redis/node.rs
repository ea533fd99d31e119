//! One Redis Cluster node's connection as the redis crate's cluster client drives it,
//! wrapped so that the store knows whether a failed command may have landed.
//!
//! - **What was sent is counted.** Every command written whole to a node's socket adds
//!   one to the calling thread's count (`written`). A call whose failure left the count
//!   where it was sent nothing (the node refused the connection, or the write itself
//!   failed and a half-written command is never run): it may run again at once, even a
//!   write. A count that moved means a command may have reached the server.
//! - **The crate resends nothing after a connection failure.** The crate retries a
//!   command whose connection failed (a timeout: at once, on the same connection; a
//!   dropped connection: after reconnecting) — a timed-out `INCR` would then land twice.
//!   Every error of the connection itself is handed to the crate as one it never retries
//!   (`ErrorKind::Client`); the store decides (`RedisStore::attempt`). The crate still
//!   follows the replies that say a command was not run: MOVED, ASK, TRYAGAIN,
//!   CLUSTERDOWN, READONLY.
//!
//! The count is per thread: the cluster connection runs each call on the caller's
//! thread, and PHP runs one request per thread.

use std::cell::Cell;
use std::time::Duration;

use redis::cluster::Connect;
use redis::{Cmd, ConnectionLike, ErrorKind, IntoConnectionInfo, RedisError, RedisResult, Value};

thread_local! {
    static WRITTEN: Cell<u64> = const { Cell::new(0) };
}

/// Commands this thread has written whole to a cluster node so far.
pub fn written() -> u64 {
    WRITTEN.with(Cell::get)
}

/// A connection to one node of a cluster.
pub struct Node(redis::Connection);

/// The connection's own failure, as an error the crate does not retry.
fn not_retried(e: RedisError) -> RedisError {
    if matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension) {
        return e;
    }
    RedisError::from((
        ErrorKind::Client,
        "the connection to a cluster node failed",
        e.to_string(),
    ))
}

impl Node {
    /// The next reply that is not a RESP3 push.
    fn reply(&mut self) -> RedisResult<Value> {
        loop {
            match Connect::recv_response(self)? {
                Value::Push { .. } => continue,
                v => return Ok(v),
            }
        }
    }
}

impl Connect for Node {
    fn connect<T: IntoConnectionInfo>(info: T, timeout: Option<Duration>) -> RedisResult<Node> {
        <redis::Connection as Connect>::connect(info, timeout)
            .map(Node)
            .map_err(not_retried)
    }

    fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.0.send_packed_command(cmd).map_err(not_retried)?;
        WRITTEN.with(|w| w.set(w.get() + 1));
        Ok(())
    }

    fn set_write_timeout(&self, dur: Option<Duration>) -> RedisResult<()> {
        self.0.set_write_timeout(dur)
    }

    fn set_read_timeout(&self, dur: Option<Duration>) -> RedisResult<()> {
        self.0.set_read_timeout(dur)
    }

    fn recv_response(&mut self) -> RedisResult<Value> {
        self.0.recv_response().map_err(not_retried)
    }
}

/// The crate's `Connection` does the same with its own error handling; here every write
/// goes through `send_packed_command` (counted) and every read through `recv_response`.
impl ConnectionLike for Node {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        Connect::send_packed_command(self, cmd)?;
        self.reply()
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        let packed = cmd.get_packed_command();
        if cmd.is_no_response() {
            Connect::send_packed_command(self, &packed)?;
            return Ok(Value::Nil);
        }
        self.req_packed_command(&packed)
    }

    /// A pipeline: `offset` replies skipped, `count` kept. A server error among the
    /// skipped ones (a transaction's) is the call's error.
    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        Connect::send_packed_command(self, cmd)?;
        let mut kept = Vec::with_capacity(count);
        for i in 0..offset + count {
            let v = self.reply()?;
            if i >= offset {
                kept.push(v);
            } else if let Value::ServerError(e) = v {
                return Err(e.into());
            }
        }
        Ok(kept)
    }

    fn get_db(&self) -> i64 {
        self.0.get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.0.check_connection()
    }

    fn is_open(&self) -> bool {
        self.0.is_open()
    }
}
