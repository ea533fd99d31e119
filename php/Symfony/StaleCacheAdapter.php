<?php

namespace Ephpm\Symfony;

use Ephpm\StaleCache;
use Psr\Cache\InvalidArgumentException;
use Symfony\Contracts\Cache\CacheInterface;

/**
 * Symfony's CacheInterface over an Ephpm\StaleCache, for code that takes a cache pool:
 * a hot key whose lifetime ends is served at once while one process refreshes it.
 *
 *     $cache = new StaleCacheAdapter(new \Ephpm\StaleCache(staleSeconds: 60), 300);
 *     $value = $cache->get('report', function (ItemInterface $item) {
 *         $item->expiresAfter(600);
 *         return build_report();
 *     });
 *
 * The callback gets an item whose expiresAfter()/expiresAt() set the value's lifetime
 * (the stale window comes after it); `$save = false` serves the value without storing
 * it. `$beta = INF` recomputes now. Tags are not supported: tag() throws.
 */
final class StaleCacheAdapter implements CacheInterface
{
    /**
     * @param int $defaultLifetime Seconds a value is fresh unless the callback says otherwise.
     */
    public function __construct(private StaleCache $cache, private int $defaultLifetime = 300)
    {
        if ($defaultLifetime <= 0) {
            throw new \ValueError(sprintf('%s(): Argument #2 ($defaultLifetime) must be greater than 0', __METHOD__));
        }
    }

    public function get(string $key, callable $callback, ?float $beta = null, ?array &$metadata = null): mixed
    {
        if ($beta !== null && $beta < 0) {
            throw new class(sprintf('Argument "$beta" provided to "%s::get()" must be a positive number, %f given.', self::class, $beta)) extends \InvalidArgumentException implements InvalidArgumentException {};
        }
        $compute = function (int|float &$ttl) use ($key, $callback) {
            $item = new StaleCacheItem($key, $ttl);
            $save = true;
            $value = $callback($item, $save);
            $ttl = $save ? $item->lifetime() : 0;
            return $value;
        };
        if ($beta === INF) {
            $metadata = [];
            return $this->cache->refresh($key, $compute, $this->defaultLifetime);
        }
        $metadata = [];
        return $this->cache->get($key, $compute, $this->defaultLifetime);
    }

    public function delete(string $key): bool
    {
        $this->cache->delete($key);
        return true;
    }
}
