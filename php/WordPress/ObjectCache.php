<?php

namespace Ephpm\WordPress;

use Ephpm\Kv;
use Ephpm\LockUnavailable;
use Ephpm\MemoLock;
use Ephpm\StoreException;
use Ephpm\StoreFull;

/**
 * WordPress's object cache (`$wp_object_cache`) on an ephpm store, with the contract of
 * core's WP_Object_Cache: values are copies (objects cloned in and out), false, null, 0
 * and '' are values (`$found` tells them from a miss), decr() stops at 0, expiry 0 is
 * never. What core keeps for one request, this keeps in the store for every process.
 *
 * Two layers. `$cache` is this request's copy: a key read once costs no store call the
 * second time. Behind it the store, where each key is
 *
 *     wpcache:<salt>:k:<group, URL-encoded>:<group generation>:[<blog id>:]<key>
 *
 * The salt keeps sites apart and makes flush() one Kv::clear() of the site's prefix,
 * which leaves other sites, sessions and locks alone. The generation (`…:g:<group>`, an
 * int) makes flush_group() one increment: the group's old keys are no longer read and
 * age out of the store like any unused entry (a TTL or, on shm and Redis, eviction).
 *
 * Atomic where WordPress relies on it: add() is Kv::add (one winner across processes and
 * hosts); incr()/decr() are Kv::increment on an integer (no update lost). A store that
 * cannot be used (Redis down, shm unopenable) is logged once and the rest of the request
 * runs on `$cache` alone, as core's cache does: never an exception, never a white screen.
 */
#[\AllowDynamicProperties]
class ObjectCache
{
    /** Read by Query Monitor and debug bars. */
    public int $cache_hits = 0;
    public int $cache_misses = 0;

    /** @var array<string, array<int|string, mixed>> group => id => value, this request's copy */
    private array $cache = [];
    /** @var array<string, true> */
    private array $globalGroups = [];
    /** @var array<string, true> */
    private array $nonPersistentGroups = [];
    /** @var array<string, int> group => generation, read once per request */
    private array $generations = [];
    private string $blogPrefix;
    /** null: no store for the rest of this request (disabled, missing or failed). */
    private ?Kv $kv = null;
    private bool $logged = false;
    /** Why the store cannot be used in this request (null: it can, or it is disabled). */
    private ?string $problem = null;
    /** remember()'s locks, on the store, made on first use. */
    private ?MemoLock $locks = null;
    /** What Kv::get() returns for a miss: no stored value is ever this very object. */
    private \stdClass $miss;

    private Config $config;
    private bool $multisite;

    /**
     * Without a Config, as code makes a cache with `new WP_Object_Cache()` (core's own tests
     * make a second one so): wp-config.php's settings, and the network and blog WordPress
     * is on. With one: a single site unless told otherwise.
     */
    public function __construct(?Config $config = null, ?bool $multisite = null, ?int $blogId = null)
    {
        $fromWordPress = $config === null;
        $this->config = $config ??= Config::fromConstants();
        $this->multisite = $multisite ??= $fromWordPress && function_exists('is_multisite') && is_multisite();
        $blogId ??= $fromWordPress && function_exists('get_current_blog_id') ? get_current_blog_id() : 1;
        $this->miss = new \stdClass();
        $this->blogPrefix = $multisite ? $blogId . ':' : '';
        if ($config->disabled) {
            return;
        }
        if (!class_exists(Kv::class)) {
            $this->log($this->problem = 'the ephpm extension is not loaded');
            return;
        }
        try {
            $this->kv = new Kv($config->dsn, $config->prefix());
        } catch (\Throwable $e) {
            $this->log($this->problem = $e->getMessage());
        }
    }

    /**
     * Core's cache lets its private properties be read by name, and debug plugins read
     * them (`cache`, `global_groups`): the same names read the same things here.
     */
    public function __get(string $name): mixed
    {
        return match ($name) {
            'cache' => $this->cache,
            'global_groups' => $this->globalGroups,
            'non_persistent_groups' => $this->nonPersistentGroups,
            'blog_prefix' => $this->blogPrefix,
            'multisite' => $this->multisite,
            default => null,
        };
    }

