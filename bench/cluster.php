<?php
/**
 * The gossip cluster: convergence, owner-routed lock cycles, and how many keys move when
 * a node joins or leaves. Every cluster is the benchmark's own (ephpm-node processes on
 * 127.0.0.1-4, php-tests/harness/cluster.inc), and so is the Redis anchor.
 *
 *   php -n -d extension=./target/ephpm.so -d extension=posix -d extension=igbinary \
 *       -d extension=redis bench/cluster.php [samples=60] [cycles=5000] [reps=5]
 *
 * - Convergence: a write through node 1, node 3 polled every millisecond (its own
 *   segment: what PHP there reads) until it shows the write; `samples` writes with a
 *   random 0.1-1.1 s gap (a fixed gap phase-locks to the gossip tick). With
 *   push_writes (the default) the write reaches every host before it returns; with
 *   --no-push node 3 learns it by gossip alone, at gossip intervals of 1 s and 100 ms.
 *   The key is one whose owner and replica are nodes 1 and 2.
 * - Lock cycle: Ephpm\MemoLock::acquire() + Lock::release() through node 1, on a lock
 *   node 1 owns and on one node 2 owns (one data-plane round trip more), each with the
 *   replicas' copies awaited (the default) and with `?copies=async`, against phpredis'
 *   SET NX PX + EVALSHA compare-and-delete on a local redis-server's unix socket: the
 *   median µs per cycle of `reps` runs of `cycles`, once the nodes have caught up (31 s
 *   after the cluster formed; before, every decision also asks the previous placement).
 * - Remap: of 100,000 keys, the share whose owner changes when a 4th node joins 3, and
 *   when one of 4 leaves (rendezvous hashing; hash % n: 0.75 and 0.75), and what the
 *   real nodes handed over when a 4th joined a cluster holding 2,000 keys.
 */
require __DIR__ . '/../php-tests/harness/cluster.inc';
require __DIR__ . '/../php-tests/harness/redis.inc';

$opt = ['samples' => 60, 'cycles' => 5000, 'reps' => 5];
foreach (array_slice($argv, 1) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = (int) $v;
}

function pct(array $xs, float $p): float { sort($xs); return $xs[(int) min(count($xs) - 1, floor($p * count($xs)))]; }

/** A key whose owner and replica are nodes 1 and 2, so node 3 only hears of it. */
function key_away_from_node_3(): string {
    for ($i = 0; ; $i++) {
        $p = TestCluster::placement("conv:$i", ['node-1', 'node-2', 'node-3']);
        if (!in_array('node-3', $p, true)) {
            return "conv:$i";
        }
    }
}

function convergence(array $extra, int $samples): array {
    $c = new TestCluster(3, 'conv', $extra);
    $w = new Ephpm\Kv($c->dsn(1));
    $r = new Ephpm\Kv($c->dsn(3));
    $key = key_away_from_node_3();
    $w->set($key, -1);
    $until = microtime(true) + 10;
    while ($r->get($key) !== -1 && microtime(true) < $until) { usleep(1000); }
    $lat = [];
    for ($i = 0; $i < $samples; $i++) {
        usleep(random_int(100_000, 1_100_000));
        $t = hrtime(true);
        $w->set($key, $i);
        while ($r->get($key) !== $i) {
            if (hrtime(true) - $t > 10e9) { throw new RuntimeException("sample $i never arrived"); }
            usleep(1000);
        }
        $lat[] = (hrtime(true) - $t) / 1e6;
    }
    return $lat;
}

printf("cluster: PHP %s, ephpm %s, 3 nodes on 127.0.0.1-3\n\n", PHP_VERSION, phpversion('ephpm'));
printf("| %-44s | %9s | %9s | %9s |\n", 'convergence (write on node 1, seen on node 3)', 'p50 ms', 'p99 ms', 'max ms');
printf("|%s|%s|%s|%s|\n", str_repeat('-', 46), str_repeat('-', 11), str_repeat('-', 11), str_repeat('-', 11));
foreach ([
    'push_writes=1 (default), gossip 1 s' => ['--gossip-interval-ms', '1000'],
    'gossip only (--no-push), gossip 1 s' => ['--gossip-interval-ms', '1000', '--no-push'],
    'gossip only (--no-push), gossip 100 ms' => ['--gossip-interval-ms', '100', '--no-push'],
] as $name => $extra) {
    $lat = convergence($extra, $opt['samples']);
    printf("| %-44s | %9.1f | %9.1f | %9.1f |\n", $name, pct($lat, 0.5), pct($lat, 0.99), max($lat));
}

