--TEST--
Ephpm\Kv: a write that cannot fit even after eviction throws Ephpm\StoreFull and the old value stays; held locks are never evicted
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_full
ephpm.shm_size=1M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$kv->set('k', 'old');
try {
    $kv->set('k', random_bytes(1 << 20));
} catch (Ephpm\StoreFull $e) {
    echo get_class($e), ' extends RuntimeException: ', var_export($e instanceof RuntimeException, true), "\n";
    echo 'thrown at line ', $e->getLine(), "\n";
}
var_dump($kv->get('k'));
for ($i = 0; $i < 100; $i++) {
    $kv->add("lock:$i", "token", 60);
}
for ($i = 0; $i < 20000; $i++) {
    $kv->set("cache:$i", str_repeat('c', 200));
}
$kept = 0;
for ($i = 0; $i < 100; $i++) {
    $kept += $kv->get("lock:$i") === 'token';
}
$stats = $kv->stats();
echo "evictions happened: ", var_export($stats['evictions'] > 0, true), "\n";
echo "locks kept: $kept\n";
--EXPECT--
Ephpm\StoreFull extends RuntimeException: true
thrown at line 6
string(3) "old"
evictions happened: true
locks kept: 100
