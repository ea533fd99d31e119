--TEST--
With ephpm.cluster.enabled=1 the PHP processes of a host run its node themselves: one takes the node's lease, the others reach it over the socket; when the holder is killed another takes over within seconds, as a new generation of the same node id, and the host's values are still there; with no process left, cluster:// throws StoreUnavailable
--EXTENSIONS--
ephpm
--SKIPIF--
<?php
if (!function_exists('proc_open')) die('skip proc_open is disabled');
--FILE--
<?php
$name = 'phpt_lease' . getmypid();
$port = 20000 + getmypid() % 20000;
$ini = ['-d', 'ephpm.cluster.enabled=1', '-d', 'ephpm.cluster.secret=phpt-secret', '-d', "ephpm.cluster.gossip_addr=127.0.0.1:$port",
        '-d', 'ephpm.cluster.node_id=lease-test', '-d', 'ephpm.cluster.gossip_interval=100', '-d', 'ephpm.shm_size=4M'];
// A worker: opens the store (which starts its lease keeper), says so, then idles.
$worker = 'new Ephpm\Kv("cluster://' . $name . '"); echo "up\n"; sleep(60);';
$log = sys_get_temp_dir() . "/$name";
$start = function (string $who) use ($ini, $worker, $log) {
    $p = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . getenv('EPHPM_SO'), ...$ini, '-r', $worker],
        [1 => ['pipe', 'w'], 2 => ['file', "$log.$who", 'w']], $pipes);
    fgets($pipes[1]);
    return $p;
};
$serves = fn (string $who) => str_contains((string) @file_get_contents("$log.$who"), 'serving:');
$workers = ['a' => $start('a'), 'b' => $start('b')];
$kv = new Ephpm\Kv("cluster://$name?timeout=1");
$ready = function () use ($kv) {
    for ($i = 0; $i < 200; $i++) {
        try { return $kv->set('alive', true); } catch (Ephpm\StoreUnavailable) { usleep(50000); }
    }
    return false;
};
echo 'a node serves the host: ', var_export($ready(), true), "\n";
$kv->set('kept', 'across the takeover');
$holder = $serves('a') ? 'a' : 'b';
$other = $holder === 'a' ? 'b' : 'a';
echo 'exactly one runs the node: ', var_export($serves($holder) && !$serves($other), true), "\n";
proc_terminate($workers[$holder], 9); proc_close($workers[$holder]);
$t = microtime(true);
echo 'the survivor serves the host again: ', var_export($ready(), true), "\n";
echo 'within 5 s: ', var_export(microtime(true) - $t < 5, true), "\n";
echo 'it is the other process: ', var_export($serves($other), true), "\n";
echo 'the value is still there: ', var_export($kv->get('kept'), true), "\n";
proc_terminate($workers[$other], 9); proc_close($workers[$other]);
@unlink("$log.a"); @unlink("$log.b");
usleep(300000);
try {
    $kv->set('x', 1);
    echo "no exception\n";
} catch (Ephpm\StoreUnavailable $e) {
    echo get_class($e), "\n";
}
foreach (glob("/dev/shm/ephpm.*.$name.cluster*") as $f) { unlink($f); }
--EXPECT--
a node serves the host: true
exactly one runs the node: true
the survivor serves the host again: true
within 5 s: true
it is the other process: true
the value is still there: 'across the takeover'
Ephpm\StoreUnavailable
