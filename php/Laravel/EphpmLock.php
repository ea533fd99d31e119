<?php

namespace Ephpm\Laravel;

use Ephpm\Kv;
use Illuminate\Cache\Lock;
use Illuminate\Contracts\Cache\LockTimeoutException;

/**
 * A Laravel cache lock on ephpm: taken with an atomic add of the owner's token, released
 * only by that owner (an atomic compare-and-delete), and `block()` sleeps until the
 * holder releases (woken by the store, on every DSN) or its TTL runs out, never polling.
 */
final class EphpmLock extends Lock
{
    public function __construct(private Kv $kv, $name, $seconds, $owner = null)
    {
        parent::__construct($name, $seconds, $owner);
    }

    public function acquire()
    {
        // With a TTL the entry is a lock: the store never evicts it before it expires.
        return $this->kv->add($this->name, $this->owner, max(0, $this->seconds));
    }

    public function release()
    {
        return $this->kv->deleteIfEquals($this->name, $this->owner);
    }

    /**
     * Laravel 12.63's: `$seconds` more (the lock's own when null) for this owner's lock,
     * atomically, so that an owner whose lock expired and was taken by another never
     * extends the other's; false when this owner does not hold it. 0 seconds, a lock
     * that never expires: true while this owner holds one taken for 0 seconds (the store
     * cannot turn a lock with a lifetime into one without).
     */
    public function refresh($seconds = null)
    {
        $seconds ??= $this->seconds;
        if ($seconds > 0) {
            return $this->kv->expireIfEquals($this->name, $this->owner, $seconds);
        }
        return $this->isOwnedByCurrentProcess() && $this->kv->ttl($this->name) === -1.0;
    }

    public function forceRelease()
    {
        $this->kv->delete($this->name);
    }

    protected function getCurrentOwner()
    {
        $owner = $this->kv->get($this->name);
        return is_string($owner) ? $owner : null;
    }

    /**
     * Waits up to `$seconds` for the lock, woken by its release; then runs `$callback`
     * and releases, or returns true.
     *
     * @throws LockTimeoutException
     */
    public function block($seconds, $callback = null)
    {
        $deadline = microtime(true) + $seconds;
        while (!$this->acquire()) {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new LockTimeoutException();
            }
            // The holder's version (false: gone already, try again at once), then sleep
            // until it changes, at most until the holder's TTL would free it.
            $seen = $this->kv->wait($this->name);
            if ($seen !== false) {
                $ttl = $this->kv->ttl($this->name);
                $this->kv->wait($this->name, $seen, $ttl !== null && $ttl > 0 ? min($left, $ttl + 0.001) : $left);
            }
        }
        if (is_callable($callback)) {
            try {
                return $callback();
            } finally {
                $this->release();
            }
        }
        return true;
    }
}
