<?php

namespace Ephpm\Symfony;

use Ephpm\Kv;
use Ephpm\MemoLock;
use Ephpm\StaleCache;
use Ephpm\Symfony\StaleCache\Computed;
use Psr\Cache\CacheItemInterface;
use Psr\Cache\InvalidArgumentException;
use Psr\Log\LoggerInterface;
use Symfony\Component\Cache\Adapter\AdapterInterface;
use Symfony\Component\Cache\CacheItem;
use Symfony\Contracts\Cache\CacheInterface;

/**
 * A Symfony cache pool (PSR-6 and Symfony's CacheInterface) over Ephpm\StaleCache: a hot
 * key whose lifetime ends is served at once by get() while one process, elected across
 * the host (or the fleet, on a shared store), refreshes it after its response.
 *
 *     # config/packages/cache.yaml, with EphpmBundle
 *     framework: { cache: { pools: { report.cache: { adapter: ephpm.stale_cache_adapter, default_lifetime: 300 } } } }
 *
 *     $pool = new StaleCacheAdapter('app', 300, staleSeconds: 60);
 *     $value = $pool->get('report', function (ItemInterface $item) {
 *         $item->expiresAfter(600);
 *         return build_report();
 *     }, metadata: $meta);   // $meta['stale']: served stale, a refresh is on its way
 *
 * Only get() with a callback serves stale values: it is the one call that knows how to
 * refresh them. The PSR-6 calls (getItem(), hasItem()) see a value past its lifetime as
 * a miss, as PSR-6 requires; save() stores a value with its lifetime (the stale window
 * comes after it), so a value saved through PSR-6 is served stale by get() too.
 *
 * As in every Symfony pool, a stored value that cannot be unserialized (its __wakeup()
 * throws) is a miss, logged: getItem() misses and get() computes it again. Values
 * computed by get() carry Symfony's item metadata (`expiry`, `ctime`; see Computed).
 *
 * Not tag-aware: StaleCache decides fresh, stale or expired from the record's times
 * alone, and an invalidated tag must make a value a miss, never a stale hit; for tags use
 * EphpmAdapter. The callback's item (a Symfony CacheItem) refuses tag().
 *
 * As a `framework.cache` pool, Symfony's CachePoolPass fills arguments 0 (namespace) and
 * 1 (default_lifetime); an abstract service `ephpm.stale_cache_adapter` with arguments
 * `['', 300, null, 60]` is its adapter, and a pool's `provider` must become `$dsn`.
 *
 * The older form `new StaleCacheAdapter(new \Ephpm\StaleCache(...), 300)` still works, on
 * that StaleCache's store; clear() cannot reach that store and returns false, and a
 * getItem() of a stale value may hold the refresh election until the request ends (its
 * StaleCache refreshes after the response, and getItem() has nothing to refresh with).
 */
final class StaleCacheAdapter implements AdapterInterface, CacheInterface
{
    /** A value no store holds: what a read-only computation returns for "absent". */
    private static ?\stdClass $absent = null;

    private StaleCache $cache;
    /** Reads for PSR-6: like $cache, but a stale read runs its (storing nothing) refresh inline. */
    private StaleCache $reader;
    private ?Kv $kv = null;
    private ?string $dsn = null;
    private string $prefix = '';
    private ?object $logger = null;
    /** @var array<string, CacheItem> saveDeferred() items, by key, until commit(). */
    private array $deferred = [];

    /**
     * @param StaleCache|string $namespace       Put before every key (Symfony's key rules apply); or,
     *                                           the older form, the StaleCache to serve from.
     * @param int               $defaultLifetime Seconds a value is fresh unless its item says otherwise;
     *                                           0 = no expiry (Symfony pools' convention; the older form
     *                                           requires more than 0).
     * @param string|null       $dsn             The ephpm store (`shm://NAME`, `redis://…`, `cluster://`); null: `ephpm.dsn`.
     * @param int               $staleSeconds    How long past its lifetime get() serves a value while one process refreshes it.
     * @param int               $staleIfErrorSeconds How long past its lifetime get() serves a value when its callback throws.
     * @param MemoLock|null     $lock            The locks electing the refresher (their store, TTL, wait); null: on the pool's store.
     * @param object|null       $logger          A PSR-3 logger for failed refreshes; null: E_WARNING.
     */
    public function __construct(
        StaleCache|string $namespace = '',
        private int $defaultLifetime = 300,
        ?string $dsn = null,
        int $staleSeconds = 60,
        int $staleIfErrorSeconds = 0,
        ?MemoLock $lock = null,
        ?object $logger = null,
    ) {
        if ($defaultLifetime < 0 || ($namespace instanceof StaleCache && 0 === $defaultLifetime)) {
            throw new \ValueError(sprintf('%s(): Argument #2 ($defaultLifetime) must be greater than %s', __METHOD__, $namespace instanceof StaleCache ? '0' : 'or equal to 0'));
        }
        self::$absent ??= new \stdClass();
        if ($namespace instanceof StaleCache) {
            $this->cache = $this->reader = $namespace;
            return;
        }
        $this->dsn = $dsn;
        $this->logger = $logger;
        $this->prefix = '' === $namespace ? '' : CacheItem::validateKey($namespace) . ':';
        $this->kv = new Kv($dsn, $this->prefix);
        $this->cache = new StaleCache($this->kv, $staleSeconds, $staleIfErrorSeconds, $lock, true, $logger);
        $this->reader = new StaleCache($this->kv, $staleSeconds, $staleIfErrorSeconds, $lock, false, $logger);
    }