    public function __isset(string $name): bool
    {
        return $this->__get($name) !== null;
    }

    /**
     * Core's cache lets them be written by name too, and code does (WordPress's own test
     * suite empties `$wp_object_cache->cache` before each test): writing `cache` replaces
     * this request's copy (the store keeps its values); a name this class does not
     * declare is a property of its own, as on core's class (the test suite also sets
     * memcached's `group_ops` and `stats`).
     */
    public function __set(string $name, mixed $value): void
    {
        match ($name) {
            'cache' => $this->cache = (array) $value,
            'global_groups' => $this->globalGroups = (array) $value,
            'non_persistent_groups' => $this->nonPersistentGroups = (array) $value,
            'blog_prefix' => $this->blogPrefix = (string) $value,
            'multisite' => $this->multisite = (bool) $value,
            default => property_exists($this, $name) ? null : $this->$name = $value,
        };
    }

    public function __unset(string $name): void
    {
        match ($name) {
            'cache', 'global_groups', 'non_persistent_groups' => $this->__set($name, []),
            default => null,
        };
    }

    /** Whether values reach the store (false: request-local only). */
    public function isPersistent(): bool
    {
        return $this->kv !== null;
    }

    /** Why the store cannot be used in this request; null when it can (or is disabled). */
    public function problem(): ?string
    {
        return $this->problem;
    }

    /**
     * The value of `$key`, computed by `$callback()` and stored when missing, with
     * stampede protection: of every process (and host, on a shared store) that misses
     * the key at once, one computes while the others wait for its value, woken when it
     * is stored (Ephpm\MemoLock::once()). A stored false, null, 0 or '' is a value.
     * `$callback` that throws stores nothing and releases the lock; the exception
     * reaches the caller. A wait longer than the lock (30 s), a store that cannot be
     * used, or a non-persistent group computes in this process, unprotected.
     */
    public function remember($key, callable $callback, $group = 'default', $expire = 0): mixed
    {
        $value = $this->get($key, $group, false, $found);
        if ($found) {
            return $value;
        }
        $group = $this->group($group);
        $storeKey = $this->validKey($key, __FUNCTION__, false) ? $this->storeKey($group, $this->id($key, $group)) : null;
        $made = false;
        $make = function () use ($key, $callback, $group, $expire, &$made, &$value) {
            $value = $callback();
            $made = true;
            $this->set($key, $value, $group, $expire);
            return [$value];
        };
        if ($storeKey === null || $this->kv === null) {
            return $make()[0];
        }
        try {
            $this->locks ??= new MemoLock($this->kv, 30000, 30000);
            return $this->locks->once('wp:' . $storeKey, function () use ($key, $group) {
                $value = $this->get($key, $group, true, $found);
                return $found ? [$value] : null;
            }, $make)[0];
        } catch (LockUnavailable $e) {
            if ($made) {
                return $value; // computed; only the lock's release failed
            }
            $this->log($e->getMessage(), 'computed without stampede protection');
            return $make()[0];
        }
    }

