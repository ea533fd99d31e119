--TEST--
ephpm_kv_* functions behave as ePHPm's: strings, seconds TTLs (0 or less: none), -2/-1 from ttl/pttl, false on non-integers
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_compat
ephpm.shm_size=4M
--FILE--
<?php
var_dump(ephpm_kv_flush_all());
var_dump(ephpm_kv_set('a', 'one'), ephpm_kv_get('a'), ephpm_kv_get('missing'));
var_dump(ephpm_kv_setnx('a', 'two'), ephpm_kv_setnx('b', 'two', 100), ephpm_kv_get('a'));
var_dump(ephpm_kv_ttl('missing'), ephpm_kv_ttl('a'), ephpm_kv_ttl('b'), ephpm_kv_pttl('b') > 99000);
var_dump(ephpm_kv_set('neg', 'x', -5), ephpm_kv_ttl('neg'));
var_dump(ephpm_kv_exists('a'), ephpm_kv_exists('zzz'));
var_dump(ephpm_kv_del('a'), ephpm_kv_del('a'));
var_dump(ephpm_kv_incr('n'), ephpm_kv_incr('n'), ephpm_kv_decr('n'), ephpm_kv_incr_by('n', 41), ephpm_kv_get('n'));
var_dump(ephpm_kv_incr('b'));
var_dump(ephpm_kv_expire('n', 0), ephpm_kv_expire('n', 10), ephpm_kv_ttl('n'), ephpm_kv_expire('zzz', 10));
var_dump(ephpm_kv_set('tok', 'secret'), ephpm_kv_del_if_eq('tok', 'guess'), ephpm_kv_del_if_eq('tok', 'secret'), ephpm_kv_exists('tok'));
$kv = new Ephpm\Kv();
$kv->set('typed', 12);
var_dump(ephpm_kv_get('typed'));
var_dump(ephpm_kv_wait('n', 0, 10));
var_dump(ephpm_kv_wait('n', ephpm_kv_wait('n', 0, 0)['version'], 20));
var_dump(ephpm_kv_flush_all(), ephpm_kv_exists('b'));
--EXPECTF--
bool(true)
bool(true)
string(3) "one"
NULL
bool(false)
bool(true)
string(3) "one"
int(-2)
int(-1)
int(100)
bool(true)
bool(true)
int(-1)
bool(true)
bool(false)
int(1)
int(0)
int(1)
int(2)
int(1)
int(42)
string(2) "42"
bool(false)
bool(false)
bool(true)
int(10)
bool(false)
bool(true)
bool(false)
bool(true)
bool(false)
string(2) "12"
array(2) {
  ["version"]=>
  int(%d)
  ["value"]=>
  string(2) "42"
}
bool(false)
bool(true)
bool(false)
