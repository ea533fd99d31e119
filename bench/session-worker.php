<?php
/**
 * bench/session.php's run: N forked requests on session $id, each holding it $holdMs;
 * prints the wall time (ms) and every hand-over (ms, close → the next read returning).
 *   php [handler ini] bench/session-worker.php N holdMs id
 */
[, $n, $holdMs, $id] = $argv;
$meta = new Ephpm\Kv('shm://bench_session_meta', "$id:");
$meta->clear();
$t0 = hrtime(true) + 200_000_000;
$kids = [];
for ($i = 0; $i < (int) $n; $i++) {
    if (($pid = pcntl_fork()) === 0) {
        while (hrtime(true) < $t0) { usleep(200); }
        session_id($id);
        session_start();
        $got = hrtime(true);
        $_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1;
        usleep((int) $holdMs * 1000);
        $closed = hrtime(true);
        session_write_close();
        $meta->set("r$i", [$got, $closed]);
        exit(0);
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) pcntl_waitpid($pid, $status);
$spans = [];
for ($i = 0; $i < (int) $n; $i++) $spans[] = $meta->get("r$i");
usort($spans, fn ($a, $b) => $a[0] <=> $b[0]);
$out = [sprintf('%.3f', (max(array_column($spans, 1)) - $t0) / 1e6)];
for ($i = 1; $i < count($spans); $i++) $out[] = sprintf('%.3f', ($spans[$i][0] - $spans[$i - 1][1]) / 1e6);
$meta->clear();
echo implode(' ', $out), "\n";
