--TEST--
session.save_handler=ephpm: round trip, lazy_write renews an unchanged session, strict mode rejects unknown ids, session_regenerate_id() and session_destroy() release the lock
--EXTENSIONS--
ephpm
session
--INI--
ephpm.store_name=phpt_session
ephpm.shm_size=4M
session.save_handler=ephpm
session.use_cookies=0
session.use_strict_mode=1
session.cache_limiter=
session.gc_maxlifetime=100
ephpm.session.lock_wait=0.2
ephpm.session.lock_timeout=fail
--FILE--
<?php
ob_start(); // no output before the session functions: they refuse after headers
register_shutdown_function(fn () => ob_end_flush());
$kv = new Ephpm\Kv();
$locked = fn (string $id) => $kv->has("session_lock:$id");
$ttl = fn (string $id) => round($kv->ttl("session:$id"));

echo "-- a new session gets a fresh, reserved id\n";
session_start();
$id = session_id();
printf("id of %d chars, stored: %s, locked while open: %s\n", strlen($id), var_export($kv->has("session:$id"), true), var_export($locked($id), true));
$_SESSION['n'] = 1;
session_write_close();
printf("after close: locked %s, data %s, ttl %d\n", var_export($locked($id), true), $kv->get("session:$id"), $ttl($id));

echo "-- lazy_write: an unchanged session is not rewritten, its lifetime is renewed\n";
$kv->expire("session:$id", 5);
session_id($id);
session_start();
session_write_close();
printf("ttl back to %d\n", $ttl($id));

echo "-- strict mode: an unknown id is replaced\n";
session_id('unknownid123');
session_start();
printf("kept the unknown id: %s\n", var_export(session_id() === 'unknownid123', true));
session_write_close();

echo "-- regenerate_id(true): the old session is gone and its lock released\n";
session_id($id);
session_start();
session_regenerate_id(true);
$new = session_id();
printf("new id: %s, old data: %s, old lock: %s, new lock: %s\n", var_export($new !== $id, true),
    var_export($kv->has("session:$id"), true), var_export($locked($id), true), var_export($locked($new), true));
print_r($_SESSION);

echo "-- destroy: data and lock gone\n";
session_destroy();
printf("data: %s, lock: %s\n", var_export($kv->has("session:$new"), true), var_export($locked($new), true));

echo "-- a session held by another process: session_start() fails after lock_wait (lock_timeout=fail)\n";
$other = new Ephpm\SessionHandler();
$other->read('busy');
$other->write('busy', '');
session_id('busy');
var_dump(@session_start());
echo error_get_last()['message'], "\n";
$other->close();
var_dump(session_start());
session_write_close();
$kv->clear();
--EXPECTF--
-- a new session gets a fresh, reserved id
id of 32 chars, stored: true, locked while open: true
after close: locked false, data n|i:1;, ttl 100
-- lazy_write: an unchanged session is not rewritten, its lifetime is renewed
ttl back to 100
-- strict mode: an unknown id is replaced
kept the unknown id: false
-- regenerate_id(true): the old session is gone and its lock released
new id: true, old data: false, old lock: false, new lock: true
Array
(
    [n] => 1
)
-- destroy: data and lock gone
data: false, lock: false
-- a session held by another process: session_start() fails after lock_wait (lock_timeout=fail)
bool(false)
session_start(): Failed to read session data: ephpm (path: %S)
bool(true)
