--TEST--
Two live processes with different ephpm.shm_size share one store and one lock holder, in both orders: the second adopts the segment as it is with one warning naming both sizes; removing it (the operator's resize) refuses while it is in use; php --ri never makes a segment; the user's directory is 0700 and the segment 0600
--EXTENSIONS--
ephpm
--FILE--
<?php
$uid = trim(shell_exec('id -u'));
$so = getenv('EPHPM_SO');
$php = getenv('TEST_PHP_EXECUTABLE') ?: PHP_BINARY;
function start(string $php, string $so, string $store, string $size, string $code) {
    $cmd = [$php, '-n', '-d', "extension=$so", '-d', "ephpm.store_name=$store", '-d', "ephpm.shm_size=$size", '-r', $code];
    $p = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
    return [$p, $pipes];
}
function line($pipes): string { return rtrim((string) fgets($pipes[1])); }
// The holder: takes lock L with a TTL (Kv::add is what hand-written locks use), writes
// `a`, says so, then answers "read" with what it sees of `b` and exits on "bye".
$holder = '$kv = new Ephpm\Kv(); var_dump($kv->add("L", "holder", 60)); $kv->set("a", "from the holder");'
    . ' echo "ready\n"; while (($l = trim((string) fgets(STDIN))) !== "bye") { var_dump($kv->get("b")); echo "done\n"; }';
$second = '$kv = new Ephpm\Kv(); echo "add L: "; var_dump($kv->add("L", "second", 60)); var_dump($kv->get("a"));'
    . ' $kv->set("b", "from the second"); echo "size ", $kv->stats()["memory_size"], "\n";'
    . ' try { ephpm_store_remove(); } catch (Ephpm\StoreException $e) { echo "remove: ", str_contains($e->getMessage(), "is in use") ? "refused" : $e->getMessage(), "\n"; }';
foreach ([['2M', '4M'], ['4M', '2M']] as [$first, $then]) {
    $store = "phpt_adopt_{$first}_" . getmypid();
    echo "== $first first, then $then\n";
    [$a, $ap] = start($php, $so, $store, $first, $holder);
    echo line($ap), "\n", line($ap), "\n";
    [$b, $bp] = start($php, $so, $store, $then, $second);
    $out = stream_get_contents($bp[1]);
    proc_close($b);
    echo preg_replace(['~/dev/shm/ephpm-\d+/\S+~', '~in Command line code on line \d+~'], ['PATH', 'in ...'], $out);
    fwrite($ap[0], "read\n");
    echo line($ap), "\n", line($ap), "\n";
    $dir = "/dev/shm/ephpm-$uid";
    printf("dir %o, segment %o\n", fileperms($dir) & 0777, fileperms("$dir/$store") & 0777);
    fwrite($ap[0], "bye\n");
    proc_close($a);
    $removed = shell_exec("$php -n -d extension=$so -d ephpm.store_name=$store -r 'var_export(ephpm_store_remove());'");
    echo "removed once nobody uses it: $removed, file gone: ", var_export(!file_exists("$dir/$store"), true), "\n";
}
$info = shell_exec("$php -n -d extension=$so -d ephpm.store_name=phpt_never_made --ri ephpm");
echo "php --ri: ", preg_match('~^backend => (.*)$~m', $info, $m) ? $m[1] : '?', "\n";
echo "made a segment: ", var_export(file_exists("/dev/shm/ephpm-$uid/phpt_never_made"), true), "\n";
--EXPECTF--
== 2M first, then 4M
bool(true)
ready

Warning: Ephpm\Kv::__construct(): ephpm.shm_size asks for 4194304 bytes, but the shared store PATH in use was made with 2097152 bytes: using it at 2097152 bytes (to resize it, stop every process that uses it and call ephpm_store_remove()) in ...
add L: bool(false)
string(15) "from the holder"
size 2097152
remove: refused
string(15) "from the second"
done
dir 700, segment 600
removed once nobody uses it: true, file gone: true
== 4M first, then 2M
bool(true)
ready

Warning: Ephpm\Kv::__construct(): ephpm.shm_size asks for 2097152 bytes, but the shared store PATH in use was made with 4194304 bytes: using it at 4194304 bytes (to resize it, stop every process that uses it and call ephpm_store_remove()) in ...
add L: bool(false)
string(15) "from the holder"
size 4194304
remove: refused
string(15) "from the second"
done
dir 700, segment 600
removed once nobody uses it: true, file gone: true
php --ri: not created yet (made by the first use)
made a segment: false
