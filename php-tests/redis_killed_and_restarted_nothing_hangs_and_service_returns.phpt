--TEST--
Redis killed mid-run and started again: Ephpm\Kv throws StoreUnavailable (a RuntimeException naming the address), MemoLock and StaleCache compute unprotected and log a warning, exclusively() throws LockUnavailable, a session follows ephpm.session.lock_timeout; nothing hangs, and the same objects work again once Redis is back
--EXTENSIONS--
ephpm
--SKIPIF--
<?php
if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
exec('command -v redis-server', $out, $rc); if ($rc) die('skip redis-server is not installed');
--INI--
ephpm.store_name=phpt_redis_down
ephpm.shm_size=2M
session.use_cookies=0
session.use_strict_mode=0
session.cache_limiter=
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';
require __DIR__ . '/harness/redis.inc';

final class Recorder {
    public array $warnings = [];
    public function warning(string $message, array $context = []): void { $this->warnings[] = $message; }
}
function show(string $what, callable $f): void {
    try {
        $shown = var_export($f(), true);
    } catch (Throwable $e) {
        $shown = get_class($e) . ' (RuntimeException: ' . var_export($e instanceof RuntimeException, true) . ')';
    }
    echo $what, ': ', $shown, "\n";
}
ob_start(); // so that the session settings can still be changed below

$redis = new TestRedis();
$dsn = $redis->dsn('?timeout=0.5');
$kv = new Ephpm\Kv($dsn, 'app:');
$logger = new Recorder();
$memo = Ephpm\MemoLock::fromDsn($dsn, 30000, 1000, $logger);
// The cache on this host (shm://), its stampede lock shared with the fleet (redis://).
$pool = new Ephpm\Symfony\EphpmAdapter('t');
$pool->clear();
$pool->setCallbackWrapper($memo);
$stale = new Ephpm\StaleCache($kv, 60, 0, $memo, false, $logger);
$kv->set('k', 'before');
echo $stale->get('page', fn() => 'computed while up'), "\n";

$redis->kill();
$started = microtime(true);
show('Kv::get', fn() => $kv->get('k'));
try { $kv->set('k', 'x'); } catch (Ephpm\StoreUnavailable $e) {
    echo 'the message names the socket: ', var_export(str_contains($e->getMessage(), $redis->socket), true), "\n";
}
show('exclusively', fn() => $memo->exclusively('job', fn() => 'ran'));
show('Symfony pool with the MemoLock wrapper', fn() => $pool->get('cold', fn() => 'computed unprotected'));
show('StaleCache', fn() => $stale->get('page2', fn() => 'computed unprotected'));
ini_set('session.save_handler', 'ephpm');
ini_set('session.save_path', $dsn);
session_id('s1');
ini_set('ephpm.session.lock_timeout', 'fail');
show('session_start with lock_timeout=fail', fn() => @session_start());
echo error_get_last()['message'], "\n";
ini_set('ephpm.session.lock_timeout', 'warn');
session_id('s1'); // PHP forgets the id of a session that failed to start
show('session_start with lock_timeout=warn', fn() => @session_start());
echo error_get_last()['message'], "\n";
$_SESSION['lost'] = true;
session_write_close();
echo implode("\n", $logger->warnings), "\n";
echo 'nothing hung: ', var_export(microtime(true) - $started < 30, true), "\n";

$redis->start();
$logger->warnings = [];
show('Kv::set after the restart', fn() => $kv->set('k', 'after'));
show('Kv::get after the restart', fn() => $kv->get('k'));
show('exclusively after the restart', fn() => $memo->exclusively('job', fn() => 'ran'));
show('Symfony pool after the restart', fn() => $pool->get('warm', fn() => 'computed behind the lock'));
show('StaleCache after the restart', fn() => $stale->get('page3', fn() => 'computed behind the lock'));
session_id('s2');
show('session_start after the restart', fn() => session_start());
$_SESSION['n'] = 1;
session_write_close();
echo 'warnings after the restart: ', count($logger->warnings), "\n";
--EXPECTF--
computed while up
Kv::get: Ephpm\StoreUnavailable (RuntimeException: true)
the message names the socket: true
exclusively: Ephpm\LockUnavailable (RuntimeException: true)
Symfony pool with the MemoLock wrapper: 'computed unprotected'
StaleCache: 'computed unprotected'
session_start with lock_timeout=fail: false
session_start(): Failed to read session data: ephpm (path: unix://%s/redis.sock?timeout=0.5)
session_start with lock_timeout=warn: true
session_start(): ephpm: session s1 starts empty and its changes will not be saved: the store at unix://%s/redis.sock cannot be reached: %s
ephpm: computing "memo:cold" without stampede protection: the store at unix://%s/redis.sock cannot be reached: %s
ephpm: StaleCache could not read "page2": the store at unix://%s/redis.sock cannot be reached: %s
ephpm: computing "app:swr:page2" without stampede protection: the store at unix://%s/redis.sock cannot be reached: %s
ephpm: StaleCache could not store "page2": the store at unix://%s/redis.sock cannot be reached: %s
nothing hung: true
Kv::set after the restart: true
Kv::get after the restart: 'after'
exclusively after the restart: 'ran'
Symfony pool after the restart: 'computed behind the lock'
StaleCache after the restart: 'computed behind the lock'
session_start after the restart: true
warnings after the restart: 0
