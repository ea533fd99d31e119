--TEST--
A segment created with another ephpm.shm_size is replaced by a fresh one, with a warning that says why; the segment file is mode 0600 and named after the user
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_resize
ephpm.shm_size=2M
--FILE--
<?php
$path = '/dev/shm/ephpm.' . trim(shell_exec('id -u')) . '.phpt_resize';
@unlink($path); // a segment left by an interrupted run would be replaced too
$kv = new Ephpm\Kv();
$kv->set('k', 'v');
printf("%o\n", fileperms($path) & 0777);
$php = getenv('TEST_PHP_EXECUTABLE') ?: PHP_BINARY;
$code = '$kv = new Ephpm\Kv(); var_dump($kv->get("k")); echo $kv->stats()["memory_size"], "\n";';
echo shell_exec("$php -n -d extension=" . escapeshellarg(getenv('EPHPM_SO')) . " -d ephpm.store_name=phpt_resize -d ephpm.shm_size=4M -r " . escapeshellarg($code) . ' 2>&1');
--EXPECTF--
600
%AWarning: Ephpm\Kv::__construct(): replacing the shared store /dev/shm/ephpm.%d.phpt_resize with a fresh, empty one: it is 2097152 bytes, ephpm.shm_size asks for 4194304 in %s
NULL
4194304
