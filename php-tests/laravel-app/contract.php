<?php
// `php cli.php contract STORE`: the store contract of issue #15, one line per row, as
// Laravel's own stores (Redis, Memcached, Array) behave. Included by cli.php ($run, show()).

use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Session;

$app = boot();
$name = $argv[2];
$c = Cache::store($name);
$k = "contract:$run:";
$dsn = config("cache.stores.$name.dsn");
$prefix = config("cache.stores.$name.prefix");

show('add of an absent key', $c->add("{$k}add", 1, 60));
show('add of a present key', $c->add("{$k}add", 2, 60));
show('value after both adds', $c->get("{$k}add"));
show('forget of a present key', $c->forget("{$k}add"));
show('forget of a missing key', $c->forget("{$k}add"));
show('increment of a missing key', $c->increment("{$k}n"));
show('increment by 5, decrement by 2', [$c->increment("{$k}n", 5), $c->decrement("{$k}n", 2)]);
$c->put("{$k}text", 'abc', 60);
show('increment of a string', $c->increment("{$k}text"));
$c->put("{$k}max", PHP_INT_MAX, 60);
show('increment past PHP_INT_MAX', $c->increment("{$k}max"));
show('value after the overflow', $c->get("{$k}max") === PHP_INT_MAX);
show('putMany', $c->putMany(["{$k}a" => 1, "{$k}b" => ['x' => 2]], 60));
show('many', array_values($c->many(["{$k}a", "{$k}b", "{$k}none"])));
show('forever', $c->forever("{$k}forever", 'kept'));
show('forever value', $c->get("{$k}forever"));
// Keys live under "cache:<prefix>:" in the store's own backend.
show('raw key in the backend', (new Ephpm\Kv($dsn))->get("cache:$prefix:{$k}forever"));
show('in the host store too', (new Ephpm\Kv(null))->has("cache:$prefix:{$k}forever"));
Cache::store('ephpm_host')->put("{$k}host", 'h', 60);
show('ephpm_host key in the backend', (new Ephpm\Kv($dsn))->has("cache:host:{$k}host"));

// block() on this store: a holder with a 10 s lock releases it 0.2 s in; a waiter
// allowed 5 s gets it (only a release can give it to it before the TTL).
$lock = $c->lock("{$k}lock", 10);
show('lock taken', $lock->get());
if (($pid = pcntl_fork()) === 0) {
    usleep(200000);
    $lock->release();
    exit(0);
}
try {
    show('block() after the release', $c->lock("{$k}lock", 10)->block(5, fn () => 'got it'));
} catch (Illuminate\Contracts\Cache\LockTimeoutException $e) {
    show('block() after the release', get_class($e));
}
pcntl_waitpid($pid, $status);

// flush() of one store leaves the others; a store with no prefix leaves the sessions.
Cache::store('ephpm_other')->put("{$k}other", 'o', 60);
show('flush of ephpm_other', Cache::store('ephpm_other')->flush());
show('ephpm_other key after its flush', Cache::store('ephpm_other')->get("{$k}other"));
show('this store\'s key after ephpm_other\'s flush', $c->get("{$k}forever"));
$session = $app['session']->driver();
$session->setId($sid = str_repeat('c', 40));
$session->start();
$session->put('user', 'ada');
$session->save();
show('flush of a store with an empty prefix', Cache::store('ephpm_bare')->flush());
show('this store\'s key after it', $c->get("{$k}forever"));
$session->flush();
$session->setId($sid);
$session->start();
show('session after the cache flush', $session->get('user'));
$session->save();
