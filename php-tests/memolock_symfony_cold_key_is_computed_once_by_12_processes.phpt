--TEST--
Ephpm\MemoLock as Symfony's callback wrapper: 12 processes released on a barrier at a cold key make exactly one origin call, on a FilesystemAdapter and on Ephpm\Symfony\EphpmAdapter; all 12 get the value
--EXTENSIONS--
ephpm
pcntl
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_stampede
ephpm.shm_size=4M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';

use Symfony\Component\Cache\Adapter\FilesystemAdapter;
use Ephpm\Symfony\EphpmAdapter;

$dir = sys_get_temp_dir() . '/ephpm-stampede-' . getmypid();
$pools = [
    'FilesystemAdapter' => fn() => new FilesystemAdapter('t', 0, $dir),
    'EphpmAdapter' => fn() => new EphpmAdapter('t'),
];
$counter = new Ephpm\Kv(null, 'count:');
foreach ($pools as $name => $make) {
    $make()->clear();
    $counter->clear();
    $out = tempnam(sys_get_temp_dir(), 'ephpm');
    $start = hrtime(true) + 300_000_000;
    $kids = [];
    for ($p = 0; $p < 12; $p++) {
        if (($pid = pcntl_fork()) === 0) {
            $pool = $make();
            $pool->setCallbackWrapper(new Ephpm\MemoLock(null, 10000, 10000));
            while (hrtime(true) < $start) { }
            $value = $pool->get('cold', function ($item) use ($counter) {
                $counter->increment('origin');
                usleep(200000);
                $item->expiresAfter(60);
                return 'computed';
            });
            file_put_contents($out, "$value\n", FILE_APPEND | LOCK_EX);
            exit(0);
        }
        $kids[] = $pid;
    }
    foreach ($kids as $pid) {
        pcntl_waitpid($pid, $status);
    }
    $values = array_count_values(file($out, FILE_IGNORE_NEW_LINES));
    unlink($out);
    $expiry = $make()->getItem('cold')->getMetadata()['expiry'] ?? 0;
    printf("%s: %d origin call(s), values %s, expiry set in the callback kept: %s\n", $name,
        $counter->get('origin'), json_encode($values), var_export($expiry > microtime(true) + 50, true));
}
exec('rm -rf ' . escapeshellarg($dir));
--EXPECT--
FilesystemAdapter: 1 origin call(s), values {"computed":12}, expiry set in the callback kept: true
EphpmAdapter: 1 origin call(s), values {"computed":12}, expiry set in the callback kept: true
