--TEST--
ephpm_kv_wait() blocks until another process changes the key, returns at once when the version already differs, and times out with false
--EXTENSIONS--
ephpm
pcntl
--INI--
ephpm.store_name=phpt_wait
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
var_dump(ephpm_kv_wait('k', 0, 50));
$pid = pcntl_fork();
if ($pid === 0) {
    usleep(100000);
    ephpm_kv_set('k', 'from the child');
    exit(0);
}
$r = ephpm_kv_wait('k', 0, 10000);
var_dump($r['value'], $r['version'] > 0);
pcntl_waitpid($pid, $status);
var_dump(ephpm_kv_wait('k', $r['version'] + 1, 10000)['value']);
ephpm_kv_del('k');
var_dump(ephpm_kv_wait('k', $r['version'], 0));
--EXPECT--
bool(false)
string(14) "from the child"
bool(true)
string(14) "from the child"
array(2) {
  ["version"]=>
  int(0)
  ["value"]=>
  NULL
}
