--TEST--
WordPress drop-in: two sites on one store (two salts) never see each other's keys; flushing one leaves the other, a Kv key outside both, a held MemoLock lock and a session alone; the default salt differs with the database (table prefix), and no salt's keys start with another's prefix
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_wp_two_sites
ephpm.shm_size=4M
--FILE--
<?php
require __DIR__ . '/harness/wordpress.inc';
$kv = new Ephpm\Kv();
$kv->clear();
$kv->set('app:setting', 'kept');
$lock = (new Ephpm\MemoLock($kv))->acquire('report');
$sessions = new Ephpm\SessionHandler($kv);
$sessions->write($id = 'abcdef0123456789abcdef0123', 'user|s:5:"alice";');

$blog = wp_test_site('blog');
$shop = wp_test_site('shop');
$trap = wp_test_site('blog:x'); // a salt that starts with another's, plus ':'
$by = 0;
foreach (['blog' => $blog, 'shop' => $shop, 'trap' => $trap] as $name => $site) {
    $site->set('alloptions', "options of $name", 'options');
    $site->add('counter', 10);
    $site->incr('counter', ++$by);
}
foreach (['blog' => $blog, 'shop' => $shop, 'trap' => $trap] as $name => $site) {
    $site->flush_runtime();
    echo "$name sees: ", $site->get('alloptions', 'options'), ', counter ', $site->get('counter'), "\n";
}
var_dump($blog->flush());
foreach (['blog' => $blog, 'shop' => $shop, 'trap' => $trap] as $name => $site) {
    $site->flush_runtime();
    $value = $site->get('alloptions', 'options', false, $found);
    echo "after blog's flush, $name sees: ", $found ? $value : 'nothing', "\n";
}
echo 'Kv key: ', $kv->get('app:setting'), '; lock held: ', json_encode($lock->isHeld()), '; session: ', $sessions->read($id), "\n";

// The default salt: the database's identity.
$GLOBALS['table_prefix'] = 'wp_';
$one = Ephpm\WordPress\Config::fromConstants()->salt;
$GLOBALS['table_prefix'] = 'wp2_';
$two = Ephpm\WordPress\Config::fromConstants()->salt;
echo 'default salts: ', strlen($one), ' hex digits, differ with the table prefix: ', json_encode($one !== $two), "\n";
--EXPECT--
blog sees: options of blog, counter 11
shop sees: options of shop, counter 12
trap sees: options of trap, counter 13
bool(true)
after blog's flush, blog sees: nothing
after blog's flush, shop sees: options of shop
after blog's flush, trap sees: options of trap
Kv key: kept; lock held: true; session: user|s:5:"alice";
default salts: 16 hex digits, differ with the table prefix: true
