--TEST--
Ephpm\MemoLock on a Symfony TagAwareAdapter over Ephpm\Symfony\EphpmAdapter: tags and expiry set inside the callback are kept with the item (invalidating the tag makes it a miss)
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_tags
ephpm.shm_size=2M
--FILE--
<?php
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';
use Symfony\Component\Cache\Adapter\TagAwareAdapter;

(new Ephpm\Kv())->clear();
$pool = new TagAwareAdapter(new Ephpm\Symfony\EphpmAdapter('items'), new Ephpm\Symfony\EphpmAdapter('tags'));
$pool->setCallbackWrapper(new Ephpm\MemoLock());
$computed = 0;
$get = function () use ($pool, &$computed) {
    return $pool->get('user.42', function ($item) use (&$computed) {
        $computed++;
        $item->tag(['users']);
        $item->expiresAfter(120);
        return 'Ada';
    });
};
echo $get(), ' ', $get(), "; computed $computed time(s)\n";
$meta = $pool->getItem('user.42')->getMetadata();
echo 'tags: ', json_encode(array_values($meta['tags'] ?? [])), '; expiry kept: ', var_export(($meta['expiry'] ?? 0) > microtime(true) + 100, true), "\n";
$pool->invalidateTags(['users']);
echo 'after invalidating the tag: ', var_export($pool->getItem('user.42')->isHit(), true), '; ', $get(), "; computed $computed time(s)\n";
--EXPECT--
Ada Ada; computed 1 time(s)
tags: ["users"]; expiry kept: true
after invalidating the tag: false; Ada; computed 2 time(s)
