--TEST--
WordPress drop-in: every wp_cache_* function with core's semantics (false/null/0/'' stored and told from a miss by $found, objects copied in and out, add/replace/delete results, incr/decr never below 0 and false on a miss, expiry 0 = never, EPHPM_WP_MAXTTL caps, non-persistent groups stay in the request, a repeated get reads this request's copy, $force reads the store, the next request sees the store, hit/miss counters)
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_api
ephpm.shm_size=4M
--FILE--
<?php
require __DIR__ . '/harness/wordpress.inc';

function show(string $label, mixed ...$values): void
{
    echo $label, ': ', implode(' ', array_map(fn ($v) => str_replace("\n", '', var_export($v, true)), $values)), "\n";
}

$GLOBALS['wp_object_cache']->flush();
$store = new Ephpm\Kv(null, 'wpcache:' . Ephpm\WordPress\Config::fromConstants()->salt . ':');
show('class', get_class($GLOBALS['wp_object_cache']), $GLOBALS['wp_object_cache']->isPersistent());
show('supports', wp_cache_supports('get_multiple'), wp_cache_supports('flush_group'), wp_cache_supports('flush_runtime'), wp_cache_supports('something_else'));

// Falsy values are values.
foreach (['false' => false, 'null' => null, 'zero' => 0, 'empty' => '', 'zero_string' => '0', 'list' => []] as $key => $value) {
    wp_cache_set($key, $value);
}
wp_cache_flush_runtime(); // what follows reads the store, as the next request would
foreach (['false', 'null', 'zero', 'empty', 'zero_string', 'list', 'absent'] as $key) {
    $value = wp_cache_get($key, '', false, $found);
    show("get $key", $value, $found);
}
show('get_multiple', wp_cache_get_multiple(['zero', 'absent', 'null']));

// Objects are copies, in and out, in the request and in the store.
$post = new stdClass();
$post->title = 'first';
wp_cache_set('post', $post, 'posts');
$post->title = 'changed after set';
$copy = wp_cache_get('post', 'posts');
$copy->title = 'changed after get';
show('object in request', wp_cache_get('post', 'posts')->title);
wp_cache_flush_runtime();
$copy = wp_cache_get('post', 'posts');
$copy->title = 'changed after get';
show('object from store', wp_cache_get('post', 'posts')->title, wp_cache_get('post', 'posts') === wp_cache_get('post', 'posts'));

// add, replace, delete.
show('add new, add again', wp_cache_add('a', 1), wp_cache_add('a', 2), wp_cache_get('a'));
show('add falsy value', wp_cache_add('af', false), wp_cache_add('af', 'x'), wp_cache_get('af', '', false, $found), $found);
show('replace missing', wp_cache_replace('r', 'x'), wp_cache_get('r', '', false, $found), $found);
wp_cache_set('r', 'old');
show('replace present', wp_cache_replace('r', 'new'), wp_cache_get('r'));
show('delete present, again', wp_cache_delete('r'), wp_cache_delete('r'), wp_cache_get('r', '', false, $found), $found);
wp_suspend_cache_addition(true);
show('add while suspended', wp_cache_add('suspended', 1), wp_cache_get('suspended'));
wp_suspend_cache_addition(false);
show('multiple', wp_cache_add_multiple(['m1' => 1, 'a' => 9]), wp_cache_set_multiple(['m2' => 2, 'm3' => 3], 'g'), wp_cache_get_multiple(['m2', 'm3', 'm4'], 'g'), wp_cache_delete_multiple(['m2', 'm4'], 'g'));

// incr and decr.
show('incr missing', wp_cache_incr('n'), wp_cache_decr('n'), wp_cache_get('n', '', false, $found), $found);
wp_cache_set('n', 5);
show('incr, by 10, decr', wp_cache_incr('n'), wp_cache_incr('n', 10), wp_cache_decr('n', 3));
show('decr below 0', wp_cache_decr('n', 100), wp_cache_get('n'), wp_cache_decr('n'), wp_cache_incr('n', -4));
wp_cache_set('s', '7');
wp_cache_set('word', 'abc');
wp_cache_set('f', 1.5);
show('incr string, word, float', wp_cache_incr('s'), wp_cache_incr('word', 2), wp_cache_incr('f'));
wp_cache_flush_runtime();
show('next request sees', wp_cache_get('n'), wp_cache_get('s'), wp_cache_get('word'), wp_cache_get('f'));

