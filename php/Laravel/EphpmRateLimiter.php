<?php

namespace Ephpm\Laravel;

use Closure;
use Ephpm\Kv;
use Illuminate\Cache\RateLimiter;
use Throwable;

/**
 * Laravel's RateLimiter, whose limit holds under concurrency on an ephpm store: of N
 * requests racing on a limit of M, exactly M get through.
 *
 * Laravel checks, then counts: `tooManyAttempts()` reads the counter, `hit()` increments
 * it later (in `attempt()`, after the callback ran; in the `throttle` middleware, right
 * after the check). Every request that reads the counter before the others' hits lands
 * goes through: with 20 at once on a limit of 5, 6 or 7 pass, all 20 when the callback
 * takes a while. Here `tooManyAttempts()` counts the attempt itself with one atomic
 * increment (a reservation), and takes it back when that went past the limit; the
 * `hit()` that follows in the same process consumes the reservation instead of counting
 * again. A reservation that no hit() consumed (the caller only looked) is given back
 * when the request ends (terminate()) or the limiter goes, and by `attempt()` when its
 * callback throws (Laravel counts no hit then either).
 *
 * `hit()` and `increment()` (Laravel 10's, by any amount; `decrement()` goes through it)
 * are one atomic increment too: Laravel's adds the counter at 0, increments it, and puts
 * it back to the amount when the add lost and the increment saw just that (a counter that
 * expired in between), overwriting another process's hits. An increment by 1 or more
 * consumes this process's reservation as hit() does. Stores other than ephpm's get
 * Laravel's own methods.
 */
class EphpmRateLimiter extends RateLimiter
{
    /** @var array<string, int> Attempts counted by tooManyAttempts() and not hit() yet: key => the count it made. */
    private array $reserved = [];

    public function attempt($key, $maxAttempts, Closure $callback, $decaySeconds = 60)
    {
        try {
            return parent::attempt($key, $maxAttempts, $callback, $decaySeconds);
        } catch (Throwable $e) {
            $this->giveBack($this->cleanRateLimiterKey($key));
            throw $e;
        }
    }

    /** Counts the attempt now when it is within the limit (see the class). */
    public function tooManyAttempts($key, $maxAttempts)
    {
        $kv = $this->kv();
        if ($kv === null) {
            return parent::tooManyAttempts($key, $maxAttempts);
        }
        $key = $this->cleanRateLimiterKey($key);
        if (isset($this->reserved[$key])) {
            return false; // this process's attempt is counted already
        }
        // Laravel also resets a counter at the limit whose window's timer is gone: its
        // counter and timer expire apart. Not here: the timer is made by the first
        // hit(), after the reservations that race for the window, and the counter's
        // lifetime is made the timer's by that same hit().
        $hits = $this->reserve($kv, $key, $maxAttempts);
        if ($hits === null) {
            return true;
        }
        $this->reserved[$key] = $hits;
        return false;
    }

    public function hit($key, $decaySeconds = 60)
    {
        return $this->kv() === null ? parent::hit($key, $decaySeconds) : $this->increment($key, $decaySeconds);
    }

    public function increment($key, $decaySeconds = 60, $amount = 1)
    {
        $kv = $this->kv();
        if ($kv === null) {
            return parent::increment($key, $decaySeconds, $amount);
        }
        $key = $this->cleanRateLimiterKey($key);
        $amount = (int) $amount;
        // An int, a DateInterval or a DateTimeInterface, as Laravel takes it.
        $decay = max(1, $this->secondsUntil($decaySeconds));
        // Whoever starts the window (creates its timer) gives the counter its lifetime:
        // a counter made by a reservation was created before the decay was known.
        $starts = $this->cache->add($key . ':timer', $this->availableAt($decaySeconds), $decaySeconds);
        if (isset($this->reserved[$key]) && $amount >= 1) {
            // The reservation is this attempt's first hit.
            $hits = $this->reserved[$key];
            unset($this->reserved[$key]);
            if ($amount > 1) {
                $hits = $kv->increment($key, $amount - 1, $decay);
            }
        } else {
            $hits = $kv->increment($key, $amount, $decay);
        }
        if ($starts) {
            $kv->expire($key, $decay);
        }
        return $hits;
    }

    public function resetAttempts($key)
    {
        unset($this->reserved[$this->cleanRateLimiterKey($key)]);
        return parent::resetAttempts($key);
    }

    /** Gives back the attempts counted by tooManyAttempts() that no hit() consumed. */
    public function releaseReservations(): void
    {
        foreach (array_keys($this->reserved) as $key) {
            $this->giveBack($key);
        }
    }

    public function __destruct()
    {
        $this->releaseReservations();
    }

    /**
     * Counts one attempt on `$key`; takes it back and returns null when that went past
     * `$max`. A counter made here lives a minute (Laravel's default decay) until hit()
     * gives it the window's.
     */
    private function reserve(Kv $kv, string $key, int $max): ?int
    {
        $hits = $kv->increment($key, 1, 60);
        if ($hits <= $max) {
            return $hits;
        }
        $kv->increment($key, -1);
        return null;
    }

    private function giveBack(string $key): void
    {
        if (!isset($this->reserved[$key])) {
            return;
        }
        unset($this->reserved[$key]);
        $kv = $this->kv();
        // Not into a counter that was cleared meanwhile (it would start at -1).
        if ($kv !== null && $kv->has($key)) {
            $kv->increment($key, -1);
        }
    }

    private function kv(): ?Kv
    {
        $store = $this->cache->getStore();
        return $store instanceof EphpmStore ? $store->kv() : null;
    }
}
