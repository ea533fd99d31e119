<?php
/**
 * The Laravel integration against Laravel's own drivers, on the test application of
 * php-tests/laravel-app (a real Illuminate\Foundation\Application, Debian's Laravel 8.83).
 *
 *   php -n -d extension=$PWD/target/ephpm.so -d ephpm.store_name=bench_laravel \
 *       -d extension=mbstring -d extension=ctype -d extension=igbinary -d extension=redis \
 *       bench/laravel.php stampede [workers=12] [originMs=300] [runs=5] [modes=ephpm,ephpm-nolock,redis-block]
 *   php -n -d extension=$PWD/target/ephpm.so -d ephpm.store_name=bench_laravel -d ephpm.shm_size=64M \
 *       -d extension=mbstring -d extension=ctype -d extension=apcu -d apc.enable_cli=1 \
 *       bench/laravel.php ops [reps=7] [iterations=100000]
 *
 * stampede: `workers` forked processes, each with its own booted application, released
 * on a wall-clock barrier at one cold key whose origin takes `originMs`; origin calls
 * and the waiters' lag = a waiter's return − the moment the origin's value was written
 * (Laravel's KeyWritten event, in the process that computed it). Modes:
 *   ephpm        Cache::store('ephpm')->remember()            (stampede protection)
 *   ephpm-nolock Cache::store('ephpm_plain')->remember()      ('stampede' => false)
 *   redis-block  Cache::store('redis')->lock($key)->block(10, fn () => remember())
 *                Laravel's own idiom on its phpredis driver, on a redis-server this
 *                benchmark starts on a unix socket (and stops by pid)
 * Workers stay alive until all have reported, so no exit is counted in another's lag.
 *
 * ops: Cache::get()/Cache::put() through Laravel's Repository on the `ephpm` store (the
 * host's shm store) against the `apc` store (APCu), interleaved in one process; median
 * ns/op of the reps and the ratio ephpm/APCu (< 1.0: ephpm is faster).
 */

use Illuminate\Cache\Events\KeyWritten;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Event;

$opt = ['workers' => 12, 'originMs' => 300, 'runs' => 5, 'modes' => 'ephpm,ephpm-nolock,redis-block', 'reps' => 7, 'iterations' => 100000];
$what = $argv[1] ?? '';
foreach (array_slice($argv, 2) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = $v;
}
if (!in_array($what, ['stampede', 'ops'], true)) {
    fwrite(STDERR, "usage: bench/laravel.php stampede|ops [name=value ...]\n");
    exit(2);
}

// The application's base folder (storage/, bootstrap/cache/, links to config/ and
// routes/), in a temporary folder of its own.
$base = sys_get_temp_dir() . '/ephpm-bench-laravel-' . getmypid();
$app = __DIR__ . '/../php-tests/laravel-app';
mkdir("$base/storage/logs", 0700, true);
mkdir("$base/bootstrap/cache", 0700, true);
symlink(realpath("$app/config"), "$base/config");
symlink(realpath("$app/routes"), "$base/routes");
putenv("LARAVEL_BASE=$base");
$parent = getmypid();
register_shutdown_function(static function () use ($base, $parent) {
    if (getmypid() === $parent) {
        exec('rm -rf ' . escapeshellarg($base));
    }
});

function boot(): Illuminate\Foundation\Application
{
    $app = require __DIR__ . '/../php-tests/laravel-app/bootstrap/app.php';
    $app->make(Illuminate\Contracts\Http\Kernel::class)->bootstrap();
    return $app;
}

function percentile(array $xs, float $p): float
{
    if (!$xs) {
        return NAN;
    }
    sort($xs);
    return $xs[(int) min(count($xs) - 1, floor($p * count($xs)))];
}

require_once '/usr/share/php/Illuminate/autoload.php';
printf("laravel %s: PHP %s, Laravel %s, ephpm %s\n", $what, PHP_VERSION, Illuminate\Foundation\Application::VERSION, phpversion('ephpm'));

