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
    case 'pid':
        echo getmypid();
        break;
}
