--TEST--
session_regenerate_id() under session.use_strict_mode=1 stores exactly what it does without strict mode: the new id's own reservation is no collision, so PHP does not retry and leave reservations behind (native handler and Ephpm\SessionHandler)
--EXTENSIONS--
ephpm
session
--INI--
ephpm.store_name=phpt_session_regenerate_strict
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
--FILE--
<?php
ob_start(); // no output before the session functions: they refuse after headers
register_shutdown_function(fn () => ob_end_flush());
$kv = new Ephpm\Kv();

/** How many entries 5 regenerations of one session add to the store. */
function added_by_regenerating(Ephpm\Kv $kv, bool $strict): int {
    ini_set('session.use_strict_mode', $strict ? '1' : '0');
    session_id('');
    session_start();
    $_SESSION['n'] = 1;
    $before = $kv->stats()['entries'];
    for ($i = 0; $i < 5; $i++) {
        session_regenerate_id();
    }
    session_write_close();
    return $kv->stats()['entries'] - $before;
}

foreach (['native', 'object'] as $handler) {
    if ($handler === 'object') {
        session_set_save_handler(new Ephpm\SessionHandler(), true);
    }
    $plain = added_by_regenerating($kv, false);
    $strict = added_by_regenerating($kv, true);
    echo "$handler: strict mode adds ", $strict - $plain, " more entries\n";
}
?>
--EXPECT--
native: strict mode adds 0 more entries
object: strict mode adds 0 more entries
