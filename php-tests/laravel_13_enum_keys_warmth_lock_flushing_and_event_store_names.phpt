--TEST--
Laravel 13 (Debian's 13.31 in the newest system), as Laravel's own array store does: enum keys (12.45+) in add() without a TTL, remember(), sear(), flexible() and tagged remember(); rememberWithWarmth() (13.15) says whether the value was warm; Cache::flushLocks() (CanFlushLocks) removes held locks and flush() keeps them; refresh() (12.63); the events name the store (11+)
--EXTENSIONS--
ephpm
mbstring
ctype
--SKIPIF--
<?php
if (!is_file('/usr/share/php/Illuminate/Foundation/Application.php')) die('skip php-laravel-framework is not installed');
require __DIR__ . '/harness/laravel-autoload.php';
if (!method_exists(Illuminate\Cache\Repository::class, 'rememberWithWarmth')) die('skip Laravel before 13.15 (the other rows run in the test of every release)');
--INI--
ephpm.store_name=phpt_laravel_13
ephpm.shm_size=8M
--FILE--
<?php
require __DIR__ . '/harness/laravel.inc';

use Illuminate\Cache\Events\CacheHit;
use Illuminate\Support\Facades\Cache;

enum Report: string { case Daily = 'daily'; }
enum Period { case Weekly; case Monthly; }

$app = laravel_app(['ephpm' => ['driver' => 'ephpm'], 'array' => ['driver' => 'array']]);
(new Ephpm\Kv())->clear();
$hits = [];
$app['events']->listen(CacheHit::class, function (CacheHit $e) use (&$hits) { $hits[] = $e->storeName; });

foreach (['ephpm', 'array'] as $name) {
    $c = Cache::store($name);
    $row = [
        'add(enum) without a TTL' => $c->add(Report::Daily, 'first'),
        'again' => $c->add(Report::Daily, 'second'),
        'get(enum)' => $c->get(Report::Daily),
        'get(its value)' => $c->get('daily'),
        'remember(enum)' => $c->remember(Period::Weekly, 60, fn () => 'weekly'),
        'sear(enum)' => $c->sear(Report::Daily, fn () => 'never'),
        'flexible(enum)' => $c->flexible(Period::Monthly, [30, 60], fn () => 'fresh'),
        'tagged remember(enum)' => $c->tags(['t'])->remember(Report::Daily, 60, fn () => 'tagged'),
        'rememberWithWarmth cold' => $c->rememberWithWarmth('warm', 60, fn () => 'made'),
        'rememberWithWarmth warm' => $c->rememberWithWarmth('warm', 60, fn () => 'again'),
        'supportsFlushingLocks' => $c->supportsFlushingLocks(),
    ];
    $lock = $c->lock('held', 60);
    $lock->get();
    $c->flush();
    $row['another owner after flush()'] = $c->lock('held', 60)->get();
    $row['flushLocks()'] = $c->flushLocks();
    $row['another owner after flushLocks()'] = $c->lock('held', 60)->get();
    $row['the first owner refresh()'] = $lock->refresh();
    $row['its release()'] = $lock->release();
    echo "$name: ", json_encode($row), "\n";
}
echo 'the events name the store: ', json_encode(array_values(array_unique($hits))), "\n";
--EXPECT--
ephpm: {"add(enum) without a TTL":true,"again":false,"get(enum)":"first","get(its value)":"first","remember(enum)":"weekly","sear(enum)":"first","flexible(enum)":"fresh","tagged remember(enum)":"tagged","rememberWithWarmth cold":["made",false],"rememberWithWarmth warm":["made",true],"supportsFlushingLocks":true,"another owner after flush()":false,"flushLocks()":true,"another owner after flushLocks()":true,"the first owner refresh()":false,"its release()":false}
array: {"add(enum) without a TTL":true,"again":false,"get(enum)":"first","get(its value)":"first","remember(enum)":"weekly","sear(enum)":"first","flexible(enum)":"fresh","tagged remember(enum)":"tagged","rememberWithWarmth cold":["made",false],"rememberWithWarmth warm":["made",true],"supportsFlushingLocks":true,"another owner after flush()":false,"flushLocks()":true,"another owner after flushLocks()":true,"the first owner refresh()":false,"its release()":false}
the events name the store: ["ephpm","array"]
