<?php
// EPHPM_DISCOVERY=1 leaves ephpm's provider out: the suite then finds it through
// package auto-discovery (vendor/composer/installed.json in the base folder).
return [
    'name' => 'ephpm-laravel-test',
    'env' => 'testing',
    'debug' => true,
    'timezone' => 'UTC',
    'providers' => array_values(array_filter([
        // On Laravel 11 and later it binds defer()'s callbacks, which flexible()'s refresh goes to.
        Illuminate\Foundation\Providers\FoundationServiceProvider::class,
        Illuminate\Cache\CacheServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Redis\RedisServiceProvider::class,
        Illuminate\Session\SessionServiceProvider::class,
        env('EPHPM_DISCOVERY') ? null : Ephpm\Laravel\EphpmServiceProvider::class,
        App\Providers\AppServiceProvider::class,
        App\Providers\ArtisanServiceProvider::class,
    ])),
];
