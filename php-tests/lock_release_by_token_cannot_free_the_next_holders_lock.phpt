--TEST--
The ePHPm lock scenario: A's 1 s lock expires while it sleeps, B takes it for 30 s, A releases; a plain delete lets C in beside B, deleteIfEquals refuses A's release and keeps B's lock
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_lockscenario
ephpm.shm_size=4M
--FILE--
<?php
/** Runs $f in a separate process (B or C) and returns what it printed. */
function in_process(callable $f): string {
    $path = tempnam(sys_get_temp_dir(), 'ephpm');
    $pid = pcntl_fork();
    if ($pid === 0) {
        file_put_contents($path, $f(new Ephpm\Kv()));
        exit(0);
    }
    pcntl_waitpid($pid, $status);
    $out = file_get_contents($path);
    unlink($path);
    return $out;
}

foreach (['delete', 'deleteIfEquals'] as $release) {
    $kv = new Ephpm\Kv();
    $kv->clear();
    $a = bin2hex(random_bytes(16));
    echo "== release with $release\n";
    echo 'A acquires (1 s): ', var_export($kv->add('lock', $a, 1), true), "\n";
    usleep(1200000);
    echo in_process(fn($kv) => 'B acquires (30 s): ' . var_export($kv->add('lock', 'token-B', 30), true) . "\n");
    $released = $release === 'delete' ? $kv->delete('lock') : $kv->deleteIfEquals('lock', $a);
    echo 'A releases: ', var_export($released, true), "\n";
    echo in_process(fn($kv) => 'C acquires: ' . var_export($kv->add('lock', 'token-C', 30), true) . "\n");
    echo 'lock holder now: ', $kv->get('lock'), "\n";
}
--EXPECT--
== release with delete
A acquires (1 s): true
B acquires (30 s): true
A releases: true
C acquires: true
lock holder now: token-C
== release with deleteIfEquals
A acquires (1 s): true
B acquires (30 s): true
A releases: false
C acquires: false
lock holder now: token-B
