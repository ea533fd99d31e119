--TEST--
Ephpm\Lock: A's lock expires, B (another process) takes it, A's release is refused and its extend throws LockUnavailable, C is refused, and fence(B) > fence(A)
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_overrun
ephpm.shm_size=2M
--FILE--
<?php
function in_process(callable $f): string {
    $path = tempnam(sys_get_temp_dir(), 'ephpm');
    if (($pid = pcntl_fork()) === 0) {
        file_put_contents($path, $f(new Ephpm\MemoLock()));
        exit(0);
    }
    pcntl_waitpid($pid, $status);
    $out = file_get_contents($path);
    unlink($path);
    return $out;
}
(new Ephpm\Kv())->clear();
$locks = new Ephpm\MemoLock();
$a = $locks->acquire('job', 200);
echo 'A holds: ', var_export($a->isHeld(), true), ", token of ", strlen($a->token), " hex digits\n";
usleep(300000);
echo 'A still holds after its TTL: ', var_export($a->isHeld(), true), "\n";
$fenceB = in_process(function ($locks) {
    $b = $locks->acquire('job', 30000);
    $fence = $b->fence;
    $b->release(); // (re-taken below by the parent's view of B)
    return (string) $fence;
});
$b = $locks->acquire('job', 30000);
echo 'B acquired: ', var_export($b !== null, true), "\n";
echo 'A releases: ', var_export($a->release(), true), "\n";
try {
    $a->extend();
} catch (Ephpm\LockUnavailable $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
echo in_process(fn($locks) => 'C acquires: ' . var_export($locks->acquire('job') !== null, true) . "\n");
echo 'B still holds: ', var_export($b->isHeld(), true), "\n";
echo 'fences increase: ', var_export($a->fence < (int) $fenceB && (int) $fenceB < $b->fence, true), "\n";
try {
    $b->token = $a->token;
} catch (Error $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
--EXPECT--
A holds: true, token of 32 hex digits
A still holds after its TTL: false
B acquired: true
A releases: false
Ephpm\LockUnavailable: Ephpm\Lock::extend(): the lock "job" is no longer held: it expired, and another process may hold it now
C acquires: false
B still holds: true
fences increase: true
Error: Cannot modify readonly property Ephpm\Lock::$token
