--TEST--
WordPress drop-in: wp_cache_flush_group() removes that group, in every blog, for this request and the next, and leaves every other group; it walks no keys (the old entries stay in the store, unread, until they age out); a non-persistent group is flushed in the request
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_flush_group
ephpm.shm_size=4M
--FILE--
<?php
const MULTISITE = true;
require __DIR__ . '/harness/wordpress.inc';
wp_cache_flush();
wp_cache_add_non_persistent_groups(['local']);

function report(string $when): void
{
    $values = [];
    foreach (['posts', 'terms', 'local'] as $group) {
        foreach ([1, 2] as $blog) {
            wp_cache_switch_to_blog($blog);
            $value = wp_cache_get('k', $group, false, $found);
            $values[] = "$group@$blog=" . ($found ? $value : 'miss');
        }
    }
    wp_cache_switch_to_blog(1);
    echo "$when: ", implode(' ', $values), "\n";
}

foreach ([1, 2] as $blog) {
    wp_cache_switch_to_blog($blog);
    foreach (['posts', 'terms', 'local'] as $group) {
        wp_cache_set('k', "$group of $blog", $group);
    }
}
$kv = new Ephpm\Kv(null, 'wpcache:' . Ephpm\WordPress\Config::fromConstants()->salt . ':');
$count = fn () => iterator_count(new Ephpm\KvIterator($kv, 'k:'));
report('before');
echo 'entries in the store: ', $count(), "\n";
var_dump(wp_cache_flush_group('posts'), wp_cache_flush_group('local'));
report('after, same request');
wp_cache_init(); // the next request
wp_cache_add_non_persistent_groups(['local']);
report('after, next request');
echo 'entries in the store: ', $count(), " (the flushed ones age out unread)\n";
wp_cache_set('k', 'new post', 'posts');
wp_cache_init();
echo 'set after the flush, next request: ', wp_cache_get('k', 'posts'), "\n";
--EXPECT--
before: posts@1=posts of 1 posts@2=posts of 2 terms@1=terms of 1 terms@2=terms of 2 local@1=local of 1 local@2=local of 2
entries in the store: 4
bool(true)
bool(true)
after, same request: posts@1=miss posts@2=miss terms@1=terms of 1 terms@2=terms of 2 local@1=miss local@2=miss
after, next request: posts@1=miss posts@2=miss terms@1=terms of 1 terms@2=terms of 2 local@1=miss local@2=miss
entries in the store: 4 (the flushed ones age out unread)
set after the flush, next request: new post
