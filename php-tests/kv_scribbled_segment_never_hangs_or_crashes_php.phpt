--TEST--
Random bytes written into a live segment (its shard headers, indexes and entries) never hang or crash a PHP process: every later call returns a value or throws Ephpm\StoreException, 20 trials, each checked from a fresh process and the same one
--EXTENSIONS--
ephpm
--FILE--
<?php
$uid = trim(shell_exec('id -u'));
$php = getenv('TEST_PHP_EXECUTABLE') ?: PHP_BINARY;
$so = getenv('EPHPM_SO');
$seed = (int) (getenv('SCRIBBLE_SEED') ?: random_int(1, PHP_INT_MAX));
mt_srand($seed);
$ops = <<<'PHP'
$kv = new Ephpm\Kv(); $locks = new Ephpm\MemoLock($kv); $bad = [];
for ($i = 0; $i < 300; $i++) {
    foreach ([
        fn() => $kv->get("k$i"), fn() => $kv->set("k$i", str_repeat("x", $i)), fn() => $kv->add("n$i", $i, 60),
        fn() => $kv->increment("c$i"), fn() => $kv->deleteIfEquals("k$i", "x"), fn() => $kv->delete("k$i"),
        fn() => $locks->acquire("l$i", 1000, 0)?->release(), fn() => $kv->getMany(["k$i", "n$i"]),
    ] as $op) {
        try { $op(); } catch (Ephpm\StoreException | Ephpm\LockUnavailable $e) { } catch (Throwable $e) { $bad[] = get_class($e) . ': ' . $e->getMessage(); }
    }
}
try { $kv->stats(); $kv->clear(); } catch (Ephpm\StoreException) { }
echo $bad ? implode("\n", array_unique($bad)) : "ok", "\n";
PHP;
$failures = [];
for ($trial = 0; $trial < 20; $trial++) {
    $store = "phpt_scribble_{$trial}_" . getmypid();
    $ini = ['-n', '-d', "extension=$so", '-d', "ephpm.store_name=$store", '-d', 'ephpm.shm_size=2M'];
    // Fill the store from a process that stays alive (the segment is in use throughout).
    $holder = proc_open([$php, ...$ini, '-r', '$kv = new Ephpm\Kv(); for ($i = 0; $i < 600; $i++) { $kv->set("k$i", str_repeat("v", $i * 3)); } echo "ready\n"; fgets(STDIN);'],
        [0 => ['pipe', 'r'], 1 => ['pipe', 'w']], $hp);
    fgets($hp[1]);
    $path = "/dev/shm/ephpm-$uid/$store";
    $f = fopen($path, 'r+');
    $stride = unpack('P', file_get_contents($path, false, null, 32, 8))[1];
    $shards = 4096 + 8192;
    for ($i = 0; $i < 2000; $i++) {
        $at = $i % 2 ? $shards + mt_rand(0, 16 * $stride - 1) : $shards + mt_rand(0, 15) * $stride + mt_rand(0, 2047);
        fseek($f, $at); fwrite($f, chr(mt_rand(0, 255)));
    }
    if ($trial % 4 == 0) { // a lock word naming a thread that does not exist
        fseek($f, $shards + mt_rand(0, 15) * $stride); fwrite($f, pack('V', 0x3fff0000 | mt_rand(0, 0xffff)));
    }
    fclose($f);
    foreach (['a fresh process', 'another fresh process'] as $who) {
        $p = proc_open([$php, ...$ini, '-r', $ops], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $end = microtime(true) + 30; // a hang detector, not a timing claim
        while (($st = proc_get_status($p))['running'] && microtime(true) < $end) { usleep(20000); }
        if ($st['running']) { proc_terminate($p, 9); $failures[] = "trial $trial, $who: hung"; }
        $out = trim(stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]));
        $code = proc_close($p);
        if (!$st['running'] && ($st['exitcode'] !== 0 || $out !== 'ok')) {
            $failures[] = "trial $trial, $who: exit {$st['exitcode']} " . ($st['signaled'] ? "signal {$st['termsig']} " : '') . substr($out, 0, 300);
        }
    }
    fwrite($hp[0], "bye\n");
    proc_close($holder);
    @unlink($path);
    if ($failures) {
        break; // one failed trial says it; the rest would only add time
    }
}
echo $failures ? "seed $seed\n" . implode("\n", $failures) . "\n" : "20 trials: no hang, no crash, only store errors\n";
--EXPECT--
20 trials: no hang, no crash, only store errors
