<?php
/**
 * Many processes reading at once: N forked readers of one hot 100 B key, and of random
 * keys among 10,000, ephpm's Ephpm\Kv against APCu in the same run.
 *
 *   php -n -d extension=apcu -d apc.enable_cli=1 -d apc.shm_size=256M \
 *       -d ephpm.shm_size=256M -d ephpm.store_name=bench -d extension=$PWD/target/ephpm.so \
 *       bench/readers.php [reps=3] [seconds=1]
 *
 * (pcntl is compiled into Debian's CLI; add -d extension=pcntl where it is a module.)
 *
 * For each case and N = 1, 2, 4, 8 the N readers are forked, start together, and read for
 * `seconds`; ephpm and APCu alternate, `reps` times, and the table shows the medians:
 * aggregate reads per second, the ratio ephpm/APCu of those (> 1: ephpm is faster), and
 * the CPU time per read of one reader (user + system, from getrusage), which is what a
 * core spends per read whether or not the readers outnumber the cores.
 */

$reps = (int)($argv[1] ?? 3);
$seconds = (float)($argv[2] ?? 1);
if (!extension_loaded('apcu') || !ini_get('apc.enable_cli') || !function_exists('pcntl_fork')) {
    fwrite(STDERR, "needs apcu with apc.enable_cli=1, and pcntl\n");
    exit(2);
}
$kv = new Ephpm\Kv();
$kv->clear();
apcu_clear_cache();
$v100 = str_repeat('v', 100);
$kv->set('hot', $v100);
apcu_store('hot', $v100);
$nkeys = 10000;
for ($i = 0; $i < $nkeys; $i++) {
    $kv->set("key:$i", $v100);
    apcu_store("key:$i", $v100);
}
// The random keys each reader walks: precomputed, so the loop costs the same for both.
mt_srand(42);
$keys = [];
for ($i = 0; $i < 65536; $i++) {
    $keys[] = 'key:' . mt_rand(0, $nkeys - 1);
}
if ($kv->get('hot') !== $v100 || apcu_fetch('key:77') !== $v100 || $kv->get('key:77') !== $v100) {
    fwrite(STDERR, "setup failed\n");
    exit(1);
}

/** One reader: reads until `$end` (hrtime ns), returns [reads, cpu ns]. */
function reader(string $store, string $case, array $keys, int $end): array {
    $kv = $store === 'ephpm' ? new Ephpm\Kv() : null;
    $ru = getrusage();
    $n = 0;
    $j = 0;
    do {
        if ($case === 'hot') {
            if ($kv) {
                for ($i = 0; $i < 1000; $i++) { $kv->get('hot'); }
            } else {
                for ($i = 0; $i < 1000; $i++) { apcu_fetch('hot'); }
            }
        } else {
            if ($kv) {
                for ($i = 0; $i < 1000; $i++) { $kv->get($keys[$j++ & 65535]); }
            } else {
                for ($i = 0; $i < 1000; $i++) { apcu_fetch($keys[$j++ & 65535]); }
            }
        }
        $n += 1000;
    } while (hrtime(true) < $end);
    $ru2 = getrusage();
    $cpu = ($ru2['ru_utime.tv_sec'] - $ru['ru_utime.tv_sec'] + $ru2['ru_stime.tv_sec'] - $ru['ru_stime.tv_sec']) * 1e9
        + ($ru2['ru_utime.tv_usec'] - $ru['ru_utime.tv_usec'] + $ru2['ru_stime.tv_usec'] - $ru['ru_stime.tv_usec']) * 1e3;
    return [$n, $cpu];
}

/** N readers at once; returns [aggregate reads/s, median CPU ns per read of a reader]. */
function run_case(string $store, string $case, int $n, array $keys, float $seconds): array {
    $dir = sys_get_temp_dir();
    $start = hrtime(true) + 100_000_000; // everyone forked and ready before it
    $end = $start + (int)($seconds * 1e9);
    $pids = [];
    for ($p = 0; $p < $n; $p++) {
        $file = "$dir/ephpm-readers-" . getmypid() . "-$p";
        $pid = pcntl_fork();
        if ($pid === 0) {
            while (hrtime(true) < $start) { usleep(1000); }
            [$reads, $cpu] = reader($store, $case, $keys, $end);
            file_put_contents($file, "$reads $cpu");
            exit(0);
        }
        $pids[$pid] = $file;
    }
    $total = 0;
    $per = [];
    foreach ($pids as $pid => $file) {
        pcntl_waitpid($pid, $status);
        [$reads, $cpu] = explode(' ', file_get_contents($file));
        unlink($file);
        $total += (int)$reads;
        $per[] = (float)$cpu / max(1, (int)$reads);
    }
    $wall = (hrtime(true) - $start) / 1e9;
    return [$total / max($wall, $seconds), median($per)];
}

function median(array $xs): float {
    sort($xs);
    $c = count($xs);
    return $c % 2 ? $xs[intdiv($c, 2)] : ($xs[$c / 2 - 1] + $xs[$c / 2]) / 2;
}

printf("ephpm %s vs APCu %s, PHP %s, %d CPUs; 100 B values, %d keys for the random case; %d reps × %.1f s, medians\n\n",
    phpversion('ephpm'), phpversion('apcu'), PHP_VERSION, (int)shell_exec('nproc'), $nkeys, $reps, $seconds);
printf("| %-12s | %2s | %13s | %13s | %6s | %13s | %13s |\n",
    'case', 'N', 'ephpm reads/s', 'APCu reads/s', 'ratio', 'ephpm CPU ns', 'APCu CPU ns');
printf("|%s|%s|%s|%s|%s|%s|%s|\n", str_repeat('-', 14), str_repeat('-', 4), str_repeat('-', 15),
    str_repeat('-', 15), str_repeat('-', 8), str_repeat('-', 15), str_repeat('-', 15));
foreach (['hot' => 'one hot key', 'random' => 'random keys'] as $case => $label) {
    foreach ([1, 2, 4, 8] as $n) {
        $e = $a = [];
        for ($r = 0; $r < $reps; $r++) {
            $e[] = run_case('ephpm', $case, $n, $keys, $seconds);
            $a[] = run_case('apcu', $case, $n, $keys, $seconds);
        }
        $er = median(array_column($e, 0));
        $ar = median(array_column($a, 0));
        printf("| %-12s | %2d | %13s | %13s | %6.2f | %13.1f | %13.1f |\n", $label, $n,
            number_format($er), number_format($ar), $er / $ar,
            median(array_column($e, 1)), median(array_column($a, 1)));
    }
}
$kv->clear();