// Lock cycles.
$c = new TestCluster(3, 'lock');
// For 30 s after it found its peers (HANDOFF_WINDOW), a node catches up: as an owner it
// asks the previous placement for the key before every decision (one more data-plane
// round trip). Measured after that, as a fleet runs.
sleep(31);
$memo = new Ephpm\MemoLock(new Ephpm\Kv($c->dsn(1)));
$async = new Ephpm\MemoLock(new Ephpm\Kv($c->dsn(1, '?copies=async')));
$ids = ['node-1', 'node-2', 'node-3'];
$find = function (string $owner) use ($ids): string {
    for ($i = 0; ; $i++) {
        if (TestCluster::placement("lock:$i", $ids, 1) === [$owner]) { return "lock:$i"; }
    }
};
$local = $find('node-1');
$remote = $find('node-2');
$server = new TestRedis();
$redis = new Redis();
$redis->connect($server->socket);
$cadSha = $redis->script('load', 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end');
$n = $opt['cycles'];
$runs = [
    'through node 1, owner node 1' => function () use ($memo, $local, $n) { for ($i = 0; $i < $n; $i++) { $memo->acquire($local)->release(); } },
    'through node 1, owner node 2' => function () use ($memo, $remote, $n) { for ($i = 0; $i < $n; $i++) { $memo->acquire($remote)->release(); } },
    'through node 1, owner node 1, copies=async' => function () use ($async, $local, $n) { for ($i = 0; $i < $n; $i++) { $async->acquire($local)->release(); } },
    'through node 1, owner node 2, copies=async' => function () use ($async, $remote, $n) { for ($i = 0; $i < $n; $i++) { $async->acquire($remote)->release(); } },
    'phpredis SET NX PX + EVALSHA (anchor)' => function () use ($redis, $cadSha, $n) {
        for ($i = 0; $i < $n; $i++) {
            $token = bin2hex(random_bytes(16));
            $redis->set('p:lock', $token, ['nx', 'px' => 30000]);
            $redis->evalSha($cadSha, ['p:lock', $token], 1);
        }
    },
];
$us = [];
foreach ($runs as $name => $run) { $run(); }
for ($rep = 0; $rep < $opt['reps']; $rep++) {
    foreach ($runs as $name => $run) {
        $t = hrtime(true); $run(); $us[$name][] = (hrtime(true) - $t) / $n / 1e3;
    }
}
$anchor = pct($us['phpredis SET NX PX + EVALSHA (anchor)'], 0.5);
printf("\n| %-44s | %9s | %15s |\n", 'lock cycle (acquire + release)', 'µs/cycle', 'ratio to Redis');
printf("|%s|%s|%s|\n", str_repeat('-', 46), str_repeat('-', 11), str_repeat('-', 17));
foreach ($us as $name => $xs) {
    printf("| %-44s | %9.1f | %15.2f |\n", $name, pct($xs, 0.5), pct($xs, 0.5) / $anchor);
}
unset($memo, $async, $c);

// Remap.
$three = ['node-1', 'node-2', 'node-3'];
$four = [...$three, 'node-4'];
$moved = ['join' => 0, 'leave' => 0];
for ($i = 0; $i < 100_000; $i++) {
    $o4 = TestCluster::placement("key:$i", $four, 1)[0];
    $moved['join'] += TestCluster::placement("key:$i", $three, 1)[0] !== $o4;
    $moved['leave'] += TestCluster::placement("key:$i", ['node-1', 'node-3', 'node-4'], 1)[0] !== $o4;
}
$c = new TestCluster(3, 'remap');
$kv = new Ephpm\Kv($c->dsn(1));
for ($i = 0; $i < 2000; $i++) { $kv->set("key:$i", $i); }
$c->start(4);
$c->waitForMembers(4);
sleep(1);
$owned = 0;
for ($i = 0; $i < 2000; $i++) { $owned += TestCluster::placement("key:$i", $four, 1)[0] === 'node-4'; }
preg_match_all('/handed (\d+) entries/', $c->logs(), $m);
printf("\n| %-44s | %9s | %9s |\n", 'remap (owner changes)', 'ephpm', 'hash % n');
printf("|%s|%s|%s|\n", str_repeat('-', 46), str_repeat('-', 11), str_repeat('-', 11));
printf("| %-44s | %9.4f | %9.4f |\n", '3 -> 4 nodes, 100,000 keys', $moved['join'] / 1e5, 0.75);
printf("| %-44s | %9.4f | %9.4f |\n", '4 -> 3 nodes (node-2 leaves), 100,000 keys', $moved['leave'] / 1e5, 0.75);
printf("| %-44s | %9s | %9s |\n", 'real join: keys now owned by node 4', sprintf('%d/2000', $owned), '');
printf("| %-44s | %9s | %9s |\n", 'real join: entries handed over (all nodes)', (string) array_sum($m[1]), '');
