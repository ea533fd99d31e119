--TEST--
ephpm_kv_* functions on a store that cannot be reached (ephpm.dsn on a port nobody listens on) or opened (a DSN the ini got wrong): every one returns false with an E_WARNING naming the cause, never an exception; bad arguments are still TypeError and ValueError, checked before the store is
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_functions_fail
ephpm.dsn="redis://127.0.0.1:1?timeout=0.2"
--FILE--
<?php
set_error_handler(function (int $no, string $message) {
    echo $no === E_WARNING ? 'E_WARNING: ' : "error $no: ", preg_replace('/\(os error \d+\)/', '', $message), "\n";
    return true;
});
$calls = [
    'ephpm_kv_get' => ['k'],
    'ephpm_kv_set' => ['k', 'v', 10],
    'ephpm_kv_setnx' => ['k', 'v'],
    'ephpm_kv_del' => ['k'],
    'ephpm_kv_del_if_eq' => ['k', 'token'],
    'ephpm_kv_exists' => ['k'],
    'ephpm_kv_incr' => ['k'],
    'ephpm_kv_decr' => ['k'],
    'ephpm_kv_incr_by' => ['k', 5],
    'ephpm_kv_expire' => ['k', 10],
    'ephpm_kv_ttl' => ['k'],
    'ephpm_kv_pttl' => ['k'],
    'ephpm_kv_flush_all' => [],
    'ephpm_kv_wait' => ['k', 0, 10],
];
$run = function (string $f, array $args) {
    try {
        $r = var_export($f(...$args), true);
    } catch (Throwable $e) {
        $r = get_class($e) . ': ' . $e->getMessage();
    }
    echo "$f: $r\n";
};
echo "-- unreachable\n";
foreach ($calls as $f => $args) {
    $run($f, $args);
}
echo "-- bad arguments are reported first\n";
$run('ephpm_kv_get', ['']);
$run('ephpm_kv_set', ['k', []]);
$run('ephpm_kv_set', ['k', 'v', PHP_INT_MAX]);
$run('ephpm_kv_wait', ['k', -1, 0]);
echo "-- a store that cannot be opened: a DSN the ini got wrong\n";
$code = 'var_dump(ephpm_kv_set("k", "v"), ephpm_kv_get("k"));';
$p = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . getenv('EPHPM_SO'), '-d', 'ephpm.dsn=memcached://nowhere', '-r', $code], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
echo stream_get_contents($pipes[1]), stream_get_contents($pipes[2]);
echo 'exit ', proc_close($p), "\n";
--EXPECT--
-- unreachable
E_WARNING: ephpm_kv_get(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_get: false
E_WARNING: ephpm_kv_set(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_set: false
E_WARNING: ephpm_kv_setnx(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_setnx: false
E_WARNING: ephpm_kv_del(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_del: false
E_WARNING: ephpm_kv_del_if_eq(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_del_if_eq: false
E_WARNING: ephpm_kv_exists(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_exists: false
E_WARNING: ephpm_kv_incr(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_incr: false
E_WARNING: ephpm_kv_decr(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_decr: false
E_WARNING: ephpm_kv_incr_by(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_incr_by: false
E_WARNING: ephpm_kv_expire(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_expire: false
E_WARNING: ephpm_kv_ttl(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_ttl: false
E_WARNING: ephpm_kv_pttl(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_pttl: false
E_WARNING: ephpm_kv_flush_all(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_flush_all: false
E_WARNING: ephpm_kv_wait(): the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
ephpm_kv_wait: false
-- bad arguments are reported first
ephpm_kv_get: ValueError: ephpm_kv_get(): Argument #1 ($key) cannot be empty
ephpm_kv_set: TypeError: ephpm_kv_set(): Argument #2 ($value) must be of type string, array given
ephpm_kv_set: ValueError: ephpm_kv_set(): Argument #3 ($ttl) must be less than or equal to 1000000000
ephpm_kv_wait: ValueError: ephpm_kv_wait(): Argument #2 ($last_version) must be greater than or equal to 0
-- a store that cannot be opened: a DSN the ini got wrong

Warning: ephpm_kv_set(): "memcached://nowhere" is not a store DSN: expected shm://, shm://NAME, redis://HOST[:PORT][/DB], rediss://HOST[:PORT][/DB], unix:///PATH, redis-sentinel://HOST[,HOST…]/MASTER, rediss-sentinel://HOST[,HOST…]/MASTER, redis-cluster://HOST[,HOST…], rediss-cluster://HOST[,HOST…] or cluster://[NAME] in Command line code on line 1

Warning: ephpm_kv_get(): "memcached://nowhere" is not a store DSN: expected shm://, shm://NAME, redis://HOST[:PORT][/DB], rediss://HOST[:PORT][/DB], unix:///PATH, redis-sentinel://HOST[,HOST…]/MASTER, rediss-sentinel://HOST[,HOST…]/MASTER, redis-cluster://HOST[,HOST…], rediss-cluster://HOST[,HOST…] or cluster://[NAME] in Command line code on line 1
bool(false)
bool(false)
exit 0
