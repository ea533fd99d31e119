<?php
// The application the php-fpm suite drives: one store operation per request.
$kv = new Ephpm\Kv();
switch ($_GET['op'] ?? '') {
    case 'incr':
        echo $kv->increment('fpm:counter');
        break;
    case 'get':
        echo var_export($kv->get($_GET['key'] ?? ''), true);
        break;
    case 'set':
        $kv->set($_GET['key'] ?? '', $_GET['value'] ?? '');
        echo 'stored';
        break;
    case 'swr':
        // Serves the stale value; the refresh runs after the response and waits for the
        // client to say it has the response (or 10 s).
        echo (new Ephpm\StaleCache($kv, 60))->get('swr:hot', function () use ($kv) {
            $deadline = microtime(true) + 10;
            while (!$kv->has('swr:client has the response') && microtime(true) < $deadline) {
                usleep(1000);
            }
            $kv->set('swr:refresh saw', $kv->has('swr:client has the response') ? 'the client had the response' : 'no response yet after 10 s');
            return 'new';
        });
        break;
    case 'session':
        // One session's counter: read, hold the session 10 ms, write counter + 1.
        ini_set('session.save_handler', 'ephpm');
        ini_set('session.use_cookies', '0');
        ini_set('session.use_strict_mode', '0');
        ini_set('session.cache_limiter', '');
        ini_set('ephpm.session.locking', $_GET['locking'] ?? '1');
        ini_set('ephpm.session.lock_wait', $_GET['wait'] ?? '30');
        ini_set('ephpm.session.lock_timeout', $_GET['timeout'] ?? 'warn');
        session_id($_GET['sid'] ?? 'fpm');
        if (!@session_start()) {
            echo 'session_start failed';
            break;
        }
        $n = $_SESSION['n'] ?? 0;
        usleep(10000);
        $_SESSION['n'] = $n + 1;
        if (($_GET['then'] ?? '') === 'exit') {
            exit('exited');
        }
        if (($_GET['then'] ?? '') === 'fatal') {
            no_such_function();
        }
        echo $_SESSION['n'];
        break;
    case 'pid':
        echo getmypid();
        break;
    case 'login':
    case 'visit':
    case 'whoami':
        // A visitor as a browser without a cookie (login, visit) or with one (whoami),
        // strict mode on: login puts a user in a new session and prints its id; visit
        // leaves its new session empty; whoami prints the user of session `sid`, or
        // "logged out" when the id was not adopted (the session is gone).
        ini_set('session.save_handler', 'ephpm');
        ini_set('session.use_cookies', '0');
        ini_set('session.use_strict_mode', '1');
        ini_set('session.cache_limiter', '');
        if ($_GET['op'] === 'whoami') {
            session_id($_GET['sid'] ?? '');
        }
        session_start();
        if ($_GET['op'] === 'login') {
            $_SESSION['user'] = 'user-' . session_id();
            echo session_id();
        } elseif ($_GET['op'] === 'whoami') {
            echo session_id() === ($_GET['sid'] ?? '') ? ($_SESSION['user'] ?? 'no user') : 'logged out';
        }
        break;
}
