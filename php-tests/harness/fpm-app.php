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
    case 'pid':
        echo getmypid();
        break;
}
