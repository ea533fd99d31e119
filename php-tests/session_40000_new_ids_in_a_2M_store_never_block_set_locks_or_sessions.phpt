--TEST--
40,000 new session ids (reservations, as session_create_id() makes them) in a 2M store are evicted like cache entries when memory runs short: set(), a MemoLock lock and a session write still work afterwards
--EXTENSIONS--
ephpm
session
--SKIPIF--
<?php
$dsn = (string) ini_get('ephpm.dsn');
if ($dsn !== '' && !str_starts_with($dsn, 'shm://')) die('skip the shm store\'s memory bound');
?>
--INI--
ephpm.store_name=phpt_session_reservations_2m
ephpm.shm_size=2M
session.use_cookies=0
session.cache_limiter=
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$h = new Ephpm\SessionHandler();
$ids = 0;
for ($i = 0; $i < 40000; $i++) {
    $ids += strlen($h->create_sid()) === 32;
}
$st = $kv->stats();
printf("%d ids, some evicted: %s\n", $ids, var_export($st['evictions'] > 0, true));

var_dump($kv->set('after', str_repeat('x', 1000)), $kv->get('after') === str_repeat('x', 1000));
$lock = (new Ephpm\MemoLock($kv))->acquire('after-the-flood', 5000);
var_dump($lock instanceof Ephpm\Lock && $lock->isHeld(), $lock->release());

$s = new Ephpm\SessionHandler();
$id = $s->create_sid();
var_dump($s->read($id), $s->write($id, 'n|i:1;'), $s->close(), $s->read($id), $s->close());
?>
--EXPECT--
40000 ids, some evicted: true
bool(true)
bool(true)
bool(true)
bool(true)
string(0) ""
bool(true)
bool(true)
string(6) "n|i:1;"
bool(true)