    /**
     * Symfony's get(): fresh, stale (served at once, refreshed once after the response) or
     * computed by `$callback` (once across processes). `$beta = INF` recomputes at once,
     * handing the callback the cached item. `$metadata` is set to StaleCache's
     * `['stale' => bool, 'computed' => bool, 'error' => bool]` plus, as every Symfony pool
     * sets them, the item's `expiry` (a timestamp) and `ctime` (milliseconds its
     * computation took) when it has an expiry.
     */
    public function get(string $key, callable $callback, ?float $beta = null, ?array &$metadata = null): mixed
    {
        CacheItem::validateKey($key);
        if ($beta !== null && $beta < 0) {
            throw new class(sprintf('Argument "$beta" provided to "%s::get()" must be a positive number, %f given.', self::class, $beta)) extends \InvalidArgumentException implements InvalidArgumentException {};
        }
        if (isset($this->deferred[$key])) {
            $this->commit();
        }
        $compute = $this->computer($key, $callback, $computing);
        try {
            if ($beta === INF) {
                $value = $this->recompute($key, $compute, $this->getItem($key));
                $how = ['stale' => false, 'computed' => true, 'error' => false];
            } else {
                $value = $this->cache->get($key, $compute, $this->lifetime(null), $how);
            }
        } catch (\Exception $e) {
            if ($computing) {
                throw $e; // the callback's own exception
            }
            // The stored value could not be read (its unserialize threw): a miss.
            $this->log('Failed to fetch key "{key}": ' . $e->getMessage(), $key, $e);
            $value = $this->recompute($key, $compute, self::item($key, null, false));
            $how = ['stale' => false, 'computed' => true, 'error' => false];
        }
        [$value, $itemMetadata] = Computed::unwrap($value);
        $metadata = $how + $itemMetadata;

        return $value;
    }

    public function delete(string $key): bool
    {
        return $this->deleteItem($key);
    }

    public function getItem($key): CacheItem
    {
        CacheItem::validateKey($key);
        if (isset($this->deferred[$key])) {
            $this->commit();
        }
        // A read that computes nothing: a miss (or a stale record) yields the marker,
        // which is never stored ($ttl = 0).
        try {
            $value = $this->reader->get($key, static function (int|float &$ttl) {
                $ttl = 0;
                return self::$absent;
            }, $this->lifetime(null), $how);
        } catch (\Exception $e) {
            // A value whose unserialize throws (a __wakeup() that refuses) is a miss, as in
            // every Symfony pool; Kv::get() itself lets the exception through.
            $this->log('Failed to fetch key "{key}": ' . $e->getMessage(), $key, $e);
            return self::item($key, null, false);
        }
        if ($value === self::$absent || $how['stale'] || $how['error']) {
            return self::item($key, null, false);
        }
        [$value, $metadata] = Computed::unwrap($value);
        return self::item($key, $value, true, $metadata);
    }

    /**
     * Every key is checked (and read) at the call, as PSR-6 asks; the items come as a
     * generator, as Symfony's pools give them: an array would turn the key "123" into 123.
     */
    public function getItems(array $keys = []): iterable
    {
        $items = array_map(fn ($key) => $this->getItem($key), $keys);
        return (static function () use ($items) {
            foreach ($items as $item) {
                yield $item->getKey() => $item;
            }
        })();
    }

    public function hasItem($key): bool
    {
        return $this->getItem($key)->isHit();
    }

