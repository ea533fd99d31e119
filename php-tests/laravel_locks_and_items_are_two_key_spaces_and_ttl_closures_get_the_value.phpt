--TEST--
Laravel (Debian's 8.83 to 13), as Laravel's own array store does: a lock and an item of one name are two keys (remember() while the lock is held returns the value, put() and forget() leave the lock, flush() leaves a held lock); remember() gives a closure TTL the value (Laravel 9.51+); a lock's refresh() extends its owner's lock atomically and never a lock another owner took after it expired; the rate limiter's increment() by an amount consumes tooManyAttempts()' reservation as hit() does
--EXTENSIONS--
ephpm
mbstring
ctype
--SKIPIF--
<?php if (!is_file('/usr/share/php/Illuminate/Foundation/Application.php')) die('skip php-laravel-framework is not installed');
--INI--
ephpm.store_name=phpt_laravel_key_spaces
ephpm.shm_size=8M
--FILE--
<?php
require __DIR__ . '/harness/laravel.inc';

use Illuminate\Support\Facades\Cache;

laravel_app(['ephpm' => ['driver' => 'ephpm'], 'array' => ['driver' => 'array']]);
(new Ephpm\Kv())->clear();

foreach (['ephpm', 'array'] as $name) {
    $c = Cache::store($name);
    $lock = $c->lock('report', 10);
    $row = [
        'lock taken' => $lock->get(),
        'remember() under the lock' => $c->remember('report', 60, fn () => 'computed'),
        'get()' => $c->get('report'),
    ];
    $c->put('report', 'other', 60);
    $c->forget('report');
    $row['another owner after put() and forget()'] = $c->lock('report', 10)->get();
    $c->flush();
    $row['another owner after flush()'] = $c->lock('report', 10)->get();
    $row['the owner releases'] = $lock->release();
    echo "$name: ", json_encode($row), "\n";
}
// Laravel 9.51 and later give a closure TTL the value; ephpm does on every release.
$got = 'nothing';
Cache::store('ephpm')->remember('ttl', function ($value = null) use (&$got) { $got = $value; return 60; }, fn () => 'v');
echo "closure TTL got: $got\n";

echo "-- refresh()\n";
$c = Cache::store('ephpm');
$lock = $c->lock('job', 1);
var_dump($lock->get(), $lock->refresh(30), round((new Ephpm\Kv())->ttl('cache-lock:laravel_cache:job')));
var_dump($lock->refresh(), round((new Ephpm\Kv())->ttl('cache-lock:laravel_cache:job'), 1));
// Expired, then taken by another owner: the first owner's refresh() changes nothing.
$short = $c->lock('brief', 1);
$short->get();
usleep(1_100_000);
$next = $c->lock('brief', 60);
var_dump($next->get(), $short->refresh(60), $next->refresh(5), $c->lock('brief', 0, $next->owner())->refresh(0));
$forever = $c->lock('forever', 0);
var_dump($forever->get(), $forever->refresh(), $c->lock('forever', 0, 'stranger')->refresh(0));
try {
    (new Ephpm\Kv())->expireIfEquals('x', 'y', 0);
} catch (ValueError $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}

echo "-- the rate limiter's increment()\n";
$limiter = app(Illuminate\Cache\RateLimiter::class);
var_dump($limiter->tooManyAttempts('api', 10), $limiter->increment('api', 60, 3), $limiter->attempts('api'));
$limiter->releaseReservations();
var_dump($limiter->attempts('api'), $limiter->tooManyAttempts('api', 10), $limiter->hit('api'), $limiter->attempts('api'));
--EXPECT--
ephpm: {"lock taken":true,"remember() under the lock":"computed","get()":"computed","another owner after put() and forget()":false,"another owner after flush()":false,"the owner releases":true}
array: {"lock taken":true,"remember() under the lock":"computed","get()":"computed","another owner after put() and forget()":false,"another owner after flush()":false,"the owner releases":true}
closure TTL got: v
-- refresh()
bool(true)
bool(true)
float(30)
bool(true)
float(1)
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
ValueError: Ephpm\Kv::expireIfEquals(): Argument #3 ($ttl) must be greater than 0
-- the rate limiter's increment()
bool(false)
int(3)
int(3)
int(3)
bool(false)
int(4)
int(4)
