--TEST--
Laravel: Cache::remember(), rememberForever() and sear() on an ephpm store compute a cold key once for 8 racing processes (300 ms origin), where Laravel's own remember ('stampede' => false) computes it several times; a cached false is a hit; a callback that throws leaves no lock behind; a lock that cannot be had within lock_wait computes without protection and says so in Laravel's log
--EXTENSIONS--
ephpm
pcntl
mbstring
ctype
--SKIPIF--
<?php if (!is_file('/usr/share/php/Illuminate/Foundation/Application.php')) die('skip php-laravel-framework is not installed');
--INI--
ephpm.store_name=phpt_laravel_remember
ephpm.shm_size=8M
--FILE--
<?php
require __DIR__ . '/harness/laravel.inc';

use Illuminate\Support\Facades\Cache;

$app = laravel_app([
    'ephpm' => ['driver' => 'ephpm'],
    'plain' => ['driver' => 'ephpm', 'prefix' => 'plain', 'stampede' => false],
    'impatient' => ['driver' => 'ephpm', 'prefix' => 'impatient', 'lock_wait' => 0.2],
]);
// A store left by an earlier run (another Laravel's, with the same store name) starts empty.
(new Ephpm\Kv())->clear();
$calls = new Ephpm\Kv(null, 'origin:');

function race(string $store, string $method): int
{
    global $calls;
    $key = "$store-$method";
    laravel_fork(8, function () use ($store, $method, $key, $calls) {
        $origin = function () use ($calls, $key) {
            $calls->increment($key);
            usleep(300_000);
            return "made once";
        };
        $value = match ($method) {
            'remember' => Cache::store($store)->remember($key, 60, $origin),
            'rememberForever' => Cache::store($store)->rememberForever($key, $origin),
            'sear' => Cache::store($store)->sear($key, $origin),
        };
        if ($value !== 'made once') {
            $calls->set("$key:wrong", $value);
        }
    });
    return (int) $calls->get($key);
}
foreach (['remember', 'rememberForever', 'sear'] as $method) {
    printf("%s: %d origin call(s), every process served: %s\n", $method, race('ephpm', $method), var_export(!$calls->has("ephpm-$method:wrong"), true));
}
printf("Laravel's own remember: more than one origin call: %s\n", var_export(race('plain', 'remember') > 1, true));

echo "-- a cached false is a hit\n";
var_dump(Cache::remember('false', 60, fn () => false), Cache::remember('false', 60, fn () => 'computed again'));

echo "-- a callback that throws leaves no lock behind\n";
try {
    Cache::remember('throws', 60, fn () => throw new RuntimeException('origin down'));
} catch (RuntimeException $e) {
    echo $e->getMessage(), "\n";
}
var_dump(Cache::remember('throws', 60, fn () => 'second try'));

echo "-- a lock that cannot be had in time: computed unprotected, logged\n";
$locks = new Ephpm\MemoLock(new Ephpm\Kv(null, 'cache:impatient:'));
$held = $locks->acquire('once:remember:slow', 10_000);
var_dump(Cache::store('impatient')->remember('slow', 60, fn () => 'unprotected'));
$held->release();
echo preg_match('/WARNING: ephpm: computing cache key "slow" without stampede protection/', laravel_log($app)) ? "logged\n" : laravel_log($app);
$calls->clear();
Cache::flush();
Cache::store('plain')->flush();
Cache::store('impatient')->flush();
--EXPECT--
remember: 1 origin call(s), every process served: true
rememberForever: 1 origin call(s), every process served: true
sear: 1 origin call(s), every process served: true
Laravel's own remember: more than one origin call: true
-- a cached false is a hit
bool(false)
bool(false)
-- a callback that throws leaves no lock behind
origin down
string(10) "second try"
-- a lock that cannot be had in time: computed unprotected, logged
string(11) "unprotected"
logged
