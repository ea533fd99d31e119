<?php
/**
 * ephpm — the PHP API. This file is what `php --re ephpm` shows, with the documentation:
 * a test (php-tests/stub_matches_the_extension.phpt) fails when the two disagree.
 *
 * Keys, values, lock names and prefixes are bytes: any string, UTF-8 or not, with NUL
 * bytes or without, comes back exactly as given. Every number is range-checked: a
 * duration is at most 1000000000 seconds (about 31.7 years), or 1000000000000 where it is
 * counted in milliseconds; a value out of range (PHP_INT_MAX, a negative, 1e20) is a
 * ValueError "must be between …", INF and NAN are "must be a finite number".
 *
 * Where a parameter is declared `int|float` here, the extension's own argument info
 * carries no type (its binding cannot declare a union type); the extension checks the
 * type itself and reports PHP's usual TypeError.
 *
 * @generate-class-entries
 */

namespace Ephpm {

    /**
     * The host-wide key/value store, shared by every PHP process of this Unix user on
     * this host: php-fpm workers of every pool of the user, CLI scripts, queue workers,
     * cron jobs.
     *
     * Values keep their PHP type: strings, ints, floats, bools and null are stored
     * natively (so `increment()` works on what `set()` stored); arrays and objects go
     * through PHP's serializer. TTLs are in seconds, int or float, 0 to 1000000000; 0
     * means no expiry. Keys are 1 to 65536 bytes, any bytes; an empty or longer key is a
     * ValueError.
     *
     * @example
     * $kv = new Ephpm\Kv();
     * $kv->set('greeting', 'hello', 60);
     * if ($kv->add('lock:report', $token = bin2hex(random_bytes(16)), 30)) {
     *     try { build_report(); } finally { $kv->deleteIfEquals('lock:report', $token); }
     * }
     */
    final class Kv
    {
        /**
         * Opens a store.
         *
         * @param string|null $dsn `shm://` for the host-wide store named by
         *        `ephpm.store_name`, `shm://NAME` for another one; a Redis or Valkey server
         *        shared by a fleet: `redis://[user:pass@]host[:port][/db]`,
         *        `rediss://…` (TLS), `unix:///path/redis.sock[?db=N]`,
         *        the master of a Redis Sentinel set:
         *        `redis-sentinel://[user:pass@]host[:port][,host[:port]…]/MASTER[?db=N]`
         *        (the sentinels, port 26379 by default; the credentials are the master's),
         *        a Redis Cluster: `redis-cluster://[user:pass@]host[:port][,host[:port]…]`
         *        (any nodes as seeds, port 6379 by default; `?read_from=replica` sends the
         *        reads of get() and getMany() to replicas, which may lag: for a cache
         *        DSN only, see docs/fleet-redis.md), `rediss-sentinel://…` and `rediss-cluster://…`
         *        (TLS to every sentinel, master and node); the TLS schemes take
         *        `?ca=/path/ca.pem` (trust this CA instead of the system's) and
         *        `?cert=/path/client.pem&key=/path/client.key` (a client certificate);
         *        `?sni=` is refused (the server name is always the host connected to);
         *        each with `?timeout=SECONDS` (default 1) and `?prefix=STRING`; or
         *        ephpm's gossip cluster through this host's node: `cluster://` (the
         *        store `ephpm.store_name`) or `cluster://NAME`, with `?timeout=SECONDS`
         *        (default 3), `?prefix=STRING` and `?copies=sync|async` (`async`: a lock's
         *        owner answers before its replicas have their copies, so a lock taken
         *        just before the owner dies may be lost; default `sync`; see docs/cluster.md:
         *        `ephpm.cluster.*`, "Locks without awaited copies"). Nothing
         *        connects until the first call. null means `ephpm.dsn`.
         * @param string $prefix Put before every key: two Kv with different prefixes
         *        never see each other's keys, and clear() removes only its own.
         * @throws \ValueError when the DSN is malformed or names a backend this build lacks.
         * @throws StoreException when the shared memory cannot be opened or created, or
         *         (cluster://) the cluster settings cannot run a node (no secret).
         *
         * On Redis every method may also throw StoreUnavailable (the server cannot be
         * reached or did not answer within the timeout); on the cluster too (no node runs
         * on this host, or the key's owner cannot be reached).
         */
        public function __construct(?string $dsn = null, string $prefix = '') {}

        /**
         * Reads a value, with the type it was stored with.
         *
         * @param string $key 1 to 65536 bytes.
         * @param mixed $default Returned when the key is absent or expired.
         * @return mixed The stored value, or $default.
         * @throws StoreException when the value is a string larger than PHP's memory_limit
         *         leaves room for: it is not copied, and the request goes on.
         */
        public function get(string $key, mixed $default = null): mixed {}

