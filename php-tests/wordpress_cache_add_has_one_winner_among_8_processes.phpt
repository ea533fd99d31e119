--TEST--
WordPress drop-in: wp_cache_add() of one key by 8 processes at once has exactly one winner, in each of 20 rounds, and the value stored is the winner's
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_wp_add_race
ephpm.shm_size=4M
--FILE--
<?php
require __DIR__ . '/harness/wordpress.inc';
wp_cache_flush();
$barrier = new Ephpm\Kv(null, 'barrier:');
$barrier->clear();
$out = tempnam(sys_get_temp_dir(), 'ephpm');
$kids = [];
for ($p = 0; $p < 8; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        for ($round = 0; $round < 20; $round++) {
            wp_cache_init(); // a new request: nothing cached in it
            // All 8 arrive before any adds, so the adds race.
            $barrier->increment("round$round");
            $bound = hrtime(true) + 10_000_000_000; // a bound, should a process die
            while ($barrier->get("round$round") < 8 && hrtime(true) < $bound) {
            }
            if (wp_cache_add("key$round", "process $p", 'race')) {
                file_put_contents($out, "$round process $p\n", FILE_APPEND | LOCK_EX);
            }
        }
        exit(0);
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) {
    pcntl_waitpid($pid, $status);
}
$winners = [];
foreach (file($out, FILE_IGNORE_NEW_LINES) as $line) {
    [$round, $who] = explode(' ', $line, 2);
    $winners[$round][] = $who;
}
unlink($out);
wp_cache_init();
$one = 0;
for ($round = 0; $round < 20; $round++) {
    $who = $winners[$round] ?? [];
    if (count($who) === 1 && wp_cache_get("key$round", 'race') === $who[0]) {
        $one++;
    } else {
        echo "round $round: winners ", json_encode($who), ', stored ', json_encode(wp_cache_get("key$round", 'race')), "\n";
    }
}
echo "rounds with exactly one winner, whose value is stored: $one of 20\n";
--EXPECT--
rounds with exactly one winner, whose value is stored: 20 of 20
