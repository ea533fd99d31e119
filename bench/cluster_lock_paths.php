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
 *   before the failure detector gives up on it): the µs per cycle and per `increment`
 *   of a value key of the same owner and replica, 50 each, right after the stop.
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
    'default (replica and the other host awaited)' => [],
    '--no-push (the replica awaited)' => ['--no-push'],
    '--replication-factor 1 (the other hosts awaited)' => ['--replication-factor', '1'],
    'both (no copy: the hop and the decision)' => ['--replication-factor', '1', '--no-push'],
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

$c = new TestCluster(3, 'stall');
$kv = new Ephpm\Kv($c->dsn(1));
$memo = new Ephpm\MemoLock($kv);
$lock = key_on('lock', $ids, ['node-1', 'node-2']);
$counter = key_on('ctr', $ids, ['node-1', 'node-2']);
$memo->acquire($lock)->release();
$kv->increment($counter);
$node3 = (int) trim((string) shell_exec("pgrep -f -- '--node-id node-3'"));
posix_kill($node3, SIGSTOP);
$t = hrtime(true);
for ($i = 0; $i < 50; $i++) { $memo->acquire($lock)->release(); }
$cycle = (hrtime(true) - $t) / 50 / 1e3;
$t = hrtime(true);
for ($i = 0; $i < 50; $i++) { $kv->increment($counter); }
$incr = (hrtime(true) - $t) / 50 / 1e3;
posix_kill($node3, SIGCONT);
printf("\n| %-52s | %9s |\n", 'node 3 stopped (owner node 1, replica node 2)', 'µs/op');
printf("|%s|%s|\n", str_repeat('-', 54), str_repeat('-', 11));
printf("| %-52s | %9.1f |\n", 'lock cycle', $cycle);
printf("| %-52s | %9.1f |\n", 'increment of a value key', $incr);
