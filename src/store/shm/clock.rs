//! The store's time source: the kernel's monotonic clock, which is host-wide (every
//! process reads the same clock) and immune to wall-clock steps, or a manual clock for
//! tests.
//!
//! It is read through CLOCK_MONOTONIC_COARSE: 4 ns a read instead of 16 ns measured on
//! this kind of machine (a lock cycle reads it twice), at a resolution of one kernel tick
//! (1–4 ms). Every process reads the same coarse clock, so TTLs are consistent across
//! processes. Within one tick of a deadline the precise clock decides whether it has
//! passed (`LazyNow::expired`): a key set with a TTL of 1 ms is gone 2 ms later, as
//! Redis' own tests expect of `SET … PX 1`, and no read pays for it but those near one.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Debug, Default)]
pub enum Clock {
    #[default]
    Monotonic,
    /// Nanoseconds set by the test; shared by every clone.
    Manual(Arc<AtomicU64>),
}

impl Clock {
    /// A manual clock starting at `start_ns` (non-zero: 0 means "never expires").
    pub fn manual(start_ns: u64) -> Self {
        Clock::Manual(Arc::new(AtomicU64::new(start_ns.max(1))))
    }

    pub fn now_ns(&self) -> u64 {
        match self {
            Clock::Monotonic => kernel_ns(libc::clock_gettime, libc::CLOCK_MONOTONIC_COARSE),
            Clock::Manual(ns) => ns.load(Ordering::SeqCst),
        }
    }

    /// The precise clock (CLOCK_MONOTONIC, of which the coarse one is the last tick's
    /// reading), for deciding within a tick of a deadline.
    fn precise_ns(&self) -> u64 {
        match self {
            Clock::Monotonic => kernel_ns(libc::clock_gettime, libc::CLOCK_MONOTONIC),
            Clock::Manual(ns) => ns.load(Ordering::SeqCst),
        }
    }

    /// How far the coarse clock can lag the precise one: one tick (0 for a manual clock).
    fn lag_ns(&self) -> u64 {
        static TICK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        match self {
            Clock::Monotonic => {
                *TICK.get_or_init(|| kernel_ns(libc::clock_getres, libc::CLOCK_MONOTONIC_COARSE))
            }
            Clock::Manual(_) => 0,
        }
    }

    /// Moves a manual clock forward (no effect on the monotonic clock).
    pub fn advance(&self, d: std::time::Duration) {
        if let Clock::Manual(ns) = self {
            ns.fetch_add(d.as_nanos() as u64, Ordering::SeqCst);
        }
    }
}

/// `call` (clock_gettime or clock_getres) of a monotonic clock, in nanoseconds. Inlined,
/// so that the call is direct: now_ns is on every lock cycle.
#[inline(always)]
fn kernel_ns(
    call: unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int,
    clock: libc::clockid_t,
) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for either call; CLOCK_MONOTONIC and
    // CLOCK_MONOTONIC_COARSE exist on every Linux since 2.6.32, so the call cannot fail.
    unsafe { call(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Reads the clock at most once per operation, and only if an operation needs it.
pub struct LazyNow<'a> {
    clock: &'a Clock,
    now: u64,
}

impl<'a> LazyNow<'a> {
    pub fn new(clock: &'a Clock) -> Self {
        LazyNow { clock, now: 0 }
    }

    pub fn get(&mut self) -> u64 {
        if self.now == 0 {
            self.now = self.clock.now_ns();
        }
        self.now
    }

    /// The absolute expiry for a TTL, 0 for none.
    pub fn deadline(&mut self, ttl: Option<std::time::Duration>) -> u64 {
        match ttl {
            None => 0,
            Some(d) => self
                .get()
                .saturating_add(d.as_nanos().min(u64::MAX as u128) as u64)
                .max(1),
        }
    }

    /// Whether an entry expiring at `expires_at` is gone: by the coarse clock, or, within
    /// the coarse clock's lag of the deadline, by the precise one (which is never behind
    /// it, so an entry the coarse clock calls gone is gone by both).
    #[inline]
    pub fn expired(&mut self, expires_at: u64) -> bool {
        if expires_at == 0 {
            return false;
        }
        let now = self.get();
        expires_at <= now
            || (!crate::fault::on("coarse-expiry")
                && expires_at - now <= self.clock.lag_ns()
                && expires_at <= self.clock.precise_ns())
    }
}
