//! A connection's state between requests: what the commands read and change (its
//! transaction, its subscriptions, its reply buffer), apart from the loop that serves
//! the connection (`conn.rs`), which runs the commands.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::pubsub::Message;
use super::reply::Reply;
use super::server::Client;

/// A connection's state between requests.
pub struct Conn {
    pub client: Arc<Client>,
    pub authed: bool,
    pub reply: Reply,
    /// MULTI's queue (None: not in a transaction), and whether a queued command was
    /// refused (EXEC then aborts, as Redis does).
    pub multi: Option<Vec<Vec<Vec<u8>>>>,
    pub multi_refused: bool,
    /// WATCHed keys and the version each had when watched.
    pub watched: Vec<(Vec<u8>, u64)>,
    pub channels: HashSet<Vec<u8>>,
    pub patterns: HashSet<Vec<u8>>,
    pub inbox: mpsc::Sender<Message>,
    /// QUIT, a protocol error, CLIENT KILL of itself: close once the replies are out.
    pub close: bool,
}

impl Conn {
    pub fn subscribed(&self) -> bool {
        !self.channels.is_empty() || !self.patterns.is_empty()
    }

    /// A message from the hub, as the client reads it.
    pub fn push(&mut self, m: &Message) {
        let r = &mut self.reply;
        match m {
            Message::Message { channel, payload } => {
                r.push(3);
                r.bulk(b"message");
                r.bulk(channel);
                r.bulk(payload);
            }
            Message::PMessage {
                pattern,
                channel,
                payload,
            } => {
                r.push(4);
                r.bulk(b"pmessage");
                r.bulk(pattern);
                r.bulk(channel);
                r.bulk(payload);
            }
        }
    }
}