        /**
         * Stores a value, replacing any other.
         *
         * @param string $key 1 to 65536 bytes.
         * @param mixed $value Anything but a resource or a Closure.
         * @param int|float $ttl Seconds until the value expires, 0 to 1000000000; 0 = never.
         * @return bool true.
         * @throws \ValueError when $ttl is out of range or not finite.
         * @throws StoreFull when the value cannot fit even after evicting everything that
         *         may be evicted; the previous value stays.
         */
        public function set(string $key, mixed $value, int|float $ttl = 0): bool {}

        /**
         * Stores a value only if the key is absent (or expired), atomically: of any
         * number of processes adding one key at once, exactly one gets true. An entry
         * added with a TTL is a lock: memory pressure never evicts it before it expires.
         *
         * @param int|float $ttl Seconds until the value expires, 0 to 1000000000; 0 = never.
         * @return bool Whether the value was stored.
         * @throws StoreFull when the value cannot fit.
         */
        public function add(string $key, mixed $value, int|float $ttl = 0): bool {}

        /**
         * Deletes a key.
         *
         * @return bool Whether the key existed.
         */
        public function delete(string $key): bool {}

        /**
         * Deletes a key only if its value equals $expected, atomically: the release of
         * a lock by its token, which can never delete a lock somebody else took after
         * yours expired. An expired entry never matches. An int value compares as its
         * decimal string.
         *
         * @return bool Whether the key was deleted.
         */
        public function deleteIfEquals(string $key, string $expected): bool {}

        /**
         * Gives a key a lifetime of $ttl seconds from now (more than 0) only if its
         * value equals $expected, atomically: the extension of a lock by its token,
         * which can never extend a lock somebody else took after yours expired. Values
         * compare as deleteIfEquals() compares them.
         *
         * @return bool Whether the key held $expected and now lives $ttl seconds.
         * @throws \ValueError when $ttl is 0 or less.
         */
        public function expireIfEquals(string $key, string $expected, int|float $ttl): bool {}

        /**
         * Whether the key exists and has not expired.
         */
        public function has(string $key): bool {}

        /**
         * Adds $by to an integer, atomically; an absent key is created at 0 (then $by
         * is added) with $ttl, which an existing key keeps unchanged. A string holding a
         * decimal integer counts as one.
         *
         * @param int $by May be negative.
         * @param int|float $ttl Seconds, 0 to 1000000000, applied only when the key is
         *        created; 0 = never.
         * @return int The new value.
         * @throws \TypeError when the stored value is not an integer.
         * @throws \ArithmeticError when the result would overflow.
         */
        public function increment(string $key, int $by = 1, int|float $ttl = 0): int {}

        /**
         * The seconds the key has left.
         *
         * @return float|null null when the key is absent, -1.0 when it never expires.
         */
        public function ttl(string $key): ?float {}

        /**
         * Sets the key's TTL.
         *
         * @param int|float $ttl Seconds from now, 0 to 1000000000; 0 removes the expiry.
         * @return bool Whether the key exists.
         */
        public function expire(string $key, int|float $ttl): bool {}

        /**
         * Reads several keys.
         *
         * @param array $keys A list of string (or int) keys; its own keys are ignored.
         * @return array The keys that were found, each with its value. A key comes back as
         *        the same PHP string it was given as (binary or not), so a canonical
         *        decimal such as "123" is the int key 123, as in any PHP array.
         * @throws StoreException when a value is a string larger than PHP's memory_limit
         *         leaves room for.
         */
        public function getMany(array $keys): array {}

        /**
         * Stores several values, one after the other (not as one atomic step).
         *
         * @param array $values key => value; an int key is stored as its decimal string
         *        (PHP's own "123" and 123 are one key).
         * @param int|float $ttl Seconds, 0 to 1000000000; 0 = never.
         * @return bool true.
         * @throws StoreFull when a value cannot fit; the values before it are stored.
         */
        public function setMany(array $values, int|float $ttl = 0): bool {}

        /**
         * Sleeps until the key changes, woken by the write that changes it (on every
         * backend: a futex on `shm://`, a notification on Redis and on the cluster), never
         * polling. Each stored version of a key has a number; 0 means "absent".
         *
         * ```php
         * $seen = $kv->wait('lock:report');            // its version now, false when absent
         * if ($seen !== false) $kv->wait('lock:report', $seen, 5.0); // until it changes, 5 s at most
         * ```
         *
         * @param int $lastVersion The version seen last (0: absent), 0 or more.
         * @param int|float $timeout Seconds to wait at most, 0 to 1000000000; 0 = don't wait.
         * @return int|false The key's version once it differs from $lastVersion (0: the key
         *         is gone), or false when it did not change within $timeout.
         * @throws \ValueError when $lastVersion or $timeout is out of range.
         */
        public function wait(string $key, int $lastVersion = 0, int|float $timeout = 0): int|false {}

