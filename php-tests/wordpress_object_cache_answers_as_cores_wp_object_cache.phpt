--TEST--
WordPress drop-in: 4000 seeded random calls (set, add, replace, get with $found and $force, the *_multiple calls, delete, incr, decr, flush_group, switch_to_blog, global groups, falsy values, numeric strings, floats, arrays, objects) answer exactly as WordPress's own WP_Object_Cache (Debian's WordPress) answers them, and a new request, reading the store, sees what core's request holds
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!is_file((getenv('EPHPM_WORDPRESS') ?: '/usr/share/wordpress') . '/wp-includes/class-wp-object-cache.php')) die('skip WordPress (Debian\'s wordpress package, unpacked by make deps) is not there');
--INI--
ephpm.store_name=phpt_wp_as_core
ephpm.shm_size=8M
--FILE--
<?php
const MULTISITE = true;
// Core's class first: the drop-in names its own class WP_Object_Cache only where core's is not there.
require (getenv('EPHPM_WORDPRESS') ?: '/usr/share/wordpress') . '/wp-includes/class-wp-object-cache.php';
require __DIR__ . '/harness/wordpress.inc';

$post = new stdClass();
$post->ID = 7;
$values = [false, null, 0, '', '0', 1, 7, '12', '007', 'abc', 1.5, '1e3', [1, 2], $post, true];
$keys = [0, 1, 2, '3', 'a', 'b'];
$groups = ['default', 'posts', 'users']; // users: global
$blog = 1;

function ours(int $blog): Ephpm\WordPress\ObjectCache
{
    $cache = new Ephpm\WordPress\ObjectCache(new Ephpm\WordPress\Config(salt: 'as-core'), is_multisite(), $blog);
    $cache->add_global_groups(['users']);
    return $cache;
}

$core = new WP_Object_Cache();
$core->add_global_groups(['users']);
$ours = ours($blog);
$ours->flush();
mt_srand(25);
$pick = fn (array $from) => $from[mt_rand(0, count($from) - 1)];
$differences = 0;
$calls = [];
for ($i = 0; $i < 4000; $i++) {
    $key = $pick($keys);
    $group = $pick($groups);
    $value = $pick($values);
    $n = mt_rand(0, 3);
    [$key2, $key3, $value2] = [$pick($keys), $pick($keys), $pick($values)];
    $op = $pick(['set', 'set', 'add', 'replace', 'get', 'get', 'get_force', 'delete', 'incr', 'incr', 'decr', 'decr',
        'get_multiple', 'set_multiple', 'add_multiple', 'delete_multiple', 'flush_group', 'switch_to_blog', 'new_request']);
    $calls[$op] = ($calls[$op] ?? 0) + 1;
    $answers = [];
    foreach (['core' => $core, 'ours' => $ours] as $name => $cache) {
        $found = null;
        $answers[$name] = match ($op) {
            'set', 'add', 'replace' => $cache->$op($key, $value, $group, $n * 3600), // expiry: never within the test
            'get' => [$cache->get($key, $group, false, $found), $found],
            'get_force' => [$cache->get($key, $group, true, $found), $found],
            'delete' => $cache->delete($key, $group),
            'incr', 'decr' => $cache->$op($key, $n, $group),
            'get_multiple' => $cache->get_multiple([$key, $key2, $key3], $group),
            'set_multiple', 'add_multiple' => $cache->$op([$key => $value, $key2 => $value2], $group, $n * 3600),
            'delete_multiple' => $cache->delete_multiple([$key, $key2], $group),
            'flush_group' => $cache->flush_group($group),
            'switch_to_blog' => $cache->switch_to_blog($n + 1),
            'new_request' => null,
        };
    }
    if ($op === 'switch_to_blog') {
        $blog = $n + 1;
    }
    if ($op === 'new_request') {
        $ours = ours($blog);
    }
    if (serialize($answers['core']) !== serialize($answers['ours'])) {
        if (++$differences <= 5) {
            echo "call $i: $op(", json_encode($key), ', ', json_encode($value), ", $group, $n): core ", json_encode($answers['core']), ', ours ', json_encode($answers['ours']), "\n";
        }
    }
}
// Finally every key of every group of every blog, read by a new request.
$ours = ours(1);
foreach ([1, 2, 3, 4] as $b) {
    $core->switch_to_blog($b);
    $ours->switch_to_blog($b);
    foreach ($groups as $group) {
        foreach ($keys as $key) {
            $a = [$core->get($key, $group, false, $f1), $f1];
            $b2 = [$ours->get($key, $group, false, $f2), $f2];
            if (serialize($a) !== serialize($b2)) {
                $differences++;
                echo "at the end, blog $b $group $key: core ", json_encode($a), ', ours ', json_encode($b2), "\n";
            }
        }
    }
}
ksort($calls);
echo 'every kind of call made: ', json_encode(min($calls) > 100), "\n";
echo "differences: $differences\n";
--EXPECT--
every kind of call made: true
differences: 0
