--TEST--
Ephpm\Symfony\StaleCacheAdapter as a PSR-6 pool: a value saved through getItem()/save() and past its lifetime is a miss for getItem() but is served stale by get() to 12 forked processes at once, refreshed exactly once after the response; deleteItem() makes a real miss
--DESCRIPTION--
No timing is asserted: the refresh itself waits until all 12 processes have reported what
they were served. A process that waited for the refresh could not report, so the refresh
would give up after 10 s and count fewer than 12.
--EXTENSIONS--
ephpm
pcntl
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_stale_pool
ephpm.shm_size=4M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';

use Ephpm\Symfony\StaleCacheAdapter;
use Symfony\Component\Cache\Adapter\AdapterInterface;
use Symfony\Contracts\Cache\ItemInterface;

$kv = new Ephpm\Kv(null, 'pool-test:');   // the test's own counters, beside the pool
$kv->clear();
$pool = new StaleCacheAdapter('pool-ns', 300, staleSeconds: 60);
$pool->clear();
var_dump($pool instanceof AdapterInterface);

$item = $pool->getItem('hot');
printf("cold: hit %s\n", json_encode($item->isHit()));
$pool->save($item->set('old')->expiresAt(new DateTimeImmutable('+300 milliseconds')));
printf("saved: hit %s, value %s\n", json_encode($pool->getItem('hot')->isHit()), $pool->getItem('hot')->get());
usleep(400_000);
printf("past its lifetime: getItem hit %s, hasItem %s\n", json_encode($pool->getItem('hot')->isHit()), json_encode($pool->hasItem('hot')));

$start = hrtime(true) + 300_000_000;
$kids = [];
for ($p = 0; $p < 12; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $pool = new StaleCacheAdapter('pool-ns', 300, staleSeconds: 60);
        while (hrtime(true) < $start) { }
        $value = $pool->get('hot', function (ItemInterface $item) use ($kv) {
            $kv->increment('refreshes');
            $deadline = microtime(true) + 10;
            while ($kv->get('served', 0) < 12 && microtime(true) < $deadline) {
                usleep(1000);
            }
            $kv->set('served before the refresh ended', $kv->get('served', 0));
            return 'new';
        }, null, $meta);
        $kv->increment('served');
        $kv->increment('served ' . $value . ($meta['stale'] ? ' (stale)' : ''));
        exit(0); // the elected process refreshes at shutdown, after it has reported
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) {
    pcntl_waitpid($pid, $status);
}
printf("served old (stale): %d\n", $kv->get('served old (stale)', 0));
printf("served anything else: %d\n", $kv->get('served', 0) - $kv->get('served old (stale)', 0));
printf("refreshes: %d\n", $kv->get('refreshes', 0));
printf("processes served before the refresh ended: %d\n", $kv->get('served before the refresh ended', 0));

$item = $pool->getItem('hot');
printf("after the refresh: getItem hit %s, value %s\n", json_encode($item->isHit()), $item->get());
printf("get() after the refresh: %s\n", $pool->get('hot', fn () => 'computed again'));
var_dump($pool->deleteItem('hot'));
printf("deleted: getItem hit %s; get() computes: %s\n", json_encode($pool->getItem('hot')->isHit()), $pool->get('hot', fn () => 'computed'));
$pool->clear();
$kv->clear();
--EXPECT--
bool(true)
cold: hit false
saved: hit true, value old
past its lifetime: getItem hit false, hasItem false
served old (stale): 12
served anything else: 0
refreshes: 1
processes served before the refresh ended: 12
after the refresh: getItem hit true, value new
get() after the refresh: new
bool(true)
deleted: getItem hit false; get() computes: computed
