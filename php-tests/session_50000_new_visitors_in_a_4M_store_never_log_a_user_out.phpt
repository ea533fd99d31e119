--TEST--
50,000 new visitors (session_start() with no id, strict mode) on a 4M store after 200 users logged in (180 idle since, 20 coming back): every user keeps the session and its data, and the cache entries stay; only the visitors' new ids and empty sessions are evicted
--EXTENSIONS--
ephpm
session
--SKIPIF--
<?php
$dsn = (string) ini_get('ephpm.dsn');
if ($dsn !== '' && !str_starts_with($dsn, 'shm://')) die('skip the shm store\'s eviction order');
?>
--INI--
ephpm.store_name=phpt_session_flood_4m
ephpm.shm_size=4M
session.save_handler=ephpm
session.use_cookies=0
session.use_strict_mode=1
session.cache_limiter=
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
for ($i = 0; $i < 300; $i++) {
    $kv->set("cache:$i", str_repeat('c', 200));
}

// A new visitor: no id, so PHP asks the handler for one (create_sid), reads it, and at
// the end writes nothing but an empty session (a write with lazy_write off, else a touch).
function visit(): void {
    session_id('');
    session_start();
    session_write_close();
}

$users = [];
for ($i = 0; $i < 200; $i++) {
    session_id('');
    session_start();
    $_SESSION['user'] = "user$i";
    $users[$i] = session_id();
    session_write_close();
}

for ($n = 0; $n < 50000; $n++) {
    ini_set('session.lazy_write', $n % 2 ? '1' : '0');
    visit();
    if ($n % 500 === 0) {
        // One of the 20 active users comes back and changes the session.
        $i = 180 + intdiv($n, 500) % 20;
        session_id($users[$i]);
        session_start();
        $_SESSION['seen'] = $n;
        session_write_close();
    }
}

$st = $kv->stats();
printf("new visitors' entries evicted: %s\n", var_export($st['evictions_anonymous'] > 0, true));
printf("cache entries evicted: %d, sessions evicted: %d, sum of the three = evictions: %s\n",
    $st['evictions_cache'], $st['evictions_session'],
    var_export($st['evictions_anonymous'] + $st['evictions_cache'] + $st['evictions_session'] === $st['evictions'], true));

$kept = 0;
foreach ($users as $i => $id) {
    session_id($id);
    session_start();
    $kept += session_id() === $id && ($_SESSION['user'] ?? null) === "user$i";
    session_write_close();
}
printf("%d of 200 logged-in users keep their session\n", $kept);
$cached = 0;
for ($i = 0; $i < 300; $i++) {
    $cached += $kv->get("cache:$i") === str_repeat('c', 200);
}
printf("%d of 300 cache entries stay\n", $cached);
?>
--EXPECT--
new visitors' entries evicted: true
cache entries evicted: 0, sessions evicted: 0, sum of the three = evictions: true
200 of 200 logged-in users keep their session
300 of 300 cache entries stay
