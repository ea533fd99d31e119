--TEST--
Ephpm\StaleCache: fresh values are served, stale ones at once with one deferred refresh, past the stale window they are computed, and a failing computation serves the old value only inside the stale-if-error window
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_stale
ephpm.shm_size=4M
--FILE--
<?php
final class Log { public array $lines = [];
    public function warning($m, array $c = []) { $this->lines[] = $m . (isset($c['exception']) ? ' [' . get_class($c['exception']) . ']' : ''); } }
$kv = new Ephpm\Kv(null, 'stale:');
$kv->clear();
$log = new Log();
$cache = new Ephpm\StaleCache($kv, staleSeconds: 1, staleIfErrorSeconds: 2, logger: $log);
$calls = 0;
$compute = function (&$ttl) use (&$calls) { $calls++; $ttl = 0.3; return "v$calls"; };
$show = function ($v, $meta) use (&$calls) {
    printf("%s stale=%s computed=%s error=%s (computations so far: %d)\n", var_export($v, true),
        var_export($meta['stale'], true), var_export($meta['computed'], true), var_export($meta['error'], true), $calls);
};

echo "-- a miss is computed\n";
$show($cache->get('k', $compute, 300, $meta), $meta);
echo "-- fresh: served without computing\n";
$show($cache->get('k', $compute, 300, $meta), $meta);
usleep(400_000);
echo "-- stale: served at once; the refresh waits for the end of the request\n";
$show($cache->get('k', $compute, 300, $meta), $meta);
echo "-- a second read in the same request does not refresh again\n";
$show($cache->get('k', $compute, 300, $meta), $meta);
echo "deferred refreshes run: ", Ephpm\StaleCache::runDeferred(), "\n";
$show($cache->get('k', $compute, 300, $meta), $meta);

echo "-- past the stale window: computed like a miss\n";
usleep(1_400_000);
$show($cache->get('k', $compute, 300, $meta), $meta);

echo "-- past the stale window, inside stale-if-error: a throwing computation serves the old value\n";
usleep(1_400_000);
$fail = function () use (&$calls) { $calls++; throw new RuntimeException('origin down'); };
$show($cache->get('k', $fail, 300, $meta), $meta);
echo implode("\n", $log->lines), "\n";

echo "-- past stale-if-error: the exception reaches the caller\n";
usleep(1_000_000);
try {
    $cache->get('k', $fail);
} catch (RuntimeException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}

echo "-- a refresh that throws keeps the stale value\n";
$log->lines = [];
$cache->get('r', fn (&$ttl) => ($ttl = 0.2) ? 'old' : '');
usleep(300_000);
$show($cache->get('r', $fail, 300, $meta), $meta);
echo "deferred refreshes run: ", Ephpm\StaleCache::runDeferred(), "\n";
echo implode("\n", $log->lines), "\n";
$show($cache->get('r', $compute, 300, $meta), $meta);
Ephpm\StaleCache::runDeferred();

echo "-- a key deleted in its stale window is a miss, not stale\n";
$cache->get('d', fn (&$ttl) => ($ttl = 0.2) ? 'old' : '');
usleep(300_000);
var_dump($cache->delete('d'), $cache->delete('d'));
$show($cache->get('d', $compute, 300, $meta), $meta);

echo "-- refreshAfterResponse: false refreshes inline\n";
$inline = new Ephpm\StaleCache($kv, 60, 0, null, false);
$inline->get('i', fn (&$ttl) => ($ttl = 0.2) ? 'old' : '');
usleep(300_000);
$show($inline->get('i', $compute, 300, $meta), $meta);

echo "-- refresh() recomputes a fresh value\n";
$show($cache->refresh('k', $compute), ['stale' => false, 'computed' => true, 'error' => false]);
$show($cache->get('k', $compute, 300, $meta), $meta);

echo "-- values keep their type; \$ttl = 0 serves without storing\n";
var_dump($cache->get('t', fn () => ['a' => 1.5, 'b' => null]));
var_dump($cache->get('t', $compute));
var_dump($cache->get('z', function (&$ttl) { $ttl = 0; return 'not stored'; }), $kv->has('z'));

echo "-- bad arguments\n";
foreach ([
    fn () => $cache->get('k', $compute, 0),
    fn () => $cache->get('', $compute),
    fn () => $cache->get('k', 'no_such_function'),
    fn () => $cache->get('q', fn (&$ttl) => ($ttl = 'soon') ? 1 : 1),
    fn () => new Ephpm\StaleCache($kv, -1),
    fn () => new Ephpm\StaleCache(lock: new stdClass()),
] as $bad) {
    try { $bad(); echo "no error\n"; } catch (Throwable $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
}
$kv->clear();
--EXPECT--
-- a miss is computed
'v1' stale=false computed=true error=false (computations so far: 1)
-- fresh: served without computing
'v1' stale=false computed=false error=false (computations so far: 1)
-- stale: served at once; the refresh waits for the end of the request
'v1' stale=true computed=false error=false (computations so far: 1)
-- a second read in the same request does not refresh again
'v1' stale=true computed=false error=false (computations so far: 1)
deferred refreshes run: 1
'v2' stale=false computed=false error=false (computations so far: 2)
-- past the stale window: computed like a miss
'v3' stale=false computed=true error=false (computations so far: 3)
-- past the stale window, inside stale-if-error: a throwing computation serves the old value
'v3' stale=true computed=false error=true (computations so far: 4)
ephpm: serving the stale value of "k": computing it failed: origin down [RuntimeException]
-- past stale-if-error: the exception reaches the caller
RuntimeException: origin down
-- a refresh that throws keeps the stale value
'old' stale=true computed=false error=false (computations so far: 5)
deferred refreshes run: 1
ephpm: refreshing "r" failed; its stale value stays: origin down [RuntimeException]
'old' stale=true computed=false error=false (computations so far: 6)
-- a key deleted in its stale window is a miss, not stale
bool(true)
bool(false)
'v8' stale=false computed=true error=false (computations so far: 8)
-- refreshAfterResponse: false refreshes inline
'v9' stale=false computed=true error=false (computations so far: 9)
-- refresh() recomputes a fresh value
'v10' stale=false computed=true error=false (computations so far: 10)
'v10' stale=false computed=false error=false (computations so far: 10)
-- values keep their type; $ttl = 0 serves without storing
array(2) {
  ["a"]=>
  float(1.5)
  ["b"]=>
  NULL
}
array(2) {
  ["a"]=>
  float(1.5)
  ["b"]=>
  NULL
}
string(10) "not stored"
bool(false)
-- bad arguments
ValueError: Ephpm\StaleCache::get(): Argument #3 ($ttl) must be greater than 0 and less than or equal to 1000000000
ValueError: Ephpm\StaleCache::get(): Argument #1 ($key) cannot be empty
TypeError: Ephpm\StaleCache::get(): Argument #2 ($compute) must be a valid callback, string given
ValueError: Ephpm\StaleCache: the $ttl set by the compute callable for "q" must be a number between 0 and 1000000000, string given
ValueError: Ephpm\StaleCache::__construct(): Argument #2 ($staleSeconds) must be between 0 and 1000000000
TypeError: Ephpm\StaleCache::__construct(): Argument #4 ($lock) must be of type ?Ephpm\MemoLock, stdClass given
