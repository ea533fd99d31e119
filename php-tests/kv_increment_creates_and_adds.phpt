--TEST--
Ephpm\Kv::increment() creates at the increment, keeps the TTL of creation only, counts numeric strings, and rejects non-integers and overflow
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_incr
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
var_dump($kv->increment('c'), $kv->increment('c'), $kv->increment('c', 10), $kv->increment('c', -20));
var_dump($kv->increment('t', 1, 100), $kv->increment('t', 1, 1));
var_dump($kv->ttl('t') > 50);
$kv->set('s', '41');
var_dump($kv->increment('s'), $kv->get('s'));
$kv->set('w', 'word');
try { $kv->increment('w'); } catch (TypeError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
$kv->set('max', PHP_INT_MAX);
try { $kv->increment('max'); } catch (ArithmeticError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
var_dump($kv->get('max') === PHP_INT_MAX);
--EXPECT--
int(1)
int(2)
int(12)
int(-8)
int(1)
int(2)
bool(true)
int(42)
int(42)
TypeError: Ephpm\Kv::increment(): the value stored at this key is not an integer
ArithmeticError: Ephpm\Kv::increment(): the increment would overflow a 64-bit integer
bool(true)
