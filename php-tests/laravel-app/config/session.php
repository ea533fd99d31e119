<?php
return [
    'driver' => 'ephpm',
    'lifetime' => 120,
    'expire_on_close' => false,
    'encrypt' => false,
    'lottery' => [2, 100],
    'cookie' => 'laravel_session',
    'path' => '/',
    'domain' => null,
    'secure' => false,
    'http_only' => true,
    'same_site' => 'lax',
    'ephpm' => [
        'dsn' => env('EPHPM_DSN') ?: null,
        'prefix' => 'laravel_session:',
        'locking' => true,
        'lock_ttl' => 0,
        'lock_wait' => 30,
        'lock_timeout' => 'warn',
    ],
];
