--TEST--
WordPress companion plugin, WP-CLI: with WP_CLI defined the plugin registers `wp ephpm` (Ephpm\WordPress\Cli, run here under a stand-in WP_CLI class, as WP-CLI is not in Debian 12): status prints the drop-in, the store and its counters; enable links the drop-in and empties the cache, and fails on another's drop-in; disable removes ours; flush empties the site, flush --group one group
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_cli
ephpm.shm_size=2M
--FILE--
<?php
/** WP-CLI's API as the commands use it: output lines; error() ends the command (here: throws). */
final class WP_CLI
{
    public static array $commands = [];
    public static function add_command(string $name, $callable): void { self::$commands[$name] = $callable; }
    public static function line(string $message = ''): void { echo "  $message\n"; }
    public static function success(string $message): void { echo "  Success: $message\n"; }
    public static function warning(string $message): void { echo "  Warning: $message\n"; }
    public static function error(string $message): void { throw new RuntimeException("Error: $message"); }
}
define('WP_CLI', true);
define('ABSPATH', __DIR__ . '/');
require __DIR__ . '/harness/wordpress-admin.inc';

echo 'registered: ', json_encode(WP_CLI::$commands), "\n";
$class = WP_CLI::$commands['ephpm'];
// The backend reruns (phpt-on-redis.sh…) set their own ephpm.dsn: it reads as shm:// here.
$asShm = fn (string $s): string => str_replace(ini_get('ephpm.dsn'), 'shm://', $s);
$wp = function (string $line) use ($class, $asShm): void {
    echo "\$ wp $line\n";
    $words = explode(' ', $line);
    $assoc = [];
    foreach (array_slice($words, 2) as $word) {
        [$k, $v] = explode('=', substr($word, 2), 2) + [1 => true];
        $assoc[$k] = $v;
    }
    ob_start();
    try {
        (new $class())->{$words[1]}([], $assoc);
    } catch (RuntimeException $e) {
        echo '  ', $e->getMessage(), "\n";
    }
    echo preg_replace(['/ephpm [0-9.]+\S*/', '/\/\S*wp-content-\d+/', '/wpcache:\S+/', '/[0-9.]+ % \(\d+ hits, \d+ misses\)|n\/a \(0 hits, 0 misses\)/', '/\d+\.\d of \d+\.\d MiB/', '/(entries|evictions): +\d+/'], ['ephpm VERSION', 'WP_CONTENT_DIR', 'wpcache:SALT:', 'RATIO', 'M of N MiB', '$1: N'], $asShm(ob_get_clean()));
};
$wp('ephpm status');
wp_cache_set('post', 'cached', 'posts');
wp_cache_set('opt', 'cached', 'options');
$wp('ephpm enable');
wp_cache_init();
echo 'after enable: ', json_encode([wp_cache_get('post', 'posts'), wp_cache_get('opt', 'options')]), "\n";
$wp('ephpm enable');
wp_cache_set('post', 'cached', 'posts');
wp_cache_set('opt', 'cached', 'options');
$wp('ephpm flush --group=options');
wp_cache_init();
echo 'after flush --group=options: ', json_encode([wp_cache_get('post', 'posts'), wp_cache_get('opt', 'options')]), "\n";
$wp('ephpm flush');
wp_cache_init();
echo 'after flush: ', json_encode([wp_cache_get('post', 'posts')]), "\n";
$wp('ephpm flush --group=');
$wp('ephpm disable');
file_put_contents(WP_CONTENT_DIR . '/object-cache.php', "<?php\n// Plugin Name: another cache\n");
$wp('ephpm enable --copy');
$wp('ephpm disable');
--EXPECT--
registered: {"ephpm":"Ephpm\\WordPress\\Cli"}
$ wp ephpm status
  drop-in:          missing (WP_CONTENT_DIR/object-cache.php)
  extension:        ephpm VERSION
  store:            shm:// (ephpm.dsn)
  store answers:    yes
  key prefix:       wpcache:SALT:
  stale transients: off
  max TTL:          none
  this request:     RATIO
  store hit ratio:  RATIO
  store entries: N
  store memory:     M of N MiB
  store evictions: N
$ wp ephpm enable
  Success: linked ephpm's drop-in to WP_CONTENT_DIR/object-cache.php; the cache was emptied
after enable: [false,false]
$ wp ephpm enable
  Success: the drop-in is already in place: WP_CONTENT_DIR/object-cache.php; the cache was emptied
$ wp ephpm flush --group=options
  Success: the group 'options' was emptied
after flush --group=options: ["cached",false]
$ wp ephpm flush
  Success: this site's object cache was emptied
after flush: [false]
$ wp ephpm flush --group=
  Error: --group needs a group name
$ wp ephpm disable
  Success: removed ephpm's drop-in from WP_CONTENT_DIR/object-cache.php
$ wp ephpm enable --copy
  Error: WP_CONTENT_DIR/object-cache.php is another object cache's drop-in; it was left as it is (remove it first to use ephpm's)
$ wp ephpm disable
  Error: WP_CONTENT_DIR/object-cache.php is another object cache's drop-in; it was left as it is
