//! Waiters woken by Pub/Sub: **one** subscriber per process (a connection; on a Redis
//! Cluster with sharded Pub/Sub, one cluster connection), owned by the background runtime
//! and shared by every thread that waits — not a connection per lock.
//!
//! A waiter registers its channel (the task subscribes to it unless it already is),
//! waits until the subscription is confirmed (so a release published after its next
//! check cannot be missed), checks, and sleeps until a message arrives on its channel or
//! one slice passes. A message returns at once: the caller looks again. Slices are short
//! (`SLICE`), so a lost message, an expiry (which publishes nothing) or a subscriber that
//! is reconnecting costs one slice, never a hang.
//!
//! The task sets `live` on a channel once Redis has confirmed the subscription, counts
//! the messages of each channel, and wakes the waiters with one condition variable. When
//! its connection fails it marks every channel not live, reconnects with a growing pause,
//! and subscribes again to every channel that still has waiters. Behind Sentinel it also
//! reconnects when the store moved to another master (Sentinel's demotion disconnects
//! normal clients, not Pub/Sub ones).
//!
//! A channel stays subscribed for `LINGER` after its last waiter left: a process that
//! waits on one lock again and again (sessions, a hot key's lock) then neither pays a
//! subscribe round trip nor waits for the confirmation each time. The task unsubscribes
//! channels idle longer than that, and forgets them, every `LINGER`.
//!
//! Besides the keys' channels, the process has one **mailbox**: a channel of its own,
//! named at random and subscribed for the process's life, on which a lock's release
//! hands the lock to one waiter of this process (`queue.rs`): the message is that
//! waiter's ticket, and only that waiter wakes.
//!
//! # On a Redis Cluster
//! Where the servers have sharded Pub/Sub (`scripts::Publish::Sharded`, Redis ≥ 7.0),
//! releases `SPUBLISH` and the subscriber `SSUBSCRIBE`s through a cluster connection of
//! its own, which the redis crate routes to the master of each channel's slot (and
//! subscribes again after a failover or a slot's move): a message then stays on its
//! shard, where a classic `PUBLISH` is copied to every node over the cluster bus. A
//! script may publish only on a channel of its keys' slot, so there the mailbox is one
//! per lock a process waits on (named after the lock, with the process's random part),
//! subscribed like a key's channel while its waiters wait and for `LINGER` after.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::keys;
use super::scripts::Publish;
use super::target::Target;
use crate::store::Result;

/// The longest a waiter sleeps before it checks again.
pub const SLICE: Duration = Duration::from_millis(100);
/// How long a channel stays subscribed after its last waiter left.
const LINGER: Duration = Duration::from_secs(1);
/// Pauses between attempts to reconnect the subscriber.
const RECONNECT_MIN: Duration = Duration::from_millis(50);
const RECONNECT_MAX: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Channel {
    waiters: usize,
    /// When the last waiter left (None while it has waiters).
    idle_since: Option<Instant>,
    /// Redis confirmed the subscription, and the connection has not failed since.
    live: bool,
    /// Messages seen on the channel.
    messages: u64,
    /// The mailbox only: the tickets of this process's waiters in a lock's line, and
    /// whether a release sent theirs.
    tickets: HashMap<Vec<u8>, bool>,
}

