--TEST--
Kv::stats() counts lock waits and lock timeouts where every process of the store sees them (shm: the segment; Redis: a hash beside the keys; cluster: the host's copy, over the wire): a try that finds the lock held counts neither, a wait that runs out counts one of each, a wait that gets the lock one wait; a process of its own reads the same counts
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_stats_lock_waits
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv();
$locks = new Ephpm\MemoLock($kv);
$counts = static function () use ($kv): array {
    $st = $kv->stats();
    return [$st['lock_waits'], $st['lock_timeouts']];
};
[$waits, $timeouts] = $counts();

$held = $locks->acquire('job', 30_000);
var_dump($locks->acquire('job') === null);
[$w, $t] = $counts();
echo 'a try that finds the lock held: ', $w - $waits, ' waits, ', $t - $timeouts, " timeouts\n";

var_dump($locks->acquire('job', null, 50) === null);
[$w, $t] = $counts();
echo 'a wait that runs out: ', $w - $waits, ' waits, ', $t - $timeouts, " timeouts\n";

// A lock that expires while somebody waits for it: the waiter gets it.
$short = $locks->acquire('short', 100);
$got = $locks->acquire('short', 30_000, 10_000);
var_dump($got !== null && $got->fence > $short->fence);
[$w, $t] = $counts();
echo 'and a wait that gets the lock: ', $w - $waits, ' waits, ', $t - $timeouts, " timeouts\n";

// Another process of the store sees the same counters.
$ini = '';
foreach (['ephpm.dsn', 'ephpm.store_name', 'ephpm.shm_size'] as $name) {
    $ini .= ' -d ' . escapeshellarg($name . '="' . ini_get($name) . '"');
}
$other = shell_exec(PHP_BINARY . ' -n -d extension=' . escapeshellarg(getenv('EPHPM_SO')) . $ini
    . ' -r ' . escapeshellarg('$s = (new Ephpm\Kv())->stats(); echo $s["lock_waits"], " ", $s["lock_timeouts"];'));
echo 'another process reads: ', $other === "$w $t" ? 'the same' : var_export([$other, "$w $t"], true), "\n";
--EXPECT--
bool(true)
a try that finds the lock held: 0 waits, 0 timeouts
bool(true)
a wait that runs out: 1 waits, 1 timeouts
bool(true)
and a wait that gets the lock: 2 waits, 1 timeouts
another process reads: the same
