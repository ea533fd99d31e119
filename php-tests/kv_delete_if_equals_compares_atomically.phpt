--TEST--
Ephpm\Kv::deleteIfEquals() deletes only a matching value, also through compression; delete() reports whether a key existed
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_cad
ephpm.shm_size=4M
ephpm.compress_threshold=1K
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$kv->set('lock', 'token-A');
var_dump($kv->deleteIfEquals('lock', 'token-B'), $kv->get('lock'));
var_dump($kv->deleteIfEquals('lock', 'token-A'), $kv->has('lock'));
var_dump($kv->deleteIfEquals('lock', 'token-A'));
$big = str_repeat('compressible ', 1000);
$kv->set('big', $big);
// Only shm:// compresses (ephpm.compress_threshold); Redis keeps the value as it is.
var_dump(str_starts_with(ini_get('ephpm.dsn'), 'shm://') ? $kv->stats()['memory_used'] < strlen($big) : true);
var_dump($kv->deleteIfEquals('big', $big . 'x'), $kv->deleteIfEquals('big', $big), $kv->has('big'));
$kv->set('n', 5);
var_dump($kv->deleteIfEquals('n', '5'));
var_dump($kv->delete('gone'), $kv->set('here', 1), $kv->delete('here'), $kv->delete('here'));
--EXPECT--
bool(false)
string(7) "token-A"
bool(true)
bool(false)
bool(false)
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
bool(true)
bool(false)
