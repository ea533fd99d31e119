<?php

namespace Ephpm\Laravel;

use Ephpm\MemoLock;
use Ephpm\StaleCache;
use Illuminate\Cache\Repository;
use Illuminate\Container\Container;
use Illuminate\Support\Defer\DeferredCallbackCollection;

/**
 * The repository of an `ephpm` cache store: Laravel's own, plus what one process cannot
 * give alone.
 *
 * - `remember()`, `rememberForever()` and `sear()` make a cold key once across every
 *   process sharing the store (every host, on a fleet DSN): one process takes the key's
 *   lock and computes, the others sleep until its release wakes them and read the value.
 *   A wait never runs into `max_execution_time`; a lock that cannot be had in time, or a
 *   lock store that cannot be used, computes without protection and logs a warning.
 * - `flexible($key, [$fresh, $stale], $callback)`: Laravel 11's stale-while-revalidate,
 *   on Laravel 8 and later: fresh for `$fresh` seconds, then served stale until `$stale`
 *   while one process (across processes and hosts) refreshes it after the response. The
 *   key holds ephpm's StaleCache record; get() gives its value (EphpmStore, FlexibleValue).
 * - `add()` without a TTL is atomic too (Laravel's falls back to get-then-put).
 */
class EphpmRepository extends Repository
{
    use ComputesOnce;

    /**
     * @param MemoLock|null $memo The locks behind remember() and flexible(); null: no
     *        stampede protection (Laravel's own remember()).
     * @param object|null $logger A PSR-3 logger for computations that went unprotected
     *        and refreshes that failed.
     * @param array $config The store's entry of config/cache.php, with its name under
     *        'store' (Laravel 11+ names the store in its events by it; older releases
     *        take no config).
     */
    public function __construct(EphpmStore $store, private ?MemoLock $memo = null, private ?object $logger = null, array $config = [])
    {
        parent::__construct($store, $config);
    }

    public function add($key, $value, $ttl = null)
    {
        $key = self::plainKey($key);
        if ($ttl === null) {
            return $this->store->add($this->itemKey($key), $value, 0);
        }
        return parent::add($key, $value, $ttl);
    }

    /**
     * Laravel's tagged cache, whose remember() is protected as this repository's is, and
     * whose tags get their ids atomically (EphpmTagSet).
     *
     * @param array|mixed $names
     */
    public function tags($names)
    {
        $names = is_array($names) ? $names : func_get_args();
        $cache = new EphpmTaggedCache($this->store, new EphpmTagSet($this->store, $names), $this->memo, $this->logger);
        if ($this->events !== null) {
            $cache->setEventDispatcher($this->events);
        }
        // Laravel 11+: the tagged cache's events name the store too.
        if (property_exists($this, 'config')) {
            $cache->config = $this->config;
        }
        return $cache->setDefaultCacheTime($this->default);
    }

    /**
     * Laravel 11's `Cache::flexible()`: fresh for `$ttl[0]` seconds, then served stale
     * (at once) until `$ttl[1]` while one process refreshes it after the response; past
     * that, computed like a miss, once across processes.
     *
     * Laravel 11 and later have a `flexible()` of their own whose refresh goes to the
     * framework's `defer()`. This one keeps ephpm's record (one process refreshes, elected
     * across every process and host, and a cold key is computed once), and hands the
     * refresh to that same `defer()` where the application has it, so that it runs where
     * Laravel runs deferred callbacks (after the response, at the end of an Octane
     * request or a queued job). A refresh that Laravel does not run (a failed response
     * without `$alwaysDefer`) still runs when the process ends the request: the lock
     * that elected this process to refresh is held until then, and nobody else would.
     *
     * @param array{0: int|\DateInterval|\DateTimeInterface, 1: int|\DateInterval|\DateTimeInterface} $ttl
     * @param array{seconds?: int}|null $lock The refresh lock's lifetime in seconds.
     * @param bool $alwaysDefer Laravel 12's: run the refresh even after a failed response.
     */
    public function flexible($key, $ttl, $callback, $lock = null, $alwaysDefer = false)
    {
        $key = self::plainKey($key);
        $fresh = $this->getSeconds($ttl[0]);
        $stale = max(0, $this->getSeconds($ttl[1]) - $fresh);
        if ($fresh <= 0) {
            return $callback();
        }
        $memo = $this->memo ?? new MemoLock($this->store->kv());
        if (isset($lock['seconds']) && $lock['seconds'] > 0) {
            $memo = $memo->with(lockTtlMs: (int) ($lock['seconds'] * 1000));
        }
        $cache = new StaleCache($this->store->kv(), $stale, 0, $memo, true, $this->logger);
        $value = $cache->get($this->itemKey($key), fn () => $callback(), $fresh, $metadata);
        if ($metadata['stale'] && self::laravelDefers()) {
            \Illuminate\Support\defer(static fn () => StaleCache::runDeferred(), 'ephpm:flexible', (bool) $alwaysDefer);
        }
        return $value;
    }

    /** Whether this is Laravel 11 or later inside an application that runs deferred callbacks. */
    private static function laravelDefers(): bool
    {
        return function_exists('Illuminate\Support\defer')
            && Container::getInstance()->bound(DeferredCallbackCollection::class);
    }
}
