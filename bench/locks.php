<?php
// symfony/lock acquire/release cycles on EphpmStore against FlockStore and RedisStore
// (phpredis), and the read-lock cycle against RedisStore's, in one run (issue #16).
//   php -n -d extension=target/ephpm.so -d extension=igbinary -d extension=redis -d ephpm.store_name=bench_locks \
//       bench/locks.php [socket=/path/redis.sock] [n=20000]
// RESULTS.md has the figures. One process, one lock name, uncontended: what every
// lock()/unlock() pair of an application pays.
require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require __DIR__ . '/../php/autoload.php';

use Ephpm\Symfony\Lock\EphpmStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\FlockStore;
use Symfony\Component\Lock\Store\RedisStore;

parse_str(implode('&', array_slice($argv, 1)), $opt);
$n = (int) ($opt['n'] ?? 20000);
$stores = ['ephpm' => new EphpmStore(null, 30), 'flock' => new FlockStore(sys_get_temp_dir())];
if (isset($opt['socket'])) {
    $redis = new Redis();
    $redis->connect($opt['socket']);
    $stores['redis'] = new RedisStore($redis, 30);
    // ephpm's store on the same Redis: what a fleet compares, one network hop each.
    $stores['ephpm-redis'] = new EphpmStore(new Ephpm\Kv('unix://' . $opt['socket']), 30);
}

/** Microseconds per acquire+release cycle (best of 3 runs of $n). */
function cycle(LockFactory $f, int $n, bool $read): float
{
    $best = INF;
    for ($run = 0; $run < 3; $run++) {
        $t = hrtime(true);
        for ($i = 0; $i < $n; $i++) {
            $lock = $f->createLock('bench-lock', 30, false);
            $read ? $lock->acquireRead() : $lock->acquire();
            $lock->release();
        }
        $best = min($best, (hrtime(true) - $t) / 1e3 / $n);
    }
    return $best;
}

$results = [];
foreach (['write' => false, 'read' => true] as $kind => $read) {
    foreach ($stores as $name => $store) {
        if ($read && $name === 'flock') {
            continue; // FlockStore has no shared locks in 5.4.
        }
        $us = cycle(new LockFactory($store), $n, $read);
        $results[$kind][$name] = $us;
        printf("%-5s %-6s %8.2f us/cycle\n", $kind, $name, $us);
    }
}
foreach ($results as $kind => $r) {
    foreach ($r as $name => $us) {
        if ($name === 'flock') {
            printf("%s: ephpm (shm) is %.1fx faster than flock\n", $kind, $us / $r['ephpm']);
        } elseif ($name === 'redis') {
            printf("%s: ephpm (shm) is %.1fx faster than RedisStore; ephpm on the same Redis takes %.2fx RedisStore's time\n",
                $kind, $us / $r['ephpm'], $r['ephpm-redis'] / $us);
        }
    }
}
