--TEST--
A fleet of 3 simulated hosts on ephpm's gossip cluster (one ephpm-node each, every host its own process group and store): on a cold key, MemoLock on cluster:// makes 1 origin call for the whole cluster, MemoLock on each host's shm:// and Symfony's LockRegistry one per host (bench/stampede.php hosts=3 pool=cluster)
--EXTENSIONS--
ephpm
pcntl
posix
--SKIPIF--
<?php
if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
if (!is_file(__DIR__ . '/../target/release/ephpm-node')) die('skip ephpm-node is not built (make build)');
--FILE--
<?php
$php = PHP_BINARY . ' -n -d extension=posix -d extension=' . escapeshellarg(getenv('EPHPM_SO') ?: ini_get('extension_dir') . '/ephpm.so');
exec("$php " . __DIR__ . '/../bench/stampede.php hosts=3 pool=cluster modes=symfony,memolock,memolock-cluster workers=9 runs=1 2>&1', $lines, $rc);
$calls = [];
foreach ($lines as $line) {
    if (preg_match('/^\| (symfony|memolock|memolock-cluster) +\| +(\d+)(?:–(\d+))? +\|/u', $line, $m)) {
        $calls[$m[1]] = [(int) $m[2], (int) ($m[3] ?? $m[2])];
    }
}
echo 'LockRegistry computes at least once per host: ', var_export(($calls['symfony'][0] ?? 0) >= 3, true), "\n";
echo 'MemoLock on shm:// computes once per host: ', var_export(($calls['memolock'] ?? null) === [3, 3], true), "\n";
$once = ($calls['memolock-cluster'] ?? null) === [1, 1];
echo 'MemoLock on cluster:// computes once for the cluster: ', var_export($once, true), "\n";
if (!$once) {
    echo implode("\n", $lines), "\n";
}
echo "exit: $rc\n";
--EXPECT--
LockRegistry computes at least once per host: true
MemoLock on shm:// computes once per host: true
MemoLock on cluster:// computes once for the cluster: true
exit: 0
