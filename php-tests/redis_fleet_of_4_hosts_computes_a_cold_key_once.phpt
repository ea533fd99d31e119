--TEST--
A fleet of 4 simulated hosts (each its own process group, shm:// lock store and LockRegistry files) sharing one Redis: on a cold key, MemoLock on redis:// makes 1 origin call for the whole fleet, Symfony's LockRegistry makes one per host (bench/stampede.php hosts=4)
--EXTENSIONS--
ephpm
pcntl
posix
--SKIPIF--
<?php
if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
exec('command -v redis-server', $out, $rc); if ($rc) die('skip redis-server is not installed');
--FILE--
<?php
$php = PHP_BINARY . ' -n -d extension=posix -d extension=' . escapeshellarg(getenv('EPHPM_SO') ?: ini_get('extension_dir') . '/ephpm.so');
exec("$php " . __DIR__ . '/../bench/stampede.php hosts=4 pool=redis modes=symfony,memolock-redis workers=8 runs=1 2>&1', $lines, $rc);
$calls = [];
foreach ($lines as $line) {
    if (preg_match('/^\| (symfony|memolock-redis) +\| +(\d+)(?:–(\d+))? +\|/u', $line, $m)) {
        $calls[$m[1]] = [(int) $m[2], (int) ($m[3] ?? $m[2])];   // fewest and most of the runs
    }
}
// LockRegistry excludes the processes of one host only: at least one computation per host.
echo 'LockRegistry computes at least once per host: ', var_export(($calls['symfony'][0] ?? 0) >= 4, true), "\n";
$once = ($calls['memolock-redis'] ?? null) === [1, 1];
echo 'MemoLock on redis:// computes once for the fleet: ', var_export($once, true), "\n";
if (!$once || ($calls['symfony'][0] ?? 0) < 4) {
    echo implode("\n", $lines), "\n"; // the bench's table and warnings, to see why
}
echo "exit: $rc\n";
--EXPECT--
LockRegistry computes at least once per host: true
MemoLock on redis:// computes once for the fleet: true
exit: 0