        /**
         * Removes this Kv's keys: those starting with its prefix, or every key of the
         * store when it has no prefix. On Redis the DSN's `?prefix=` counts too, and
         * without either, every key of the database goes (as Symfony's and Laravel's
         * Redis stores flush it); keys are found with SCAN and removed with UNLINK.
         *
         * @return bool true.
         */
        public function clear(): bool {}

        /**
         * The store's counters: `backend`, `memory_size`, `memory_used`, `memory_free`
         * (bytes), `entries`, `hits`, `misses`, `evictions` (entries dropped for room),
         * `evictions_anonymous`, `evictions_cache`, `evictions_session` (the same by what
         * was dropped, in the order the shm store gives entries up: new session ids and
         * empty sessions, then cache entries, then sessions with data; 0 on Redis, whose
         * own policy evicts), `expirations`, `repairs` (shards rebuilt after a process
         * died holding their lock, or after damage was found), `resets` (shards too
         * damaged to rebuild, emptied: their entries lost), `shards`, `shards_locked`
         * (shards whose lock a process holds right now), `shards_writing` (of those, the
         * ones whose holder is changing entries, which holds up their readers too),
         * `age_seconds` (since the segment was made, Redis: its uptime; 0 unknown),
         * `max_item_size` (bytes), `lock_waits`, `lock_timeouts`, `stampedes_avoided`,
         * `full_refusals` (writes refused for want of room), `shard_fill` (each shard's
         * [used, size, entries]; empty on Redis), `not_counted` (the names above this
         * backend does not count, whose 0 is no figure: on Redis the evictions by class,
         * `repairs`, `resets`, `shards_locked`, `shards_writing`; `memory_size` 0 on Redis is "no
         * `maxmemory`");
         * and for a host store (shm://) `resp_server`: how its Redis-protocol server
         * (ephpm-resp) is doing, e.g. "serving, 3 clients, 1200 commands" or "not running".
         */
        public function stats(): array {}

        /**
         * The members of a `cluster://` store's fleet, as this host's node sees them, one
         * array each, sorted by `id`: `id`, `state` ("alive", "suspect": the failure
         * detector still counts it live but its heartbeat has not moved for three gossip
         * intervals, at least 500 ms; "dead": the detector gave up on it), `this_node` (bool),
         * `last_heard_ms` (since its heartbeat last moved; null for this node),
         * `keys` and `share` (of the keys this host holds, how many it owns, and that as
         * a fraction from 0 to 1), `copies_pending` and `copies_dropped` (copies of
         * writes from this node to it on their way, and those that never landed),
         * `clock_skew_ms` (its clock minus this node's, from its gossip; null when
         * unknown), `versions` (the data-plane versions it speaks) and `version` (the
         * one this node speaks with it; null when none). The same as `ephpm cluster
         * --json`'s `members`.
         *
         * @return array[] the members; `[]` on a store that is no cluster (shm://, Redis).
         * @throws StoreUnavailable when the host's node does not answer.
         */
        public function members(): array {}
    }

    /**
     * A store's keys, in the spirit of APCUIterator: `foreach (new Ephpm\KvIterator($kv, 'user:') as $key => $info)`.
     * The store is walked a bounded batch at a time (on `shm://` one shard's lock at a
     * time, never longer than one shard's walk; on Redis with SCAN; on `cluster://` the
     * live copies this host holds), in no particular order. A key present for the whole
     * walk is shown at least once (on Redis maybe twice); keys written meanwhile may or
     * may not be. Keys come without the Kv's prefix.
     *
     * Each value: `['ttl' => float|null, 'size' => int, 'fence' => int|null]`: the
     * seconds left (null: no expiry), the stored size in bytes, and for a held lock (an
     * entry added with a TTL, which is never evicted before it expires) its fencing number.
     */
    final class KvIterator implements \Iterator
    {
        /**
         * @param Kv|null $store The store to walk (its prefix applies); null: the default store.
         * @param string $prefix Only the keys that start with it.
         * @throws StoreException when the store cannot be opened.
         */
        public function __construct(?Kv $store = null, string $prefix = '') {}

        /** Starts the walk again. @throws StoreException when the store cannot be read. */
        public function rewind(): void {}

        /** Whether there is a key here (reads the next batch when needed). @throws StoreException */
        public function valid(): bool {}

