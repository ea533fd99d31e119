--TEST--
With ephpm.cluster.enabled=1 the PHP processes of a host run its node themselves: one takes the node's lease, the others reach it over the socket; when the holder is killed another takes over (its lease expires in 2 s), as a new generation of the same node id, and the host's values are still there; a holder that exits normally gives the lease and its socket up; with no process left, cluster:// throws StoreUnavailable
--EXTENSIONS--
ephpm
--SKIPIF--
<?php
if (!function_exists('proc_open')) die('skip proc_open is disabled');
--FILE--
<?php
$name = 'phpt_lease' . getmypid();
$port = 20000 + getmypid() % 20000;
$ini = ['-d', 'ephpm.cluster.enabled=1', '-d', 'ephpm.cluster.secret=cGhwdC1zZWNyZXQtb2YtMTI4LWJpdHMtb3ItbW9yZQ', '-d', "ephpm.cluster.gossip_addr=127.0.0.1:$port",
        '-d', 'ephpm.cluster.node_id=lease-test', '-d', 'ephpm.cluster.gossip_interval=100', '-d', 'ephpm.shm_size=4M'];
// A worker: opens the store (which starts its lease keeper), says so, then idles until
// its stdin closes, and exits normally.
$worker = 'new Ephpm\Kv("cluster://' . $name . '"); echo "up\n"; fgets(STDIN);';
$pipes = [];
$log = sys_get_temp_dir() . "/$name";
$start = function (string $who) use ($ini, $worker, $log) {
    global $pipes;
    $p = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . getenv('EPHPM_SO'), ...$ini, '-r', $worker],
        [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', "$log.$who", 'w']], $pipes[$who]);
    fgets($pipes[$who][1]);
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
echo 'the survivor serves the host again: ', var_export($ready(), true), "\n";
echo 'it is the other process: ', var_export($serves($other), true), "\n";
echo 'the value is still there: ', var_export($kv->get('kept'), true), "\n";
// A holder that exits normally gives the lease up at module shutdown and takes its
// socket away (a killed one leaves both to expire).
$socket = glob("/dev/shm/ephpm-*/$name.cluster.sock");
fclose($pipes[$other][0]);
proc_close($workers[$other]);
echo 'the socket was there: ', var_export(count($socket) === 1, true), "\n";
echo 'and is gone after a normal exit: ', var_export(!file_exists($socket[0]), true), "\n";
@unlink("$log.a"); @unlink("$log.b");
usleep(300000);
try {
    $kv->set('x', 1);
    echo "no exception\n";
} catch (Ephpm\StoreUnavailable $e) {
    echo get_class($e), "\n";
}
foreach (glob("/dev/shm/ephpm-*/$name.cluster*") as $f) { unlink($f); }
--EXPECT--
a node serves the host: true
exactly one runs the node: true
the survivor serves the host again: true
it is the other process: true
the value is still there: 'across the takeover'
the socket was there: true
and is gone after a normal exit: true
Ephpm\StoreUnavailable
