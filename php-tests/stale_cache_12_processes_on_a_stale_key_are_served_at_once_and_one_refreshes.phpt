--TEST--
Ephpm\StaleCache: 12 processes released on a barrier at a stale key are all served the stale value without waiting for the refresh, and exactly one refresh runs
--DESCRIPTION--
No timing is asserted: the refresh itself waits until all 12 processes have reported the
value they were served. A process that waited for the refresh could not report, so the
refresh would give up after 10 s and count fewer than 12.
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_stale12
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv(null, 'stale12:');
$kv->clear();
$cache = new Ephpm\StaleCache($kv, staleSeconds: 60);
$cache->get('hot', function (&$ttl) { $ttl = 0.2; return 'old'; });
usleep(300_000);

$start = hrtime(true) + 300_000_000;
$kids = [];
for ($p = 0; $p < 12; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $cache = new Ephpm\StaleCache($kv, staleSeconds: 60);
        while (hrtime(true) < $start) { }
        $value = $cache->get('hot', function () use ($kv) {
            $kv->increment('refreshes');
            $deadline = microtime(true) + 10;
            while ($kv->get('served', 0) < 12 && microtime(true) < $deadline) {
                usleep(1000);
            }
            $kv->set('served before the refresh ended', $kv->get('served', 0));
            return 'new';
        }, 300, $meta);
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
printf("after the refresh: %s\n", $cache->get('hot', fn () => 'computed again'));
$kv->clear();
--EXPECT--
served old (stale): 12
served anything else: 0
refreshes: 1
processes served before the refresh ended: 12
after the refresh: new
