<?php

namespace Ephpm\Laravel;

use Illuminate\Cache\RateLimiter;

/**
 * Laravel's RateLimiter, with `hit()` in one atomic step on an ephpm store. Laravel's own
 * `hit()` adds the counter at 0, increments it, and puts it back to 1 when the add lost
 * and the increment saw 1 (a counter that expired in between): between that increment and
 * that put, another process's hit is overwritten — a few hits in a hundred are lost when
 * processes race on a fresh key, with every store. Here the counter is created with the
 * decay as its TTL and counted by one increment. Other stores get Laravel's own.
 */
class EphpmRateLimiter extends RateLimiter
{
    public function hit($key, $decaySeconds = 60)
    {
        $store = $this->cache->getStore();
        if (!$store instanceof EphpmStore) {
            return parent::hit($key, $decaySeconds);
        }
        $key = $this->cleanRateLimiterKey($key);
        $this->cache->add($key . ':timer', $this->availableAt($decaySeconds), $decaySeconds);
        return $store->kv()->increment($key, 1, max(1, (int) $decaySeconds));
    }
}
