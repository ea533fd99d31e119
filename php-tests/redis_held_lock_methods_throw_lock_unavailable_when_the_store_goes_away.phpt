--TEST--
A held Ephpm\Lock and a section's Ephpm\KeepAlive whose Redis goes away: extend(), release(), isHeld() and the KeepAlive throw LockUnavailable (whether the lock is still ours cannot be known), never StoreUnavailable; release() can be called again once Redis is back
--EXTENSIONS--
ephpm
--SKIPIF--
<?php exec('command -v redis-server', $out, $rc); if ($rc) die('skip redis-server is not installed');
--INI--
ephpm.store_name=phpt_redis_lock_gone
--FILE--
<?php
require __DIR__ . '/harness/redis.inc';
$redis = new TestRedis();
$memo = new Ephpm\MemoLock(new Ephpm\Kv($redis->dsn('?timeout=0.3')), 10000, 100);
$show = function (string $what, Closure $f) {
    try {
        $r = var_export($f(), true);
    } catch (Throwable $e) {
        $r = get_class($e) . ($e instanceof Ephpm\StoreException ? ' (a StoreException)' : '');
    }
    echo "$what: $r\n";
};
$lock = $memo->acquire('job');
echo 'held: ', var_export($lock->isHeld(), true), "\n";
$inSection = $memo->exclusively('section', function (Ephpm\KeepAlive $keepAlive) use ($redis, $show) {
    $redis->kill();
    $show('KeepAlive', fn () => $keepAlive());
    return 'section returned';
});
echo "exclusively: $inSection\n";
$show('extend', fn () => $lock->extend());
$show('isHeld', fn () => $lock->isHeld());
$show('release', fn () => $lock->release());
$redis->start();
$show('release once Redis is back', fn () => $lock->release());
--EXPECT--
held: true
KeepAlive: Ephpm\LockUnavailable
exclusively: section returned
extend: Ephpm\LockUnavailable
isHeld: Ephpm\LockUnavailable
release: Ephpm\LockUnavailable
release once Redis is back: false
