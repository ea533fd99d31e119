--TEST--
Ephpm\MemoLock as Symfony's wrapper: when the key's lock is not released within waitTimeoutMs, the value is computed without protection and a warning goes to the PSR-3 logger (duck-typed)
--EXTENSIONS--
ephpm
pcntl
posix
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_unprotected
ephpm.shm_size=2M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';

final class Recorder {
    public array $warnings = [];
    public function warning(string $message, array $context = []): void { $this->warnings[] = $message; }
}
(new Ephpm\Kv())->clear();
$started = tempnam(sys_get_temp_dir(), 'ephpm');
if (($pid = pcntl_fork()) === 0) {
    $pool = new Ephpm\Symfony\EphpmAdapter('t');
    $pool->setCallbackWrapper(new Ephpm\MemoLock(null, 30000, 10000));
    $pool->get('slow', function () use ($started) { file_put_contents($started, 'x'); sleep(30); return 'late'; });
    exit(0);
}
while (filesize($started) === 0) { clearstatcache(); usleep(1000); }
$logger = new Recorder();
$pool = new Ephpm\Symfony\EphpmAdapter('t');
$pool->setCallbackWrapper(new Ephpm\MemoLock(null, 30000, 100, $logger));
echo $pool->get('slow', fn() => 'computed anyway'), "\n";
echo implode("\n", $logger->warnings), "\n";
posix_kill($pid, SIGKILL);
pcntl_waitpid($pid, $status);
unlink($started);
--EXPECT--
computed anyway
ephpm: computing "memo:slow" without stampede protection: its lock was not released in time
