<?php

use Ephpm\Symfony\EphpmAdapter;
use Psr\Cache\CacheItemPoolInterface;
use Symfony\Component\Cache\Tests\Adapter\AdapterTestCase;

/** Symfony's AdapterTestCase (PSR-6's CachePoolTest and Symfony's own cases) on EphpmAdapter. */
final class EphpmAdapterTest extends AdapterTestCase
{
    public function createCachePool(int $defaultLifetime = 0, ?string $testMethod = null): CacheItemPoolInterface
    {
        return new EphpmAdapter('ephpm-adapter.' . ($testMethod ?? 'test'), $defaultLifetime, ephpm_test_dsn());
    }
}
