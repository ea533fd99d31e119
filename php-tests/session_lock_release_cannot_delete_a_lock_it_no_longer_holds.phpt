--TEST--
session_lock_release_cannot_delete_a_lock_it_no_longer_holds: request A's session lock expires, B takes it, A writes and closes: A's stale write is refused with a warning and B's lock is untouched (Ephpm\SessionHandler through session_set_save_handler)
--EXTENSIONS--
ephpm
session
pcntl
--INI--
ephpm.store_name=phpt_session_overrun
ephpm.shm_size=4M
session.use_cookies=0
session.cache_limiter=
--FILE--
<?php
ob_start();
register_shutdown_function(fn () => ob_end_flush());
$kv = new Ephpm\Kv();
$kv->clear();
var_dump(new Ephpm\SessionHandler() instanceof SessionHandlerInterface);

// A: holds the session with a lock that lives 200 ms, and overruns it.
$a = new Ephpm\SessionHandler(null, ['lock_ttl' => 0.2]);
session_set_save_handler($a);
session_id('shared');
session_start();
$_SESSION['by'] = 'A';
usleep(400_000);

// B (another process) takes the expired lock and keeps it while A finishes.
if (($pid = pcntl_fork()) === 0) {
    $b = new Ephpm\SessionHandler(null, ['lock_wait' => 1, 'lock_timeout' => 'fail']);
    $b->read('shared');
    $b->write('shared', 'by|s:1:"B";');
    $kv->set('b has the lock', 1);
    while (!$kv->has('a is done')) { usleep(1000); }
    $kv->set('b still holds its lock', var_export($kv->has('session_lock:shared'), true));
    $kv->set('b can still write', var_export($b->write('shared', 'by|s:1:"B";n|i:2;'), true));
    $b->close();
    exit(0);
}
while (!$kv->has('b has the lock')) { usleep(1000); }
session_write_close();   // A's write is refused; A's close must not free B's lock
echo error_get_last()['message'] ?? '', "\n";
$kv->set('a is done', 1);
pcntl_waitpid($pid, $status);
echo "B still holds its lock after A closed: ", $kv->get('b still holds its lock'), "\n";
echo "B can still write: ", $kv->get('b can still write'), "\n";
echo "stored: ", $kv->get('session:shared'), "\n";
$kv->clear();
--EXPECTF--
bool(true)

Warning: Ephpm\SessionHandler::write(): ephpm: the lock of session shared expired and another request holds it now: this request's changes are not written in %s on line %d

Warning: session_write_close(): Failed to write session data using user defined save handler. (session.save_path: %S, handler: Ephpm\SessionHandler::write) in %s on line %d
%A
B still holds its lock after A closed: true
B can still write: true
stored: by|s:1:"B";n|i:2;
