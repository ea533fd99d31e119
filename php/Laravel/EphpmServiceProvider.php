<?php

namespace Ephpm\Laravel;

use Ephpm\Kv;
use Ephpm\MemoLock;
use Ephpm\SessionHandler;
use Ephpm\StaleCache;
use Illuminate\Cache\RateLimiter;
use Illuminate\Support\ServiceProvider;

/**
 * The `ephpm` cache and session drivers (auto-discovered from composer.json).
 *
 * config/cache.php, one entry per store (several may coexist, e.g. a host store and a
 * fleet store):
 *     'ephpm' => ['driver' => 'ephpm',
 *         'dsn' => null,        // any ephpm DSN: shm://NAME, redis://…, cluster://…; null: ephpm.dsn
 *         'prefix' => null,     // null: cache.prefix
 *         'stampede' => true,   // remember() and friends compute a cold key once across processes
 *         'lock_ttl' => 30,     // seconds a remember() lock lives
 *         'lock_wait' => 10],   // seconds a remember() waits before computing unprotected
 * config/session.php: 'driver' => 'ephpm', and optionally
 *     'ephpm' => ['dsn' => null, 'prefix' => 'laravel_session:', 'locking' => true,
 *         'lock_ttl' => 0, 'lock_wait' => 30, 'lock_timeout' => 'warn'],
 * the `ephpm.session.*` settings (README); sessions live `session.lifetime` minutes.
 */
final class EphpmServiceProvider extends ServiceProvider
{
    public function register()
    {
        // RateLimiter::hit() in one atomic step when the limiter's store is ephpm's.
        $this->app->extend(RateLimiter::class, function (RateLimiter $limiter, $app) {
            return new EphpmRateLimiter($app->make('cache')->driver($app['config']->get('cache.limiter')));
        });
    }

    public function boot()
    {
        $provider = $this;
        $this->app['cache']->extend('ephpm', function ($app, array $config) use ($provider) {
            // Called bound to the CacheManager: setEventDispatcher() is its own.
            $repository = $provider->repository($config, $this->getPrefix($config) ?? '');
            $this->setEventDispatcher($repository);
            return $repository;
        });
        $this->app['session']->extend('ephpm', fn ($app) => $this->sessionHandler($app));
        // What a request leaves behind goes when it ends, also in a long-running worker
        // that handles many: a session lock still held, and the deferred refreshes of
        // flexible() (after the response, which terminate() follows). A bare container
        // (the Illuminate components without the framework) has no terminate().
        if (!method_exists($this->app, 'terminating')) {
            return;
        }
        $this->app->terminating(function () {
            $session = $this->app->resolved('session') ? ($this->app['session']->getDrivers()['ephpm'] ?? null) : null;
            $handler = $session?->getHandler();
            if ($handler instanceof EphpmSessionHandler) {
                $handler->release();
            }
            StaleCache::runDeferred();
        });
    }

    /** The repository of one `ephpm` store of config/cache.php. */
    public function repository(array $config, string $prefix): EphpmRepository
    {
        // Never an empty prefix: flushing this store must not remove what else lives in
        // the same ephpm store (the sessions).
        $kv = new Kv($config['dsn'] ?? null, 'cache:' . ($prefix === '' ? '' : $prefix . ':'));
        $store = new EphpmStore($kv, $prefix === '' ? '' : $prefix . ':');
        $logger = $this->app->bound('log') ? $this->app['log'] : null;
        $memo = ($config['stampede'] ?? true)
            ? new MemoLock($kv, self::millis($config['lock_ttl'] ?? 30, 1), self::millis($config['lock_wait'] ?? 10, 0), $logger)
            : null;
        return new EphpmRepository($store, $memo, $logger);
    }

    private function sessionHandler($app): EphpmSessionHandler
    {
        $config = $app['config'];
        $options = $config['session.ephpm'] ?? [];
        $kv = new Kv($options['dsn'] ?? null, $options['prefix'] ?? 'laravel_session:');
        unset($options['dsn'], $options['prefix']);
        $options['lifetime'] = (int) ($config['session.lifetime'] ?? 120) * 60;
        return new EphpmSessionHandler(new SessionHandler($kv, $options), $app->bound('log') ? $app['log'] : null);
    }

    private static function millis(int|float $seconds, int $least): int
    {
        return max($least, (int) round($seconds * 1000));
    }
}
