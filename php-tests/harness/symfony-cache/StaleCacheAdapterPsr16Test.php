<?php

use Ephpm\Symfony\StaleCacheAdapter;
use Psr\SimpleCache\CacheInterface;
use Symfony\Component\Cache\Psr16Cache;
use Symfony\Component\Cache\Tests\Psr16CacheTest;

/** Symfony's Psr16CacheTest (PSR-16's SimpleCacheTest and Symfony's own cases) through Psr16Cache on StaleCacheAdapter. */
final class StaleCacheAdapterPsr16Test extends Psr16CacheTest
{
    public function createSimpleCache(int $defaultLifetime = 0): CacheInterface
    {
        return new Psr16Cache(new StaleCacheAdapter('stale-psr16', $defaultLifetime, ephpm_test_dsn(), staleSeconds: 60));
    }
}
