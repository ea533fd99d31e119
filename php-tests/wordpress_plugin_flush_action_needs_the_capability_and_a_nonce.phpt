--TEST--
WordPress companion plugin: the flush action (admin-post) ends in wp_die() and empties nothing for a user who cannot manage options or a request without the right nonce; with both it empties the site's cache and goes back to the Tools page; the page shows only to such users, escapes what it prints and carries a nonce per button; the drop-in's admin notice shows an administrator that the store cannot serve, and nobody else
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_plugin_flush
ephpm.shm_size=2M
--FILE--
<?php
define('ABSPATH', __DIR__ . '/');
require __DIR__ . '/harness/wordpress-admin.inc';

echo 'admin-post actions: ', json_encode(array_values(array_filter(array_keys($GLOBALS['wp_test_hooks']), fn ($h) => str_starts_with($h, 'admin_post_')))), "\n";
$plugin = new Ephpm\WordPress\Plugin(Ephpm\WordPress\Status::forSite());
$attempt = function (string $who, array $caps, ?string $nonce) use ($plugin): void {
    wp_cache_set('page', 'cached');
    $GLOBALS['wp_test_caps'] = $caps;
    $_REQUEST = $nonce === null ? [] : ['_wpnonce' => $nonce];
    unset($GLOBALS['wp_test_redirect']);
    try {
        $plugin->handle('flush');
        echo "$who: redirected to ", $GLOBALS['wp_test_redirect'];
    } catch (WpDie $e) {
        echo "$who: wp_die ", $e->getMessage();
    }
    wp_cache_init(); // the next request
    echo '; the cache ', wp_cache_get('page') === 'cached' ? 'kept' : 'emptied', "\n";
};
$attempt('a subscriber with a nonce', ['read'], wp_create_nonce('ephpm_object_cache_flush'));
$attempt('an administrator without a nonce', ['manage_options'], null);
$attempt('an administrator with another action\'s nonce', ['manage_options'], wp_create_nonce('ephpm_object_cache_enable'));
$attempt('an administrator with the nonce', ['manage_options'], wp_create_nonce('ephpm_object_cache_flush'));
try {
    $plugin->handle('rm -rf');
} catch (WpDie $e) {
    echo 'an unknown action: wp_die ', $e->getMessage(), "\n";
}

// The Tools page.
do_action('admin_menu');
[$capability, $page] = $GLOBALS['wp_test_pages']['ephpm-object-cache'];
echo "page needs: $capability\n";
$GLOBALS['wp_test_caps'] = ['read'];
ob_start();
$page();
$html = ob_get_clean();
echo 'page for a subscriber: ', json_encode($html), "\n";
$GLOBALS['wp_test_caps'] = ['manage_options'];
$_GET = ['ephpm_result' => 'flushed'];
ob_start();
$page();
$html = ob_get_clean();
preg_match_all('/name="action" value="([^"]+)".*?name="_wpnonce" value="([^"]+)"/', $html, $forms, PREG_SET_ORDER);
foreach ($forms as [, $action, $nonce]) {
    echo "button $action, nonce ", $nonce === wp_create_nonce($action) ? 'matches' : 'wrong', "\n";
}
echo 'says flushed: ', json_encode(str_contains($html, 'emptied')), ', raw < in a value: ', json_encode((bool) preg_match('/<td>[^<]*<[^\/]/', $html)), "\n";

// The drop-in's notice: this request's store cannot be reached.
$log = tempnam(sys_get_temp_dir(), 'ephpm');
ini_set('error_log', $log);
$GLOBALS['wp_object_cache'] = wp_test_site('down', ['dsn' => 'redis://127.0.0.1:1?timeout=0.2']);
wp_cache_get('x');
wp_cache_set('x', 1);
foreach ([['read'], ['manage_options']] as $caps) {
    $GLOBALS['wp_test_caps'] = $caps;
    ob_start();
    do_action('admin_notices');
    $notice = strip_tags(ob_get_clean());
    echo json_encode($caps), ': ', $notice ?: '(no notice)', "\n";
}
echo count(file($log)), " log line\n";
unlink($log);
--EXPECT--
admin-post actions: ["admin_post_ephpm_object_cache_enable","admin_post_ephpm_object_cache_disable","admin_post_ephpm_object_cache_flush"]
a subscriber with a nonce: wp_die 403 You are not allowed to manage the object cache.; the cache kept
an administrator without a nonce: wp_die 403 The link you followed has expired.; the cache kept
an administrator with another action's nonce: wp_die 403 The link you followed has expired.; the cache kept
an administrator with the nonce: redirected to https://example.test/wp-admin/tools.php?page=ephpm-object-cache&ephpm_result=flushed; the cache emptied
an unknown action: wp_die 403 You are not allowed to manage the object cache.
page needs: manage_options
page for a subscriber: ""
button ephpm_object_cache_flush, nonce matches
button ephpm_object_cache_enable, nonce matches
says flushed: true, raw < in a value: false
["read"]: (no notice)
["manage_options"]: ephpm object cache: the persistent object cache is not in use; WordPress runs on its request-local cache.Ephpm\Kv::get(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused (os error 111)
1 log line
