--TEST--
WordPress companion plugin, Site Health: the test is good when our drop-in is in place and the store answers, critical when it is in place and the store cannot be reached, recommended when the drop-in is missing or another's; the Info section shows the DSN with its password masked, the store's counters and this request's hit ratio (the $cache_hits/$cache_misses Query Monitor reads)
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_plugin_health
ephpm.shm_size=2M
--FILE--
<?php
define('ABSPATH', __DIR__ . '/');
require __DIR__ . '/harness/wordpress-admin.inc';
use Ephpm\WordPress\{Config, DropIn, Plugin, Status};

$tests = apply_filters('site_status_tests', ['direct' => [], 'async' => []]);
echo 'registered: ', json_encode(array_keys($tests['direct'])), "\n";
$health = fn () => ($tests['direct']['ephpm_object_cache']['test'])();
// The backend reruns (phpt-on-redis.sh…) set their own ephpm.dsn: it reads as shm:// here,
// as printed and as escaped into HTML (a DSN with several parameters has a "&").
$asShm = fn (string $s): string => str_replace([htmlspecialchars(ini_get('ephpm.dsn')), ini_get('ephpm.dsn')], 'shm://', $s);
$show = function (array $r) use ($asShm): void {
    echo "  {$r['status']}: {$r['label']} — ", $asShm(strip_tags($r['description'])), $r['actions'] === '' ? '' : ' [link to the page]', "\n";
};
$dropIn = new DropIn(__DIR__ . '/../php/WordPress/object-cache.php', WP_CONTENT_DIR);

echo "missing:\n";
$show($health());
$dropIn->enable();
echo "ours, shm store:\n";
$show($health());
file_put_contents(WP_CONTENT_DIR . '/other.php', "<?php\n// Plugin Name: another cache\n");
unlink(WP_CONTENT_DIR . '/object-cache.php');
symlink(WP_CONTENT_DIR . '/other.php', WP_CONTENT_DIR . '/object-cache.php');
echo "another's:\n";
$show($health());
unlink(WP_CONTENT_DIR . '/object-cache.php');
$dropIn->enable();

// The same drop-in, the store a Redis that does not answer, with a password in its DSN.
$bad = new Plugin(new Status(new Config(dsn: 'redis://cache:hunter2@127.0.0.1:1?timeout=0.2'), $dropIn));
echo "ours, store unreachable:\n";
$show($bad->siteHealthTest());
$info = $bad->debugInformation([]);
echo '  dsn: ', $info['ephpm-object-cache']['fields']['store']['value'], "\n";
echo '  store answers: ', $info['ephpm-object-cache']['fields']['storeanswers']['value'], "\n";
echo '  password shown anywhere: ', json_encode(str_contains(json_encode([$info, $bad->siteHealthTest()]), 'hunter2')), "\n";
echo '  other dsns: ', Status::maskDsn('rediss://10.0.0.5?password=s3cret&ca=/ca.pem'), ' ', Status::maskDsn('redis-sentinel://:s3cret@a:26379,b:26379/main'), "\n";

// Info for the good store, after some hits and misses in this request.
wp_cache_set('a', 1);
wp_cache_get('a');
wp_cache_get('a');
wp_cache_get('b');
$vars = get_object_vars($GLOBALS['wp_object_cache']); // what Query Monitor reads
echo 'Query Monitor reads: hits ', $vars['cache_hits'], ', misses ', $vars['cache_misses'], "\n";
$info = apply_filters('debug_information', ['wp-core' => []]);
echo 'sections: ', json_encode(array_keys($info)), "\n";
foreach ($info['ephpm-object-cache']['fields'] as $key => $field) {
    echo "  $key: {$field['label']} = ", preg_replace(['/ephpm [0-9.]+\S*/', '/\(\/.*\)/', '/^\d+(\.\d+ of \d+\.\d MiB)?$/', '/^wpcache:.*/', '/^[0-9.]+ % \(\d+ hits, \d+ misses\)/'], ['ephpm VERSION', '(PATH)', 'N', 'wpcache:SALT:', 'RATIO'], $asShm($field['value'])), "\n";
}
--EXPECT--
registered: ["ephpm_object_cache"]
missing:
  recommended: The ephpm object cache is not in use — The ephpm drop-in is not in wp-content: enable it on the ephpm object cache page under Tools, or with wp ephpm enable. [link to the page]
ours, shm store:
  good: The ephpm object cache is in use — Every PHP process of the site shares the object cache in shm:// (ephpm.dsn).
another's:
  recommended: The ephpm object cache is not in use — wp-content/object-cache.php is another object cache&#039;s drop-in, so ephpm&#039;s is not in use. [link to the page]
ours, store unreachable:
  critical: The ephpm object cache cannot reach its store — WordPress runs on its request-local cache until this is fixed: Ephpm\Kv::set(): the store at redis://cache:***@127.0.0.1:1 cannot be reached: Connection refused (os error 111) [link to the page]
  dsn: redis://cache:****@127.0.0.1:1?timeout=0.2
  store answers: no: Ephpm\Kv::set(): the store at redis://cache:***@127.0.0.1:1 cannot be reached: Connection refused (os error 111)
  password shown anywhere: false
  other dsns: rediss://10.0.0.5?password=****&ca=/ca.pem redis-sentinel://:****@a:26379,b:26379/main
Query Monitor reads: hits 2, misses 1
sections: ["wp-core","ephpm-object-cache"]
  drop-in: drop-in = ours (PATH)
  extension: extension = ephpm VERSION
  store: store = shm:// (ephpm.dsn)
  storeanswers: store answers = yes
  keyprefix: key prefix = wpcache:SALT:
  staletransients: stale transients = off
  maxttl: max TTL = none
  thisrequest: this request = RATIO
  storehitratio: store hit ratio = RATIO
  storeentries: store entries = N
  storememory: store memory = N
  storeevictions: store evictions = N