    public function clear(string $prefix = ''): bool
    {
        $this->deferred = [];
        // Symfony's pools refuse a prefix outside their namespace alphabet (a key may not
        // hold "{}()/\\@:", and a prefix is where a key begins).
        if (null === $this->kv || preg_match('#[^-+.:_A-Za-z0-9]#', $prefix)) {
            return false;
        }
        return '' === $prefix ? $this->kv->clear() : (new Kv($this->dsn, $this->prefix . $prefix))->clear();
    }

    public function deleteItem($key): bool
    {
        CacheItem::validateKey($key);
        unset($this->deferred[$key]);
        $this->cache->delete($key);
        return true;
    }

    public function deleteItems(array $keys): bool
    {
        array_map([CacheItem::class, 'validateKey'], $keys);
        foreach ($keys as $key) {
            $this->deleteItem($key);
        }
        return true;
    }

    public function save(CacheItemInterface $item): bool
    {
        return $this->saveDeferred($item) && $this->commit();
    }

    public function saveDeferred(CacheItemInterface $item): bool
    {
        if (!$item instanceof CacheItem) {
            return false;
        }
        $this->deferred[$item->getKey()] = $item;
        return true;
    }

    public function commit(): bool
    {
        [$items, $this->deferred] = [$this->deferred, []];
        foreach ($items as $key => $item) {
            [$value, $expiry] = self::contents($item);
            $ttl = null === $expiry ? $this->lifetime(null) : $this->lifetime($expiry - microtime(true));
            if ($ttl <= 0) {
                $this->cache->delete($key);
                continue;
            }
            // refresh() stores behind the key's lock: a computation in progress ends first.
            $this->cache->refresh($key, static fn () => $value, $ttl);
        }
        return true;
    }

    public function __destruct()
    {
        $this->commit();
    }

    /**
     * The `$compute(&$ttl, ?CacheItem $item)` StaleCache calls for get(): it runs
     * `$callback` with a Symfony CacheItem (Symfony's own decorators, such as the
     * TraceableAdapter of debug mode, require one; `$item` is the cached one when
     * recomputing at once), whose expiry sets the lifetime; `$save = false` (or an
     * expiry already past) serves the value unstored. A value with an expiry is stored
     * with its metadata (Computed). `$computing` turns true once the callback is called.
     */
    private function computer(string $key, callable $callback, ?bool &$computing): \Closure
    {
        $computing = false;
        return function (int|float &$ttl, ?CacheItem $item = null) use ($key, $callback, &$computing) {
            $computing = true;
            $item ??= self::item($key, null, false);
            $save = true;
            $start = microtime(true);
            $value = $callback($item, $save);
            $end = microtime(true);
            $expiry = self::contents($item)[1];
            $ttl = !$save ? 0 : (null === $expiry ? $ttl : max(0, $this->lifetime($expiry - $end)));
            return $ttl > 0 && $ttl < 1e9 ? Computed::wrap($value, $end + $ttl, (int) ceil(1000 * ($end - $start))) : $value;
        };
    }

    /** Computes `$key` now, behind its lock, handing `$compute` the item `$current`. */
    private function recompute(string $key, \Closure $compute, CacheItem $current): mixed
    {
        return $this->cache->refresh($key, static fn (int|float &$ttl) => $compute($ttl, $current), $this->lifetime(null));
    }

    private function log(string $message, string $key, \Throwable $e): void
    {
        CacheItem::log($this->logger instanceof LoggerInterface ? $this->logger : null, $message, ['key' => $key, 'exception' => $e, 'cache-adapter' => self::class]);
    }

    /**
     * Seconds a value lives: `$seconds` as given, or the default lifetime where null;
     * "never" (0) is StaleCache's longest lifetime.
     */
    private function lifetime(?float $seconds): float
    {
        $seconds ??= $this->defaultLifetime ?: 1e9;
        return min($seconds, 1e9);
    }

    /** @param array<string, mixed> $metadata Symfony's item metadata (`expiry`, `ctime`). */
    private static function item(string $key, mixed $value, bool $hit, array $metadata = []): CacheItem
    {
        return (static function () use ($key, $value, $hit, $metadata): CacheItem {
            $item = new CacheItem();
            $item->key = $key;
            $item->value = $value;
            $item->isHit = $hit;
            $item->metadata = $metadata;
            return $item;
        })->bindTo(null, CacheItem::class)();
    }

    /** @return array{mixed, float|int|null} The item's value and expiry (a timestamp; null: the default lifetime). */
    private static function contents(CacheItem $item): array
    {
        return (static fn () => [$item->value, $item->expiry])->bindTo(null, CacheItem::class)();
    }
}
