<?php

namespace Ephpm\Laravel;

use Ephpm\Kv;
use Illuminate\Cache\TaggableStore;
use Illuminate\Contracts\Cache\LockProvider;

/**
 * A Laravel cache store on an ephpm store (`'driver' => 'ephpm'`), with the contract of
 * Laravel's own stores: `add()` is atomic, `forget()` says whether it deleted,
 * `increment()` creates a missing key and returns false (as the Redis store does) for a
 * value that is not an integer or a result that would overflow, `flush()` removes only
 * this store's keys, and tags work (Laravel's TaggedCache, on any DSN). Values keep their
 * PHP types.
 *
 * Every key lives under the Kv's prefix, which the service provider makes
 * `cache:<prefix>:`: never empty, so that flushing the cache never touches the sessions
 * or anything else kept in the same store. Locks live under their own (`$locks`, which
 * the provider makes `cache-lock:<prefix>:`), as Laravel 12.36's file store keeps them:
 * a lock and an item of one name are two keys, `flush()` leaves held locks alone and
 * `flushLocks()` (Laravel 13) removes them.
 */
final class EphpmStore extends TaggableStore implements LockProvider, FlushesLocks
{
    private Kv $locks;

    /** @param Kv|null $locks Where the locks live; null: among the items, in `$kv`. */
    public function __construct(private Kv $kv, private string $prefix = '', ?Kv $locks = null)
    {
        $this->locks = $locks ?? $kv;
    }

    /** The Kv this store reads and writes (its prefix applied). */
    public function kv(): Kv
    {
        return $this->kv;
    }

    /** A key written by flexible() gives its value (FlexibleValue). */
    public function get($key)
    {
        return FlexibleValue::of($this->kv, (string) $key, $this->kv->get((string) $key));
    }

    /** One round trip for all the keys; a missing key is null, as Laravel expects. */
    public function many(array $keys)
    {
        $found = $this->kv->getMany(array_map('strval', $keys));
        $out = [];
        foreach ($keys as $key) {
            $out[$key] = FlexibleValue::of($this->kv, (string) $key, $found[$key] ?? null);
        }
        return $out;
    }

    public function put($key, $value, $seconds)
    {
        if ($seconds <= 0) {
            $this->forget($key);
            return true;
        }
        return $this->kv->set((string) $key, $value, $seconds);
    }

    public function putMany(array $values, $seconds)
    {
        if ($seconds <= 0) {
            foreach (array_keys($values) as $key) {
                $this->forget($key);
            }
            return true;
        }
        return $this->kv->setMany($values, $seconds);
    }

    /**
     * Stores the value only if the key is absent, atomically: of any number of processes
     * adding one key at once, exactly one gets true. 0 seconds: no expiry.
     */
    public function add($key, $value, $seconds)
    {
        return $this->kv->add((string) $key, $value, max(0, $seconds));
    }

    /** @return int|false The new value; false when the value is not an integer or would overflow. */
    public function increment($key, $value = 1)
    {
        try {
            return $this->kv->increment((string) $key, (int) $value);
        } catch (\TypeError | \ArithmeticError) {
            return false;
        }
    }

    /** @return int|false As increment(). */
    public function decrement($key, $value = 1)
    {
        if ((int) $value === PHP_INT_MIN) {
            return false; // its negation overflows
        }
        return $this->increment($key, -(int) $value);
    }

    /**
     * Laravel 13's `touch()`: a new lifetime of `$seconds` from now for a key that exists
     * (at least one second, as Laravel's Redis store gives it); false when it is absent.
     * `Cache::touch()` forgets the key itself for a lifetime of 0 or less.
     */
    public function touch($key, $seconds)
    {
        return $this->kv->expire((string) $key, max(1, (int) $seconds));
    }

    public function forever($key, $value)
    {
        return $this->kv->set((string) $key, $value, 0);
    }

    /** @return bool Whether the key existed (Laravel fires KeyForgotten only then). */
    public function forget($key)
    {
        return $this->kv->delete((string) $key);
    }

    /** Removes this store's keys only (those under its prefix). */
    public function flush()
    {
        return $this->kv->clear();
    }

    public function getPrefix()
    {
        return $this->prefix;
    }

    public function lock($name, $seconds = 0, $owner = null)
    {
        return new EphpmLock($this->locks, (string) $name, (int) $seconds, $owner);
    }

    /** Laravel 13's: removes every lock of this store, held or not (their holders lose them). */
    public function flushLocks(): bool
    {
        return $this->locks->clear();
    }

    /** Laravel 13's: whether the locks live apart from the items (`cache:clear` keeps them). */
    public function hasSeparateLockStore(): bool
    {
        return $this->locks !== $this->kv;
    }

    public function restoreLock($name, $owner)
    {
        return $this->lock($name, 0, $owner);
    }
}
