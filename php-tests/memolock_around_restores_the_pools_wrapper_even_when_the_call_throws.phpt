--TEST--
Ephpm\MemoLock::around() and ::unguarded() swap a Symfony pool's callback wrapper for one call and restore the pool's own afterwards, also when the call throws (the exception propagates unchanged)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_around
ephpm.shm_size=2M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';
(new Ephpm\Kv())->clear();
$pool = new Ephpm\Symfony\EphpmAdapter('a');
$own = fn($callback, $item, &$save, $pool, $setMetadata = null, $logger = null, $beta = null) => 'own:' . $callback($item, $save);
$pool->setCallbackWrapper($own);
$locks = new Ephpm\MemoLock();
echo $locks->around($pool, fn($p) => $p->get('a', fn() => 'locked')), "\n";
try {
    $locks->around($pool, function () { throw new OutOfBoundsException('from the call'); });
} catch (OutOfBoundsException $e) {
    echo get_class($e), ': ', $e->getMessage(), ' (line ', $e->getLine(), ")\n";
}
echo $pool->get('b', fn() => 'restored'), "\n";
echo Ephpm\MemoLock::unguarded($pool, fn($p) => $p->get('c', fn() => 'unguarded')), "\n";
echo $pool->get('d', fn() => 'restored again'), "\n";
--EXPECT--
locked
OutOfBoundsException: from the call (line 11)
own:restored
unguarded
own:restored again