    public function add($key, $data, $group = 'default', $expire = 0): bool
    {
        if (function_exists('wp_suspend_cache_addition') && wp_suspend_cache_addition()) {
            return false;
        }
        if (!$this->validKey($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        if ($this->hasLocal($group, $id)) {
            return false;
        }
        $storeKey = $this->storeKey($group, $id);
        if ($storeKey !== null) {
            try {
                // Added without a TTL, then given one: on shm an entry added with a TTL is a
                // lock, never evicted before it expires, and a cache entry must stay evictable.
                $added = $this->kv->add($storeKey, $data, 0);
                if ($added && ($ttl = $this->storeTtl($group, $storeKey, $expire)) > 0) {
                    $this->kv->expire($storeKey, $ttl);
                }
            } catch (StoreFull $e) {
                $this->log($e->getMessage());
                return false;
            } catch (StoreException $e) {
                $this->fail($e); // request-local from here on, as core's cache
                $added = true;
            } catch (\Exception|\TypeError $e) {
                // A value PHP cannot serialize: kept in this request, unless another process has the key.
                $this->unstorable($e);
                $added = !$this->call(fn (Kv $kv) => $kv->has($storeKey), false);
            }
            if (!$added) {
                return false; // another process's value is there
            }
        }
        $this->cache[$group][$id] = is_object($data) ? clone $data : $data;
        return true;
    }

    public function add_multiple(array $data, $group = '', $expire = 0): array
    {
        $out = [];
        foreach ($data as $key => $value) {
            $out[$key] = $this->add($key, $value, $group, $expire);
        }
        return $out;
    }

    public function replace($key, $data, $group = 'default', $expire = 0): bool
    {
        if (!$this->validKey($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        $storeKey = $this->storeKey($group, $id);
        // The store says whether the key exists: this request's copy may be stale.
        $exists = $storeKey === null ? null : $this->call(fn (Kv $kv) => $kv->has($storeKey), null);
        if (!($exists ?? $this->hasLocal($group, $id))) {
            unset($this->cache[$group][$id]);
            return false;
        }
        return $this->set($key, $data, $group, $expire);
    }

    public function set($key, $data, $group = 'default', $expire = 0): bool
    {
        if (!$this->validKey($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        if (is_object($data)) {
            $data = clone $data;
        }
        $this->cache[$group][$id] = $data;
        $storeKey = $this->storeKey($group, $id);
        if ($storeKey === null) {
            return true;
        }
        try {
            $this->kv->set($storeKey, $data, $this->storeTtl($group, $storeKey, $expire));
            return true;
        } catch (StoreFull $e) {
            // The store kept the old value: remove it, or other processes would read it.
            $this->log($e->getMessage());
            $this->call(fn (Kv $kv) => $kv->delete($storeKey), false);
            return false;
        } catch (StoreException $e) {
            $this->fail($e);
            return true;
        } catch (\Exception|\TypeError $e) {
            // A value PHP cannot serialize (a Closure, a resource): core's cache keeps it for
            // the request, so does this one, and no process may read the key's old value.
            $this->unstorable($e);
            $this->call(fn (Kv $kv) => $kv->delete($storeKey), false);
            return true;
        }
    }

    public function set_multiple(array $data, $group = '', $expire = 0): array
    {
        $out = [];
        foreach ($data as $key => $value) {
            $out[$key] = $this->set($key, $value, $group, $expire);
        }
        return $out;
    }

    /**
     * @param bool $force Read the store even when this request holds a copy.
     * @param bool|null $found Set to whether the key was found (a stored false is found).
     */
    public function get($key, $group = 'default', $force = false, &$found = null): mixed
    {
        if (!$this->validKey($key, __FUNCTION__)) {
            $found = false;
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        $storeKey = ($force || !$this->hasLocal($group, $id)) ? $this->storeKey($group, $id) : null;
        if ($storeKey !== null) {
            $value = $this->call(fn (Kv $kv) => $kv->get($storeKey, $this->miss), $this->miss);
            if ($value !== $this->miss && !$this->electedToRefresh($group, $storeKey)) {
                $this->cache[$group][$id] = $value;
            } elseif ($this->kv !== null) {
                unset($this->cache[$group][$id]); // a forced read found it gone
            }
        }
        if (!$this->hasLocal($group, $id)) {
            $found = false;
            $this->cache_misses++;
            return false;
        }
        $found = true;
        $this->cache_hits++;
        $value = $this->cache[$group][$id];
        return is_object($value) ? clone $value : $value;
    }

    /** One store call for every key this request holds no copy of. */
    public function get_multiple($keys, $group = 'default', $force = false): array
    {
        $group = $this->group($group);
        if ($this->staleGroup($group)) {
            $out = []; // each key's age decides, as in get()
            foreach ($keys as $key) {
                $out[$key] = $this->get($key, $group, $force);
            }
            return $out;
        }
        $wanted = []; // store key => id
        foreach ($keys as $key) {
            if (!$this->validKey($key, __FUNCTION__)) {
                continue;
            }
            $id = $this->id($key, $group);
            if (($force || !$this->hasLocal($group, $id)) && ($storeKey = $this->storeKey($group, $id)) !== null) {
                $wanted[$storeKey] = $id;
            }
        }
        if ($wanted) {
            $found = $this->call(fn (Kv $kv) => $kv->getMany(array_keys($wanted)), null);
            foreach ($found === null ? [] : $wanted as $storeKey => $id) {
                if (array_key_exists($storeKey, $found)) {
                    $this->cache[$group][$id] = $found[$storeKey];
                } else {
                    unset($this->cache[$group][$id]);
                }
            }
        }
        $out = [];
        foreach ($keys as $key) {
            $id = $this->validKey($key, __FUNCTION__, false) ? $this->id($key, $group) : null;
            if ($id === null || !$this->hasLocal($group, $id)) {
                $out[$key] = false;
                $this->cache_misses += $id === null ? 0 : 1;
                continue;
            }
            $this->cache_hits++;
            $value = $this->cache[$group][$id];
            $out[$key] = is_object($value) ? clone $value : $value;
        }
        return $out;
    }

    public function delete($key, $group = 'default', $deprecated = false): bool
    {
        if (!$this->validKey($key, __FUNCTION__)) {
            return false;
        }
        $group = $this->group($group);
        $id = $this->id($key, $group);
        $had = $this->hasLocal($group, $id);
        unset($this->cache[$group][$id]);
        $storeKey = $this->storeKey($group, $id);
        return ($storeKey !== null && $this->call(fn (Kv $kv) => $kv->delete($storeKey), false)) || $had;
    }

    public function delete_multiple(array $keys, $group = ''): array
    {
        $out = [];
        foreach ($keys as $key) {
            $out[$key] = $this->delete($key, $group);
        }
        return $out;
    }

    public function incr($key, $offset = 1, $group = 'default'): int|float|false
    {
        return $this->validKey($key, __FUNCTION__) ? $this->addTo($key, (int) $offset, $this->group($group)) : false;
    }

    public function decr($key, $offset = 1, $group = 'default'): int|float|false
    {
        return $this->validKey($key, __FUNCTION__) ? $this->addTo($key, -(int) $offset, $this->group($group)) : false;
    }

    /**
     * Empties this site's cache: every blog, every group; other sites and ephpm's sessions
     * and locks stay. false when the store could not be reached: its values are still there.
     */
    public function flush(): bool
    {
        $this->cache = [];
        $this->generations = [];
        return $this->kv === null ? !$this->storeLost() : $this->call(fn (Kv $kv) => $kv->clear(), false);
    }

    /** Empties this request's copy only; the store keeps everything. */
    public function flush_runtime(): bool
    {
        $this->cache = [];
        $this->generations = [];
        return true;
    }

    /** Empties one group, of every blog: a new generation, so no key is walked. */
    public function flush_group($group): bool
    {
        $group = $this->group($group);
        unset($this->cache[$group]);
        if ($this->storeKey($group, '') === null) {
            return !$this->storeLost() || isset($this->nonPersistentGroups[$group]);
        }
        $next = $this->call(fn (Kv $kv) => $kv->increment($this->generationKey($group)), null);
        if ($next === null) {
            return false;
        }
        $this->generations[$group] = $next;
        return true;
    }

    public function add_global_groups($groups): void
    {
        $this->globalGroups += array_fill_keys((array) $groups, true);
    }

    public function add_non_persistent_groups($groups): void
    {
        $this->nonPersistentGroups += array_fill_keys((array) $groups, true);
    }

    public function switch_to_blog($blog_id): void
    {
        $this->blogPrefix = $this->multisite ? (int) $blog_id . ':' : '';
    }

    /** @deprecated 3.5.0 Use switch_to_blog(); kept because wp_cache_reset() still calls it. */
    public function reset(): void
    {
        if (function_exists('_deprecated_function')) {
            _deprecated_function(__METHOD__, '3.5.0', 'WP_Object_Cache::switch_to_blog()');
        }
        foreach (array_keys($this->cache) as $group) {
            if (!isset($this->globalGroups[$group])) {
                unset($this->cache[$group]);
            }
        }
    }

    public function close(): bool
    {
        return true;
    }

    /** What core's stats() prints, and where the values live. */
    public function stats(): void
    {
        echo '<p>';
        echo "<strong>Cache Hits:</strong> {$this->cache_hits}<br />";
        echo "<strong>Cache Misses:</strong> {$this->cache_misses}<br />";
        echo '<strong>Store:</strong> ' . ($this->kv === null ? 'none (request-local only)' : 'ephpm') . '<br />';
        echo '</p>';
        echo '<ul>';
        foreach ($this->cache as $group => $values) {
            $kb = number_format(strlen(serialize($values)) / 1024, 2);
            echo '<li><strong>Group:</strong> ' . htmlspecialchars((string) $group, ENT_QUOTES) . " - ( {$kb}k )</li>";
        }
        echo '</ul>';
    }

    /**
     * incr()/decr(). On an int (or a decimal string) in the store: Kv::increment, so
     * concurrent updates all count. A result below 0 gives back what went below, never more
     * than this call took, so concurrent decrements end at 0 as core's would, one after
     * the other. Any other stored value counts as core counts it (not numeric: 0; a float
     * stays a float) and is written back with a read and a write: an update racing that
     * conversion may be lost, and from then on the value is an int.
     */
    private function addTo($key, int $by, string $group): int|float|false
    {
        $id = $this->id($key, $group);
        $storeKey = $this->storeKey($group, $id);
        $current = $storeKey === null ? $this->miss : $this->call(fn (Kv $kv) => $kv->get($storeKey, $this->miss), $this->miss);
        if ($storeKey === null || $this->kv === null) {
            // Request-local, as core does it.
            if (!$this->hasLocal($group, $id)) {
                return false;
            }
            $current = $this->cache[$group][$id];
            return $this->cache[$group][$id] = max(0, (is_numeric($current) ? $current : 0) + $by);
        }
        if ($current === $this->miss) {
            unset($this->cache[$group][$id]);
            return false;
        }
        $next = null;
        if (is_int($current) || (is_string($current) && preg_match('/^-?[0-9]{1,18}$/', $current))) {
            try {
                $next = $this->kv->increment($storeKey, $by);
                if ($next < 0 && $by < 0) {
                    $next = $this->kv->increment($storeKey, min(-$by, -$next));
                }
                $next = max(0, $next);
            } catch (\TypeError|\ArithmeticError) {
                $next = null; // changed under us, or overflow: core's way below
            } catch (StoreException $e) {
                $this->fail($e);
                return false;
            }
        }
        if ($next === null) {
            $next = max(0, (is_numeric($current) ? $current : 0) + $by);
            $left = $this->call(fn (Kv $kv) => $kv->ttl($storeKey), null);
            $this->call(fn (Kv $kv) => $kv->set($storeKey, $next, $left !== null && $left > 0 ? $left : 0), false);
        }
        return $this->cache[$group][$id] = $next;
    }

    /**
     * The key in the store, or null when the group stays in the request (non-persistent)
     * or there is no store. Reads the group's generation on first use in the request.
     */
    private function storeKey(string $group, string $id): ?string
    {
        if ($this->kv === null || isset($this->nonPersistentGroups[$group])) {
            return null;
        }
        if (!isset($this->generations[$group])) {
            $generation = $this->call(fn (Kv $kv) => $this->generation($kv, $group), null);
            if ($generation === null) {
                return null;
            }
            $this->generations[$group] = $generation;
        }
        $key = 'k:' . rawurlencode($group) . ':' . $this->generations[$group] . ':' . $id;
        // Kv keys end at 65536 bytes; a longer WordPress key is still one key.
        return strlen($key) > 4096 ? 'h:' . hash('sha256', $key) : $key;
    }

    /**
     * A group's generation starts at a random number, not 0: a generation key lost to
     * eviction then starts anew where no old key of the group lies, so a flushed group
     * can never come back.
     */
    private function generation(Kv $kv, string $group): int
    {
        $key = $this->generationKey($group);
        $generation = $kv->get($key);
        if (!is_int($generation)) {
            $kv->add($key, random_int(1, PHP_INT_MAX >> 2));
            $generation = (int) $kv->get($key);
        }
        return $generation;
    }

    private function generationKey(string $group): string
    {
        return 'g:' . rawurlencode($group);
    }

    /**
     * Runs one store operation. A full store fails the operation only; any other store
     * failure (unreachable, not answering) ends the store's use for this request, so a
     * Redis that is down costs one timeout per request, not one per call.
     */
    private function call(callable $operation, mixed $onFailure): mixed
    {
        if ($this->kv === null) {
            return $onFailure;
        }
        try {
            return $operation($this->kv);
        } catch (StoreFull $e) {
            $this->log($e->getMessage());
        } catch (StoreException $e) {
            $this->fail($e);
        }
        return $onFailure;
    }

    /** Whether a store was meant to be used and cannot be (not merely disabled). */
    private function storeLost(): bool
    {
        return $this->kv === null && $this->logged;
    }

    private function fail(StoreException $e): void
    {
        $this->kv = null;
        $this->log($this->problem = $e->getMessage());
    }

    /** One line per request, however many calls fail. */
    private function log(string $why, string $consequence = 'this request uses its request-local cache only'): void
    {
        if (!$this->logged) {
            $this->logged = true;
            error_log("ephpm object cache: $why; $consequence");
        }
    }

    private function unstorable(\Throwable $e): void
    {
        $this->log($e->getMessage(), 'the value is kept in this request only');
    }

    private function hasLocal(string $group, string $id): bool
    {
        return isset($this->cache[$group]) && array_key_exists($id, $this->cache[$group]);
    }

    private function group($group): string
    {
        return empty($group) ? 'default' : (string) $group;
    }

    /** The key within its group: global groups are shared by a network's blogs. */
    private function id($key, string $group): string
    {
        return isset($this->globalGroups[$group]) ? (string) $key : $this->blogPrefix . $key;
    }

    /** An int or a string that is not blank, as core accepts (it warns, then refuses, others). */
    private function validKey($key, string $method, bool $warn = true): bool
    {
        if (is_int($key) || (is_string($key) && trim($key) !== '')) {
            return true;
        }
        if ($warn && function_exists('_doing_it_wrong')) {
            _doing_it_wrong(
                static::class . "::$method",
                is_string($key) ? 'Cache key must not be an empty string.' : 'Cache key must be integer or non-empty string, ' . gettype($key) . ' given.',
                '6.1.0',
            );
        }
        return false;
    }

    /**
     * Stale transients (EPHPM_WP_STALE_TRANSIENTS, seconds): a transient that expires is
     * kept that much longer in the store, and while it is in that extra time the store's
     * own TTL (monotonic, the same for every host of a shared store) says it is stale.
     */
    private function staleGroup(string $group): bool
    {
        return $this->config->staleTransients > 0 && ($group === 'transient' || $group === 'site-transient');
    }

    /** The TTL a value is stored with: a stale transient's lifetime plus its grace. */
    private function storeTtl(string $group, string $storeKey, $expire): int
    {
        $ttl = $this->ttl($expire);
        if ($ttl > 0 && $this->staleGroup($group)) {
            $ttl += $this->config->staleTransients;
            // A new value: its own expiry elects its own refresher.
            $this->call(fn (Kv $kv) => $kv->delete('r:' . $storeKey), false);
        }
        return $ttl;
    }

    /**
     * Whether this process is the one to refresh a stale transient that it just read:
     * the first to add the key's election entry (kept at most 30 s, so a refresher that
     * dies is replaced) gets a miss, regenerates the transient and sets it, as WordPress
     * code does on a miss; every other process is served the stale value meanwhile.
     */
    private function electedToRefresh(string $group, string $storeKey): bool
    {
        if (!$this->staleGroup($group)) {
            return false;
        }
        $left = $this->call(fn (Kv $kv) => $kv->ttl($storeKey), null);
        if ($left === null || $left < 0 || $left > $this->config->staleTransients) {
            return false; // fresh, never expiring, or gone since the read
        }
        $hold = min(30, $this->config->staleTransients);
        return $this->call(fn (Kv $kv) => $kv->add('r:' . $storeKey, 1, $hold), false);
    }

    /** Seconds for the store: 0 is never, negatives are 0, EPHPM_WP_MAXTTL caps all. */
    private function ttl($expire): int
    {
        $ttl = max(0, (int) $expire);
        if ($this->config->maxTtl > 0 && ($ttl === 0 || $ttl > $this->config->maxTtl)) {
            $ttl = $this->config->maxTtl;
        }
        return min($ttl, 1000000000);
    }
}
