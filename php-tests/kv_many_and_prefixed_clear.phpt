--TEST--
Ephpm\Kv: getMany/setMany, and clear() with a prefix removes only that prefix's keys
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_many
ephpm.shm_size=4M
--FILE--
<?php
$all = new Ephpm\Kv();
$all->clear();
$app = new Ephpm\Kv(null, 'app:');
$other = new Ephpm\Kv(null, 'other:');
var_dump($app->setMany(['a' => 1, 'b' => 'two', 3 => [3]], 60));
$other->set('a', 'not app');
var_dump($app->getMany(['a', 'b', 'missing', 3]));
var_dump($all->get('app:a'), $all->get('other:a'));
var_dump($app->clear(), $app->has('a'), $other->get('a'));
var_dump($all->clear(), $other->has('a'));
--EXPECT--
bool(true)
array(3) {
  ["a"]=>
  int(1)
  ["b"]=>
  string(3) "two"
  [3]=>
  array(1) {
    [0]=>
    int(3)
  }
}
int(1)
string(7) "not app"
bool(true)
bool(false)
string(7) "not app"
bool(true)
bool(false)
