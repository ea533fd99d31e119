<?php
/**
 * ephpm on redis-cluster:// against phpredis' RedisCluster (Debian's php-redis), on the
 * same Redis Cluster (three masters with a replica each, loopback ports, started here
 * and stopped by pid), in the same run.
 *
 *   php -n -d extension=igbinary -d extension=redis -d extension=./target/ephpm.so \
 *       bench/redis_cluster.php [reps=7] [iterations=20000]
 *
 * Each op runs `iterations` times, `reps` times, interleaved between the two clients;
 * the table shows the median µs/op and the ratio ephpm/phpredis (< 1.0: ephpm is faster).
 * - GET / SET 100 B: Ephpm\Kv::get/set against RedisCluster::get/set.
 * - lock cycle: Ephpm\MemoLock::acquire() + Lock::release() (one script each: SET NX PX
 *   with the fencing number; compare-and-delete with the PUBLISH for waiters) against
 *   the usual phpredis lock: SET NX PX with a random token, then EVALSHA of a
 *   compare-and-delete.
 */
$opt = ['reps' => 7, 'iterations' => 20000];
foreach (array_slice($argv, 1) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = (int) $v;
}
if (!class_exists('RedisCluster')) {
    fwrite(STDERR, "needs phpredis: -d extension=igbinary -d extension=redis\n");
    exit(2);
}

/** Starts the cluster's six nodes in `$dir`; returns their "127.0.0.1:PORT" seeds. */
function start_cluster(string $dir): array
{
    $seeds = [];
    for ($i = 1; $i <= 6; $i++) {
        $port = 20000 + random_int(0, 19999);
        @mkdir("$dir/n$i");
        exec(sprintf('redis-server --bind 127.0.0.1 --port %d --cluster-enabled yes '
            . '--cluster-node-timeout 1000 --cluster-require-full-coverage no --save "" '
            . '--appendonly no --dir %s --daemonize yes --pidfile %s', $port,
            escapeshellarg("$dir/n$i"), escapeshellarg("$dir/n$i.pid")));
        $seeds[] = "127.0.0.1:$port";
    }
    foreach ($seeds as $s) {
        for ($t = 0; $t < 100 && !@fsockopen('127.0.0.1', (int) explode(':', $s)[1]); $t++) {
            usleep(50000);
        }
    }
    exec('redis-cli --cluster create ' . implode(' ', $seeds) . ' --cluster-replicas 1 --cluster-yes >/dev/null', $out, $rc);
    if ($rc !== 0) {
        fwrite(STDERR, "redis-cli --cluster create failed\n");
        exit(1);
    }
    foreach ($seeds as $s) {
        [, $port] = explode(':', $s);
        for ($t = 0; $t < 200; $t++) {
            if (str_contains((string) shell_exec("redis-cli -p $port cluster info"), 'cluster_state:ok')) {
                break;
            }
            usleep(50000);
        }
    }
    return $seeds;
}

$dir = sys_get_temp_dir() . '/ephpm-bench-cluster-' . getmypid();
mkdir($dir);
register_shutdown_function(function () use ($dir) {
    foreach (glob("$dir/n*.pid") as $pid) {
        exec("kill -9 " . (int) file_get_contents($pid) . " 2>/dev/null");
    }
    exec('rm -rf ' . escapeshellarg($dir));
});
$seeds = start_cluster($dir);

$n = $opt['iterations'];
$kv = new Ephpm\Kv('redis-cluster://' . implode(',', $seeds));
$memo = new Ephpm\MemoLock($kv);
$r = new RedisCluster(null, $seeds);
$v100 = str_repeat('v', 100);
$kv->set('e:hit', $v100);
$r->set('p:hit', $v100);
$cad = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end';
$cadSha = sha1($cad);

$ops = [
    'GET 100 B' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->get('e:hit'); } },
        function () use ($r, $n) { for ($i = 0; $i < $n; $i++) { $r->get('p:hit'); } },
    ],
    'SET 100 B' => [
        function () use ($kv, $n, $v100) { for ($i = 0; $i < $n; $i++) { $kv->set('e:set', $v100); } },
        function () use ($r, $n, $v100) { for ($i = 0; $i < $n; $i++) { $r->set('p:set', $v100); } },
    ],
    'lock cycle (acquire + release by token)' => [
        function () use ($memo, $n) { for ($i = 0; $i < $n; $i++) { $memo->acquire('e:lock')->release(); } },
        function () use ($r, $n, $cad, $cadSha) {
            for ($i = 0; $i < $n; $i++) {
                $token = bin2hex(random_bytes(16));
                $r->set('p:lock', $token, ['nx', 'px' => 30000]);
                if ($r->evalSha($cadSha, ['p:lock', $token], 1) === false) {
                    $r->eval($cad, ['p:lock', $token], 1); // loads it on that master
                }
            }
        },
    ],
];

function median(array $xs): float { sort($xs); return $xs[intdiv(count($xs), 2)]; }

printf("redis cluster: 3 masters + 3 replicas on loopback TCP; %d iterations x %d reps; PHP %s, ephpm %s, phpredis %s\n\n",
    $n, $opt['reps'], PHP_VERSION, phpversion('ephpm'), phpversion('redis'));
printf("| %-40s | %14s | %14s | %8s |\n", 'op', 'ephpm µs/op', 'phpredis µs/op', 'ratio');
printf("|%s|%s|%s|%s|\n", str_repeat('-', 42), str_repeat('-', 16), str_repeat('-', 16), str_repeat('-', 10));
foreach ($ops as $name => [$ephpm, $phpredis]) {
    $e = $p = [];
    $ephpm(); $phpredis(); // warm up: connections, slot maps, scripts
    for ($rep = 0; $rep < $opt['reps']; $rep++) {
        $t = hrtime(true); $ephpm(); $e[] = (hrtime(true) - $t) / $n / 1e3;
        $t = hrtime(true); $phpredis(); $p[] = (hrtime(true) - $t) / $n / 1e3;
    }
    printf("| %-40s | %14.1f | %14.1f | %8.2f |\n", $name, median($e), median($p), median($e) / median($p));
}
