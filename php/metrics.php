<?php

declare(strict_types=1);

// ephpm's numbers for Prometheus (text format 0.0.4). The same access rule as
// status.php: off unless EPHPM_STATUS_ALLOW or EPHPM_STATUS_PASSWORD is set (or
// status.conf.php says so); a scraper with a password uses basic_auth.

require __DIR__ . '/autoload.php';

use Ephpm\Operator\Access;
use Ephpm\Operator\Headers;
use Ephpm\Operator\Metrics;
use Ephpm\Operator\Snapshot;

Headers::send();
if (Access::configured(__DIR__ . '/status.conf.php')->refuse()) {
    return;
}
header('Content-Type: ' . Metrics::CONTENT_TYPE);
echo (new Metrics())->render(Snapshot::configured());
