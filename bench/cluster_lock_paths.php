<?php
/**
 * Where a `cluster://` lock cycle's time goes, and what a stalled host does to it.
 * Every cluster is the benchmark's own (ephpm-node processes on 127.0.0.1-3,
 * php-tests/harness/cluster.inc).
 *
 *   php -n -d extension=./target/ephpm.so -d extension=posix bench/cluster_lock_paths.php [cycles=2000] [reps=5]
 *   taskset -c 0 php … (everything on one CPU: the sum of the work, not the wake-ups)
 *
 * - Paths: Ephpm\MemoLock::acquire() + Lock::release() through node 1 on a lock node 1
 *   owns, the median µs per cycle of `reps` runs of `cycles`, with each node setting:
 *   the default (replication factor 2, every write copied to every host before it
 *   returns), --no-push (copied to the replica only), --replication-factor 1 (copied to
 *   the other hosts only), and both (no copy at all: the PHP-to-node hop and the
 *   decision alone).
 * - Stalled host: the default setting, a lock owned by node 1 whose replica is node 2,
 *   and node 3 (neither) stopped with SIGSTOP (a host paused, or its network gone,
 *   before the failure detector gives up on it): the p50 and max µs of 20 lock cycles
 *   and 20 `increment`s of a value key of the same owner and replica, alternated.
 */
require __DIR__ . '/../php-tests/harness/cluster.inc';

$opt = ['cycles' => 2000, 'reps' => 5];
foreach (array_slice($argv, 1) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = (int) $v;
}
$ids = ['node-1', 'node-2', 'node-3'];
/** A key named "$tag:N" placed on exactly `$placement` (owner first). */
function key_on(string $tag, array $ids, array $placement): string {
    for ($i = 0; ; $i++) {
        if (TestCluster::placement("$tag:$i", $ids, count($placement)) === $placement) {
            return "$tag:$i";
        }
    }
}
function median(array $xs): float { sort($xs); return $xs[intdiv(count($xs), 2)]; }

printf("cluster lock paths: PHP %s, ephpm %s, 3 nodes on 127.0.0.1-3, %d cycles × %d reps\n\n",
    PHP_VERSION, phpversion('ephpm'), $opt['cycles'], $opt['reps']);
printf("| %-52s | %9s |\n", 'lock cycle through node 1, owner node 1', 'µs/cycle');
printf("|%s|%s|\n", str_repeat('-', 54), str_repeat('-', 11));
foreach ([
    'replication factor 2, pushes (the default)' => [],
    'replication factor 2, --no-push' => ['--no-push'],
    'replication factor 1, pushes' => ['--replication-factor', '1'],
    'replication factor 1, --no-push (no copy at all)' => ['--replication-factor', '1', '--no-push'],
] as $name => $extra) {
    $c = new TestCluster(3, 'paths', $extra);
    $memo = new Ephpm\MemoLock(new Ephpm\Kv($c->dsn(1)));
    $lock = key_on('lock', $ids, ['node-1']);
    $us = [];
    for ($rep = 0; $rep <= $opt['reps']; $rep++) {
        $t = hrtime(true);
        for ($i = 0; $i < $opt['cycles']; $i++) { $memo->acquire($lock)->release(); }
        if ($rep > 0) { $us[] = (hrtime(true) - $t) / $opt['cycles'] / 1e3; }
    }
    printf("| %-52s | %9.1f |\n", $name, median($us));
    unset($memo, $c);
}

// One cluster, past the 30 s after its nodes joined in which an owner also asks the
// previous placement (node 3 among it) before deciding; then node 3 stops, and lock
// cycles and increments alternate, 20 of each, well before the failure detector gives
// up on node 3 (a second or two), as on a host that is only paused.
$c = new TestCluster(3, 'stall');
$kv = new Ephpm\Kv($c->dsn(1));
$memo = new Ephpm\MemoLock($kv);
$lock = key_on('lock', $ids, ['node-1', 'node-2']);
$counter = key_on('ctr', $ids, ['node-1', 'node-2']);
$ops = [
    'lock cycle' => function () use ($memo, $lock) { $memo->acquire($lock)->release(); },
    'increment of a value key' => function () use ($kv, $counter) { $kv->increment($counter); },
];
sleep(31);
foreach ($ops as $op) { $op(); }
$node3 = (int) trim((string) shell_exec("pgrep -f -- '--store {$c->name}-3'"));
posix_kill($node3, SIGSTOP);
$us = [];
for ($i = 0; $i < 20; $i++) {
    foreach ($ops as $what => $op) {
        $t = hrtime(true);
        $op();
        $us[$what][] = (hrtime(true) - $t) / 1e3;
    }
}
posix_kill($node3, SIGCONT);
printf("\n| %-52s | %9s | %9s |\n", 'node 3 stopped (owner node 1, replica node 2)', 'p50 µs', 'max µs');
printf("|%s|%s|%s|\n", str_repeat('-', 54), str_repeat('-', 11), str_repeat('-', 11));
foreach ($us as $what => $xs) {
    printf("| %-52s | %9.1f | %9.1f |\n", $what, median($xs), max($xs));
}