        public function key(): ?string {}

        /** @return array{ttl: float|null, size: int, fence: int|null}|null */
        public function current(): ?array {}

        public function next(): void {}
    }

    /**
     * Locks named after keys, on a store: one holder at a time across every process
     * that shares the store, each acquisition with a fresh random 128-bit token and a
     * fencing number, released by token so that a holder whose lock expired can never
     * release the next holder's. Waiters are woken by the release, not by polling.
     * Durations are in milliseconds, at most 1000000000000. A wait never runs into
     * `max_execution_time`: it ends one second before the limit.
     *
     * Failures follow one rule (DESIGN.md §3 item 7). A store that cannot be used
     * (unreachable, not answering in time, failing) is never a StoreException from a
     * MemoLock, a Lock or a KeepAlive: a method that was asked for exclusion or about a
     * held lock (acquire(), exclusively(), once(), Lock::extend(), Lock::release(),
     * Lock::isHeld(), KeepAlive) throws LockUnavailable, since it cannot give what was
     * asked; the cache wrapper (__invoke) computes without protection and logs a warning,
     * since a duplicated computation beats a failed request. Only construction may throw a
     * StoreException: when the store cannot be opened at all (its configuration), before
     * any lock is asked for. Bad arguments are TypeError and ValueError.
     *
     * @example
     * $locks = new Ephpm\MemoLock(new Ephpm\Kv(), lockTtlMs: 10000);
     * $report = $locks->exclusively('report:daily', function (Ephpm\KeepAlive $keepAlive) {
     *     foreach (chunks() as $chunk) { process($chunk); $keepAlive(); }
     *     return 'done';
     * });
     */
    final class MemoLock
    {
        /**
         * @param Kv|null $store The store whose locks these are (its prefix applies to
         *        lock names); null: the default store.
         * @param int $lockTtlMs How long a lock lives unless extended, in milliseconds,
         *        1 to 1000000000000.
         * @param int $waitTimeoutMs How long exclusively() and once() wait for a busy lock,
         *        in milliseconds, 0 to 1000000000000.
         * @param object|null $logger A PSR-3 logger (duck-typed), for warnings.
         * @throws \ValueError when a duration is out of range.
         * @throws StoreException when the default store cannot be opened.
         */
        public function __construct(?Kv $store = null, int $lockTtlMs = 30000, int $waitTimeoutMs = 5000, ?object $logger = null) {}

        /**
         * A MemoLock on the store a DSN names, for locks shared by a fleet:
         * `Ephpm\MemoLock::fromDsn('redis://10.0.0.5:6379')` or `fromDsn('cluster://')`. The same as
         * `new Ephpm\MemoLock(new Ephpm\Kv($dsn), ...)`.
         *
         * @throws \ValueError when the DSN or a duration is not usable.
         * @throws StoreException when the store cannot be opened (shared memory that cannot
         *         be created, cluster:// without a secret).
         */
        public static function fromDsn(string $dsn, int $lockTtlMs = 30000, int $waitTimeoutMs = 5000, ?object $logger = null): static {}

        /**
         * Symfony's cache callback wrapper: `$pool->setCallbackWrapper(new Ephpm\MemoLock())`.
         * The process that wins the key's lock computes, publishes the item (through
         * `$setMetadata` and `$pool->save()`) and releases, which wakes the others; they
         * read the pool and serve the hit. A callback that throws releases the lock; the
         * exception propagates unchanged. `$beta === INF` recomputes behind the lock. A
         * wait that would exceed waitTimeoutMs or run into max_execution_time, a store
         * that cannot be used, or an item whose key cannot name a lock, computes without
         * protection and logs a warning; it never throws for them.
         *
         * @param callable $callback Called as `$callback($item, $save)`, `$save` by reference.
         * @param object $item The Symfony CacheItem being computed.
         * @param bool $save Set to false once the wrapper has saved the item itself.
         * @param object $pool The cache pool.
         * @param \Closure|null $setMetadata Symfony's metadata writer.
         * @param object|null $logger The pool's PSR-3 logger.
         * @param float|null $beta Symfony's early-expiration factor; INF forces a recompute.
         * @return mixed The value.
         */
        public function __invoke(callable $callback, object $item, bool &$save, object $pool, ?\Closure $setMetadata = null, ?object $logger = null, ?float $beta = null): mixed {}

