--TEST--
WordPress companion plugin: enable links ephpm's drop-in into wp-content (or copies it) and empties the site's cache, disable removes it; an outdated copy of ours is replaced; another object cache's drop-in is never overwritten nor removed, by the page's action or by the class, and stays byte for byte
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_plugin_dropin
ephpm.shm_size=2M
--FILE--
<?php
define('ABSPATH', __DIR__ . '/');
require __DIR__ . '/harness/wordpress-admin.inc';
$status = Ephpm\WordPress\Status::forSite();
$dropIn = $status->dropIn();
$path = WP_CONTENT_DIR . '/object-cache.php';
$source = realpath(__DIR__ . '/../php/WordPress/object-cache.php');

echo 'source is ours: ', json_encode($dropIn->source() === __DIR__ . '/../php/WordPress/object-cache.php' || realpath($dropIn->source()) === $source), "\n";
echo 'state: ', $dropIn->state(), "\n";
echo str_replace(WP_CONTENT_DIR, 'WP_CONTENT_DIR', $dropIn->enable()), "\n";
echo 'state: ', $dropIn->state(), ', a symlink to our file: ', json_encode(is_link($path) && realpath($path) === $source), "\n";
echo str_replace(WP_CONTENT_DIR, 'WP_CONTENT_DIR', $dropIn->enable()), "\n";
echo str_replace(WP_CONTENT_DIR, 'WP_CONTENT_DIR', $dropIn->disable()), ', state: ', $dropIn->state(), "\n";
echo str_replace(WP_CONTENT_DIR, 'WP_CONTENT_DIR', $dropIn->enable(copy: true)), ', state: ', $dropIn->state(), ', a file: ', json_encode(!is_link($path)), "\n";
file_put_contents($path, file_get_contents($path) . "\n// an older version\n");
echo 'edited copy: ', $dropIn->state(), "\n";
$dropIn->enable();
echo 'enabled again: ', $dropIn->state(), "\n";
$dropIn->disable();

$foreign = "<?php\n/**\n * Plugin Name: Redis Object Cache Drop-In\n */\n// another cache\n";
file_put_contents($path, $foreign);
echo 'foreign: ', $dropIn->state(), "\n";
foreach (['enable', 'disable'] as $method) {
    try {
        $dropIn->$method();
        echo "$method: done\n";
    } catch (RuntimeException $e) {
        echo "$method refused: ", str_replace(WP_CONTENT_DIR, 'WP_CONTENT_DIR', $e->getMessage()), "\n";
    }
}
echo 'unchanged: ', json_encode(file_get_contents($path) === $foreign), "\n";

// The Tools page's action, by an administrator with a valid nonce.
$plugin = new Ephpm\WordPress\Plugin($status);
$GLOBALS['wp_test_caps'] = ['manage_options'];
$log = tempnam(sys_get_temp_dir(), 'ephpm');
ini_set('error_log', $log);
foreach (['enable', 'disable'] as $action) {
    $_REQUEST['_wpnonce'] = wp_create_nonce("ephpm_object_cache_$action");
    $plugin->handle($action);
    echo "page $action: ", $GLOBALS['wp_test_redirect'], "\n";
}
echo 'unchanged: ', json_encode(file_get_contents($path) === $foreign), ', log lines: ', count(file($log)), "\n";
unlink($path);

// Enabling empties the site's cache: values from before the drop-in was in place.
wp_cache_set('option', 'stale from before');
$_REQUEST['_wpnonce'] = wp_create_nonce('ephpm_object_cache_enable');
$plugin->handle('enable');
echo 'page enable: ', $GLOBALS['wp_test_redirect'], ', state: ', $dropIn->state(), "\n";
wp_cache_init();
echo 'after enabling: ', json_encode(wp_cache_get('option')), "\n";
unlink($log);
--EXPECT--
source is ours: true
state: missing
linked ephpm's drop-in to WP_CONTENT_DIR/object-cache.php
state: ours, a symlink to our file: true
the drop-in is already in place: WP_CONTENT_DIR/object-cache.php
removed ephpm's drop-in from WP_CONTENT_DIR/object-cache.php, state: missing
copied ephpm's drop-in to WP_CONTENT_DIR/object-cache.php, state: ours, a file: true
edited copy: outdated
enabled again: ours
foreign: foreign
enable refused: WP_CONTENT_DIR/object-cache.php is another object cache's drop-in; it was left as it is (remove it first to use ephpm's)
disable refused: WP_CONTENT_DIR/object-cache.php is another object cache's drop-in; it was left as it is
unchanged: true
page enable: https://example.test/wp-admin/tools.php?page=ephpm-object-cache&ephpm_result=refused
page disable: https://example.test/wp-admin/tools.php?page=ephpm-object-cache&ephpm_result=refused
unchanged: true, log lines: 2
page enable: https://example.test/wp-admin/tools.php?page=ephpm-object-cache&ephpm_result=enabled, state: ours
after enabling: false
