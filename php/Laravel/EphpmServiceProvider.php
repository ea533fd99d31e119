<?php

namespace Ephpm\Laravel;

use Ephpm\SessionHandler;
use Illuminate\Support\ServiceProvider;

/**
 * Registers the cache driver `ephpm` (config/cache.php: `'ephpm' => ['driver' => 'ephpm',
 * 'prefix' => '...']`) and the session driver `ephpm` (config/session.php:
 * `'driver' => 'ephpm'`), a locking Ephpm\SessionHandler whose sessions live
 * `session.lifetime` minutes.
 */
final class EphpmServiceProvider extends ServiceProvider
{
    public function boot()
    {
        $this->app['cache']->extend('ephpm', function ($app, array $config) {
            // Bound to the CacheManager by extend(): repository() wraps the store.
            return $this->repository(new EphpmStore($config['prefix'] ?? $app['config']['cache.prefix'] ?? ''));
        });
        $this->app['session']->extend('ephpm', function ($app) {
            return new SessionHandler(null, ['lifetime' => (int) ($app['config']['session.lifetime'] ?? 120) * 60]);
        });
    }
}