        /**
         * Takes the lock `$name`, waiting up to `$waitMs` for it to be released.
         *
         * @param int|null $ttlMs The lock's lifetime in milliseconds, 1 to 1000000000000;
         *        null: lockTtlMs.
         * @param int $waitMs How long to wait for a busy lock, in milliseconds, 0 to
         *        1000000000000; 0: don't.
         * @return Lock|null The held lock, or null when it was busy for all of $waitMs.
         * @throws LockUnavailable when the lock store cannot be used: exclusion cannot be
         *         had, which is not the same as a busy lock.
         */
        public function acquire(string $name, ?int $ttlMs = null, int $waitMs = 0): ?Lock {}

        /**
         * Takes a read share of the read/write lock `$name`: any number of readers hold it
         * at once, and none while a writer holds it. Each share has its own token, fence
         * and TTL (a killed reader's share frees itself when its TTL runs out). A
         * read/write lock is not the exclusive lock of acquire() of the same name.
         *
         * @param int|null $ttlMs The share's lifetime in milliseconds, 1 to
         *        1000000000000; null: lockTtlMs.
         * @param int $waitMs How long to wait while a writer holds it, in milliseconds, 0
         *        to 1000000000000; 0: don't. The wait is woken by the writer's release.
         * @return Lock|null The held share, or null when a writer held the lock for all
         *         of $waitMs.
         * @throws LockUnavailable when the lock store cannot be used.
         */
        public function acquireRead(string $name, ?int $ttlMs = null, int $waitMs = 0): ?Lock {}

        /**
         * Takes the read/write lock `$name` for writing: alone, after every reader and
         * writer released theirs (a waiting writer is woken by the last release). Readers
         * are not held back for a waiting writer.
         *
         * @param int|null $ttlMs The lock's lifetime in milliseconds, 1 to
         *        1000000000000; null: lockTtlMs.
         * @param int $waitMs How long to wait, in milliseconds, 0 to 1000000000000.
         * @return Lock|null The held lock, or null when it was busy for all of $waitMs.
         * @throws LockUnavailable when the lock store cannot be used.
         */
        public function acquireWrite(string $name, ?int $ttlMs = null, int $waitMs = 0): ?Lock {}

        /**
         * Runs `$run` while holding the lock `$name`, so that no two processes ever run
         * it at once; the lock is released when `$run` returns or throws (the exception
         * propagates unchanged). `$run` receives an {@see KeepAlive} to extend the lock
         * during a long section.
         *
         * @return mixed What `$run` returned.
         * @throws LockUnavailable when the lock cannot be had within waitTimeoutMs, or
         *         the store cannot be used, or the lock expired while `$run` ran.
         */
        public function exclusively(string $name, \Closure $run): mixed {}

        /**
         * Makes a thing once, however many processes ask for it at once: `$exists()` is
         * asked first (it returns the thing, or null or false when there is none yet);
         * one process takes the lock `once:<name>`, asks `$exists()` again and, still
         * finding nothing, calls `$make(KeepAlive $keepAlive)`. The others wait for the
         * lock's release and ask `$exists()` again: they wait for the thing, not the lock.
         *
         * @return mixed What `$exists()` returned, or what `$make()` returned.
         * @throws LockUnavailable when the thing neither appeared nor its lock was
         *         released within waitTimeoutMs, or the store cannot be used.
         */
        public function once(string $name, \Closure $exists, \Closure $make): mixed {}

        /**
         * Runs `$call($pool)` with this MemoLock as `$pool`'s callback wrapper, and puts
         * the pool's own wrapper back afterwards, also when `$call` throws.
         *
         * @param object $pool A Symfony cache pool (anything with setCallbackWrapper()).
         * @return mixed What `$call` returned.
         */
        public function around(object $pool, \Closure $call): mixed {}

        /**
         * Runs `$call($pool)` with no stampede protection on `$pool`, and puts the pool's
         * own wrapper back afterwards, also when `$call` throws.
         *
         * @return mixed What `$call` returned.
         */
        public static function unguarded(object $pool, \Closure $call): mixed {}

        /**
         * A copy with other durations.
         *
         * @param int|null $lockTtlMs 1 to 1000000000000; null: keep this one's.
         * @param int|null $waitTimeoutMs 0 to 1000000000000; null: keep this one's.
         */
        public function with(?int $lockTtlMs = null, ?int $waitTimeoutMs = null): static {}
    }

