--TEST--
Laravel (a real Illuminate\Foundation\Application, Debian's 8.83 to 13): the ephpm store keeps the contract of Laravel's own stores, a row each: add() atomic (8 processes x 50 rounds, one winner each; with and without a TTL), many/putMany, increment/decrement (missing key, non-integer, overflow: false, never an uncaught error), forget() says whether it deleted (KeyForgotten only then), forever(), touch() (Laravel 13's: a new lifetime for a key that exists, false for one that does not), flush() removes only its own prefix (sessions and other stores survive), a store's own dsn, block() woken on a store that is not the default one
--EXTENSIONS--
ephpm
pcntl
mbstring
ctype
--SKIPIF--
<?php if (!is_file('/usr/share/php/Illuminate/Foundation/Application.php')) die('skip php-laravel-framework is not installed');
--INI--
ephpm.store_name=phpt_laravel_contract
ephpm.shm_size=8M
--FILE--
<?php
require __DIR__ . '/harness/laravel.inc';

use Illuminate\Support\Facades\Cache;

$app = laravel_app([
    'ephpm' => ['driver' => 'ephpm'],
    'other' => ['driver' => 'ephpm', 'prefix' => 'other'],
    'host' => ['driver' => 'ephpm', 'dsn' => 'shm://phpt_laravel_contract_host', 'prefix' => 'host'],
]);
$raw = new Ephpm\Kv();
$raw->clear();
(new Ephpm\Kv('shm://phpt_laravel_contract_host'))->clear();

echo "-- add(): 8 processes x 50 rounds, one winner each round\n";
/** Runs the race on what $repository() returns in each process: the winners of each round, with a TTL and without. */
function add_race(string $name, Closure $repository): array
{
    $tally = new Ephpm\Kv(null, "tally:$name:");
    laravel_fork(8, function () use ($tally, $repository, $name) {
        $cache = $repository();
        for ($round = 0; $round < 50; $round++) {
            // Each round starts when all 8 have arrived, so that the adds really race.
            $tally->increment("arrived:$round");
            // 10 s at most: a racer that died (a store error) must not leave the
            // others spinning after the test has given up on them.
            $deadline = microtime(true) + 10;
            while ($tally->get("arrived:$round") < 8 && microtime(true) < $deadline) {
            }
            if ($cache->add("$name:$round", getmypid(), 60)) {
                $tally->increment("winners:$round");
            }
            if ($cache->add("$name-forever:$round", getmypid())) {
                $tally->increment("forever-winners:$round");
            }
        }
    });
    $counts = [];
    for ($round = 0; $round < 50; $round++) {
        $counts[] = $tally->get("winners:$round") . '/' . $tally->get("forever-winners:$round");
    }
    return array_unique($counts);
}
echo implode(' ', add_race('race', fn () => Cache::store())), "\n";
// The same race on a store without add(), where Laravel's Repository falls back to
// get-then-put (what the store did before): the test can fail.
$without = add_race('naive', function () {
    $store = Cache::store()->getStore();
    return new Illuminate\Cache\Repository(new class($store) implements Illuminate\Contracts\Cache\Store {
        public function __construct(private $s) {}
        // A read that takes a moment, as over a network: the window get-then-put leaves open.
        public function get($key) { $v = $this->s->get($key); usleep(2000); return $v; }
        public function many(array $keys) { return $this->s->many($keys); }
        public function put($key, $value, $seconds) { return $this->s->put($key, $value, $seconds); }
        public function putMany(array $values, $seconds) { return $this->s->putMany($values, $seconds); }
        public function increment($key, $value = 1) { return $this->s->increment($key, $value); }
        public function decrement($key, $value = 1) { return $this->s->decrement($key, $value); }
        public function forever($key, $value) { return $this->s->forever($key, $value); }
        public function touch($key, $seconds) { return $this->s->touch($key, $seconds); }
        public function forget($key) { return $this->s->forget($key); }
        public function flush() { return $this->s->flush(); }
        public function getPrefix() { return $this->s->getPrefix(); }
    });
});
echo 'get-then-put instead: several winners in some round: ', var_export($without !== ['1/1'], true), "\n";

echo "-- many() and putMany()\n";
var_dump(Cache::putMany(['a' => 1, 'b' => [2], 'c' => false], 60));
var_dump(Cache::many(['a', 'b', 'c', 'missing']));

echo "-- increment() and decrement()\n";
var_dump(Cache::increment('new'), Cache::increment('new', 4), Cache::decrement('new', 2), Cache::decrement('fresh'));
Cache::put('text', 'not a number', 60);
Cache::put('top', PHP_INT_MAX, 60);
Cache::put('bottom', PHP_INT_MIN, 60);
var_dump(Cache::increment('text'), Cache::increment('top'), Cache::decrement('bottom'), Cache::decrement('top', PHP_INT_MIN), Cache::get('top'));

echo "-- forget() says whether it deleted; KeyForgotten only then\n";
$forgotten = [];
$app['events']->listen(Illuminate\Cache\Events\KeyForgotten::class, function ($e) use (&$forgotten) { $forgotten[] = $e->key; });
var_dump(Cache::forget('a'), Cache::forget('a'), Cache::forget('never'), $forgotten);

echo "-- forever()\n";
var_dump(Cache::forever('kept', 'always'), Cache::get('kept'), $raw->ttl('cache:laravel_cache:kept'));

echo "-- touch()\n";
Cache::put('short', 'lived', 5);
$store = Cache::store()->getStore();
var_dump($store->touch('short', 100), $raw->ttl('cache:laravel_cache:short') > 90, $store->touch('never', 100), $raw->has('cache:laravel_cache:never'));

echo "-- flush() removes only this store's keys\n";
$session = $app['session']->driver();
$session->setId(str_repeat('s', 40));
$session->start();
$session->put('user', 'ada');
$session->save();
Cache::store('other')->put('x', 'other store', 60);
Cache::store('host')->put('x', 'host store', 60);
$raw->set('not laravel', 'untouched');
var_dump(Cache::flush(), Cache::get('kept'), Cache::store('other')->get('x'), Cache::store('host')->get('x'), $raw->get('not laravel'));
$again = new Illuminate\Session\Store('laravel_session', $session->getHandler(), str_repeat('s', 40));
$again->start();
var_dump($again->get('user'));
$again->save();

echo "-- a store's own dsn\n";
var_dump((new Ephpm\Kv('shm://phpt_laravel_contract_host', 'cache:host:'))->get('x'), $raw->get('cache:host:x'));

echo "-- block() is woken by the release on a store that is not the default\n";
$host = Cache::store('host');
$lock = $host->lock('job', 10);
var_dump($lock->get());
if (($pid = pcntl_fork()) === 0) {
    usleep(100_000);
    $lock->release();
    exit(0);
}
var_dump($host->lock('job', 10)->block(5, fn () => 'got it'));
pcntl_waitpid($pid, $status);
try {
    $host->lock('held', 10)->get();
    $host->lock('held', 10)->block(0.2);
} catch (Illuminate\Contracts\Cache\LockTimeoutException $e) {
    echo get_class($e), "\n";
}
Cache::store('host')->flush();
$raw->clear();
--EXPECT--
-- add(): 8 processes x 50 rounds, one winner each round
1/1
get-then-put instead: several winners in some round: true
-- many() and putMany()
bool(true)
array(4) {
  ["a"]=>
  int(1)
  ["b"]=>
  array(1) {
    [0]=>
    int(2)
  }
  ["c"]=>
  bool(false)
  ["missing"]=>
  NULL
}
-- increment() and decrement()
int(1)
int(5)
int(3)
int(-1)
bool(false)
bool(false)
bool(false)
bool(false)
int(9223372036854775807)
-- forget() says whether it deleted; KeyForgotten only then
bool(true)
bool(false)
bool(false)
array(1) {
  [0]=>
  string(1) "a"
}
-- forever()
bool(true)
string(6) "always"
float(-1)
-- touch()
bool(true)
bool(true)
bool(false)
bool(false)
-- flush() removes only this store's keys
bool(true)
NULL
string(11) "other store"
string(10) "host store"
string(9) "untouched"
string(3) "ada"
-- a store's own dsn
string(10) "host store"
NULL
-- block() is woken by the release on a store that is not the default
bool(true)
string(6) "got it"
Illuminate\Contracts\Cache\LockTimeoutException
