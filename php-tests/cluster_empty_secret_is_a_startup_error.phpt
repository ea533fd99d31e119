--TEST--
ephpm.cluster.enabled=1 without ephpm.cluster.secret: a warning at startup saying what to set, and cluster:// throws Ephpm\StoreException with the same words; allow_insecure_no_auth=1 runs, warning loudly
--EXTENSIONS--
ephpm
--FILE--
<?php
$php = [PHP_BINARY, '-n', '-d', 'extension=' . getenv('EPHPM_SO'), '-d', 'ephpm.cluster.enabled=1', '-d', 'ephpm.shm_size=2M'];
$run = function (array $args, string $code) {
    $p = proc_open([...$args, '-r', $code], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
    proc_close($p);
    return $out;
};
$name = 'phpt_nosecret' . getmypid();
$out = $run($php, 'try { new Ephpm\Kv("cluster://' . $name . '"); } catch (Ephpm\StoreException $e) { echo get_class($e), ": ", $e->getMessage(), "\n"; }');
echo 'startup warning: ', var_export(str_contains($out, 'Warning: PHP Startup: ephpm: the cluster node cannot run: ephpm.cluster.secret is empty'), true), "\n";
echo 'exception: ', var_export(str_contains($out, 'Ephpm\StoreException: Ephpm\Kv::__construct(): ephpm.cluster.secret is empty'), true), "\n";
$info = $run([...$php, '-d', "ephpm.dsn=cluster://$name"], 'phpinfo(INFO_MODULES);');
echo 'php --ri: ', var_export(str_contains($info, 'backend => not created yet'), true), "\n";
echo 'the failed open and phpinfo left no file: ', var_export(glob("/dev/shm/ephpm-*/$name*") === [] && glob("/dev/shm/ephpm*$name*") === [], true), "\n";
$port = 20000 + getmypid() % 20000;
$out = $run([...$php, '-d', 'ephpm.cluster.allow_insecure_no_auth=1', '-d', "ephpm.cluster.gossip_addr=127.0.0.1:$port"],
    '$kv = new Ephpm\Kv("cluster://' . $name . '?timeout=1"); for ($i = 0; $i < 100; $i++) { try { $kv->set("k", 1); echo "served\n"; break; } catch (Ephpm\StoreUnavailable) { usleep(50000); } }');
echo 'insecure node serves: ', var_export(str_contains($out, 'served'), true), "\n";
echo 'and warns loudly: ', var_export(str_contains($out, 'WITHOUT AUTHENTICATION OR ENCRYPTION'), true), "\n";
foreach (glob("/dev/shm/ephpm-*/$name.cluster*") as $f) { unlink($f); }
--EXPECT--
startup warning: true
exception: true
php --ri: true
the failed open and phpinfo left no file: true
insecure node serves: true
and warns loudly: true
