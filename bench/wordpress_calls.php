<?php
/**
 * Object-cache calls through WordPress's API, in one CLI process on the site of
 * bench/wordpress.sh, with whichever drop-in its wp-content has (one drop-in per process:
 * each defines the same functions). WordPress is loaded with SHORTINIT, which stops
 * wp-settings.php right after wp_start_object_cache(). Prints one line per operation,
 * "name nanoseconds-per-call" (the median of 5 passes):
 *
 *   php -n … bench/wordpress_calls.php SITE [calls=20000]
 *
 * get hit   wp_cache_get() of a cached post object with $force (read from the store:
 *           without $force both caches answer from the request's copy)
 * get local the same without $force (the request's copy: no store call)
 * get_multiple 50   wp_cache_get_multiple() of 50 post objects with $force, per call
 * set       wp_cache_set() of a post object (1,000 keys in turn)
 * add       wp_cache_add() of a new key (so the add wins and reaches the store)
 * incr      wp_cache_incr() of one counter
 */
[, $site] = $argv + [null, null];
$calls = (int) ($argv[2] ?? 20000);
$_SERVER['HTTP_HOST'] = '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
define('SHORTINIT', true);
require $site . '/wp-load.php';

// A post as WP_Post caches it ('posts' group): its row, ~1 KB serialized.
$post = (object) [
    'ID' => 42, 'post_author' => '1', 'post_date' => '2025-03-01 09:00:00', 'post_date_gmt' => '2025-03-01 09:00:00',
    'post_content' => str_repeat('<p>Cache store shared memory worker request query page post lock session.</p>', 8),
    'post_title' => 'Post 42: cache store shared memory', 'post_excerpt' => '', 'post_status' => 'publish',
    'comment_status' => 'open', 'ping_status' => 'open', 'post_password' => '', 'post_name' => 'post-42-cache-store',
    'to_ping' => '', 'pinged' => '', 'post_modified' => '2025-03-01 09:00:00', 'post_modified_gmt' => '2025-03-01 09:00:00',
    'post_content_filtered' => '', 'post_parent' => 0, 'guid' => 'http://127.0.0.1/?p=42', 'menu_order' => 0,
    'post_type' => 'post', 'post_mime_type' => '', 'comment_count' => '3', 'filter' => 'raw',
];
$group = 'bench-calls';
$run = getmypid();
$keys = [];
for ($i = 0; $i < 50; $i++) {
    $keys[] = "post-$i";
    wp_cache_set("post-$i", $post, $group);
}
wp_cache_set('hot', $post, $group);
wp_cache_set('counter', 0, $group);
if (wp_cache_get('hot', $group, true) != $post || count(array_filter(wp_cache_get_multiple($keys, $group, true))) !== 50) {
    fwrite(STDERR, "the cache does not give back what was set\n");
    exit(1);
}

$ops = [
    'get hit' => static function (int $n) use ($group): void {
        for ($i = 0; $i < $n; $i++) {
            wp_cache_get('hot', $group, true);
        }
    },
    'get local' => static function (int $n) use ($group): void {
        for ($i = 0; $i < $n; $i++) {
            wp_cache_get('hot', $group);
        }
    },
    'get_multiple 50' => static function (int $n) use ($group, $keys): void {
        for ($i = 0; $i < $n; $i++) {
            wp_cache_get_multiple($keys, $group, true);
        }
    },
    'set' => static function (int $n) use ($group, $post): void {
        for ($i = 0; $i < $n; $i++) {
            wp_cache_set('set-' . ($i % 1000), $post, $group);
        }
    },
    'add' => static function (int $n) use ($group, $post, $run): void {
        for ($i = 0; $i < $n; $i++) {
            wp_cache_add("add-$run-$i", $post, $group);
        }
    },
    'incr' => static function (int $n) use ($group): void {
        for ($i = 0; $i < $n; $i++) {
            wp_cache_incr('counter', 1, $group);
        }
    },
];
foreach ($ops as $name => $op) {
    $n = $name === 'get_multiple 50' ? max(1, intdiv($calls, 10)) : $calls;
    $op(max(1, intdiv($n, 10))); // warm-up
    if ($name === 'add') {
        for ($i = 0; $i < intdiv($n, 10); $i++) {
            wp_cache_delete("add-$run-$i", $group);
        }
    }
    $times = [];
    for ($pass = 0; $pass < 5; $pass++) {
        $t = hrtime(true);
        $op($n);
        $times[] = (hrtime(true) - $t) / $n;
        if ($name === 'add') { // untimed: the keys go, so the next pass adds them anew
            for ($i = 0; $i < $n; $i++) {
                wp_cache_delete("add-$run-$i", $group);
            }
        }
    }
    sort($times);
    printf("%s %.0f\n", $name, $times[2]);
}
