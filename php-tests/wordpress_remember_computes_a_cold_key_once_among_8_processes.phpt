--TEST--
WordPress drop-in: ephpm_cache_remember() of a cold key by 8 processes at once runs the callable once, in each of 5 rounds (a stored false included), and all 8 get its value; a warm key runs nothing; a callable that throws stores nothing and the next caller computes
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_wp_remember
ephpm.shm_size=4M
--FILE--
<?php
require __DIR__ . '/harness/wordpress.inc';
wp_cache_flush();
$barrier = new Ephpm\Kv(null, 'barrier:');
$barrier->clear();
$runs = tempnam(sys_get_temp_dir(), 'ephpm');
$got = tempnam(sys_get_temp_dir(), 'ephpm');
$kids = [];
for ($p = 0; $p < 8; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        for ($round = 0; $round < 5; $round++) {
            wp_cache_init(); // a new request
            $barrier->increment("round$round");
            $bound = hrtime(true) + 10_000_000_000; // a bound, should a process die
            while ($barrier->get("round$round") < 8 && hrtime(true) < $bound) {
            }
            $value = ephpm_cache_remember("report$round", function () use ($p, $round, $runs) {
                file_put_contents($runs, "$round\n", FILE_APPEND | LOCK_EX);
                usleep(100_000); // an expensive computation: the others arrive meanwhile
                return $round === 4 ? false : "round $round by $p";
            }, 'reports', 60);
            file_put_contents($got, "$round " . json_encode($value) . "\n", FILE_APPEND | LOCK_EX);
        }
        exit(0);
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) {
    pcntl_waitpid($pid, $status);
}
$ran = array_count_values(file($runs, FILE_IGNORE_NEW_LINES));
$values = [];
foreach (file($got, FILE_IGNORE_NEW_LINES) as $line) {
    [$round, $value] = explode(' ', $line, 2);
    $values[$round][$value] = ($values[$round][$value] ?? 0) + 1;
}
unlink($runs);
unlink($got);
for ($round = 0; $round < 5; $round++) {
    $v = $values[$round] ?? [];
    echo "round $round: callable ran ", $ran[$round] ?? 0, ' time(s); ', count($v) === 1 ? 'all ' . current($v) . ' got the same value' : 'values ' . json_encode($v), "\n";
}

wp_cache_init();
echo 'warm: ', ephpm_cache_remember('report0', fn () => 'recomputed', 'reports'), ', ',
    json_encode(ephpm_cache_remember('report4', fn () => 'recomputed', 'reports')), "\n";
try {
    ephpm_cache_remember('fails', function () { throw new RuntimeException('no database'); }, 'reports');
} catch (RuntimeException $e) {
    echo 'thrown: ', $e->getMessage(), '; stored: ', json_encode(wp_cache_get('fails', 'reports', true, $found)), ' found ', json_encode($found), "\n";
}
echo 'next caller: ', ephpm_cache_remember('fails', fn () => 'computed', 'reports'), "\n";
wp_cache_add_non_persistent_groups('local');
echo 'non-persistent: ', ephpm_cache_remember('k', fn () => 'in the request', 'local'), ', ', wp_cache_get('k', 'local'), "\n";
--EXPECTF--
round 0: callable ran 1 time(s); all 8 got the same value
round 1: callable ran 1 time(s); all 8 got the same value
round 2: callable ran 1 time(s); all 8 got the same value
round 3: callable ran 1 time(s); all 8 got the same value
round 4: callable ran 1 time(s); all 8 got the same value
warm: round 0 by %d, false
thrown: no database; stored: false found false
next caller: computed
non-persistent: in the request, in the request
