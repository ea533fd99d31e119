--TEST--
WordPress drop-in: wp_cache_incr() by 8 processes × 200 loses no update (1600, each value returned once); wp_cache_decr() by 8 × 200 from 1000 returns 999 down to 1 once each, then 0 (601 times), never a negative, and ends at 0
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_wp_incr_race
ephpm.shm_size=4M
--FILE--
<?php
require __DIR__ . '/harness/wordpress.inc';
wp_cache_flush();

/** Runs $each in 8 processes, released together; returns every value they printed. */
function race(callable $each): array
{
    $barrier = new Ephpm\Kv(null, 'barrier:');
    $barrier->clear();
    $out = tempnam(sys_get_temp_dir(), 'ephpm');
    $kids = [];
    for ($p = 0; $p < 8; $p++) {
        if (($pid = pcntl_fork()) === 0) {
            wp_cache_init();
            $barrier->increment('go');
            $bound = hrtime(true) + 10_000_000_000; // a bound, should a process die
            while ($barrier->get('go') < 8 && hrtime(true) < $bound) {
            }
            $seen = [];
            for ($i = 0; $i < 200; $i++) {
                $seen[] = $each();
            }
            file_put_contents($out, implode("\n", $seen) . "\n", FILE_APPEND | LOCK_EX);
            exit(0);
        }
        $kids[] = $pid;
    }
    foreach ($kids as $pid) {
        pcntl_waitpid($pid, $status);
    }
    $seen = file($out, FILE_IGNORE_NEW_LINES);
    unlink($out);
    wp_cache_init();
    return $seen;
}

wp_cache_set('views', 0, 'counters');
$seen = race(fn () => wp_cache_incr('views', 1, 'counters'));
echo 'incr: final ', wp_cache_get('views', 'counters'), ', ', count($seen), ' results, ', count(array_unique($seen)), " distinct\n";

wp_cache_set('stock', 1000, 'counters');
$seen = race(fn () => wp_cache_decr('stock', 1, 'counters'));
$positive = array_values(array_filter(array_map(intval(...), $seen), fn ($n) => $n > 0));
sort($positive);
echo 'decr: final ', wp_cache_get('stock', 'counters'), ', lowest returned ', min($seen), ', 999 to 1 once each: ', json_encode($positive === range(1, 999)), ', 0 returned ', count($seen) - count($positive), " times\n";
--EXPECT--
incr: final 1600, 1600 results, 1600 distinct
decr: final 0, lowest returned 0, 999 to 1 once each: true, 0 returned 601 times
