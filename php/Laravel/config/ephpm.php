<?php
// ephpm's settings for Laravel (php artisan vendor:publish --tag=ephpm-config).
// The cache stores and the session driver are configured in config/cache.php and
// config/session.php (see Ephpm\Laravel\EphpmServiceProvider).
return [
    // The Unix user php-fpm runs as. An shm:// store belongs to one user
    // (<ephpm.shm_dir>/ephpm-<uid>/): run as another user, cache:clear and the ephpm:*
    // commands would act on that user's store, not the one the site uses, so they
    // warn and touch nothing.
    'web_user' => env('EPHPM_WEB_USER', 'www-data'),
];
