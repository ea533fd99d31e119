//! The locking session handler, over any store: one `Handler` per request serves both
//! PHP entry points (the native save handler `ephpm` and `Ephpm\SessionHandler`). No
//! PHP here.
//!
//! Read takes the lock `session_lock:<id>` with a fresh token, waiting (woken by the
//! release, never polling) up to the configured bound; the data lives at
//! `session:<id>`. A write first extends the lock by token: only if that succeeds does it
//! write, so a request whose lock expired and was taken over writes nothing, and the
//! write cannot race an expiry (the extension gives it a whole lock TTL). Close releases
//! by token, so it never frees a lock it no longer holds.

use std::time::Duration;

use crate::keyspace::Keyspace;
use crate::lock::{Held, Locks};
use crate::store::{Fetched, Retention, SetNx, StoreError, Value};

/// What a read does when the lock cannot be had in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnTimeout {
    /// Go on without the lock, with a warning.
    Warn,
    /// Fail the read (session_start() fails).
    Fail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub locking: bool,
    pub lock_ttl: Duration,
    pub lock_wait: Duration,
    pub on_timeout: OnTimeout,
}

/// The longest lock TTL or lock wait, in seconds (about 31 years): longer than any
/// request, and small enough for every clock to add to now.
pub const MAX_LOCK_SECONDS: u32 = 1_000_000_000;

/// The lifetime of a session lock: `configured` seconds (`ephpm.session.lock_ttl`); 0 or
/// less means `max_execution_time`, since a request holds its session until it ends,
/// or 30 s when that is unlimited too.
pub fn lock_ttl(configured: f64, max_execution_time: f64) -> Duration {
    let seconds = [configured, max_execution_time, 30.0]
        .into_iter()
        .find(|s| *s > 0.0)
        .unwrap_or(30.0);
    Duration::from_secs_f64(seconds.min(f64::from(MAX_LOCK_SECONDS)))
}

/// How long a read waits for a busy session: `configured` seconds
/// (`ephpm.session.lock_wait`), at most `MAX_LOCK_SECONDS`; 0 for less than 0 or NaN.
pub fn lock_wait(configured: f64) -> Duration {
    if configured > 0.0 {
        Duration::from_secs_f64(configured.min(f64::from(MAX_LOCK_SECONDS)))
    } else {
        Duration::ZERO
    }
}

/// The longest session id PHP's own handlers accept (`PS_MAX_SID_LENGTH` in
/// ext/session; `session.sid_length` cannot exceed it either).
pub const MAX_ID_LEN: usize = 256;

/// Whether `id` is a session id as PHP's own handlers take one (ext/session's
/// `php_session_valid_key`, which the files handler checks before it touches a file):
/// 1 to 256 of `A-Z a-z 0-9 , -`. An id that is not — a path (`../../x`), a NUL, bytes
/// that are not ASCII, a 10 KB cookie — is refused, never made into a key: every id
/// PHP's generator makes passes, and an attacker's cookie cannot fill the store with
/// lock and session entries of its choosing.
pub fn valid_id(id: &[u8]) -> bool {
    (1..=MAX_ID_LEN).contains(&id.len())
        && id
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b',' || c == b'-')
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The wording of PHP's files handler for the same refusal.
    #[error(
        "the session id is too long or contains illegal characters: only the A-Z, a-z, 0-9, \"-\" and \",\" characters are allowed, at most 256 of them"
    )]
    InvalidId,
    #[error("the lock of session {id} was not released within {} ms", waited.as_millis())]
    LockTimeout { id: String, waited: Duration },
    #[error(
        "the lock of session {0} expired and another request holds it now: this request's changes are not written"
    )]
    LockLost(String),
    #[error("no unused session id after {0} attempts")]
    NoFreeId(usize),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type Result<T> = std::result::Result<T, SessionError>;

/// One request's view of the sessions in a store.
pub struct Handler {
    space: Keyspace,
    locks: Locks,
    settings: Settings,
    /// The lock this request holds, and the id it is for.
    held: Option<(Vec<u8>, Held)>,
    /// A session started empty because the store could not be reached (`OnTimeout::Warn`):
    /// its writes are dropped, so that a store that comes back mid-request never gets
    /// the stored session overwritten by one this request never read.
    unread: Option<Vec<u8>>,
    /// The id `create_id` reserved last, until close or a write of it. PHP asks
    /// `exists` about a new id right after creating it (session_create_id() while a
    /// session is active, session_regenerate_id() in strict mode) to detect a collision
    /// with another request; our own reservation is not one, and counting it made PHP
    /// fail or retry, leaving each retry's reservation behind.
    reserved: Option<Vec<u8>>,
}

fn data_key(id: &[u8]) -> Vec<u8> {
    [&b"session:"[..], id].concat()
}

fn lock_name(space: &Keyspace, id: &[u8]) -> Result<Vec<u8>> {
    Ok(space.full_key(&[&b"session_lock:"[..], id].concat())?)
}

fn shown(id: &[u8]) -> String {
    String::from_utf8_lossy(id).into_owned()
}

