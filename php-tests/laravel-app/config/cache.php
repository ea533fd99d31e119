<?php
// EPHPM_DSN: where the `ephpm` stores live (unset: the host's shm store; the suite's
// redis variant sets a unix:// DSN). `ephpm_host` is always the host's shm store, so
// the suite can check that each store keeps to its own backend.
$dsn = env('EPHPM_DSN') ?: null;
$ephpm = ['driver' => 'ephpm', 'dsn' => $dsn, 'lock_ttl' => 30, 'lock_wait' => 10, 'stampede' => true];
return [
    'default' => 'ephpm',
    'prefix' => 'laravel_cache',
    'limiter' => env('CACHE_LIMITER'), // RateLimiter's store (null: the default)
    'stores' => [
        'ephpm' => ['prefix' => 'main'] + $ephpm,
        'ephpm_plain' => ['prefix' => 'plain', 'stampede' => false] + $ephpm,
        'ephpm_other' => ['prefix' => 'other'] + $ephpm,
        'ephpm_bare' => ['prefix' => ''] + $ephpm,
        'ephpm_host' => ['prefix' => 'host', 'dsn' => 'shm://' . ini_get('ephpm.store_name')] + $ephpm,
        'apc' => ['driver' => 'apc'],
        'redis' => ['driver' => 'redis', 'connection' => 'cache', 'lock_connection' => 'cache'],
    ],
];
