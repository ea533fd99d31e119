--TEST--
WordPress drop-in: a store that cannot be reached (a Redis DSN on a closed unix socket) or a DSN that is not one leaves the request on its request-local cache (gets miss; sets, add, incr, replace and delete work in the request; flushes empty the request and say false, since the store keeps its values), with one error_log line per request and no exception; without the extension the drop-in defines nothing, so WordPress keeps its own cache, after one log line
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_unusable
ephpm.shm_size=2M
--FILE--
<?php
$socket = sys_get_temp_dir() . '/ephpm-closed-' . getmypid() . '.sock';
fclose(stream_socket_server("unix://$socket")); // the file stays, nobody listens
define('EPHPM_WP_DSN', "unix://$socket");
$log = tempnam(sys_get_temp_dir(), 'ephpm');
ini_set('error_log', $log);
require __DIR__ . '/harness/wordpress.inc';

function show(string $label, mixed ...$values): void
{
    echo $label, ': ', implode(' ', array_map(fn ($v) => str_replace("\n", '', var_export($v, true)), $values)), "\n";
}

show('get', wp_cache_get('k', '', false, $found), $found, wp_cache_get_multiple(['k', 'j']));
show('persistent', $GLOBALS['wp_object_cache']->isPersistent());
show('set, get', wp_cache_set('k', 'v'), wp_cache_get('k'), wp_cache_get('k', '', true));
show('add, add', wp_cache_add('a', 5), wp_cache_add('a', 6), wp_cache_incr('a', 2), wp_cache_decr('a', 10), wp_cache_incr('none'));
show('replace, replace missing', wp_cache_replace('k', 'w'), wp_cache_get('k'), wp_cache_replace('none', 1));
show('delete, again', wp_cache_delete('k'), wp_cache_delete('k'));
wp_cache_set('g', 1, 'group');
show('flush_group', wp_cache_flush_group('group'), wp_cache_get('g', 'group'));
wp_cache_set('f', 1);
show('flush', wp_cache_flush(), wp_cache_get('f'));
wp_cache_set('next', 'only this request');
wp_cache_init(); // the next request
show('next request', wp_cache_get('next'));
wp_test_site('bad dsn', ['dsn' => 'bogus://x'])->set('k', 1);

$lines = file($log, FILE_IGNORE_NEW_LINES);
echo count($lines), " log lines:\n";
foreach ($lines as $line) {
    echo preg_replace(['/^\[[^]]*\] /', '/' . preg_quote($socket, '/') . '/', '/ \(os error \d+\)/', '/("bogus:\/\/x" is not a store DSN).*;/'], ['', 'SOCKET', '', '$1 …;'], $line), "\n";
}
unlink($log);
unlink($socket);

// Without the extension: php -n, no extension= line.
$child = proc_open([PHP_BINARY, '-n', '-r', 'require ' . var_export(__DIR__ . '/harness/wordpress.inc', true) . '; echo "wp_cache_init defined: ", json_encode(function_exists("wp_cache_init")), "\n";'], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
echo 'without the extension: ', stream_get_contents($pipes[1]), 'log: ', stream_get_contents($pipes[2]);
proc_close($child);
--EXPECT--
get: false false array (  'k' => false,  'j' => false,)
persistent: false
set, get: true 'v' 'v'
add, add: true false 7 0 false
replace, replace missing: true 'w' false
delete, again: true false
flush_group: false false
flush: false false
next request: false
3 log lines:
ephpm object cache: Ephpm\Kv::get(): the store at unix://SOCKET cannot be reached: Connection refused; this request uses its request-local cache only
ephpm object cache: Ephpm\Kv::get(): the store at unix://SOCKET cannot be reached: Connection refused; this request uses its request-local cache only
ephpm object cache: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "bogus://x" is not a store DSN …; this request uses its request-local cache only
without the extension: wp_cache_init defined: false
log: ephpm object cache: the ephpm extension is not loaded; WordPress uses its own request-local cache