    /**
     * A held lock, from {@see MemoLock::acquire()}; released when the object is
     * destroyed if release() was not called.
     */
    /**
     * Stale-while-revalidate: a hot key whose lifetime ends is served at once, stale,
     * while one process (elected host-wide on `shm://`, fleet-wide on a shared store)
     * refreshes it, by default after the response has gone.
     *
     * A key holds one record: the value and when it stops being fresh, servable stale,
     * and servable when computing fails. Past the stale window the value is computed like
     * a miss: one process computes behind the key's lock (`swr:<key>`), the others wait
     * for it, woken by its release.
     *
     * ```php
     * $cache = new Ephpm\StaleCache(staleSeconds: 60, staleIfErrorSeconds: 600);
     * $rates = $cache->get('rates', fn () => fetch_rates(), 300, $meta);
     * // $meta['stale']: served stale (a refresh is on its way)
     * ```
     */
    final class StaleCache
    {
        /**
         * @param Kv|null $store Where the records live (its prefix applies); null: the default store.
         * @param int $staleSeconds How long past its lifetime a value is served while one process refreshes it.
         * @param int $staleIfErrorSeconds How long past its lifetime a value is served when computing a new one throws.
         * @param MemoLock|null $lock The locks that elect the refresher and guard computations
         *        (its store, lockTtlMs and waitTimeoutMs); null: locks on `$store`, 30000 ms and 5000 ms.
         * @param bool $refreshAfterResponse Refresh after the response (after `fastcgi_finish_request()`
         *        under FPM, at shutdown elsewhere; see runDeferred()); false: inline, and the caller
         *        is served the refreshed value.
         * @param object|null $logger A PSR-3 logger (duck-typed) for failed refreshes and stale-if-error;
         *        without one they are E_WARNINGs.
         * @throws \ValueError when a window is not between 0 and 1000000000 seconds.
         */
        public function __construct(?Kv $store = null, int $staleSeconds = 60, int $staleIfErrorSeconds = 0, ?MemoLock $lock = null, bool $refreshAfterResponse = true, ?object $logger = null) {}

        /**
         * The value of `$key`: fresh, stale (one process refreshes it), or computed.
         *
         * A computation that throws, inside the stale-if-error window, serves the old value
         * and logs the exception; otherwise the exception reaches the caller. A refresh that
         * throws keeps the stale value and logs. A deleted key is never served stale.
         *
         * @param callable $compute Called as `$compute(&$ttl)`: it returns the value and may
         *        change `$ttl` (seconds, 0 to 1000000000; 0: serve the value without storing
         *        it; anything else is a ValueError).
         * @param int|float $ttl How long the value is fresh, in seconds: more than 0, at most
         *        1000000000.
         * @param array|null $metadata Set to `['stale' => bool, 'computed' => bool, 'error' => bool]`:
         *        served stale, computed by this call, served stale because computing failed.
         * @throws \ValueError for an empty key or a TTL out of range.
         */
        public function get(string $key, callable $compute, int|float $ttl = 300, ?array &$metadata = null): mixed {}

        /**
         * Computes and stores a new value now, whatever is stored, behind the key's lock.
         *
         * @param callable $compute As for get().
         * @param int|float $ttl As for get().
         * @return mixed The new value.
         */
        public function refresh(string $key, callable $compute, int|float $ttl = 300): mixed {}

        /**
         * Removes the key: the next get() computes; the old value is never served stale.
         *
         * @return bool Whether the key existed; false, with a warning (logger or
         *         E_WARNING), when the store cannot be used.
         */
        public function delete(string $key): bool {}

        /**
         * Runs the refreshes this request deferred, now. The first deferred refresh of a
         * request registers `runDeferred(true)` as a shutdown function; call it yourself
         * where a long-running worker ends a job.
         *
         * @param bool $finishResponse First end the response (`fastcgi_finish_request()`,
         *        under FPM), so the client does not wait for the refreshes.
         * @return int How many refreshes ran.
         */
        public static function runDeferred(bool $finishResponse = false): int {}
    }

    /**
     * A locking session handler for frameworks that take a handler object (Laravel,
     * Symfony's NativeSessionStorage, `session_set_save_handler($handler)`). The same
     * logic is the native save handler: `session.save_handler = ephpm`.
     *
     * read() takes the lock `session_lock:<id>` with a fresh 128-bit token, waiting for a
     * busy one (woken by its release); write() writes only while that lock is still this
     * handler's; close() releases it by token, so a request whose lock expired never
     * frees the next holder's. Sessions live `session.gc_maxlifetime` seconds.
     *
     * Ids are checked as PHP's files handler checks them: 1 to 256 of `A-Z a-z 0-9 , -`.
     * read(), write() and updateTimestamp() refuse any other id with an E_WARNING and
     * false, validateId() says it does not exist, destroy() has nothing to delete; it never
     * becomes a key. On the shm store a session with data is evicted only once no cache
     * entry is left, and new ids and empty sessions before any cache entry.
     */
    final class SessionHandler implements \SessionHandlerInterface, \SessionIdInterface, \SessionUpdateTimestampHandlerInterface
    {
        /**
         * @param Kv|null $store Where sessions live (its prefix applies); null: the default store.
         * @param array|null $options Overrides of the `ephpm.session.*` settings: `locking` (bool),
         *        `lock_ttl` and `lock_wait` (seconds), `lock_timeout` (`"warn"` or `"fail"`), and
         *        `lifetime` (seconds; default `session.gc_maxlifetime`).
         * @throws \ValueError for an unknown or invalid option.
         */
        public function __construct(?Kv $store = null, ?array $options = null) {}

