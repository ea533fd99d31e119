<?php

namespace Ephpm\Laravel;

use Closure;
use Ephpm\LockUnavailable;

/**
 * `remember()` and `rememberForever()` that make a cold key once across every process
 * sharing the store (every host, on a fleet DSN): one process takes the key's lock and
 * computes, the others sleep until its release wakes them and read the value. Shared by
 * the ephpm repository and its tagged caches, whose item keys (itemKey()) differ.
 *
 * The class using it has `$memo` (?Ephpm\MemoLock; null: Laravel's own remember) and
 * `$logger` (?object, PSR-3).
 */
trait ComputesOnce
{
    public function remember($key, $ttl, Closure $callback)
    {
        return $this->once($key, $callback, fn ($value) => $this->put($key, $value, value($ttl)));
    }

    public function rememberForever($key, Closure $callback)
    {
        return $this->once($key, $callback, fn ($value) => $this->forever($key, $value));
    }

    /**
     * The value of `$key`, made once across processes when it is missing: `$publish`
     * stores what `$callback` returned before the lock is released, so that the waiters
     * woken by the release find it.
     */
    private function once($key, Closure $callback, Closure $publish)
    {
        $value = $this->get($key);
        if ($value !== null) {
            return $value;
        }
        if ($this->memo === null) {
            $publish($value = $callback());
            return $value;
        }
        // The lock is the item's, as stored: a tagged item's key carries its tags'
        // namespace, so one key under two tag sets is two computations, as it is two items.
        $item = $this->itemKey($key);
        // A cached value may be false: wrapped, so that MemoLock sees it as found.
        $found = function () use ($item) {
            $value = $this->store->get($item);
            return $value === null ? null : [$value];
        };
        $make = function () use ($callback, $publish) {
            $publish($value = $callback());
            return [$value];
        };
        try {
            return $this->memo->once('remember:' . $item, $found, $make)[0];
        } catch (LockUnavailable $e) {
            // Laravel's logger does not interpolate {placeholders}: the message says it all.
            $this->logger?->warning(sprintf('ephpm: computing cache key "%s" without stampede protection: %s', $key, $e->getMessage()), ['key' => $key, 'exception' => $e]);
            $publish($value = $callback());
            return $value;
        }
    }
}
