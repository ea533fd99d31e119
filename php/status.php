<?php

declare(strict_types=1);

// ephpm's status page (like APCu's apc.php). Off unless EPHPM_STATUS_ALLOW or
// EPHPM_STATUS_PASSWORD is set (php-fpm: env[...] in the pool), or status.conf.php next
// to this file returns ['allow' => ..., 'password' => ...]; see Operator/Access.php.
// EPHPM_STATUS_DSN lists the stores to show (DSNs separated by spaces), else the pool's
// default. A POST is the key browser's delete of one key (Operator/Section/Keys.php),
// behind the same access rule.

require __DIR__ . '/autoload.php';

use Ephpm\Operator\Access;
use Ephpm\Operator\Headers;
use Ephpm\Operator\Section\Keys;
use Ephpm\Operator\Snapshot;
use Ephpm\Operator\StatusPage;

Headers::send();
if (Access::configured(__DIR__ . '/status.conf.php')->refuse()) {
    return;
}
if (($_SERVER['REQUEST_METHOD'] ?? 'GET') === 'POST') {
    Keys::delete(Snapshot::dsns(), $_GET, $_POST, $_SERVER);

    return;
}
StatusPage::headers();
echo (new StatusPage($_GET))->render(Snapshot::configured());
