<?php

use Ephpm\Symfony\EphpmAdapter;
use Psr\SimpleCache\CacheInterface;
use Symfony\Component\Cache\Psr16Cache;
use Symfony\Component\Cache\Tests\Psr16CacheTest;

/** Symfony's Psr16CacheTest (PSR-16's SimpleCacheTest and Symfony's own cases) through Psr16Cache on EphpmAdapter. */
final class EphpmAdapterPsr16Test extends Psr16CacheTest
{
    public function createSimpleCache(int $defaultLifetime = 0): CacheInterface
    {
        return new Psr16Cache(new EphpmAdapter('ephpm-psr16', $defaultLifetime, ephpm_test_dsn()));
    }
}