if ($what === 'stampede') {
    require __DIR__ . '/../php-tests/harness/redis.inc';
    $modes = explode(',', $opt['modes']);
    $redis = in_array('redis-block', $modes, true) ? new TestRedis() : null;
    if ($redis !== null) {
        putenv("REDIS_SOCKET={$redis->socket}");
    }
    $workers = (int) $opt['workers'];
    $originUs = (int) $opt['originMs'] * 1000;
    $meta = new Ephpm\Kv(null, 'bench_laravel_meta:');
    printf("%d workers, origin %d ms, %d runs\n", $workers, $opt['originMs'], $opt['runs']);
    printf("| %-12s | %12s | %8s | %10s | %10s | %13s |\n", 'mode', 'origin calls', 'waiters', 'lag p50 ms', 'lag max ms', 'all done, ms');
    printf("|%s|%s|%s|%s|%s|%s|\n", str_repeat('-', 14), str_repeat('-', 14), str_repeat('-', 10), str_repeat('-', 12), str_repeat('-', 12), str_repeat('-', 15));
    foreach ($modes as $mode) {
        $origins = $lags = $done = [];
        for ($run = 0; $run < (int) $opt['runs']; $run++) {
            $meta->clear();
            $key = "cold:$mode:$run:" . bin2hex(random_bytes(4));
            $t0 = hrtime(true) + 1_500_000_000; // every worker booted by then
            $kids = [];
            for ($w = 0; $w < $workers; $w++) {
                if (($pid = pcntl_fork()) === 0) {
                    boot();
                    $m = new Ephpm\Kv(null, 'bench_laravel_meta:');
                    Event::listen(KeyWritten::class, function (KeyWritten $e) use ($m, $key) {
                        if ($e->key === $key) {
                            $m->set('put', hrtime(true));
                        }
                    });
                    $computed = false;
                    $origin = function () use ($m, $originUs, &$computed) {
                        $computed = true;
                        $m->increment('origins');
                        usleep($originUs);
                        return 'computed';
                    };
                    while (hrtime(true) < $t0 - 2_000_000) {
                        usleep(500);
                    }
                    while (hrtime(true) < $t0) {
                    }
                    $value = match ($mode) {
                        'ephpm' => Cache::store('ephpm')->remember($key, 60, $origin),
                        'ephpm-nolock' => Cache::store('ephpm_plain')->remember($key, 60, $origin),
                        'redis-block' => Cache::store('redis')->lock("lock:$key", 10)
                            ->block(10, fn () => Cache::store('redis')->remember($key, 60, $origin)),
                    };
                    $m->set("ret:$w", [hrtime(true), $computed]);
                    $m->increment('reported');
                    $until = microtime(true) + 30;
                    while ($m->get('reported') < $workers && microtime(true) < $until) {
                        usleep(1000);
                    }
                    exit($value === 'computed' ? 0 : 1);
                }
                $kids[$w] = $pid;
            }
            foreach ($kids as $pid) {
                pcntl_waitpid($pid, $status);
            }
            $calls = (int) $meta->get('origins');
            $origins[] = $calls;
            $put = $meta->get('put');
            $last = 0;
            foreach (array_keys($kids) as $w) {
                [$ret, $computed] = $meta->get("ret:$w");
                $last = max($last, $ret);
                // A waiter's lag, when one process computed and wrote the value.
                if ($calls === 1 && $put !== null && !$computed) {
                    $lags[] = ($ret - $put) / 1e6;
                }
            }
            $done[] = ($last - $t0) / 1e6;
        }
        printf("| %-12s | %12s | %8d | %10s | %10s | %13.1f |\n", $mode, implode('/', $origins), count($lags),
            $lags ? sprintf('%.2f', percentile($lags, 0.5)) : '-', $lags ? sprintf('%.2f', max($lags)) : '-', percentile($done, 0.5));
    }
    $redis?->kill();
    exit(0);
}

// ops
if (!extension_loaded('apcu') || !ini_get('apc.enable_cli')) {
    fwrite(STDERR, "ops needs apcu with apc.enable_cli=1\n");
    exit(2);
}
boot();
$n = (int) $opt['iterations'];
$stores = ['ephpm' => Cache::store('ephpm'), 'apc' => Cache::store('apc')];
$v100 = str_repeat('v', 100);
$arr = ['id' => 42, 'name' => 'ada', 'roles' => ['admin', 'dev'], 'score' => 1.5];
foreach ($stores as $c) {
    $c->put('hit100', $v100, 3600);
    $c->put('hitarr', $arr, 3600);
}
$ops = [
    'Cache::get, hit, 100 B string' => fn ($c) => $c->get('hit100'),
    'Cache::get, hit, small array' => fn ($c) => $c->get('hitarr'),
    'Cache::get, miss' => fn ($c) => $c->get('missing'),
    'Cache::put, 100 B string' => fn ($c) => $c->put('put100', $v100, 3600),
    'Cache::put, small array' => fn ($c) => $c->put('putarr', $arr, 3600),
];
printf("%d iterations per rep, %d reps, interleaved; median ns/op\n", $n, $opt['reps']);
printf("| %-30s | %10s | %10s | %15s |\n", 'op', 'ephpm ns', 'APCu ns', 'ratio ephpm/APCu');
printf("|%s|%s|%s|%s|\n", str_repeat('-', 32), str_repeat('-', 12), str_repeat('-', 12), str_repeat('-', 17));
foreach ($ops as $name => $op) {
    $times = ['ephpm' => [], 'apc' => []];
    for ($r = 0; $r < (int) $opt['reps']; $r++) {
        foreach ($stores as $s => $c) {
            $t = hrtime(true);
            for ($i = 0; $i < $n; $i++) {
                $op($c);
            }
            $times[$s][] = (hrtime(true) - $t) / $n;
        }
    }
    $e = percentile($times['ephpm'], 0.5);
    $a = percentile($times['apc'], 0.5);
    printf("| %-30s | %10.1f | %10.1f | %15.2f |\n", $name, $e, $a, $e / $a);
}