/// Refuses an id PHP's own handlers would refuse (see `valid_id`).
fn checked(id: &[u8]) -> Result<()> {
    if valid_id(id) {
        Ok(())
    } else {
        Err(SessionError::InvalidId)
    }
}

/// The longest lifetime a session is given (about 31,700 years): what every backend
/// can add to its clock; `session.gc_maxlifetime` may say more.
const MAX_LIFETIME: u64 = 1_000_000_000_000;

/// What a session is to a store that must evict (`Retention`), by its data. With nothing
/// in it — what PHP's serializers write for an empty `$_SESSION`: `php` and `php_binary`
/// nothing, `php_serialize` `a:0:{}` — it is an anonymous visitor's, given up before any
/// cache entry: losing it loses nothing, and a flood of new visitors (each of whom PHP
/// writes or touches, lazy_write or not) must not push logged-in users out. Anything
/// else is a logged-in user's session, given up last.
fn retention(data: &[u8]) -> Retention {
    if data.is_empty() || data == b"a:0:{}" {
        Retention::Anonymous
    } else {
        Retention::Session
    }
}

fn lifetime(seconds: i64) -> Option<Duration> {
    (seconds > 0).then(|| Duration::from_secs((seconds as u64).min(MAX_LIFETIME)))
}

impl Handler {
    pub fn new(space: Keyspace, settings: Settings) -> Self {
        let locks = Locks::new(space.store().clone());
        Handler {
            space,
            locks,
            settings,
            held: None,
            unread: None,
            reserved: None,
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Reads session `id` into `out` (empty for a new session), taking its lock first.
    /// `Ok(Some(warning))` when the lock could not be had and the read went on without
    /// it, or the store could not be reached and the session starts empty, unsaved
    /// (`OnTimeout::Warn`). An invalid id (`valid_id`) is refused, as PHP's files
    /// handler refuses it: nothing is locked or read.
    pub fn read(&mut self, id: &[u8], out: &mut Vec<u8>) -> Result<Option<String>> {
        checked(id)?;
        self.unread = None;
        match self.read_locked(id, out) {
            Err(SessionError::Store(e @ StoreError::Unavailable { .. }))
                if self.settings.on_timeout == OnTimeout::Warn =>
            {
                out.clear();
                self.unread = Some(id.to_vec());
                Ok(Some(format!(
                    "ephpm: session {} starts empty and its changes will not be saved: {e}",
                    shown(id)
                )))
            }
            other => other,
        }
    }

    fn read_locked(&mut self, id: &[u8], out: &mut Vec<u8>) -> Result<Option<String>> {
        let mut warning = None;
        if self.settings.locking && !self.holds(id) {
            self.close();
            let name = lock_name(&self.space, id)?;
            let key = self.space.full_key(&data_key(id))?;
            match self.locks.acquire_and_get(
                &name,
                self.settings.lock_ttl,
                self.settings.lock_wait,
                &key,
                out,
            )? {
                // The data read with the lock (one round trip on Redis).
                Some((held, hit)) => {
                    self.held = Some((id.to_vec(), held));
                    if !hit.is_some_and(|h| matches!(h.value, Fetched::Str)) {
                        out.clear();
                    }
                    return Ok(None);
                }
                None => {
                    let e = SessionError::LockTimeout {
                        id: shown(id),
                        waited: self.settings.lock_wait,
                    };
                    match self.settings.on_timeout {
                        OnTimeout::Fail => return Err(e),
                        OnTimeout::Warn => {
                            warning = Some(format!("ephpm: {e}; going on without it"));
                        }
                    }
                }
            }
        }
        match self.space.get(&data_key(id), out)? {
            Some(hit) if matches!(hit.value, Fetched::Str) => {}
            _ => out.clear(),
        }
        Ok(warning)
    }

    fn is_unread(&self, id: &[u8]) -> bool {
        self.unread.as_deref() == Some(id)
    }

    fn holds(&self, id: &[u8]) -> bool {
        self.held.as_ref().is_some_and(|(held_id, _)| held_id == id)
    }

    /// Makes sure this request may write `id`: its lock, if it took one, is still its
    /// own, extended by a whole TTL so that it cannot expire during the write.
    fn still_ours(&mut self, id: &[u8]) -> Result<()> {
        let Some((held_id, held)) = self.held.as_ref() else {
            return Ok(());
        };
        if held_id != id {
            return Ok(());
        }
        if crate::fault::on("broken-atomicity") {
            // The fault point writes without checking, to show the overrun test failing.
            return Ok(());
        }
        if self.locks.extend(held, self.settings.lock_ttl)? {
            Ok(())
        } else {
            // Not ours any more: forget it, so that close releases nothing.
            self.held = None;
            Err(SessionError::LockLost(shown(id)))
        }
    }

    /// Writes session `id`, living `max_lifetime` seconds (0: no expiry).
    pub fn write(&mut self, id: &[u8], data: &[u8], max_lifetime: i64) -> Result<()> {
        checked(id)?;
        if self.is_unread(id) {
            return Ok(());
        }
        match self.held.as_ref() {
            // Extended and written in one atomic step (one round trip on Redis): the
            // data lands only while the lock is still this request's.
            Some((held_id, held)) if held_id == id && !crate::fault::on("broken-atomicity") => {
                let key = self.space.full_key(&data_key(id))?;
                let ttl = lifetime(max_lifetime);
                let lock_ttl = self.settings.lock_ttl;
                if !self.locks.set_if_held(
                    held,
                    lock_ttl,
                    &key,
                    Value::Str(data),
                    ttl,
                    retention(data),
                )? {
                    // Not ours any more: forget it, so that close releases nothing.
                    self.held = None;
                    return Err(SessionError::LockLost(shown(id)));
                }
            }
            _ => {
                self.still_ours(id)?;
                self.store_data(id, data, max_lifetime)?;
            }
        }
        self.forget_reservation(id);
        Ok(())
    }

    /// Refreshes the lifetime of an unchanged session (`session.lazy_write`); writes it
    /// when it is not stored yet.
    pub fn touch(&mut self, id: &[u8], data: &[u8], max_lifetime: i64) -> Result<()> {
        checked(id)?;
        if self.is_unread(id) {
            return Ok(());
        }
        self.still_ours(id)?;
        if !self.space.expire(&data_key(id), lifetime(max_lifetime))? {
            self.store_data(id, data, max_lifetime)?;
        }
        self.forget_reservation(id);
        Ok(())
    }

    /// Writes a session's data with its lifetime, as the class eviction keeps it by.
    fn store_data(&self, id: &[u8], data: &[u8], max_lifetime: i64) -> Result<()> {
        self.space.set_with_retention(
            &data_key(id),
            Value::Str(data),
            lifetime(max_lifetime),
            retention(data),
        )?;
        Ok(())
    }

    /// Deletes session `id` and releases its lock. Nothing is ever stored under an
    /// invalid id, so there is nothing to delete (PHP's contract: destroying a session
    /// that does not exist succeeds).
    pub fn destroy(&mut self, id: &[u8]) -> Result<()> {
        if !valid_id(id) {
            return Ok(());
        }
        self.still_ours(id)?;
        self.space.del(&data_key(id))?;
        if self.holds(id) {
            self.close();
        }
        Ok(())
    }

    /// Releases the lock this request holds, by token. False when it had expired (and
    /// maybe another request holds it now: that lock is untouched).
    pub fn close(&mut self) -> bool {
        self.reserved = None;
        match self.held.take() {
            // The fault point releases blindly, as ePHPm's handler did, to show the
            // overrun test failing.
            Some((_, held)) if crate::fault::on("broken-atomicity") => {
                matches!(self.space.store().del(&held.name), Ok(true))
            }
            Some((_, held)) => matches!(self.locks.release(&held), Ok(true)),
            None => true,
        }
    }

    /// Whether session `id` exists (`session.use_strict_mode`), or another request
    /// reserved it: the id this handler has just reserved itself does not count, and an
    /// invalid id never exists (strict mode then hands out a new one).
    pub fn exists(&self, id: &[u8]) -> Result<bool> {
        if !valid_id(id) || self.reserved.as_deref() == Some(id) {
            return Ok(false);
        }
        Ok(self.space.exists(&data_key(id))?)
    }

    fn forget_reservation(&mut self, id: &[u8]) {
        if self.reserved.as_deref() == Some(id) {
            self.reserved = None;
        }
    }

    /// A new session id from `generate`, reserved with an atomic add so that no two
    /// requests are handed the same one. The reservation is anonymous (evicted before
    /// anything else until the session is written): a flood of new visitors evicts other
    /// new visitors' ids, never a cache entry or a logged-in user's session, and never
    /// makes a lock, a session write or a `set()` fail.
    pub fn create_id(
        &mut self,
        mut generate: impl FnMut() -> Option<Vec<u8>>,
        max_lifetime: i64,
    ) -> Result<Option<Vec<u8>>> {
        const ATTEMPTS: usize = 16;
        for _ in 0..ATTEMPTS {
            let Some(id) = generate() else {
                return Ok(None);
            };
            // PHP's generator only makes valid ids; whatever else made this one, an id
            // that read and write would refuse is no id to hand out.
            if !valid_id(&id) {
                continue;
            }
            let ttl = lifetime(max_lifetime);
            match self.space.reserve(&data_key(&id), Value::Str(b""), ttl) {
                Ok(SetNx::Inserted) => {
                    self.reserved = Some(id.clone());
                    return Ok(Some(id));
                }
                Ok(SetNx::Exists) => {}
                // Nothing can be reserved in a store that cannot be reached. The id is
                // still unguessable, and the read that follows warns that the session
                // is not saved.
                Err(StoreError::Unavailable { .. })
                    if self.settings.on_timeout == OnTimeout::Warn =>
                {
                    return Ok(Some(id));
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(SessionError::NoFreeId(ATTEMPTS))
    }
}

impl Drop for Handler {
    /// A handler dropped without close (a request torn down) still gives its lock back.
    fn drop(&mut self) {
        self.close();
    }
}
