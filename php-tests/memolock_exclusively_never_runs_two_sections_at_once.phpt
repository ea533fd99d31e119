--TEST--
Ephpm\MemoLock::exclusively(): 8 processes, 3 sections each, never two sections at once (each records its enter and leave times; any overlap fails)
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_exclusive
ephpm.shm_size=2M
--FILE--
<?php
(new Ephpm\Kv())->clear();
$log = tempnam(sys_get_temp_dir(), 'ephpm');
$start = hrtime(true) + 200_000_000;
$kids = [];
for ($p = 0; $p < 8; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $locks = new Ephpm\MemoLock(null, 10000, 20000);
        while (hrtime(true) < $start) { }
        for ($i = 0; $i < 3; $i++) {
            $locks->exclusively('section', function () use ($log) {
                $enter = hrtime(true);
                usleep(10000);
                file_put_contents($log, $enter . ' ' . hrtime(true) . "\n", FILE_APPEND | LOCK_EX);
            });
        }
        exit(0);
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) {
    pcntl_waitpid($pid, $status);
}
$spans = array_map(fn($l) => array_map('intval', explode(' ', $l)), file($log, FILE_IGNORE_NEW_LINES));
unlink($log);
usort($spans, fn($a, $b) => $a[0] <=> $b[0]);
$overlaps = 0;
for ($i = 1; $i < count($spans); $i++) {
    $overlaps += $spans[$i][0] < $spans[$i - 1][1];
}
echo count($spans), " sections, $overlaps overlapping\n";
--EXPECT--
24 sections, 0 overlapping
