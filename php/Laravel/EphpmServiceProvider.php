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
 * the `ephpm.session.*` settings (docs/laravel.md); sessions live `session.lifetime` minutes.
 * config/ephpm.php (published with --tag=ephpm-config): `web_user`, php-fpm's Unix user,
 * which cache:clear and the ephpm:* commands (stats, locks, clear) check they run as.
 */
final class EphpmServiceProvider extends ServiceProvider
{
    public function register()
    {
        $this->mergeConfigFrom(__DIR__ . '/config/ephpm.php', 'ephpm');
        // A limit that holds under concurrency when the limiter's store is ephpm's
        // (EphpmRateLimiter says how).
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
        // Laravel 13 binds a driver's closure to its manager ($this is the SessionManager
        // inside it, as it is the CacheManager above): the provider is captured instead.
        $this->app['session']->extend('ephpm', fn ($app) => $provider->sessionHandler($app));
        if (method_exists($this->app, 'runningInConsole') && $this->app->runningInConsole()) {
            $this->console();
        }
        // What a request leaves behind goes when it ends, also in a long-running worker
        // that handles many: a session lock still held, the deferred refreshes of
        // flexible() (after the response, which terminate() follows), and the rate
        // limiter's attempts counted by a check that no hit() followed. A bare container
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
            if ($this->app->resolved(RateLimiter::class) && ($limiter = $this->app[RateLimiter::class]) instanceof EphpmRateLimiter) {
                $limiter->releaseReservations();
            }
        });
    }

    /**
     * The ephpm:* commands, and cache:clear asking whose store it is before clearing an
     * ephpm one (Laravel 8 binds it as "command.cache.clear", later versions by class;
     * the binding is made later, by a deferred provider: an extender waits for it).
     */
    private function console(): void
    {
        $this->publishes([__DIR__ . '/config/ephpm.php' => $this->app->configPath('ephpm.php')], 'ephpm-config');
        $this->commands([Console\StatsCommand::class, Console\LocksCommand::class, Console\ClearCommand::class]);
        foreach (['command.cache.clear', \Illuminate\Cache\Console\ClearCommand::class] as $abstract) {
            $this->app->extend($abstract, fn ($command, $app) => new Console\CacheClearCommand($app['cache'], $app['files']));
        }
    }

    /** The repository of one `ephpm` store of config/cache.php. */
    public function repository(array $config, string $prefix): EphpmRepository
    {
        // Never an empty prefix: flushing this store must not remove what else lives in
        // the same ephpm store (the sessions).
        $kv = new Kv($config['dsn'] ?? null, 'cache:' . ($prefix === '' ? '' : $prefix . ':'));
        $locks = new Kv($config['dsn'] ?? null, 'cache-lock:' . ($prefix === '' ? '' : $prefix . ':'));
        $store = new EphpmStore($kv, $prefix === '' ? '' : $prefix . ':', $locks);
        $logger = $this->app->bound('log') ? $this->app['log'] : null;
        $memo = ($config['stampede'] ?? true)
            ? new MemoLock($kv, self::millis($config['lock_ttl'] ?? 30, 1), self::millis($config['lock_wait'] ?? 10, 0), $logger)
            : null;
        // The config carries the store's name (Laravel 11+), which its events report.
        return new EphpmRepository($store, $memo, $logger, $config);
    }

    /** The handler of the `ephpm` session driver (public: the driver's closure, bound to the manager, calls it). */
    public function sessionHandler($app): EphpmSessionHandler
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
