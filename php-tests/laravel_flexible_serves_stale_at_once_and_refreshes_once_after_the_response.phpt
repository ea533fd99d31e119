--TEST--
Laravel: Cache::flexible($key, [$fresh, $stale], $callback) (Laravel 11's, on Laravel 8.83 to 13): a fresh value is served; a stale one is served at once to 8 racing processes while exactly one refresh runs, after its process has answered; past the stale window the value is computed again; forget() removes it
--EXTENSIONS--
ephpm
pcntl
mbstring
ctype
--SKIPIF--
<?php if (!is_file('/usr/share/php/Illuminate/Foundation/Application.php')) die('skip php-laravel-framework is not installed');
--INI--
ephpm.store_name=phpt_laravel_flexible
ephpm.shm_size=8M
--FILE--
<?php
require __DIR__ . '/harness/laravel.inc';

use Illuminate\Support\Facades\Cache;

$app = laravel_app(['ephpm' => ['driver' => 'ephpm']]);
$marks = new Ephpm\Kv(null, 'marks:');
$marks->clear();
Cache::flush();

var_dump(Cache::flexible('rates', [1, 60], fn () => 'first'));
var_dump(Cache::flexible('rates', [1, 60], fn () => 'not called: fresh'));
usleep(1_100_000);

laravel_fork(8, function ($i) use ($marks) {
    $served = Cache::flexible('rates', [1, 60], function () use ($marks) {
        $marks->increment('refreshes');
        $marks->set('refresh ran after its process answered', $marks->has('answered:' . getmypid()));
        // Ends once all 8 have been served (5 s at most): were they served stale at once,
        // none waits for it.
        $deadline = microtime(true) + 5;
        while ($marks->get('answers') < 8 && microtime(true) < $deadline) {
            usleep(1000);
        }
        return 'refreshed';
    });
    $marks->set("served:$i", $served);
    $marks->set('answered:' . getmypid(), true);
    $marks->increment('answers');
    // The refresh, if this process was elected, runs at shutdown: after the answer.
});
$served = [];
for ($i = 0; $i < 8; $i++) {
    $served[] = $marks->get("served:$i");
}
echo "served: ", implode(' ', array_unique($served)), "\n";
var_dump($marks->get('refreshes'), $marks->get('refresh ran after its process answered'));
var_dump(Cache::flexible('rates', [1, 60], fn () => 'not called: fresh again'));

echo "-- past the stale window: computed again\n";
var_dump(Cache::flexible('short', [1, 1], fn () => 'old'));
usleep(1_100_000);
var_dump(Cache::flexible('short', [1, 1], fn () => 'computed'));

echo "-- forget() removes it\n";
var_dump(Cache::forget('rates'), Cache::flexible('rates', [1, 60], fn () => 'after forget'));
Cache::flush();
$marks->clear();
--EXPECT--
string(5) "first"
string(5) "first"
served: first
int(1)
bool(true)
string(9) "refreshed"
-- past the stale window: computed again
string(3) "old"
string(8) "computed"
-- forget() removes it
bool(true)
string(12) "after forget"
