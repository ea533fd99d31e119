--TEST--
WordPress drop-in, multisite: each blog sees its own keys, every blog sees the global groups' keys (as a request of another blog does, and after switch_to_blog), and wp_cache_flush() empties the whole network; a single site ignores blog ids
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_multisite
ephpm.shm_size=4M
--FILE--
<?php
const MULTISITE = true;
require __DIR__ . '/harness/wordpress.inc';
wp_cache_flush();

function request(int $blog): void
{
    $GLOBALS['blog_id'] = $blog;
    wp_cache_init();
    wp_cache_add_global_groups(['users', 'site-options']);
}

function sees(string $who): void
{
    $out = [];
    foreach (['posts', 'users'] as $group) {
        $value = wp_cache_get('k', $group, false, $found);
        $out[] = "$group=" . ($found ? $value : 'miss');
    }
    echo "$who: ", implode(' ', $out), "\n";
}

request(1);
wp_cache_set('k', 'post of blog 1', 'posts');
wp_cache_set('k', 'user (global)', 'users');
sees('blog 1');
wp_cache_switch_to_blog(2);
sees('switched to blog 2');
wp_cache_set('k', 'post of blog 2', 'posts');
wp_cache_switch_to_blog(1);
sees('switched back to blog 1');

request(2);
sees('a request of blog 2');
request(3);
sees('a request of blog 3');
wp_cache_set('k', 'user, changed in blog 3', 'users');
request(1);
sees('a request of blog 1');

var_dump(wp_cache_flush());
request(2);
sees('blog 2 after the flush');

// One site: switch_to_blog() changes nothing.
$single = wp_test_site('single');
$single->set('k', 'value');
$single->switch_to_blog(7);
echo 'single site after switch_to_blog(7): ', $single->get('k'), "\n";
--EXPECT--
blog 1: posts=post of blog 1 users=user (global)
switched to blog 2: posts=miss users=user (global)
switched back to blog 1: posts=post of blog 1 users=user (global)
a request of blog 2: posts=post of blog 2 users=user (global)
a request of blog 3: posts=miss users=user (global)
a request of blog 1: posts=post of blog 1 users=user, changed in blog 3
bool(true)
blog 2 after the flush: posts=miss users=miss
single site after switch_to_blog(7): value