        /** The store is opened by the constructor. */
        public function open(string $path, string $name): bool {}

        /** Releases the session's lock (by token). */
        public function close(): bool {}

        /**
         * Takes the session's lock, then reads it ("" for a new session). When the lock
         * cannot be had within lock_wait: with lock_timeout `warn` an E_WARNING and the read
         * goes on; with `fail`, false.
         */
        public function read(string $id): string|false {}

        /** Writes the session, only while its lock is still ours (else an E_WARNING and false). */
        public function write(string $id, string $data): bool {}

        /** Deletes the session and releases its lock. */
        public function destroy(string $id): bool {}

        /** @return int 0: the store expires sessions itself. */
        public function gc(int $max_lifetime): int|false {}

        /** A new id from PHP's generator, reserved in the store so that it is never one in use. */
        public function create_sid(): string {}

        /** Whether the session exists (consulted under session.use_strict_mode). */
        public function validateId(string $id): bool {}

        /** Renews an unchanged session's lifetime (session.lazy_write). */
        public function updateTimestamp(string $id, string $data): bool {}
    }

    final class Lock
    {
        /** The lock's name, as given to acquire(). */
        public readonly string $name;
        /** The random 128-bit token of this acquisition, as 32 hex digits. */
        public readonly string $token;
        /** The fencing number: greater than that of every earlier holder of this name. */
        public readonly int $fence;

        private function __construct() {}

        /**
         * Gives the lock `$ttlMs` from now.
         *
         * @param int|null $ttlMs Milliseconds, 1 to 1000000000000; null: the TTL it was
         *        acquired with.
         * @throws LockUnavailable when the lock is no longer ours (it expired), or the lock
         *         store cannot be used.
         */
        public function extend(?int $ttlMs = null): void {}

        /**
         * Releases the lock if it is still ours.
         *
         * @return bool false when it had expired (another holder's lock is never touched)
         *         or was already released.
         * @throws LockUnavailable when the lock store cannot be used (the lock may still
         *         be held until its TTL; release() can be called again).
         */
        public function release(): bool {}

        /**
         * Whether this acquisition still holds the lock.
         *
         * @throws LockUnavailable when the lock store cannot be used.
         */
        public function isHeld(): bool {}

        /**
         * Makes this read share the write lock (symfony/lock's promotion), waiting up to
         * `$waitMs` for the other readers to release theirs. The lock gets a new fence;
         * its token stays. A write lock stays one. A share that expired takes the write
         * lock if it is free, as a new acquisition would.
         *
         * @param int $waitMs Milliseconds, 0 to 1000000000000; 0: don't wait.
         * @return bool false when other readers still held it after $waitMs (this share
         *         is kept).
         * @throws LockUnavailable when the share is no longer held and another holder is
         *         in the way, the lock was released, or the lock store cannot be used.
         * @throws \Error for an exclusive lock (from MemoLock::acquire()).
         */
        public function promote(int $waitMs = 0): bool {}

        /**
         * Makes this write lock a read share (symfony/lock's demotion): other readers may
         * join at once. The lock gets a new fence; its token stays. A read share stays one.
         *
         * @throws LockUnavailable when the lock is no longer held (it expired), was
         *         released, or the lock store cannot be used.
         * @throws \Error for an exclusive lock (from MemoLock::acquire()).
         */
        public function demote(): void {}

        /**
         * Whether this is a read/write lock held for writing now (false for a read share,
         * an exclusive lock, or a lock no longer held).
         *
         * @throws LockUnavailable when the lock store cannot be used.
         */
        public function isWriteLocked(): bool {}
    }

    /** Handed to a section run by {@see MemoLock::exclusively()}: call it to extend the lock. */
    final class KeepAlive
    {
        private function __construct() {}

        /**
         * @param int|null $ttlMs Milliseconds from now, 1 to 1000000000000; null: the
         *        MemoLock's lockTtlMs.
         * @throws LockUnavailable when the lock was lost, or the lock store cannot be used.
         */
        public function __invoke(?int $ttlMs = null): void {}
    }

    /** A lock could not be acquired in time, the lock store is unreachable, or a held lock was lost. */
    class LockUnavailable extends \RuntimeException {}

