--TEST--
Ephpm\Kv::add() stores only when the key is absent (or expired) and leaves an existing value untouched
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_add
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
var_dump($kv->add('k', 'first'), $kv->add('k', 'second'), $kv->get('k'));
$kv->set('k', 'third');
var_dump($kv->add('k', 'fourth'), $kv->get('k'));
$kv->delete('k');
var_dump($kv->add('k', ['an', 'array']), $kv->get('k'));
var_dump($kv->add('t', 'x', 0.1));
usleep(200000);
var_dump($kv->add('t', 'y'), $kv->get('t'));
--EXPECT--
bool(true)
bool(false)
string(5) "first"
bool(false)
string(5) "third"
bool(true)
array(2) {
  [0]=>
  string(2) "an"
  [1]=>
  string(5) "array"
}
bool(true)
bool(true)
string(1) "y"
