--TEST--
Ephpm\MemoLock as Symfony's wrapper passes &$save on by reference (a callback's $save = false keeps the value out of the pool) and recomputes behind the lock when $beta is INF
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_save_beta
ephpm.shm_size=2M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';
(new Ephpm\Kv())->clear();
$pool = new Ephpm\Symfony\EphpmAdapter('t');
$pool->setCallbackWrapper(new Ephpm\MemoLock());
echo $pool->get('volatile', function ($item, bool &$save) { $save = false; return 'not cached'; }), "\n";
echo 'cached: ', var_export($pool->getItem('volatile')->isHit(), true), "\n";
echo $pool->get('k', fn() => 'first'), "\n";
echo $pool->get('k', fn() => 'second'), "\n";
echo $pool->get('k', fn() => 'forced', INF), "\n";
echo $pool->get('k', fn() => 'third'), "\n";
--EXPECT--
not cached
cached: false
first
first
forced
forced