    /**
     * A store operation failed: the shared memory could not be opened, a lock is
     * unrecoverable, a Redis server refused the command, or a value read is a string
     * larger than PHP's memory_limit leaves room for.
     */
    class StoreException extends \RuntimeException {}

    /**
     * A Redis server could not be reached, or did not answer within the DSN's timeout
     * (`?timeout=`, default 1 s). The message names the address (without its password) and
     * the cause. The next call tries again: the process reconnects by itself when the
     * server is back. MemoLock, Lock, KeepAlive and StaleCache never throw it: a lock
     * asked for becomes LockUnavailable, a cache computes unprotected and warns (see
     * MemoLock). The ephpm_kv_* functions never throw it either: they return false.
     */
    class StoreUnavailable extends StoreException {}

    /** A value cannot fit in the store even after evicting everything that may be evicted. */
    class StoreFull extends StoreException {}
}

namespace {

    /**
     * ePHPm's functions, on the default store (`ephpm.dsn`) without a prefix, so code
     * written for ePHPm's KV runs unchanged. Values are strings; TTLs are whole seconds,
     * at most 1000000000, where 0 or less means none. Every store failure (a store that
     * cannot be opened or reached, a value that cannot fit, a value larger than
     * memory_limit leaves room for) returns false with an E_WARNING, never an exception;
     * bad arguments are TypeError and ValueError, as everywhere.
     */

    /** Reads a key as a string. @return string|false|null null when absent; false when the store failed. */
    function ephpm_kv_get(string $key): string|false|null {}

    /**
     * The release number `ephpm deploy` raises: the one this process last acted on at a
     * request start (ephpm.deploys on), else the store's now; 0 before the first deploy.
     * @throws \Ephpm\StoreException when the store cannot be read
     */
    function ephpm_release(): int {}

    /** Stores a string. @param int $ttl Seconds, at most 1000000000; 0 or less: no expiry. */
    function ephpm_kv_set(string $key, string $value, int $ttl = 0): bool {}

    /** Stores a string only if the key is absent, atomically. @param int $ttl Seconds, at most 1000000000; 0 or less: no expiry. */
    function ephpm_kv_setnx(string $key, string $value, int $ttl = 0): bool {}

    /** Deletes a key. @return int|false 1 if it existed, else 0; false when the store failed. */
    function ephpm_kv_del(string $key): int|false {}

    /** Deletes a key only if its value equals $token, atomically. */
    function ephpm_kv_del_if_eq(string $key, string $token): bool {}

    /** Whether the key exists. */
    function ephpm_kv_exists(string $key): bool {}

    /** Adds 1. @return int|false The new value; false when the value is not an integer. */
    function ephpm_kv_incr(string $key): int|false {}

    /** Subtracts 1. @return int|false The new value; false when the value is not an integer. */
    function ephpm_kv_decr(string $key): int|false {}

    /** Adds $by. @return int|false The new value; false when the value is not an integer or would overflow. */
    function ephpm_kv_incr_by(string $key, int $by): int|false {}

    /** Sets the TTL in seconds, at most 1000000000. @return bool false when the key is absent or $ttl <= 0. */
    function ephpm_kv_expire(string $key, int $ttl): bool {}

    /** Seconds left, rounded up. @return int|false -2 when absent, -1 when it never expires; false when the store failed. */
    function ephpm_kv_ttl(string $key): int|false {}

    /** Milliseconds left, rounded up. @return int|false -2 when absent, -1 when it never expires; false when the store failed. */
    function ephpm_kv_pttl(string $key): int|false {}

    /** Removes every key of the default store. */
    function ephpm_kv_flush_all(): bool {}

    /**
     * Blocks until the key's version differs from $last_version (another process wrote
     * or deleted it), woken by a futex rather than by polling.
     *
     * @param int $last_version The version seen last (not negative); 0 for "absent".
     * @param int $timeout_ms How long to wait at most, in milliseconds, 0 to 1000000000000.
     * @return array|false ['version' => int, 'value' => ?string] (version 0 and value
     *         null when the key is gone), or false at the timeout.
     */
    function ephpm_kv_wait(string $key, int $last_version, int $timeout_ms): array|false {}

    /**
     * Removes a host store's segment (`ephpm.store_name` when $name is null), so that the
     * next process makes it anew at its own `ephpm.shm_size`: how an operator resizes or
     * resets a store. A store in use is never replaced behind its users' backs, so this
     * refuses while any process maps it (this one included, if it opened the store).
     *
     * @return bool true when a segment was removed, false when there was none.
     * @throws \Ephpm\StoreException while the store is in use.
     */
    function ephpm_store_remove(?string $name = null): bool {}
}
