--TEST--
Every duration, TTL and count from PHP is range-checked with PHP's wording (PHP_INT_MAX, PHP_INT_MIN, 1e20, INF, NAN, -1 are ValueErrors "must be between …" or "must be a finite number", a float for an int a TypeError), never a Rust panic; the limits themselves work
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_numbers
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$memo = new Ephpm\MemoLock($kv, 1000, 0);
$stale = new Ephpm\StaleCache($kv);
$lock = $memo->acquire('held');
$keepAlive = null;
$memo->exclusively('section', function ($k) use (&$keepAlive) { $keepAlive = $k; });
$calls = [
    'Kv::set ttl' => fn ($n) => $kv->set('k', 1, $n),
    'Kv::add ttl' => fn ($n) => $kv->add('k2', 1, $n),
    'Kv::increment ttl' => fn ($n) => $kv->increment('n', 1, $n),
    'Kv::expire ttl' => fn ($n) => $kv->expire('k', $n),
    'Kv::setMany ttl' => fn ($n) => $kv->setMany(['k' => 1], $n),
    'MemoLock lockTtlMs' => fn ($n) => new Ephpm\MemoLock($kv, $n),
    'MemoLock waitTimeoutMs' => fn ($n) => new Ephpm\MemoLock($kv, 1000, $n),
    'MemoLock::fromDsn lockTtlMs' => fn ($n) => Ephpm\MemoLock::fromDsn('shm://', $n),
    'MemoLock::with waitTimeoutMs' => fn ($n) => $memo->with(null, $n),
    'MemoLock::acquire ttlMs' => fn ($n) => $memo->acquire('a', $n),
    'MemoLock::acquire waitMs' => fn ($n) => $memo->acquire('held', 1000, $n),
    'Lock::extend ttlMs' => fn ($n) => $lock->extend($n),
    'KeepAlive ttlMs' => fn ($n) => $keepAlive($n),
    'StaleCache staleSeconds' => fn ($n) => new Ephpm\StaleCache($kv, $n),
    'StaleCache::get ttl' => fn ($n) => $stale->get('s', fn () => 1, $n),
    'StaleCache compute $ttl' => fn ($n) => $stale->refresh('s', function (&$ttl) use ($n) { $ttl = $n; return 1; }),
    'ephpm_kv_set ttl' => fn ($n) => ephpm_kv_set('k', 'v', $n),
    'ephpm_kv_expire ttl' => fn ($n) => ephpm_kv_expire('k', $n),
    'ephpm_kv_wait last_version' => fn ($n) => ephpm_kv_wait('k', $n, 0),
    'ephpm_kv_wait timeout_ms' => fn ($n) => ephpm_kv_wait('k', 1 << 40, $n),
];
foreach ($calls as $name => $f) {
    echo "-- $name\n";
    foreach ([PHP_INT_MAX, PHP_INT_MIN, 1e20, INF, NAN, -1] as $n) {
        try {
            $f($n);
            echo "accepted\n";
        } catch (Throwable $e) {
            echo get_class($e), ': ', $e->getMessage(), "\n";
        }
    }
}
echo "-- the limits themselves\n";
var_dump($kv->set('k', 1, 1000000000), $kv->ttl('k') > 999999990, $kv->set('k', 1, 1e9), $kv->expire('k', 0));
var_dump((new Ephpm\MemoLock($kv, 1000000000000, 1000000000000)) instanceof Ephpm\MemoLock);
$long = $memo->acquire('long', 1000000000000);
var_dump($long->fence > 0, $kv->ttl('long') > 999999990, $long->release());
var_dump($lock->extend(1000000000000), $lock->release());
var_dump(ephpm_kv_set('k', 'v', 1000000000), ephpm_kv_ttl('k'), ephpm_kv_expire('k', 1000000000));
var_dump($stale->get('edge', fn () => 'ok', 1000000000), $stale->get('edge2', function (&$ttl) { $ttl = 1000000000; return 'ok'; }));
var_dump(ephpm_kv_wait('absent', 0, 0));
--EXPECT--
-- Kv::set ttl
ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be between 0 and 1000000000
-- Kv::add ttl
ValueError: Ephpm\Kv::add(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::add(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::add(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::add(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\Kv::add(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\Kv::add(): Argument #3 ($ttl) must be between 0 and 1000000000
-- Kv::increment ttl
ValueError: Ephpm\Kv::increment(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::increment(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::increment(): Argument #3 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::increment(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\Kv::increment(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\Kv::increment(): Argument #3 ($ttl) must be between 0 and 1000000000
-- Kv::expire ttl
ValueError: Ephpm\Kv::expire(): Argument #2 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::expire(): Argument #2 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::expire(): Argument #2 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::expire(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Kv::expire(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Kv::expire(): Argument #2 ($ttl) must be between 0 and 1000000000
-- Kv::setMany ttl
ValueError: Ephpm\Kv::setMany(): Argument #2 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::setMany(): Argument #2 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::setMany(): Argument #2 ($ttl) must be between 0 and 1000000000
ValueError: Ephpm\Kv::setMany(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Kv::setMany(): Argument #2 ($ttl) must be a finite number
ValueError: Ephpm\Kv::setMany(): Argument #2 ($ttl) must be between 0 and 1000000000
-- MemoLock lockTtlMs
ValueError: Ephpm\MemoLock::__construct(): Argument #2 ($lockTtlMs) must be between 1 and 1000000000000
ValueError: Ephpm\MemoLock::__construct(): Argument #2 ($lockTtlMs) must be between 1 and 1000000000000
TypeError: Ephpm\MemoLock::__construct(): Argument #2 ($lockTtlMs) must be of type int, float given
TypeError: Ephpm\MemoLock::__construct(): Argument #2 ($lockTtlMs) must be of type int, float given
TypeError: Ephpm\MemoLock::__construct(): Argument #2 ($lockTtlMs) must be of type int, float given
ValueError: Ephpm\MemoLock::__construct(): Argument #2 ($lockTtlMs) must be between 1 and 1000000000000
-- MemoLock waitTimeoutMs
ValueError: Ephpm\MemoLock::__construct(): Argument #3 ($waitTimeoutMs) must be between 0 and 1000000000000
ValueError: Ephpm\MemoLock::__construct(): Argument #3 ($waitTimeoutMs) must be between 0 and 1000000000000
TypeError: Ephpm\MemoLock::__construct(): Argument #3 ($waitTimeoutMs) must be of type int, float given
TypeError: Ephpm\MemoLock::__construct(): Argument #3 ($waitTimeoutMs) must be of type int, float given
TypeError: Ephpm\MemoLock::__construct(): Argument #3 ($waitTimeoutMs) must be of type int, float given
ValueError: Ephpm\MemoLock::__construct(): Argument #3 ($waitTimeoutMs) must be between 0 and 1000000000000
-- MemoLock::fromDsn lockTtlMs
ValueError: Ephpm\MemoLock::fromDsn(): Argument #2 ($lockTtlMs) must be between 1 and 1000000000000
ValueError: Ephpm\MemoLock::fromDsn(): Argument #2 ($lockTtlMs) must be between 1 and 1000000000000
TypeError: Ephpm\MemoLock::fromDsn(): Argument #2 ($lockTtlMs) must be of type int, float given
TypeError: Ephpm\MemoLock::fromDsn(): Argument #2 ($lockTtlMs) must be of type int, float given
TypeError: Ephpm\MemoLock::fromDsn(): Argument #2 ($lockTtlMs) must be of type int, float given
ValueError: Ephpm\MemoLock::fromDsn(): Argument #2 ($lockTtlMs) must be between 1 and 1000000000000
-- MemoLock::with waitTimeoutMs
ValueError: Ephpm\MemoLock::with(): Argument #2 ($waitTimeoutMs) must be between 0 and 1000000000000
ValueError: Ephpm\MemoLock::with(): Argument #2 ($waitTimeoutMs) must be between 0 and 1000000000000
TypeError: Ephpm\MemoLock::with(): Argument #2 ($waitTimeoutMs) must be of type int, float given
TypeError: Ephpm\MemoLock::with(): Argument #2 ($waitTimeoutMs) must be of type int, float given
TypeError: Ephpm\MemoLock::with(): Argument #2 ($waitTimeoutMs) must be of type int, float given
ValueError: Ephpm\MemoLock::with(): Argument #2 ($waitTimeoutMs) must be between 0 and 1000000000000
-- MemoLock::acquire ttlMs
ValueError: Ephpm\MemoLock::acquire(): Argument #2 ($ttlMs) must be between 1 and 1000000000000
ValueError: Ephpm\MemoLock::acquire(): Argument #2 ($ttlMs) must be between 1 and 1000000000000
TypeError: Ephpm\MemoLock::acquire(): Argument #2 ($ttlMs) must be of type int, float given
TypeError: Ephpm\MemoLock::acquire(): Argument #2 ($ttlMs) must be of type int, float given
TypeError: Ephpm\MemoLock::acquire(): Argument #2 ($ttlMs) must be of type int, float given
ValueError: Ephpm\MemoLock::acquire(): Argument #2 ($ttlMs) must be between 1 and 1000000000000
-- MemoLock::acquire waitMs
ValueError: Ephpm\MemoLock::acquire(): Argument #3 ($waitMs) must be between 0 and 1000000000000
ValueError: Ephpm\MemoLock::acquire(): Argument #3 ($waitMs) must be between 0 and 1000000000000
TypeError: Ephpm\MemoLock::acquire(): Argument #3 ($waitMs) must be of type int, float given
TypeError: Ephpm\MemoLock::acquire(): Argument #3 ($waitMs) must be of type int, float given
TypeError: Ephpm\MemoLock::acquire(): Argument #3 ($waitMs) must be of type int, float given
ValueError: Ephpm\MemoLock::acquire(): Argument #3 ($waitMs) must be between 0 and 1000000000000
-- Lock::extend ttlMs
ValueError: Ephpm\Lock::extend(): Argument #1 ($ttlMs) must be between 1 and 1000000000000
ValueError: Ephpm\Lock::extend(): Argument #1 ($ttlMs) must be between 1 and 1000000000000
TypeError: Ephpm\Lock::extend(): Argument #1 ($ttlMs) must be of type int, float given
TypeError: Ephpm\Lock::extend(): Argument #1 ($ttlMs) must be of type int, float given
TypeError: Ephpm\Lock::extend(): Argument #1 ($ttlMs) must be of type int, float given
ValueError: Ephpm\Lock::extend(): Argument #1 ($ttlMs) must be between 1 and 1000000000000
-- KeepAlive ttlMs
ValueError: Ephpm\KeepAlive::__invoke(): Argument #1 ($ttlMs) must be between 1 and 1000000000000
ValueError: Ephpm\KeepAlive::__invoke(): Argument #1 ($ttlMs) must be between 1 and 1000000000000
TypeError: Ephpm\KeepAlive::__invoke(): Argument #1 ($ttlMs) must be of type int, float given
TypeError: Ephpm\KeepAlive::__invoke(): Argument #1 ($ttlMs) must be of type int, float given
TypeError: Ephpm\KeepAlive::__invoke(): Argument #1 ($ttlMs) must be of type int, float given
ValueError: Ephpm\KeepAlive::__invoke(): Argument #1 ($ttlMs) must be between 1 and 1000000000000
-- StaleCache staleSeconds
ValueError: Ephpm\StaleCache::__construct(): Argument #2 ($staleSeconds) must be between 0 and 1000000000
ValueError: Ephpm\StaleCache::__construct(): Argument #2 ($staleSeconds) must be between 0 and 1000000000
TypeError: Ephpm\StaleCache::__construct(): Argument #2 ($staleSeconds) must be of type int, float given
TypeError: Ephpm\StaleCache::__construct(): Argument #2 ($staleSeconds) must be of type int, float given
TypeError: Ephpm\StaleCache::__construct(): Argument #2 ($staleSeconds) must be of type int, float given
ValueError: Ephpm\StaleCache::__construct(): Argument #2 ($staleSeconds) must be between 0 and 1000000000
-- StaleCache::get ttl
ValueError: Ephpm\StaleCache::get(): Argument #3 ($ttl) must be greater than 0 and less than or equal to 1000000000
ValueError: Ephpm\StaleCache::get(): Argument #3 ($ttl) must be greater than 0 and less than or equal to 1000000000
ValueError: Ephpm\StaleCache::get(): Argument #3 ($ttl) must be greater than 0 and less than or equal to 1000000000
ValueError: Ephpm\StaleCache::get(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\StaleCache::get(): Argument #3 ($ttl) must be a finite number
ValueError: Ephpm\StaleCache::get(): Argument #3 ($ttl) must be greater than 0 and less than or equal to 1000000000
-- StaleCache compute $ttl
ValueError: Ephpm\StaleCache: the $ttl set by the compute callable for "s" must be a number between 0 and 1000000000, int given
ValueError: Ephpm\StaleCache: the $ttl set by the compute callable for "s" must be a number between 0 and 1000000000, int given
ValueError: Ephpm\StaleCache: the $ttl set by the compute callable for "s" must be a number between 0 and 1000000000, float given
ValueError: Ephpm\StaleCache: the $ttl set by the compute callable for "s" must be a number between 0 and 1000000000, float given
ValueError: Ephpm\StaleCache: the $ttl set by the compute callable for "s" must be a number between 0 and 1000000000, float given
ValueError: Ephpm\StaleCache: the $ttl set by the compute callable for "s" must be a number between 0 and 1000000000, int given
-- ephpm_kv_set ttl
ValueError: ephpm_kv_set(): Argument #3 ($ttl) must be less than or equal to 1000000000
accepted
TypeError: ephpm_kv_set(): Argument #3 ($ttl) must be of type int, float given
TypeError: ephpm_kv_set(): Argument #3 ($ttl) must be of type int, float given
TypeError: ephpm_kv_set(): Argument #3 ($ttl) must be of type int, float given
accepted
-- ephpm_kv_expire ttl
ValueError: ephpm_kv_expire(): Argument #2 ($ttl) must be less than or equal to 1000000000
accepted
TypeError: ephpm_kv_expire(): Argument #2 ($ttl) must be of type int, float given
TypeError: ephpm_kv_expire(): Argument #2 ($ttl) must be of type int, float given
TypeError: ephpm_kv_expire(): Argument #2 ($ttl) must be of type int, float given
accepted
-- ephpm_kv_wait last_version
accepted
ValueError: ephpm_kv_wait(): Argument #2 ($last_version) must be greater than or equal to 0
TypeError: ephpm_kv_wait(): Argument #2 ($last_version) must be of type int, float given
TypeError: ephpm_kv_wait(): Argument #2 ($last_version) must be of type int, float given
TypeError: ephpm_kv_wait(): Argument #2 ($last_version) must be of type int, float given
ValueError: ephpm_kv_wait(): Argument #2 ($last_version) must be greater than or equal to 0
-- ephpm_kv_wait timeout_ms
ValueError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be between 0 and 1000000000000
ValueError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be between 0 and 1000000000000
TypeError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be of type int, float given
TypeError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be of type int, float given
TypeError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be of type int, float given
ValueError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be between 0 and 1000000000000
-- the limits themselves
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
NULL
bool(true)
bool(true)
int(1000000000)
bool(true)
string(2) "ok"
string(2) "ok"
bool(false)
