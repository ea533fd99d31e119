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
$php = PHP_BINARY . ' -n -d extension=pcntl -d extension=posix -d extension=' . escapeshellarg(getenv('EPHPM_SO') ?: ini_get('extension_dir') . '/ephpm.so');
exec("$php " . __DIR__ . '/../bench/stampede.php hosts=4 pool=redis modes=symfony,memolock-redis workers=8 runs=2 2>&1', $lines, $rc);
foreach ($lines as $line) {
    if (preg_match('/^\| (symfony|memolock-redis) +\| +(\S+) +\| +(\d+) /', $line, $m)) {
        echo "$m[1]: $m[2] origin calls, $m[3] waiters\n";
    }
}
echo "exit: $rc\n";
--EXPECT--
symfony: 4 origin calls, 8 waiters
memolock-redis: 1 origin calls, 14 waiters
exit: 0
