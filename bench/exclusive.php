<?php
/**
 * 8 processes each hold one 200 ms exclusive section, in turn. Each section records when
 * it was entered and left; the handover cost is the sum, over the 7 handovers, of the
 * time from one section's end to the next one's start (what the lock adds), per mode,
 * median over runs.
 *
 *   php -n -d extension=pcntl -d extension=./target/ephpm.so bench/exclusive.php \
 *       [procs=8] [sectionMs=200] [runs=5]
 *
 * modes: memolock (Ephpm\MemoLock::exclusively), symfony-lock-ephpm (symfony/lock on
 * Ephpm\Symfony\Lock\EphpmStore), symfony-lock-flock (symfony/lock on its FlockStore).
 */
require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require __DIR__ . '/../php/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\FlockStore;
use Ephpm\Symfony\Lock\EphpmStore;

$opt = ['procs' => 8, 'sectionMs' => 200, 'runs' => 5];
foreach (array_slice($argv, 1) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = (int) $v;
}
$dir = sys_get_temp_dir() . '/ephpm-exclusive-' . getmypid();
@mkdir($dir);
$log = new Ephpm\Kv('shm://bench_exclusive_log');
/** The section itself: records its enter and leave times. */
$work = function (int $us) use ($log) {
    $enter = hrtime(true);
    usleep($us);
    $log->set('s:' . getmypid(), [$enter, hrtime(true)]);
};
$modes = [
    'memolock' => function (int $us) use ($work) {
        (new Ephpm\MemoLock(new Ephpm\Kv('shm://bench_exclusive'), 30000, 60000))->exclusively('section', fn() => $work($us));
    },
    'symfony-lock-ephpm' => function (int $us) use ($work) {
        $lock = (new LockFactory(new EphpmStore(new Ephpm\Kv('shm://bench_exclusive'), 30)))->createLock('section');
        $lock->acquire(true);
        $work($us);
        $lock->release();
    },
    'symfony-lock-flock' => function (int $us) use ($dir, $work) {
        $lock = (new LockFactory(new FlockStore($dir)))->createLock('section');
        $lock->acquire(true);
        $work($us);
        $lock->release();
    },
];
printf("exclusive: %d processes × one %d ms section, %d runs, PHP %s, ephpm %s\n\n", $opt['procs'], $opt['sectionMs'], $opt['runs'], PHP_VERSION, phpversion('ephpm'));
printf("| %-20s | %22s | %20s |\n", 'mode', 'total handover, ms', 'per handover, ms');
printf("|%s|%s|%s|\n", str_repeat('-', 22), str_repeat('-', 24), str_repeat('-', 22));
foreach ($modes as $name => $section) {
    $costs = [];
    for ($r = 0; $r < $opt['runs']; $r++) {
        (new Ephpm\Kv('shm://bench_exclusive'))->clear();
        $log->clear();
        $t0 = hrtime(true) + 200_000_000;
        $kids = [];
        for ($p = 0; $p < $opt['procs']; $p++) {
            if (($pid = pcntl_fork()) === 0) {
                while (hrtime(true) < $t0) { usleep(200); }
                $section($opt['sectionMs'] * 1000);
                exit(0);
            }
            $kids[] = $pid;
        }
        foreach ($kids as $pid) {
            pcntl_waitpid($pid, $status);
        }
        $spans = [];
        foreach ($kids as $pid) {
            $spans[] = $log->get("s:$pid");
        }
        usort($spans, fn($a, $b) => $a[0] <=> $b[0]);
        $cost = 0;
        for ($i = 1; $i < count($spans); $i++) {
            $cost += ($spans[$i][0] - $spans[$i - 1][1]) / 1e6;
        }
        $costs[] = $cost;
    }
    sort($costs);
    $median = $costs[intdiv(count($costs), 2)];
    printf("| %-20s | %22.2f | %20.2f |\n", $name, $median, $median / ($opt['procs'] - 1));
}
exec('rm -rf ' . escapeshellarg($dir));
