<?php
// Laravel's own redis cache driver (the benchmark's baseline), over phpredis and the
// redis-server on the unix socket REDIS_SOCKET.
return [
    'redis' => [
        'client' => 'phpredis',
        'options' => ['prefix' => ''],
        'cache' => ['host' => env('REDIS_SOCKET'), 'port' => 0, 'database' => 1],
    ],
];
