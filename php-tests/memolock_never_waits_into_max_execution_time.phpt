--TEST--
Ephpm\MemoLock never waits into max_execution_time: with a 2 s limit and a lock held elsewhere, exclusively() gives up with LockUnavailable about a second before the limit instead of dying of it
--EXTENSIONS--
ephpm
pcntl
posix
--INI--
ephpm.store_name=phpt_maxexec
ephpm.shm_size=2M
max_execution_time=2
--FILE--
<?php
(new Ephpm\Kv())->clear();
$ready = tempnam(sys_get_temp_dir(), 'ephpm');
if (($pid = pcntl_fork()) === 0) {
    $held = (new Ephpm\MemoLock())->acquire('busy', 30000);
    file_put_contents($ready, 'held');
    sleep(4);
    exit(0);
}
while (filesize($ready) === 0) { clearstatcache(); usleep(1000); }
try {
    (new Ephpm\MemoLock(null, 30000, 60000))->exclusively('busy', fn() => 'ran');
} catch (Ephpm\LockUnavailable $e) {
    echo get_class($e), "\n";
}
posix_kill($pid, SIGKILL);
pcntl_waitpid($pid, $status);
unlink($ready);
echo "still running\n";
--EXPECT--
Ephpm\LockUnavailable
still running
