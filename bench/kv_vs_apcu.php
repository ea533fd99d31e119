<?php
/**
 * ephpm's Ephpm\Kv against APCu, in one process, in the same run.
 *
 *   php -n -d extension=apcu -d apc.enable_cli=1 -d apc.shm_size=256M \
 *       -d extension=./target/ephpm.so -d ephpm.shm_size=256M \
 *       -d ephpm.store_name=bench bench/kv_vs_apcu.php [reps=7] [iterations=200000]
 *
 * Each op runs `iterations` times in a tight loop, `reps` times, interleaved between
 * the two stores; the table shows the median ns/op of the reps, the ratio ephpm/APCu
 * (< 1.0: ephpm is faster) and the p99 latency of 20,000 individually timed calls.
 * "2 procs" forks one writer and one reader that run at once on the same store and
 * reports the aggregate rate.
 */

$reps = (int)($argv[1] ?? 7);
$n = (int)($argv[2] ?? 200000);
if (!extension_loaded('apcu') || !ini_get('apc.enable_cli')) {
    fwrite(STDERR, "needs apcu with apc.enable_cli=1\n");
    exit(2);
}
$kv = new Ephpm\Kv();
$kv->clear();
apcu_clear_cache();
$v100 = str_repeat('v', 100);
$v10k = str_repeat('w', 10240);
$kv->set('hit100', $v100);   apcu_store('hit100', $v100);
$kv->set('hit10k', $v10k);   apcu_store('hit10k', $v10k);
$kv->set('exists', 'x');     apcu_store('exists', 'x');

/** name => [ephpm closure, apcu closure]; each runs $n operations. */
$ops = [
    'get hit 100 B' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->get('hit100'); } },
        function () use ($n) { for ($i = 0; $i < $n; $i++) { apcu_fetch('hit100'); } },
    ],
    'get hit 10 KB' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->get('hit10k'); } },
        function () use ($n) { for ($i = 0; $i < $n; $i++) { apcu_fetch('hit10k'); } },
    ],
    'get hit 100 B: ephpm_kv_get() vs apcu_fetch()' => [
        function () use ($n) { for ($i = 0; $i < $n; $i++) { ephpm_kv_get('hit100'); } },
        function () use ($n) { for ($i = 0; $i < $n; $i++) { apcu_fetch('hit100'); } },
    ],
    'get miss' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->get('absent'); } },
        function () use ($n) { for ($i = 0; $i < $n; $i++) { apcu_fetch('absent'); } },
    ],
    'set 100 B' => [
        function () use ($kv, $n, $v100) { for ($i = 0; $i < $n; $i++) { $kv->set('s100', $v100); } },
        function () use ($n, $v100) { for ($i = 0; $i < $n; $i++) { apcu_store('s100', $v100); } },
    ],
    'set 10 KB' => [
        function () use ($kv, $n, $v10k) { for ($i = 0; $i < $n; $i++) { $kv->set('s10k', $v10k); } },
        function () use ($n, $v10k) { for ($i = 0; $i < $n; $i++) { apcu_store('s10k', $v10k); } },
    ],
    'add on an existing key' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->add('exists', 'y'); } },
        function () use ($n) { for ($i = 0; $i < $n; $i++) { apcu_add('exists', 'y'); } },
    ],
    'lock cycle: add + deleteIfEquals (APCu: delete)' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->add('lock', 'tok', 30); $kv->deleteIfEquals('lock', 'tok'); } },
        function () use ($n) { for ($i = 0; $i < $n; $i++) { apcu_add('lock', 'tok', 30); apcu_delete('lock'); } },
    ],
    'increment' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->increment('ctr'); } },
        function () use ($n) { for ($i = 0; $i < $n; $i++) { apcu_inc('ctr'); } },
    ],
];
apcu_store('ctr', 0);

function run_once(callable $f, int $n): float {
    $t = hrtime(true);
    $f();
    return (hrtime(true) - $t) / $n;
}

function median(array $xs): float {
    sort($xs);
    $c = count($xs);
    return $c % 2 ? $xs[intdiv($c, 2)] : ($xs[$c / 2 - 1] + $xs[$c / 2]) / 2;
}

/** p99 latency in µs of 20,000 individually timed calls of $one. */
function p99(callable $one): float {
    $empty = [];
    $lat = [];
    for ($i = 0; $i < 20000; $i++) {
        $t = hrtime(true); $empty[] = hrtime(true) - $t;
    }
    for ($i = 0; $i < 20000; $i++) {
        $t = hrtime(true); $one(); $lat[] = hrtime(true) - $t;
    }
    sort($lat);
    return max(0, $lat[(int)(0.99 * count($lat))] - median($empty)) / 1000;
}

