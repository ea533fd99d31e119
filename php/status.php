<?php

declare(strict_types=1);

// ephpm's status page (like APCu's apc.php). Off unless EPHPM_STATUS_ALLOW or
// EPHPM_STATUS_PASSWORD is set (php-fpm: env[...] in the pool), or status.conf.php next
// to this file returns ['allow' => ..., 'password' => ...]; see Operator/Access.php.
// EPHPM_STATUS_DSN shows another store than the pool's default.

require __DIR__ . '/autoload.php';

use Ephpm\Operator\Access;
use Ephpm\Operator\Headers;
use Ephpm\Operator\Snapshot;
use Ephpm\Operator\StatusPage;

Headers::send();
if (Access::configured(__DIR__ . '/status.conf.php')->refuse()) {
    return;
}
StatusPage::headers();
echo (new StatusPage())->render(Snapshot::ofConfiguredStore());
