//! Waiters woken by Pub/Sub: **one** subscriber connection per process, owned by the
//! background runtime and shared by every thread that waits — not a connection per lock.
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

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::mpsc;

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
    /// This process's mailbox channel (see the module doc).
    mailbox: Vec<u8>,
    woken: AtomicU64,
    slices: AtomicU64,
}

impl Wakeups {
    /// Starts the subscriber task on the background runtime. It connects in the
    /// background; until it has, waiters wait in slices.
    pub fn start(target: Arc<Target>, timeout: Duration) -> std::io::Result<Wakeups> {
        let shared = Arc::new(Shared::default());
        let mut mailbox = b"ephpm:mailbox:".to_vec();
        mailbox.extend_from_slice(&crate::lock::new_token());
        // One waiter that never leaves: the mailbox stays subscribed, reconnections
        // included, and the task subscribes it as soon as it is connected.
        shared.lock().insert(
            mailbox.clone(),
            Channel {
                waiters: 1,
                ..Channel::default()
            },
        );
        let (to_task, from_waiters) = mpsc::unbounded_channel();
        crate::runtime::handle()?.spawn(subscriber(target, timeout, shared.clone(), from_waiters));
        Ok(Wakeups {
            shared,
            to_task,
            mailbox,
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

    /// A fresh ticket for a place in a lock's line: `mailbox:id`, which tells the
    /// release where to publish it. Waits (at most until `until`) for the mailbox to be
    /// subscribed, so that a release after the ticket is queued cannot be missed.
    pub fn ticket(&self, until: Instant) -> Ticket<'_> {
        let mut name = self.mailbox.clone();
        name.push(b':');
        name.extend_from_slice(&crate::lock::new_token());
        if let Some(mailbox) = self.shared.lock().get_mut(&self.mailbox) {
            mailbox.tickets.insert(name.clone(), false);
        }
        self.until_live(&self.mailbox, until);
        Ticket {
            wakeups: self,
            name,
        }
    }

    /// Sleeps until a release sends `ticket` (true) or `until` passes (false).
    pub fn wait_for_ticket(&self, ticket: &Ticket<'_>, until: Instant) -> bool {
        let sent = |channels: &HashMap<Vec<u8>, Channel>| {
            channels
                .get(&self.mailbox)
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
        let _registered = Registration::new(self, channel);
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
    wakeups: &'a Wakeups,
    name: Vec<u8>,
}

impl Ticket<'_> {
    pub fn name(&self) -> &[u8] {
        &self.name
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let w = self.wakeups;
        if let Some(mailbox) = w.shared.lock().get_mut(&w.mailbox) {
            mailbox.tickets.remove(&self.name);
        }
    }
}

/// A waiter's place on a channel, given back when the wait ends however it ends.
struct Registration<'a> {
    wakeups: &'a Wakeups,
    channel: &'a [u8],
}

impl<'a> Registration<'a> {
    fn new(wakeups: &'a Wakeups, channel: &'a [u8]) -> Self {
        let mut channels = wakeups.shared.lock();
        let entry = channels.entry(channel.to_vec()).or_default();
        entry.waiters += 1;
        entry.idle_since = None;
        if entry.waiters == 1 && !entry.live {
            // The task is gone only when the runtime shut down; waiters then wait in
            // slices.
            let _ = wakeups.to_task.send(channel.to_vec());
        }
        Registration { wakeups, channel }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut channels = self.wakeups.shared.lock();
        if let Some(entry) = channels.get_mut(self.channel) {
            entry.waiters -= 1;
            if entry.waiters == 0 {
                // Unsubscribed by the task's sweep unless a waiter comes back first.
                entry.idle_since = Some(Instant::now());
            }
        }
    }
}

/// The task: keeps one Pub/Sub connection subscribed to the channels that have waiters
/// or had one within `LINGER`, and counts their messages.
async fn subscriber(
    target: Arc<Target>,
    timeout: Duration,
    shared: Arc<Shared>,
    mut from_waiters: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let mut pause = RECONNECT_MIN;
    loop {
        // Asking the sentinels blocks (within the timeout): off the runtime's threads.
        let asked = tokio::task::spawn_blocking({
            let target = target.clone();
            move || target.client()
        })
        .await;
        let connected = match asked {
            Ok(Ok((client, generation))) => {
                match tokio::time::timeout(timeout, client.get_async_pubsub()).await {
                    Ok(Ok(pubsub)) => Some((pubsub, generation)),
                    _ => {
                        target.failed(generation);
                        None
                    }
                }
            }
            _ => None,
        };
        let Some((pubsub, generation)) = connected else {
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
        pause = RECONNECT_MIN;
        let (mut sink, mut messages) = pubsub.split();
        let mut subscribed = HashSet::new();
        let wanted: Vec<Vec<u8>> = shared
            .lock()
            .iter()
            .filter(|(_, c)| c.wanted())
            .map(|(name, _)| name.clone())
            .collect();
        let mut healthy = true;
        for channel in wanted {
            healthy &= reconcile(&mut sink, &shared, &mut subscribed, channel, timeout).await;
        }
        let mut sweep = tokio::time::interval(LINGER);
        while healthy {
            tokio::select! {
                _ = sweep.tick() => {
                    if target.generation() != generation {
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
                    Some(msg) => {
                        let name: Vec<u8> = msg.get_channel().unwrap_or_default();
                        if let Some(c) = shared.lock().get_mut(&name) {
                            c.messages += 1;
                            // A ticket of a waiter still here (the mailbox only).
                            if let Some(sent) = c.tickets.get_mut(msg.get_payload_bytes()) {
                                *sent = true;
                            }
                        }
                        shared.changed.notify_all();
                    }
                    None => healthy = false,
                },
            }
        }
        for c in shared.lock().values_mut() {
            c.live = false;
        }
    }
}

/// Subscribes to `channel` if it is wanted and unsubscribes if it is not, until that
/// holds (a waiter may come or go while a command is on its way); false when the
/// connection failed.
async fn reconcile(
    sink: &mut redis::aio::PubSubSink,
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
