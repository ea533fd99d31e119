--TEST--
Laravel: Cache::tags() on an ephpm store (Laravel's TaggedCache semantics) across processes: put by one process, read and flushed by others, an entry under two tags goes with either; RateLimiter::hit() from 8 processes x 50 rounds, a fresh key each round, loses no hit (the container's RateLimiter is ephpm's, one atomic increment)
--EXTENSIONS--
ephpm
pcntl
mbstring
ctype
--SKIPIF--
<?php if (!is_file('/usr/share/php/Illuminate/Foundation/Application.php')) die('skip php-laravel-framework is not installed');
--INI--
ephpm.store_name=phpt_laravel_tags
ephpm.shm_size=8M
--FILE--
<?php
require __DIR__ . '/harness/laravel.inc';

use Illuminate\Support\Facades\Cache;

$app = laravel_app(['ephpm' => ['driver' => 'ephpm']]);
Cache::flush();

echo "-- tags\n";
laravel_fork(1, function () {
    Cache::tags(['people', 'artists'])->put('john', 'John (artist)', 60);
    Cache::tags(['people', 'authors'])->put('anne', 'Anne (author)', 60);
    Cache::tags(['people'])->forever('all', 2);
});
var_dump(Cache::tags(['people', 'artists'])->get('john'), Cache::tags(['people', 'authors'])->get('anne'), Cache::tags(['people'])->get('all'));
var_dump(Cache::tags(['artists', 'people'])->get('john'), Cache::get('john'));
laravel_fork(1, fn () => Cache::tags(['authors'])->flush());
var_dump(Cache::tags(['people', 'authors'])->get('anne'), Cache::tags(['people', 'artists'])->get('john'));
laravel_fork(1, fn () => Cache::tags('people')->flush());
var_dump(Cache::tags(['people', 'artists'])->get('john'), Cache::tags(['people'])->get('all'));
var_dump(Cache::tags(['counters'])->increment('n', 3), Cache::tags(['counters'])->remember('r', 60, fn () => 'remembered'));

echo "-- RateLimiter::hit(): 8 processes x 50 rounds, each round on a fresh key\n";
/** Hits from 8 processes at once on a fresh key per round: the rounds' counts. */
function limiter_race(string $name, Closure $limiter): array
{
    $tally = new Ephpm\Kv(null, "tally:$name:");
    laravel_fork(8, function () use ($tally, $limiter, $name) {
        $limiter = $limiter();
        for ($round = 0; $round < 50; $round++) {
            $tally->increment("arrived:$round");
            // 10 s at most: a racer that died (a store error) must not leave the
            // others spinning after the test has given up on them.
            $deadline = microtime(true) + 10;
            while ($tally->get("arrived:$round") < 8 && microtime(true) < $deadline) {
            }
            $limiter->hit("$name:$round", 60);
        }
    });
    $limiter = $limiter();
    $counts = [];
    for ($round = 0; $round < 50; $round++) {
        $counts[] = $limiter->attempts("$name:$round");
    }
    return array_count_values($counts);
}
echo get_class($app->make(Illuminate\Cache\RateLimiter::class)), "\n";
var_dump(limiter_race('ephpm', fn () => app(Illuminate\Cache\RateLimiter::class)));
Cache::flush();
--EXPECT--
-- tags
string(13) "John (artist)"
string(13) "Anne (author)"
int(2)
NULL
NULL
NULL
string(13) "John (artist)"
NULL
NULL
int(3)
string(10) "remembered"
-- RateLimiter::hit(): 8 processes x 50 rounds, each round on a fresh key
Ephpm\Laravel\EphpmRateLimiter
array(1) {
  [8]=>
  int(50)
}