#[derive(Default)]
struct Shared {
    channels: Mutex<HashMap<Vec<u8>, Channel>>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, HashMap<Vec<u8>, Channel>> {
        self.channels.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How often waiters of one store were woken, for the tests (`RedisStore::wake_counts`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WakeCounts {
    /// Waits that a message ended: a release on the key's channel (every waiter of the
    /// key), or a ticket handed over in the mailbox (one waiter).
    pub woken: u64,
    /// Slices that passed without a message, after which the waiter looked again.
    pub slices: u64,
}

/// The process's subscriber for one Redis server.
pub struct Wakeups {
    shared: Arc<Shared>,
    /// Channels a waiter needs subscribed that are not live: the task subscribes.
    to_task: mpsc::UnboundedSender<Vec<u8>>,
    /// This process's mailbox channel (see the module doc); sharded: the suffix of its
    /// mailbox for each lock.
    mailbox: Vec<u8>,
    publish: Publish,
    woken: AtomicU64,
    slices: AtomicU64,
}

impl Wakeups {
    /// Starts the subscriber task on the background runtime. It connects in the
    /// background; until it has, waiters wait in slices.
    pub fn start(
        target: Arc<Target>,
        timeout: Duration,
        publish: Publish,
    ) -> std::io::Result<Wakeups> {
        let shared = Arc::new(Shared::default());
        let mut mailbox = match publish {
            Publish::Classic => b"ephpm:mailbox:".to_vec(),
            Publish::Sharded => b":ephpm:mailbox:".to_vec(),
        };
        mailbox.extend_from_slice(&crate::ground::new_token());
        if publish == Publish::Classic {
            // One waiter that never leaves: the mailbox stays subscribed, reconnections
            // included, and the task subscribes it as soon as it is connected.
            shared.lock().insert(
                mailbox.clone(),
                Channel {
                    waiters: 1,
                    ..Channel::default()
                },
            );
        }
        let (to_task, from_waiters) = mpsc::unbounded_channel();
        crate::runtime::handle()?.spawn(subscriber(
            target,
            timeout,
            publish,
            shared.clone(),
            from_waiters,
        ));
        Ok(Wakeups {
            shared,
            to_task,
            mailbox,
            publish,
            woken: AtomicU64::new(0),
            slices: AtomicU64::new(0),
        })
    }

    pub fn counts(&self) -> WakeCounts {
        WakeCounts {
            woken: self.woken.load(Ordering::Relaxed),
            slices: self.slices.load(Ordering::Relaxed),
        }
    }

    /// A fresh ticket for a place in the line of the lock `full` (its full Redis key):
    /// `mailbox:id`, which tells the release where to publish it. Waits (at most until
    /// `until`) for the mailbox to be subscribed, so that a release after the ticket is
    /// queued cannot be missed.
    pub fn ticket(&self, full: &[u8], until: Instant) -> Ticket<'_> {
        let mailbox = match self.publish {
            Publish::Classic => self.mailbox.clone(),
            Publish::Sharded => keys::derived(full, &self.mailbox),
        };
        let mut name = mailbox.clone();
        name.push(b':');
        name.extend_from_slice(&crate::ground::new_token());
        let registration = Registration::new(self, mailbox);
        if let Some(mailbox) = self.shared.lock().get_mut(&registration.channel) {
            mailbox.tickets.insert(name.clone(), false);
        }
        self.until_live(&registration.channel, until);
        Ticket { registration, name }
    }

    /// Sleeps until a release sends `ticket` (true) or `until` passes (false).
    pub fn wait_for_ticket(&self, ticket: &Ticket<'_>, until: Instant) -> bool {
        let sent = |channels: &HashMap<Vec<u8>, Channel>| {
            channels
                .get(&ticket.registration.channel)
                .and_then(|m| m.tickets.get(&ticket.name))
                .copied()
                .unwrap_or(false)
        };
        let mut channels = self.shared.lock();
        while !sent(&channels) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.slices.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            channels = self
                .shared
                .changed
                .wait_timeout(channels, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        self.woken.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Waits until a message arrives on `channel` or `changed` says so (true), or
    /// `timeout` passes (false). `changed` is asked once the subscription is live (so a
    /// write published before it is not missed) and after every slice without a
    /// message; a message itself returns at once, and the caller looks again.
    pub fn wait(
        &self,
        channel: &[u8],
        timeout: Duration,
        mut changed: impl FnMut() -> Result<bool>,
    ) -> Result<bool> {
        let deadline = Instant::now() + timeout;
        let _registered = Registration::new(self, channel.to_vec());
        let mut seen = self.until_live(channel, deadline.min(Instant::now() + SLICE));
        loop {
            if changed()? {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            let until = deadline.min(now + SLICE);
            let mut channels = self.shared.lock();
            while message_count(&channels, channel) == seen {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                channels = self
                    .shared
                    .changed
                    .wait_timeout(channels, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            if message_count(&channels, channel) != seen {
                self.woken.fetch_add(1, Ordering::Relaxed);
                return Ok(true);
            }
            self.slices.fetch_add(1, Ordering::Relaxed);
            seen = message_count(&channels, channel);
        }
    }

    /// Waits (at most until `until`) for the subscription to be confirmed; returns the
    /// channel's message count from then.
    fn until_live(&self, channel: &[u8], until: Instant) -> u64 {
        let mut channels = self.shared.lock();
        loop {
            let (live, messages) = channels
                .get(channel)
                .map_or((false, 0), |c| (c.live, c.messages));
            let left = until.saturating_duration_since(Instant::now());
            if live || left.is_zero() {
                return messages;
            }
            channels = self
                .shared
                .changed
                .wait_timeout(channels, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Channel {
    /// Whether the channel should be subscribed: it has waiters, or had one lately.
    fn wanted(&self) -> bool {
        self.waiters > 0 || self.idle_since.is_some_and(|t| t.elapsed() < LINGER)
    }
}

fn message_count(channels: &HashMap<Vec<u8>, Channel>, channel: &[u8]) -> u64 {
    channels.get(channel).map_or(0, |c| c.messages)
}

/// A waiter's ticket in a lock's line, forgotten when the wait ends however it ends (a
/// release that sends it later wakes nobody here; see `queue.rs` for why that costs the
/// others one slice at most).
pub struct Ticket<'a> {
    /// The mailbox's: it stays subscribed while the ticket lives.
    registration: Registration<'a>,
    name: Vec<u8>,
}

impl Ticket<'_> {
    pub fn name(&self) -> &[u8] {
        &self.name
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let r = &self.registration;
        if let Some(mailbox) = r.wakeups.shared.lock().get_mut(&r.channel) {
            mailbox.tickets.remove(&self.name);
        }
    }
}

/// A waiter's place on a channel, given back when the wait ends however it ends.
struct Registration<'a> {
    wakeups: &'a Wakeups,
    channel: Vec<u8>,
}

impl<'a> Registration<'a> {
    fn new(wakeups: &'a Wakeups, channel: Vec<u8>) -> Self {
        let mut channels = wakeups.shared.lock();
        let entry = channels.entry(channel.clone()).or_default();
        entry.waiters += 1;
        entry.idle_since = None;
        if entry.waiters == 1 && !entry.live {
            // The task is gone only when the runtime shut down; waiters then wait in
            // slices.
            let _ = wakeups.to_task.send(channel.clone());
        }
        drop(channels);
        Registration { wakeups, channel }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut channels = self.wakeups.shared.lock();
        if let Some(entry) = channels.get_mut(&self.channel) {
            entry.waiters -= 1;
            if entry.waiters == 0 {
                // Unsubscribed by the task's sweep unless a waiter comes back first.
                entry.idle_since = Some(Instant::now());
            }
        }
    }
}

/// How the task subscribes: one Pub/Sub connection (a single server, or one seed of a
/// cluster without sharded Pub/Sub), or a RESP3 cluster connection of its own that
/// sends each `SSUBSCRIBE` to the master of the channel's slot.
enum Sink {
    Classic(redis::aio::PubSubSink),
    Sharded(redis::cluster_async::ClusterConnection),
}

impl Sink {
    async fn subscribe(&mut self, channel: &[u8]) -> redis::RedisResult<()> {
        match self {
            Sink::Classic(sink) => sink.subscribe(channel).await,
            Sink::Sharded(con) => con.ssubscribe(channel).await,
        }
    }

    async fn unsubscribe(&mut self, channel: &[u8]) -> redis::RedisResult<()> {
        match self {
            Sink::Classic(sink) => sink.unsubscribe(channel).await,
            Sink::Sharded(con) => con.sunsubscribe(channel).await,
        }
    }
}

/// What a subscriber connection reports.
enum Event {
    /// A message: its channel and payload.
    Message(Vec<u8>, Vec<u8>),
    /// The sharded connection lost a node: the crate reconnects to the same address, and
    /// keeps subscriptions there, which is no help when that master died and its replica
    /// takes over; the task connects afresh (its cluster client asks the seeds for the
    /// slots), until the slot's new master takes the subscription.
    Lost,
}

/// A subscriber connection's events; the stream ends when the connection does.
type Messages = std::pin::Pin<Box<dyn futures_util::Stream<Item = Event> + Send>>;

/// A subscriber connection, its messages, and the target's generation it follows (None:
/// the sharded connection repairs itself, and commands' failures do not concern it).
async fn connect(
    target: &Arc<Target>,
    timeout: Duration,
    publish: Publish,
) -> Option<(Sink, Messages, Option<u64>)> {
    if publish == Publish::Sharded {
        let (push, mut pushed) = mpsc::unbounded_channel::<redis::PushInfo>();
        let client = target.sharded_client(push)?.ok()?;
        let con = tokio::time::timeout(timeout, client.get_async_connection())
            .await
            .ok()?
            .ok()?;
        let messages = futures_util::stream::poll_fn(move |cx| pushed.poll_recv(cx)).filter_map(
            |push| async move {
                match (push.kind, &push.data[..]) {
                    (redis::PushKind::SMessage, [channel, payload, ..]) => Some(Event::Message(
                        redis::from_redis_value_ref(channel).ok()?,
                        redis::from_redis_value_ref(payload).ok()?,
                    )),
                    (redis::PushKind::Disconnection, _) => Some(Event::Lost),
                    _ => None,
                }
            },
        );
        return Some((Sink::Sharded(con), Box::pin(messages), None));
    }
    // Asking the sentinels blocks (within the timeout): off the runtime's threads.
    let target2 = target.clone();
    let (client, generation) = tokio::task::spawn_blocking(move || target2.client())
        .await
        .ok()?
        .ok()?;
    match tokio::time::timeout(timeout, client.get_async_pubsub()).await {
        Ok(Ok(pubsub)) => {
            let (sink, messages) = pubsub.split();
            let messages = messages.map(|msg| {
                let channel: Vec<u8> = msg.get_channel().unwrap_or_default();
                Event::Message(channel, msg.get_payload_bytes().to_vec())
            });
            Some((Sink::Classic(sink), Box::pin(messages), Some(generation)))
        }
        _ => {
            target.failed(generation);
            None
        }
    }
}

/// The task: keeps a subscriber connection subscribed to the channels that have waiters
/// or had one within `LINGER`, and counts their messages.
async fn subscriber(
    target: Arc<Target>,
    timeout: Duration,
    publish: Publish,
    shared: Arc<Shared>,
    mut from_waiters: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let mut pause = RECONNECT_MIN;
    loop {
        let Some((mut sink, mut messages, generation)) = connect(&target, timeout, publish).await
        else {
            // Keep draining requests while Redis is away: the channel list is in `shared`.
            let sleep = tokio::time::sleep(pause);
            tokio::pin!(sleep);
            loop {
                tokio::select! {
                    _ = &mut sleep => break,
                    req = from_waiters.recv() => if req.is_none() { return },
                }
            }
            pause = (pause * 2).min(RECONNECT_MAX);
            continue;
        };
        let mut subscribed = HashSet::new();
        let wanted: Vec<Vec<u8>> = shared
            .lock()
            .iter()
            .filter(|(_, c)| c.wanted())
            .map(|(name, _)| name.clone())
            .collect();
        let mut healthy = true;
        for channel in wanted {
            healthy = reconcile(&mut sink, &shared, &mut subscribed, channel, timeout).await;
            if !healthy {
                break;
            }
        }
        let connected_at = tokio::time::Instant::now();
        let mut sweep = tokio::time::interval(LINGER);
        while healthy {
            tokio::select! {
                _ = sweep.tick() => {
                    if generation.is_some_and(|g| g != target.generation()) {
                        break;
                    }
                    let idle: Vec<Vec<u8>> = shared
                        .lock()
                        .iter()
                        .filter(|(name, c)| !c.wanted() && subscribed.contains(*name))
                        .map(|(name, _)| name.clone())
                        .collect();
                    for channel in idle {
                        healthy &= reconcile(&mut sink, &shared, &mut subscribed, channel, timeout).await;
                    }
                    // Forget channels nobody wants any more (one per session id, say).
                    shared.lock().retain(|name, c| c.wanted() || subscribed.contains(name));
                }
                req = from_waiters.recv() => match req {
                    Some(channel) => {
                        healthy = reconcile(&mut sink, &shared, &mut subscribed, channel, timeout).await;
                    }
                    None => return,
                },
                msg = messages.next() => match msg {
                    Some(Event::Message(name, payload)) => {
                        if let Some(c) = shared.lock().get_mut(&name) {
                            c.messages += 1;
                            // A ticket of a waiter still here (mailboxes only).
                            if let Some(sent) = c.tickets.get_mut(&payload) {
                                *sent = true;
                            }
                        }
                        shared.changed.notify_all();
                    }
                    Some(Event::Lost) | None => healthy = false,
                },
            }
        }
        for c in shared.lock().values_mut() {
            c.live = false;
        }
        // A connection lost soon after it was made (a master that is down until its
        // replica is promoted) is not retried at once, by every process.
        if connected_at.elapsed() < LINGER {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(RECONNECT_MAX);
        } else {
            pause = RECONNECT_MIN;
        }
    }
}

/// Subscribes to `channel` if it is wanted and unsubscribes if it is not, until that
/// holds (a waiter may come or go while a command is on its way); false when the
/// connection failed.
async fn reconcile(
    sink: &mut Sink,
    shared: &Shared,
    subscribed: &mut HashSet<Vec<u8>>,
    channel: Vec<u8>,
    timeout: Duration,
) -> bool {
    loop {
        let wanted = shared.lock().get(&channel).is_some_and(Channel::wanted);
        if wanted == subscribed.contains(&channel) {
            return true;
        }
        let done = if wanted {
            tokio::time::timeout(timeout, sink.subscribe(&channel)).await
        } else {
            tokio::time::timeout(timeout, sink.unsubscribe(&channel)).await
        };
        if !matches!(done, Ok(Ok(()))) {
            return false;
        }
        if wanted {
            subscribed.insert(channel.clone());
        } else {
            subscribed.remove(&channel);
        }
        if let Some(c) = shared.lock().get_mut(&channel) {
            c.live = wanted;
        }
        shared.changed.notify_all();
    }
}
