--TEST--
Ephpm\MemoLock::once(): 4 processes released on a barrier make the thing once; the others wait for the thing and get it
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_once
ephpm.shm_size=2M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$out = tempnam(sys_get_temp_dir(), 'ephpm');
$start = hrtime(true) + 200_000_000;
$kids = [];
for ($p = 0; $p < 4; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $kv = new Ephpm\Kv();
        $locks = new Ephpm\MemoLock($kv, 10000, 10000);
        while (hrtime(true) < $start) { }
        $thing = $locks->once('index', fn() => $kv->get('index'), function (Ephpm\KeepAlive $keepAlive) use ($kv) {
            $kv->increment('makes');
            usleep(100000);
            $keepAlive();
            $kv->set('index', 'built');
            return 'built';
        });
        file_put_contents($out, "$thing\n", FILE_APPEND | LOCK_EX);
        exit(0);
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) {
    pcntl_waitpid($pid, $status);
}
echo 'made ', $kv->get('makes'), ' time(s); results: ', json_encode(array_count_values(file($out, FILE_IGNORE_NEW_LINES))), "\n";
unlink($out);
--EXPECT--
made 1 time(s); results: {"built":4}
