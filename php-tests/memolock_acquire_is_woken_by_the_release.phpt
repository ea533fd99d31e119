--TEST--
Ephpm\MemoLock::acquire() with a wait gets a lock held by another process as soon as it is released, with a greater fence; a wait shorter than the holding returns null
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_wake
ephpm.shm_size=2M
--FILE--
<?php
(new Ephpm\Kv())->clear();
$locks = new Ephpm\MemoLock();
$ready = tempnam(sys_get_temp_dir(), 'ephpm');
if (($pid = pcntl_fork()) === 0) {
    $held = (new Ephpm\MemoLock())->acquire('w', 30000);
    file_put_contents($ready, (string) $held->fence);
    usleep(1000000);
    $held->release();
    exit(0);
}
while (filesize($ready) === 0) { clearstatcache(); usleep(1000); }
$theirs = (int) file_get_contents($ready);
var_dump($locks->acquire('w', 1000, 20));
$mine = $locks->acquire('w', 1000, 20000);
var_dump($mine !== null && $mine->fence > $theirs);
pcntl_waitpid($pid, $status);
unlink($ready);
--EXPECT--
NULL
bool(true)
