--TEST--
Ephpm\Symfony\Lock\EphpmStore read/write locks with Debian's symfony/lock: 4 reader processes hold the lock at once, a writer is refused while they do, a blocked writer process is granted only after the last reader's release; promotion (acquire() after acquireRead()) waits for the other readers, demotion (acquireRead() after acquire()) lets readers in
--EXTENSIONS--
ephpm
pcntl
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Lock/autoload.php')) die('skip php-symfony-lock is not installed');
--INI--
ephpm.store_name=phpt_sfrwlock
ephpm.shm_size=2M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require __DIR__ . '/../php/autoload.php';
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\SharedLockStoreInterface;
use Ephpm\Symfony\Lock\EphpmStore;

(new Ephpm\Kv())->clear();
$factory = new LockFactory(new EphpmStore(null, 30));
var_dump(new EphpmStore() instanceof SharedLockStoreInterface);
$dir = sys_get_temp_dir() . '/ephpm-rw-' . getmypid();
@mkdir($dir);
$log = "$dir/log";
touch($log);
$note = fn (string $line) => file_put_contents($log, "$line\n", FILE_APPEND | LOCK_EX);
$lines = function () use ($log) { clearstatcache(); return array_filter(explode("\n", file_get_contents($log))); };

$pids = [];
for ($i = 0; $i < 4; $i++) {
    if (($pid = pcntl_fork()) === 0) {
        $lock = (new LockFactory(new EphpmStore(null, 30)))->createLock('report', 30);
        if (!$lock->acquireRead()) { $note("reader $i refused"); exit(1); }
        $note("read $i");
        while (!is_file("$dir/release$i")) { usleep(1000); clearstatcache(); }
        $note("release $i");
        $lock->release();
        exit(0);
    }
    $pids[] = $pid;
}
while (count($lines()) < 4) { usleep(1000); }
echo "readers holding at once: ", count(preg_grep('/^read /', $lines())), "\n";
var_dump($factory->createLock('report')->acquire());

if (($writer = pcntl_fork()) === 0) {
    $lock = (new LockFactory(new EphpmStore(null, 30)))->createLock('report', 30);
    $lock->acquire(true);
    $note('writer granted');
    $lock->release();
    exit(0);
}
usleep(50000); // the writer is (most likely) asleep in its blocking acquire by now
for ($i = 0; $i < 4; $i++) {
    touch("$dir/release$i");
    usleep(20000);
}
foreach ([...$pids, $writer] as $pid) { pcntl_waitpid($pid, $status); }
$order = array_values($lines());
echo "last: ", end($order), "\n";
echo "granted after release 3: ", var_export(array_search('writer granted', $order) > array_search('release 3', $order), true), "\n";
array_map('unlink', glob("$dir/*"));
rmdir($dir);

// Promotion and demotion, as symfony/lock defines them.
$r1 = $factory->createLock('doc', 30);
$r2 = $factory->createLock('doc', 30);
$r3 = $factory->createLock('doc', 30);
var_dump($r1->acquireRead(), $r2->acquireRead());
var_dump($r1->acquire());          // promotion refused: r2 still reads
var_dump($r1->isAcquired());       // r1 keeps its read share
$r2->release();
var_dump($r1->acquire());          // promoted
var_dump($r3->acquireRead());      // a writer holds it
var_dump($r1->acquireRead());      // demoted
var_dump($r3->acquireRead());      // readers join
var_dump($r2->acquire());          // no writer while they read
$r1->release();
$r3->release();
var_dump($r2->acquire());
--EXPECT--
bool(true)
readers holding at once: 4
bool(false)
last: writer granted
granted after release 3: true
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
bool(true)
