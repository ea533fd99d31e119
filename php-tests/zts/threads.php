<?php
// What threads.c runs: "work N" on each thread at once, then "report THREADS" once.
// Every thread works on one store, through the extension's shared state: the counters
// show whether increments, locks (MemoLock::exclusively) and sessions stay atomic when
// PHP requests of one process run on several threads, and a get-then-set counter shows
// that the threads really did run at the same time (it must lose updates).
const ROUNDS = 20000;   // enough for the threads' loops to overlap on a busy machine
const SECTIONS = 100;
const SESSIONS = 50;

[, $mode, $n] = $argv;
$kv = new Ephpm\Kv();

if ($mode === 'work') {
    for ($i = 0; $i < ROUNDS; $i++) {
        $kv->increment('atomic');
        $kv->set('racy', $kv->get('racy', 0) + 1);   // not atomic, on purpose
    }
    $locks = new Ephpm\MemoLock($kv, lockTtlMs: 10000, waitTimeoutMs: 60000);
    for ($i = 0; $i < SECTIONS; $i++) {
        $locks->exclusively('section', function () use ($kv) {
            if ($kv->increment('inside') !== 1) {
                $kv->increment('overlaps');
            }
            usleep(200);
            $kv->increment('inside', -1);
            $kv->increment('sections');
        });
    }
    // One session shared by every thread: each request adds one to it under the lock.
    $handler = new Ephpm\SessionHandler($kv);
    session_set_save_handler($handler, true);
    session_id('zts-shared-session');
    for ($i = 0; $i < SESSIONS; $i++) {
        session_start();
        $_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
        usleep(100);   // between read and write: without the lock, another thread's write is lost
        session_write_close();
    }
    exit;
}

$threads = (int) $n;
// The session as stored (the embed SAPI has sent its headers, so no session_start here).
$handler = new Ephpm\SessionHandler($kv);
$handler->open('', 'PHPSESSID');
$writes = preg_match('/(?:^|;|\})n\|i:(\d+);/', $handler->read('zts-shared-session'), $m) ? (int) $m[1] : 0;
$handler->close();
printf("threads: %d, PHP %s %s\n", $threads, PHP_VERSION, PHP_ZTS ? 'ZTS' : 'NTS');
printf("increments: %d of %d\n", $kv->get('atomic', 0), $threads * ROUNDS);
printf("exclusive sections: %d of %d, overlapping: %d\n", $kv->get('sections', 0), $threads * SECTIONS, $kv->get('overlaps', 0));
printf("session writes: %d of %d\n", $writes, $threads * SESSIONS);
printf("get-then-set lost updates: %s\n", $kv->get('racy', 0) < $threads * ROUNDS ? 'yes' : 'no');
$kv->clear();
