--TEST--
Ephpm\Symfony\Lock\EphpmStore with Debian's symfony/lock: a second process cannot take a held lock; a blocking acquire gets it once the holder releases; refresh and release behave as the Lock component expects
--EXTENSIONS--
ephpm
pcntl
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Lock/autoload.php')) die('skip php-symfony-lock is not installed');
--INI--
ephpm.store_name=phpt_sflock
ephpm.shm_size=2M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require __DIR__ . '/../php/autoload.php';
use Symfony\Component\Lock\LockFactory;
use Ephpm\Symfony\Lock\EphpmStore;

(new Ephpm\Kv())->clear();
$factory = new LockFactory(new EphpmStore(null, 30));
$lock = $factory->createLock('invoice-42', 30);
var_dump($lock->acquire(), $lock->isAcquired());
$lock->refresh(60);
var_dump($lock->getRemainingLifetime() > 50);

$result = tempnam(sys_get_temp_dir(), 'ephpm');
$tried = tempnam(sys_get_temp_dir(), 'ephpm');
if (($pid = pcntl_fork()) === 0) {
    $other = (new LockFactory(new EphpmStore(null, 30)))->createLock('invoice-42', 30);
    $first = $other->acquire() ? 'got it' : 'refused';
    file_put_contents($tried, 'x');
    $second = $other->acquire(true) ? 'got it after the release' : 'never';
    file_put_contents($result, "$first; $second");
    $other->release();
    exit(0);
}
while (filesize($tried) === 0) { clearstatcache(); usleep(1000); }
usleep(50000); // the child is (most likely) asleep in its blocking acquire by now
$lock->release();
pcntl_waitpid($pid, $status);
echo file_get_contents($result), "\n";
unlink($result);
unlink($tried);
var_dump($lock->isAcquired(), $factory->createLock('invoice-42')->acquire());
--EXPECT--
bool(true)
bool(true)
bool(true)
refused; got it after the release
bool(false)
bool(true)
