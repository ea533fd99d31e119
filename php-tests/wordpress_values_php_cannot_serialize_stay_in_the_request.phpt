--TEST--
WordPress drop-in: a value PHP cannot serialize (a Closure, an object holding one) is kept for the request, as core's cache keeps it, with one log line and no exception; the key's old value is gone from the store, and add() of such a value still loses to another process's key
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_unserializable
ephpm.shm_size=2M
--FILE--
<?php
$log = tempnam(sys_get_temp_dir(), 'ephpm');
ini_set('error_log', $log);
require __DIR__ . '/harness/wordpress.inc';
wp_cache_flush();

wp_cache_set('callback', 'an old, storable value');
wp_cache_init(); // the next request
$holder = new stdClass();
$holder->callback = fn () => 'called';
var_dump(wp_cache_set('callback', fn () => 'called'), wp_cache_get('callback')());
var_dump(wp_cache_set('holder', $holder), (wp_cache_get('holder')->callback)());
wp_cache_set('taken', 'by another process');
wp_cache_flush_runtime();
var_dump(wp_cache_add('taken', fn () => 1), wp_cache_add('free', fn () => 2), wp_cache_get('free')());

wp_cache_init(); // the next request
var_dump(wp_cache_get('callback', '', false, $found), $found, wp_cache_get('holder'), wp_cache_get('free'), wp_cache_get('taken'));
echo preg_replace('/^\[[^]]*\] /', '', file_get_contents($log));
unlink($log);
--EXPECT--
bool(true)
string(6) "called"
bool(true)
string(6) "called"
bool(false)
bool(true)
int(2)
bool(false)
bool(false)
bool(false)
bool(false)
string(18) "by another process"
ephpm object cache: Serialization of 'Closure' is not allowed; the value is kept in this request only
