--TEST--
Ephpm\MemoLock::exclusively(): a fatal error inside the section (memory_limit exhausted) still releases the lock before PHP's error goes on
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_fatal
ephpm.shm_size=2M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
register_shutdown_function(function () use ($kv) {
    echo "\nat shutdown the lock is held: ", var_export($kv->has('section'), true), "\n";
});
(new Ephpm\MemoLock($kv))->exclusively('section', function () use ($kv) {
    echo 'in the section the lock is held: ', var_export($kv->has('section'), true), "\n";
    ini_set('memory_limit', '4M');
    $too_big = str_repeat('x', 8 << 20);
});
--EXPECTF--
in the section the lock is held: true

Fatal error: Allowed memory size of %d bytes exhausted %s

at shutdown the lock is held: false
