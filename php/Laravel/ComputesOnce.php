<?php

namespace Ephpm\Laravel;

use Closure;
use Ephpm\LockUnavailable;

/**
 * `remember()`, `rememberWithWarmth()` (Laravel 13) and `rememberForever()` that make a
 * cold key once across every process sharing the store (every host, on a fleet DSN): one
 * process takes the key's lock and computes, the others sleep until its release wakes
 * them and read the value. Shared by the ephpm repository and its tagged caches, whose
 * item keys (itemKey()) differ.
 *
 * The class using it has `$memo` (?Ephpm\MemoLock; null: Laravel's own remember) and
 * `$logger` (?object, PSR-3).
 */
trait ComputesOnce
{
    public function remember($key, $ttl, Closure $callback)
    {
        return $this->rememberWithWarmth($key, $ttl, $callback)[0];
    }

    /**
     * Laravel 13's: the value and whether it was warm (found in the cache, also when
     * another process made it while this one waited), else made here and stored. A TTL
     * given as a closure gets the value, as Laravel's remember() gives it.
     *
     * @return array{0: mixed, 1: bool}
     */
    public function rememberWithWarmth($key, $ttl, Closure $callback): array
    {
        $key = self::plainKey($key);
        return $this->once($key, $callback, fn ($value) => $this->put($key, $value, value($ttl, $value)));
    }

    public function rememberForever($key, Closure $callback)
    {
        $key = self::plainKey($key);
        return $this->once($key, $callback, fn ($value) => $this->forever($key, $value))[0];
    }

    /**
     * A key as a string where Laravel takes enums too (12.45 and later: `enum_value()`,
     * which gives a backed enum's value and a pure enum's name).
     */
    private static function plainKey($key)
    {
        return function_exists('Illuminate\Support\enum_value') ? \Illuminate\Support\enum_value($key) : $key;
    }

    /**
     * The value of `$key` and whether it was warm, made once across processes when it is
     * missing: `$publish` stores what `$callback` returned before the lock is released, so
     * that the waiters woken by the release find it.
     *
     * @return array{0: mixed, 1: bool}
     */
    private function once($key, Closure $callback, Closure $publish): array
    {
        $value = $this->get($key);
        if ($value !== null) {
            return [$value, true];
        }
        if ($this->memo === null) {
            $publish($value = $callback());
            return [$value, false];
        }
        // The lock is the item's, as stored: a tagged item's key carries its tags'
        // namespace, so one key under two tag sets is two computations, as it is two items.
        $item = $this->itemKey($key);
        // A cached value may be false: wrapped, so that MemoLock sees it as found.
        $found = function () use ($item) {
            $value = $this->store->get($item);
            return $value === null ? null : [$value, true];
        };
        $make = function () use ($callback, $publish) {
            $publish($value = $callback());
            return [$value, false];
        };
        try {
            return $this->memo->once('remember:' . $item, $found, $make);
        } catch (LockUnavailable $e) {
            // Laravel's logger does not interpolate {placeholders}: the message says it all.
            $this->logger?->warning(sprintf('ephpm: computing cache key "%s" without stampede protection: %s', $key, $e->getMessage()), ['key' => $key, 'exception' => $e]);
            $publish($value = $callback());
            return [$value, false];
        }
    }
}
