<?php
// What `make demo` runs: separate processes sharing one ephpm store.
$kv = new Ephpm\Kv(null, 'demo:');
$kv->clear();

echo "1. Values keep their PHP type\n";
$kv->set('user', ['id' => 42, 'name' => 'Ada'], 60);
$kv->set('ratio', 0.75);
echo '   ', json_encode([$kv->get('user'), $kv->get('ratio')]), "\n";

echo "2. Eight processes increment one counter 1000 times each\n";
$children = [];
for ($p = 0; $p < 8; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $mine = new Ephpm\Kv(null, 'demo:');
        for ($i = 0; $i < 1000; $i++) {
            $mine->increment('hits');
        }
        exit(0);
    }
    $children[] = $pid;
}
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
}
echo '   counter = ', $kv->get('hits'), " (no update lost)\n";

echo "3. Eight processes race for one lock: exactly one wins\n";
$children = [];
for ($p = 0; $p < 8; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $mine = new Ephpm\Kv(null, 'demo:');
        $token = bin2hex(random_bytes(16));
        exit($mine->add('lock:report', $token, 30) ? 0 : 1);
    }
    $children[] = $pid;
}
$winners = 0;
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
    $winners += pcntl_wexitstatus($status) === 0;
}
echo "   winners = $winners\n";

echo "4. A release by token cannot delete somebody else's lock\n";
$kv->set('lock:job', 'token-of-B', 30);
echo '   A releases with its stale token: ', var_export($kv->deleteIfEquals('lock:job', 'token-of-A'), true),
    '; B still holds it: ', var_export($kv->get('lock:job') === 'token-of-B', true), "\n";

echo "5. Eight processes hit one cold key of a Symfony cache pool behind Ephpm\\MemoLock\n";
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';
(new Ephpm\Symfony\EphpmAdapter('demo'))->clear();
$start = hrtime(true) + 200_000_000;
$children = [];
for ($p = 0; $p < 8; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $pool = new Ephpm\Symfony\EphpmAdapter('demo');
        $pool->setCallbackWrapper(new Ephpm\MemoLock());
        while (hrtime(true) < $start) { }
        $pool->get('report', function () {
            (new Ephpm\Kv(null, 'demo:'))->increment('origin calls');
            usleep(300000); // the slow origin
            return 'the report';
        });
        (new Ephpm\Kv(null, 'demo:'))->increment('served');
        exit(0);
    }
    $children[] = $pid;
}
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
}
printf("   origin calls = %d, processes served = %d\n", $kv->get('origin calls'), $kv->get('served'));

$stats = $kv->stats();
printf("6. Store: %s, %d entries, %d KiB used\n", $stats['backend'], $stats['entries'], $stats['memory_used'] / 1024);
$kv->clear();
