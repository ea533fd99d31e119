--TEST--
A read of a string larger than PHP's memory_limit leaves room for (20 MiB stored by a process with a larger limit, read by one with memory_limit=8M) fails before the copy with a catchable Ephpm\StoreException (ephpm_kv_get: false and an E_WARNING); no fatal error, the request goes on, and the store keeps working for other processes
--EXTENSIONS--
ephpm
pcntl
--SKIPIF--
<?php if (str_starts_with((string) ini_get('ephpm.dsn'), 'cluster://')) die('skip a cluster node of the test suite holds 16 MiB');
--INI--
ephpm.store_name=phpt_memory_limit
ephpm.shm_size=64M
memory_limit=128M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->set('big', str_repeat('x', 20 << 20));
ephpm_kv_set('big-fn', str_repeat('y', 20 << 20));
$kv->set('small', 'fits');
$out = tempnam(sys_get_temp_dir(), 'ephpm');
if (($pid = pcntl_fork()) === 0) {
    ini_set('memory_limit', '8M');
    set_error_handler(function (int $no, string $m) use ($out) {
        file_put_contents($out, "E_WARNING $m\n", FILE_APPEND);
        return true;
    });
    $report = function (string $what, Closure $f) use ($out) {
        try {
            $r = var_export($f(), true);
        } catch (Throwable $e) {
            $r = get_class($e) . ': ' . $e->getMessage();
        }
        file_put_contents($out, "$what: " . preg_replace('/\(\d+ bytes\)/', '(N bytes)', $r) . "\n", FILE_APPEND);
    };
    $report('get', fn () => $kv->get('big'));
    $report('getMany', fn () => $kv->getMany(['small', 'big']));
    $report('ephpm_kv_get', fn () => ephpm_kv_get('big-fn'));
    $report('then a small read', fn () => $kv->get('small'));
    $report('and a write', fn () => $kv->set('from-child', 'ok'));
    exit(0);
}
pcntl_waitpid($pid, $status);
echo preg_replace('/\(\d+ bytes\)/', '(N bytes)', file_get_contents($out));
unlink($out);
echo 'child exit: ', pcntl_wexitstatus($status), "\n";
// The store is free: this process reads the large value and writes its shard at once.
var_dump(strlen($kv->get('big')), strlen(ephpm_kv_get('big-fn')), $kv->get('from-child'), $kv->set('big', 'replaced'), $kv->get('big'));
$kv->clear();
--EXPECT--
get: Ephpm\StoreException: Ephpm\Kv::get(): the value of "big" is 20971520 bytes, more than memory_limit leaves room for (N bytes)
getMany: Ephpm\StoreException: Ephpm\Kv::getMany(): the value of "big" is 20971520 bytes, more than memory_limit leaves room for (N bytes)
E_WARNING ephpm_kv_get(): the value of "big-fn" is 20971520 bytes, more than memory_limit leaves room for (N bytes)
ephpm_kv_get: false
then a small read: 'fits'
and a write: true
child exit: 0
int(20971520)
int(20971520)
string(2) "ok"
bool(true)
string(8) "replaced"
