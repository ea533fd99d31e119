<?php

namespace Ephpm\Laravel;

use Ephpm\Kv;
use Illuminate\Contracts\Cache\LockProvider;
use Illuminate\Contracts\Cache\Store;

/**
 * A Laravel cache store on ephpm's host-wide store (`'driver' => 'ephpm'` once
 * EphpmServiceProvider is registered). Values keep their PHP types; `increment` is
 * atomic; `Cache::lock()` gives an EphpmLock, whose `block()` is woken by the release
 * instead of Laravel's 250 ms poll.
 *
 * The store is the one `ephpm.dsn` names (waiting for a lock uses the `ephpm_kv_*`
 * functions, which work on that store); `$prefix` is put before every key.
 */
final class EphpmStore implements Store, LockProvider
{
    private Kv $kv;

    public function __construct(private string $prefix = '')
    {
        $this->kv = new Kv(null, $prefix);
    }

    public function get($key)
    {
        return $this->kv->get((string) $key);
    }

    public function many(array $keys)
    {
        $found = $this->kv->getMany(array_map('strval', $keys));
        $out = [];
        foreach ($keys as $key) {
            $out[$key] = $found[$key] ?? null;
        }
        return $out;
    }

    public function put($key, $value, $seconds)
    {
        if ($seconds <= 0) {
            return $this->forget($key);
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

    public function increment($key, $value = 1)
    {
        try {
            return $this->kv->increment((string) $key, (int) $value);
        } catch (\TypeError) {
            return false; // the stored value is not an integer
        }
    }

    public function decrement($key, $value = 1)
    {
        return $this->increment($key, -$value);
    }

    public function forever($key, $value)
    {
        return $this->kv->set((string) $key, $value, 0);
    }

    public function forget($key)
    {
        $this->kv->delete((string) $key);
        return true;
    }

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
        return new EphpmLock($this->kv, $this->prefix, (string) $name, (int) $seconds, $owner);
    }

    public function restoreLock($name, $owner)
    {
        return $this->lock($name, 0, $owner);
    }
}
