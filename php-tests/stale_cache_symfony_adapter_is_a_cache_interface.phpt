--TEST--
Ephpm\Symfony\StaleCacheAdapter: a Symfony CacheInterface over StaleCache (the StaleCache form); expiresAfter() in the callback sets the lifetime, $save = false stores nothing, INF recomputes, delete() makes a miss, tags are refused
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_stale_symfony
ephpm.shm_size=4M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';

use Ephpm\Symfony\StaleCacheAdapter;
use Symfony\Contracts\Cache\CacheInterface;
use Symfony\Contracts\Cache\ItemInterface;

$kv = new Ephpm\Kv(null, 'stale-symfony:');
$kv->clear();
$cache = new StaleCacheAdapter(new Ephpm\StaleCache($kv, staleSeconds: 60), 300);
var_dump($cache instanceof CacheInterface);
$n = 0;
$callback = function (ItemInterface $item) use (&$n) { $n++; return $item->getKey() . " #$n"; };

echo $cache->get('a', $callback), "\n";
echo $cache->get('a', $callback), "\n";
printf("a expires in about %d s\n", round($kv->ttl('a')));

echo $cache->get('short', function (ItemInterface $item) { $item->expiresAfter(1); return 'short-lived'; }), "\n";
printf("short is kept for its 1 s and the 60 s stale window: %d s\n", round($kv->ttl('short')));

echo $cache->get('unsaved', function (ItemInterface $item, bool &$save) { $save = false; return 'not saved'; }), "\n";
var_dump($kv->has('unsaved'));

echo $cache->get('a', $callback, INF), "\n";
echo $cache->get('a', $callback), "\n";

var_dump($cache->delete('a'));
echo $cache->get('a', $callback), "\n";

try {
    $cache->get('t', fn (ItemInterface $item) => $item->tag('x'));
} catch (LogicException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
try {
    $cache->get('b', $callback, -1.0);
} catch (Psr\Cache\InvalidArgumentException $e) {
    echo "InvalidArgumentException: ", $e->getMessage(), "\n";
}
$kv->clear();
--EXPECT--
bool(true)
a #1
a #1
a expires in about 360 s
short-lived
short is kept for its 1 s and the 60 s stale window: 61 s
not saved
bool(false)
a #2
a #2
bool(true)
a #3
Symfony\Component\Cache\Exception\LogicException: Cache item "t" comes from a non tag-aware pool: you cannot tag it.
InvalidArgumentException: Argument "$beta" provided to "Ephpm\Symfony\StaleCacheAdapter::get()" must be a positive number, -1.000000 given.
