<?php

use Ephpm\Symfony\StaleCacheAdapter;
use Psr\Cache\CacheItemPoolInterface;
use Symfony\Component\Cache\Tests\Adapter\AdapterTestCase;

/** Symfony's AdapterTestCase (PSR-6's CachePoolTest and Symfony's own cases) on StaleCacheAdapter. */
final class StaleCacheAdapterTest extends AdapterTestCase
{
    public function createCachePool(int $defaultLifetime = 0, ?string $testMethod = null): CacheItemPoolInterface
    {
        return new StaleCacheAdapter('stale-adapter.' . ($testMethod ?? 'test'), $defaultLifetime, ephpm_test_dsn(), staleSeconds: 60);
    }
}