$single = [
    'get hit 100 B' => [fn() => $kv->get('hit100'), fn() => apcu_fetch('hit100')],
    'set 100 B' => [fn() => $kv->set('s100', $v100), fn() => apcu_store('s100', $v100)],
];

$rows = [];
foreach ($ops as $name => [$e, $a]) {
    $re = $ra = [];
    for ($r = 0; $r < $reps; $r++) {
        $re[] = run_once($e, $n);
        $ra[] = run_once($a, $n);
    }
    $rows[$name] = [median($re), median($ra)];
}

// 200,000 keys present: read a different key on every call, against one key.
$many = 200000;
for ($i = 0; $i < $many; $i++) {
    $kv->set("key:$i", $v100);
    apcu_store("key:$i", $v100);
}
// Read in insertion order (what APCu's figures in research/baselines.md used) and in a
// scattered order (what a real workload does): the first favours one allocator whose
// consecutive entries are adjacent in memory, the second measures the hash tables.
$orders = [
    'in insertion order' => fn($i) => $i % $many,
    'in scattered order' => fn($i) => ($i * 7919) % $many,
];
foreach ($orders as $order => $at) {
    $keys = [];
    for ($i = 0; $i < $n; $i++) {
        $keys[] = 'key:' . $at($i);
    }
    $re = $ra = [];
    for ($r = 0; $r < $reps; $r++) {
        $re[] = run_once(function () use ($kv, $keys) { foreach ($keys as $k) { $kv->get($k); } }, $n);
        $ra[] = run_once(function () use ($keys) { foreach ($keys as $k) { apcu_fetch($k); } }, $n);
    }
    $rows["get, 200,000 keys present, $order"] = [median($re), median($ra)];
}
$one_e = $rows['get hit 100 B'][0];
$one_a = $rows['get hit 100 B'][1];

// Two processes at once: one writes, one reads, on the same store.
function two_procs(string $which, int $n, string $v): float {
    $t0 = hrtime(true) + 200_000_000;
    $pids = [];
    foreach (['w', 'r'] as $role) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $kv = $which === 'ephpm' ? new Ephpm\Kv() : null;
            while (hrtime(true) < $t0) { }
            for ($i = 0; $i < $n; $i++) {
                if ($role === 'w') {
                    $which === 'ephpm' ? $kv->set('shared', $v) : apcu_store('shared', $v);
                } else {
                    $which === 'ephpm' ? $kv->get('shared') : apcu_fetch('shared');
                }
            }
            exit(0);
        }
        $pids[] = $pid;
    }
    foreach ($pids as $p) { pcntl_waitpid($p, $st); }
    return (hrtime(true) - $t0) / (2 * $n); // ns per op, aggregate
}
$re = $ra = [];
for ($r = 0; $r < $reps; $r++) {
    $re[] = two_procs('ephpm', $n, $v100);
    $ra[] = two_procs('apcu', $n, $v100);
}
$rows['2 procs: 1 writer + 1 reader (aggregate)'] = [median($re), median($ra)];

$p99 = [];
foreach ($single as $name => [$e, $a]) {
    $p99[$name] = [p99($e), p99($a)];
}

printf("ephpm %s vs APCu %s, PHP %s; %d reps × %d ops, 100 B / 10 KB string values; %s\n",
    phpversion('ephpm'), phpversion('apcu'), PHP_VERSION, $reps, $n, php_uname('m'));
printf("apc.entries_hint=%s, ephpm.shm_size=%s, apc.shm_size=%s\n\n",
    ini_get('apc.entries_hint'), ini_get('ephpm.shm_size'), ini_get('apc.shm_size'));
printf("| %-48s | %10s | %10s | %6s | %10s | %10s |\n", 'op', 'ephpm ns', 'APCu ns', 'ratio', 'ephpm p99', 'APCu p99');
printf("|%s|%s|%s|%s|%s|%s|\n", str_repeat('-', 50), str_repeat('-', 12), str_repeat('-', 12), str_repeat('-', 8), str_repeat('-', 12), str_repeat('-', 12));
foreach ($rows as $name => [$e, $a]) {
    [$pe, $pa] = $p99[$name] ?? [null, null];
    printf("| %-48s | %10.1f | %10.1f | %6.2f | %10s | %10s |\n", $name, $e, $a, $e / $a,
        $pe === null ? '' : sprintf('%.2f µs', $pe), $pa === null ? '' : sprintf('%.2f µs', $pa));
}
foreach (array_keys($orders) as $order) {
    $row = $rows["get, 200,000 keys present, $order"];
    printf("\nget with 200,000 keys %s / get with one key: ephpm %.2f×, APCu %.2f×", $order, $row[0] / $one_e, $row[1] / $one_a);
}
echo "\n";
$kv->clear();
