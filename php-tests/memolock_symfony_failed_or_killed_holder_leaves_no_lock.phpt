--TEST--
Ephpm\MemoLock as Symfony's wrapper: a callback that throws leaves no lock and its exception propagates unchanged; a holder SIGKILLed mid-compute is taken over by a waiter once the lock's TTL runs out
--EXTENSIONS--
ephpm
pcntl
posix
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_stampede_fail
ephpm.shm_size=4M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';

$kv = new Ephpm\Kv();
$kv->clear();
$pool = new Ephpm\Symfony\EphpmAdapter('t');
$pool->setCallbackWrapper(new Ephpm\MemoLock(null, 500, 10000));
try {
    $pool->get('boom', function () { throw new DomainException('origin down'); });
} catch (DomainException $e) {
    echo get_class($e), ': ', $e->getMessage(), ' (line ', $e->getLine(), ")\n";
}
echo 'lock left behind: ', var_export($kv->has('memo:boom'), true), "\n";
echo 'item cached: ', var_export($pool->getItem('boom')->isHit(), true), "\n";

// A holder that dies mid-compute: its lock (TTL 500 ms) is taken over by the waiter.
$started = tempnam(sys_get_temp_dir(), 'ephpm');
if (($pid = pcntl_fork()) === 0) {
    $pool = new Ephpm\Symfony\EphpmAdapter('t');
    $pool->setCallbackWrapper(new Ephpm\MemoLock(null, 500, 10000));
    $pool->get('slow', function () use ($started) { file_put_contents($started, 'x'); sleep(30); return 'never'; });
    exit(0);
}
while (filesize($started) === 0) { clearstatcache(); usleep(1000); }
posix_kill($pid, SIGKILL);
pcntl_waitpid($pid, $status);
unlink($started);
echo 'holder killed: ', var_export(pcntl_wifsignaled($status), true), "\n";
echo 'waiter got: ', $pool->get('slow', fn() => 'taken over'), "\n";
--EXPECT--
DomainException: origin down (line 10)
lock left behind: false
item cached: false
holder killed: true
waiter got: taken over
