--TEST--
Ephpm\Kv: a value with a TTL is gone after it, for get, has, add and deleteIfEquals; ttl() reports null, -1.0 or the seconds left
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_ttl
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$kv->set('short', 'v', 0.2);
$kv->set('lock', 'token', 0.2);
$kv->set('forever', 'v');
var_dump($kv->ttl('missing'), $kv->ttl('forever'));
$left = $kv->ttl('short');
var_dump($left > 0.1 && $left <= 0.2);
var_dump($kv->get('short'), $kv->has('short'));
usleep(300000);
var_dump($kv->get('short'), $kv->has('short'), $kv->ttl('short'));
var_dump($kv->deleteIfEquals('lock', 'token'), $kv->add('lock', 'mine'), $kv->get('lock'));
var_dump($kv->expire('forever', 0.2), $kv->expire('missing', 5));
usleep(300000);
var_dump($kv->has('forever'));
$kv->set('p', 1, 10);
var_dump($kv->expire('p', 0), $kv->ttl('p'));
--EXPECT--
NULL
float(-1)
bool(true)
string(1) "v"
bool(true)
NULL
bool(false)
NULL
bool(false)
bool(true)
string(4) "mine"
bool(true)
bool(false)
bool(false)
bool(true)
float(-1)