// Expiry: 0 is never; EPHPM_WP_MAXTTL caps everything.
wp_cache_set('forever', 1);
wp_cache_set('hour', 1, '', 3600);
wp_cache_add('added_hour', 1, '', 3600);
$ttls = [];
foreach (new Ephpm\KvIterator($store) as $key => $info) {
    if (preg_match('/^k:default:\d+:(forever|hour|added_hour)$/', $key, $m)) {
        $ttls[$m[1]] = $info['ttl'] === null ? 'never' : ($info['ttl'] > 3590 && $info['ttl'] <= 3600 ? 'an hour' : $info['ttl']);
    }
}
ksort($ttls);
show('ttls', $ttls);
$capped = wp_test_site('capped', ['maxTtl' => 60]);
$capped->set('forever', 1);
$capped->set('day', 1, 'default', 86400);
$ttls = [];
foreach (new Ephpm\KvIterator(new Ephpm\Kv(null, 'wpcache:capped:')) as $key => $info) {
    $ttls[preg_replace('/^k:default:\d+:/', '', $key)] = $info['ttl'] > 50 && $info['ttl'] <= 60 ? 'a minute' : $info['ttl'];
}
unset($ttls['g:default']);
ksort($ttls);
show('ttls with maxttl 60', $ttls);

// The request's copy: a repeated get does not read the store; $force does.
wp_cache_set('local', 'cached');
wp_cache_flush_runtime();
wp_cache_get('local');
foreach (new Ephpm\KvIterator($store) as $key => $info) {
    if (str_ends_with($key, ':local')) {
        $store->delete($key); // behind the cache's back
    }
}
show('repeated get, forced get', wp_cache_get('local'), wp_cache_get('local', '', true, $found), $found, wp_cache_get('local'));

// Non-persistent groups stay in the request.
wp_cache_add_non_persistent_groups(['counts']);
wp_cache_set('c', 1, 'counts');
show('non-persistent in request', wp_cache_get('c', 'counts'), wp_cache_incr('c', 1, 'counts'));
wp_cache_flush_runtime();
show('non-persistent next request', wp_cache_get('c', 'counts', false, $found), $found);

// Keys: ints and strings alike; empty ones refused as core refuses them.
wp_cache_set(42, 'int key');
show('int key', wp_cache_get('42'), wp_cache_set('', 'x'), wp_cache_get(' '), wp_cache_add(null, 1));

$cache = $GLOBALS['wp_object_cache'];
$cache->cache_hits = $cache->cache_misses = 0;
wp_cache_get('a');
wp_cache_get('nothing');
wp_cache_get_multiple(['a', 'nothing', 'forever']);
show('hits, misses', $cache->cache_hits, $cache->cache_misses);
show('read as core\'s properties', array_key_exists('a', $cache->cache['default']), isset($cache->cache), $cache->global_groups, $cache->multisite);
ob_start();
$cache->stats();
show('stats', (bool) preg_match('#^<p><strong>Cache Hits:</strong> 3<br /><strong>Cache Misses:</strong> 2<br />.*<li><strong>Group:</strong> default - \( [0-9.]+k \)</li>#', ob_get_clean()));
show('close, flush', wp_cache_close(), wp_cache_flush(), wp_cache_get('a', '', false, $found), $found);
wp_cache_reset();
--EXPECT--
class: 'Ephpm\\WordPress\\ObjectCache' true
supports: true true true false
get false: false true
get null: NULL true
get zero: 0 true
get empty: '' true
get zero_string: '0' true
get list: array () true
get absent: false false
get_multiple: array (  'zero' => 0,  'absent' => false,  'null' => NULL,)
object in request: 'first'
object from store: 'first' false
add new, add again: true false 1
add falsy value: true false false true
replace missing: false false false
replace present: true 'new'
delete present, again: true false false false
add while suspended: false false
multiple: array (  'm1' => true,  'a' => false,) array (  'm2' => true,  'm3' => true,) array (  'm2' => 2,  'm3' => 3,  'm4' => false,) array (  'm2' => true,  'm4' => false,)
incr missing: false false false false
incr, by 10, decr: 6 16 13
decr below 0: 0 0 0 0
incr string, word, float: 8 2 2.5
next request sees: 0 8 2 2.5
ttls: array (  'added_hour' => 'an hour',  'forever' => 'never',  'hour' => 'an hour',)
ttls with maxttl 60: array (  'day' => 'a minute',  'forever' => 'a minute',)
repeated get, forced get: 'cached' false false false
non-persistent in request: 1 2
non-persistent next request: false false
doing it wrong: Ephpm\WordPress\ObjectCache::set: Cache key must not be an empty string.
doing it wrong: Ephpm\WordPress\ObjectCache::get: Cache key must not be an empty string.
doing it wrong: Ephpm\WordPress\ObjectCache::add: Cache key must be integer or non-empty string, NULL given.
int key: 'int key' false false false
hits, misses: 3 2
read as core's properties: true true array () false
stats: true
close, flush: true true false false
deprecated: wp_cache_reset since 3.5.0, use wp_cache_switch_to_blog()
deprecated: Ephpm\WordPress\ObjectCache::reset since 3.5.0, use WP_Object_Cache::switch_to_blog()
