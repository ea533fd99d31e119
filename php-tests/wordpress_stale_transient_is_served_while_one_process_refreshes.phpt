--TEST--
WordPress drop-in, EPHPM_WP_STALE_TRANSIENTS: 8 processes reading an expired transient at once get one miss between them (that process regenerates and sets it) while the other 7 are served the stale value at once; the next request reads the new value; a deleted transient, or one past its grace, is never served stale; other groups and the setting left off expire as in core
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_wp_stale
ephpm.shm_size=4M
--FILE--
<?php
define('EPHPM_WP_STALE_TRANSIENTS', 2);
require __DIR__ . '/harness/wordpress.inc';
wp_cache_flush();
$barrier = new Ephpm\Kv(null, 'barrier:');
$barrier->clear();

// get_transient()/set_transient() with an external object cache are these calls.
wp_cache_set('rates', 'old rates', 'transient', 1);
wp_cache_set('other', 'old', 'default', 1);
wp_cache_set('gone', 'old', 'site-transient', 1);
wp_cache_delete('gone', 'site-transient');
usleep(1_200_000); // past their lifetime, inside the grace

$out = tempnam(sys_get_temp_dir(), 'ephpm');
$kids = [];
for ($p = 0; $p < 8; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        wp_cache_init();
        $barrier->increment('go');
        $bound = hrtime(true) + 10_000_000_000;
        while ($barrier->get('go') < 8 && hrtime(true) < $bound) {
        }
        $start = hrtime(true);
        $rates = wp_cache_get('rates', 'transient', false, $found);
        if (!$found) {
            usleep(300_000); // regenerating, as the caller of get_transient() does on false
            wp_cache_set('rates', "new rates by $p", 'transient', 60);
            $line = 'refreshed';
        } else {
            $line = "served '$rates'" . (hrtime(true) - $start < 100_000_000 ? ' at once' : ' late');
        }
        file_put_contents($out, "$line\n", FILE_APPEND | LOCK_EX);
        exit(0);
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) {
    pcntl_waitpid($pid, $status);
}
$lines = array_count_values(file($out, FILE_IGNORE_NEW_LINES));
ksort($lines);
unlink($out);
foreach ($lines as $line => $n) {
    echo "$n: $line\n";
}
wp_cache_init();
echo 'next request: ', preg_replace('/\d$/', 'N', wp_cache_get('rates', 'transient')), "\n";
echo 'deleted: ', json_encode(wp_cache_get('gone', 'site-transient')), "\n";
echo 'default group, expired: ', json_encode(wp_cache_get('other')), "\n";

wp_cache_set('brief', 'old', 'transient', 1);
usleep(3_300_000); // past lifetime and grace
wp_cache_init();
echo 'past the grace: ', json_encode(wp_cache_get('brief', 'transient')), "\n";

$off = wp_test_site('off'); // the setting left off: an expired transient is a miss for everyone
$off->set('t', 'old', 'transient', 1);
usleep(1_200_000);
echo 'off: ', json_encode(wp_test_site('off')->get('t', 'transient')), "\n"; // the next request
--EXPECT--
1: refreshed
7: served 'old rates' at once
next request: new rates by N
deleted: false
default group, expired: false
past the grace: false
off: false
