//! One client's connection: read what it sends, answer every complete request in the
//! buffer, write the answers out together, and wait for more — or for a pub/sub
//! message, a CLIENT KILL, or the idle timeout. Nothing a client sends or fails to read
//! can stall another connection: each is its own task, and its buffers are bounded.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::commands;
use super::parse::{Limits, Parsed, parse};
use super::pubsub;
use super::reply::Reply;
use super::server::Server;
use super::state::Conn;

/// The most a client may have sent and not yet had answered (Redis'
/// client-query-buffer-limit): beyond it the connection is closed.
const MAX_QUERY_BUFFER: usize = 1 << 30;
/// Bytes read at a time; more when a bulk string of known length is arriving.
const READ_CHUNK: usize = 64 << 10;

/// Serves one accepted connection until it closes. `authed`: its peer is trusted
/// already (a unix socket's own uid with no password configured).
pub async fn serve<S>(server: Arc<Server>, stream: S, addr: String, authed: bool)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (mut rd, mut wr) = tokio::io::split(stream);
    let Some(client) = server.connect(addr) else {
        let _ = wr
            .write_all(b"-ERR max number of clients reached\r\n")
            .await;
        return;
    };
    let id = client.id;
    let (inbox, mut messages) = mpsc::channel(pubsub::QUEUE);
    let mut conn = Conn {
        client: client.clone(),
        authed,
        reply: Reply::default(),
        multi: None,
        multi_refused: false,
        watched: Vec::new(),
        channels: HashSet::new(),
        patterns: HashSet::new(),
        inbox,
        close: false,
    };
    let mut input: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut start = 0;
    let mut args = Vec::new();
    let mut need = None;
    loop {
        // Every complete request in the buffer, answered in order.
        loop {
            let limits = if conn.authed || crate::fault::on("resp-unguarded") {
                server.settings.limits
            } else {
                Limits::UNAUTHENTICATED
            };
            match parse(&input[start..], &limits, &mut args) {
                Ok(Parsed::Request(n)) => {
                    let word = |r: &std::ops::Range<usize>| &input[start + r.start..start + r.end];
                    // Most requests have a few words: those need no allocation.
                    let mut few: [&[u8]; 8] = [&[]; 8];
                    if args.len() <= few.len() {
                        for (slot, r) in few.iter_mut().zip(&args) {
                            *slot = word(r);
                        }
                        commands::run(&server, &mut conn, &few[..args.len()]);
                    } else {
                        let many: Vec<&[u8]> = args.iter().map(word).collect();
                        commands::run(&server, &mut conn, &many);
                    }
                    start += n;
                    need = None;
                    if conn.close {
                        break;
                    }
                }
                Ok(Parsed::Blank(n)) => start += n,
                Ok(Parsed::Incomplete(n)) => {
                    need = n.map(|n| start + n);
                    break;
                }
                Err(e) => {
                    conn.reply.error(&format!("ERR Protocol error: {}", e.0));
                    conn.close = true;
                    break;
                }
            }
        }
        while let Ok(m) = messages.try_recv() {
            conn.push(&m);
        }
        if conn.subscribed() && server.hub.overflowed(id) {
            conn.close = true;
        }
        if start == input.len() {
            input.clear();
            start = 0;
        } else if start > 0 && start >= input.len() / 2 {
            input.drain(..start);
            need = need.map(|n: usize| n - start);
            start = 0;
        }
        if !conn.reply.out.is_empty() {
            if wr.write_all(&conn.reply.out).await.is_err() {
                break;
            }
            conn.reply.out.clear();
            conn.reply.out.shrink_to(64 << 10);
        }
        if conn.close || client.killed.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        if input.len() - start > MAX_QUERY_BUFFER {
            break;
        }
        // Room for what is known to be coming, up to a chunk at a time beyond it.
        let want = need.map_or(READ_CHUNK, |n| {
            n.saturating_sub(input.len()).clamp(READ_CHUNK, 16 << 20)
        });
        input.reserve(want);
        let idle = server.settings.idle_timeout.filter(|_| !conn.subscribed());
        tokio::select! {
            read = rd.read_buf(&mut input) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            Some(m) = messages.recv(), if conn.subscribed() => conn.push(&m),
            () = client.kill.notified() => break,
            () = sleep_or_never(idle) => break,
        }
    }
    server.disconnect(id);
}

async fn sleep_or_never(d: Option<std::time::Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}
