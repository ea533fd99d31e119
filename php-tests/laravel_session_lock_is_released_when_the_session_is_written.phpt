--TEST--
Laravel session driver: the session's lock is released as soon as Laravel writes the session (a request waiting for it goes on while the first is still running; no lock key is left), 40 racing requests lose no update, `lock_wait`/`lock_timeout` from config/session.php (fail: the session starts empty and is never written over the holder's; warnings go to Laravel's log, not E_WARNING), gc() returns a count, terminate() drops a lock a worker still holds
--EXTENSIONS--
ephpm
pcntl
mbstring
ctype
--SKIPIF--
<?php if (!is_file('/usr/share/php/Illuminate/Foundation/Application.php')) die('skip php-laravel-framework is not installed');
--INI--
ephpm.store_name=phpt_laravel_session
ephpm.shm_size=8M
--FILE--
<?php
require __DIR__ . '/harness/laravel.inc';

use Illuminate\Session\Store;

$app = laravel_app(['ephpm' => ['driver' => 'ephpm']], ['ephpm' => ['lock_wait' => 10]]);
$raw = new Ephpm\Kv(null, 'laravel_session:');
$raw->clear();
$marks = new Ephpm\Kv(null, 'marks:');
$marks->clear();
$id = str_repeat('a', 40);
/**
 * A request's session, as StartSession builds it: the driver's handler, the id from the
 * cookie. A forked child builds an application of its own: it is another request, not a
 * copy of the parent's handler (which holds the parent's lock).
 */
function session_for(string $id, ?Illuminate\Foundation\Application $app = null): Store
{
    $app ??= laravel_app(['ephpm' => ['driver' => 'ephpm']], ['ephpm' => ['lock_wait' => 10]]);
    $handler = $app['session']->driver()->getHandler();
    return new Store('laravel_session', $handler, $id);
}

echo "-- the lock goes when the session is written\n";
$first = session_for($id, $app);
$first->start();
var_dump($raw->has("session_lock:$id"));
if (($pid = pcntl_fork()) === 0) {
    // The second request: started once the first holds the lock, waits for it.
    $second = session_for($id);
    $second->start();
    $marks->set('second saw', $second->get('step'));
    $second->save();
    $marks->set('second done', true);
    exit(0);
}
usleep(100_000);
$first->put('step', 'written by the first');
$first->save();
// The first request goes on running (up to 5 s) after saving: the second must not wait for it.
$deadline = microtime(true) + 5;
while (!$marks->has('second done') && microtime(true) < $deadline) {
    usleep(1000);
}
printf("the second finished while the first still ran: %s, and read: %s\n", var_export($marks->has('second done'), true), $marks->get('second saw'));
pcntl_waitpid($pid, $status);
var_dump($raw->has("session_lock:$id"));

echo "-- a session written again after its lock went: lands only if nobody wrote it meanwhile\n";
$late = session_for($id, $app);
$late->start();
$late->put('late', 'first save');
$late->save();
$late->put('late', 'second save, nobody in between');
$late->save();
$other = session_for($id);
$other->start();
var_dump($other->get('late'));
$other->put('other', 'saved in between');
$other->save();
$late->put('late', 'third save, after another request');
$late->save();
$check = session_for($id);
$check->start();
var_dump($check->get('late'), $check->get('other'));
$check->forget('late');
$check->forget('other');
$check->save();
echo preg_match('/this late write is dropped/', laravel_log($app)) ? "logged\n" : "not logged\n";

echo "-- 40 racing requests, one counter\n";
laravel_fork(40, function () use ($id) {
    $s = session_for($id);
    $s->start();
    $s->put('count', $s->get('count', 0) + 1);
    $s->save();
});
$s = session_for($id);
$s->start();
var_dump($s->get('count'));
$s->save();

echo "-- lock_timeout fail: an empty session, never written over the holder's\n";
$impatient = laravel_app(['ephpm' => ['driver' => 'ephpm']], ['ephpm' => ['lock_wait' => 0.1, 'lock_timeout' => 'fail']]);
$holder = session_for($id);
$holder->start();
$handler = $impatient['session']->driver()->getHandler();
$loser = new Store('laravel_session', $handler, $id);
$loser->start();
var_dump($loser->get('count'));
$loser->put('count', 'overwritten');
$loser->save();
printf("the stored session was written over: %s\n", var_export(str_contains((string) $raw->get("session:$id"), 'overwritten'), true));
$holder->save();
$check = session_for($id);
$check->start();
var_dump($check->get('count'));
$check->save();
echo preg_match('/WARNING: .*session a{40} was not written/', laravel_log($impatient)) ? "logged\n" : "not logged: " . laravel_log($impatient) . "\n";

echo "-- lock_timeout warn: goes on without the lock, the warning in the log\n";
$patient = laravel_app(['ephpm' => ['driver' => 'ephpm']], ['ephpm' => ['lock_wait' => 0.1]]);
$holder = session_for($id);
$holder->start();
$other = new Store('laravel_session', $patient['session']->driver()->getHandler(), $id);
$other->start();
var_dump($other->get('count'));
echo preg_match('/WARNING: .*was not released within 100 ms; going on without it/', laravel_log($patient)) ? "logged\n" : "not logged: " . laravel_log($patient) . "\n";
$holder->save();

echo "-- gc() returns a count\n";
var_dump($app['session']->driver()->getHandler()->gc(7200));

echo "-- terminate() drops a lock still held\n";
$held = session_for($id, $app);
$held->start();
var_dump($raw->has("session_lock:$id"));
$app->terminate();
var_dump($raw->has("session_lock:$id"));
$raw->clear();
$marks->clear();
--EXPECT--
-- the lock goes when the session is written
bool(true)
the second finished while the first still ran: true, and read: written by the first
bool(false)
-- a session written again after its lock went: lands only if nobody wrote it meanwhile
string(30) "second save, nobody in between"
string(30) "second save, nobody in between"
string(16) "saved in between"
logged
-- 40 racing requests, one counter
int(40)
-- lock_timeout fail: an empty session, never written over the holder's
NULL
the stored session was written over: false
int(40)
logged
-- lock_timeout warn: goes on without the lock, the warning in the log
int(40)
logged
-- gc() returns a count
int(0)
-- terminate() drops a lock still held
bool(true)
bool(false)
