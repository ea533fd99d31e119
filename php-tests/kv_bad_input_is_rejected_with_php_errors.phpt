--TEST--
Ephpm\Kv and ephpm_kv_*: bad input gets PHP's own exception types and wording, and changes nothing
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_bad
ephpm.shm_size=1M
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$kv->set('keep', 'old');
$cases = [
    'empty key' => fn() => $kv->get(''),
    'key over 64 KiB' => fn() => $kv->set(str_repeat('k', 65537), 1),
    'array key' => fn() => $kv->get([]),
    'negative ttl' => fn() => $kv->set('keep', 'new', -1),
    'NAN ttl' => fn() => $kv->set('keep', 'new', NAN),
    'string ttl' => fn() => $kv->set('keep', 'new', 'soon'),
    'no arguments' => fn() => $kv->get(),
    'too many arguments' => fn() => $kv->delete('a', 'b'),
    'string for int' => fn() => $kv->increment('c', 'many'),
    'closure value' => fn() => $kv->set('keep', function () {}),
    'resource value' => fn() => $kv->set('keep', STDIN),
    'value too large' => fn() => $kv->set('keep', random_bytes(2 << 20)),
    'getMany of arrays' => fn() => $kv->getMany([[1]]),
    'bad dsn' => fn() => new Ephpm\Kv('memcached'),
    'bad store name' => fn() => new Ephpm\Kv('shm://../etc'),
    'cluster dsn names a store' => fn() => new Ephpm\Kv('cluster://127.0.0.1:7946'),
    'bad cluster copies' => fn() => new Ephpm\Kv('cluster://web?copies=maybe'),
    'ca without tls' => fn() => new Ephpm\Kv('redis://127.0.0.1?ca=/etc/ssl/ca.pem'),
    'tls ca missing' => fn() => new Ephpm\Kv('rediss://127.0.0.1?ca=/nonexistent/ca.pem'),
    'bad redis parameter' => fn() => new Ephpm\Kv('redis://:secret@127.0.0.1?colour=blue'),
    'bad redis timeout' => fn() => new Ephpm\Kv('unix:///run/redis.sock?timeout=-1'),
    'function empty key' => fn() => ephpm_kv_set('', 'v'),
    'function wait negative' => fn() => ephpm_kv_wait('k', 0, -1),
];
foreach ($cases as $name => $f) {
    try {
        $f();
        echo "$name: no error\n";
    } catch (Throwable $e) {
        echo "$name: ", get_class($e), ': ', $e->getMessage(), "\n";
    }
}
var_dump($kv->get('keep'));
var_dump(ephpm_kv_set('fn', random_bytes(2 << 20)));
--EXPECTF--
empty key: ValueError: Ephpm\Kv::get(): Argument #1 ($key) cannot be empty
key over 64 KiB: ValueError: Ephpm\Kv::set(): Argument #1 ($key) must not be longer than 65536 bytes
array key: TypeError: Ephpm\Kv::get(): Argument #1 ($key) must be of type string, array given
negative ttl: ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be between 0 and 1000000000
NAN ttl: ValueError: Ephpm\Kv::set(): Argument #3 ($ttl) must be a finite number
string ttl: TypeError: Ephpm\Kv::set(): Argument #3 ($ttl) must be of type int|float, string given
no arguments: ArgumentCountError: Ephpm\Kv::get() expects at least 1 argument, 0 given
too many arguments: ArgumentCountError: Ephpm\Kv::delete() expects exactly 1 argument, 2 given
string for int: TypeError: Ephpm\Kv::increment(): Argument #2 ($by) must be of type int, string given
closure value: Exception: Serialization of 'Closure' is not allowed
resource value: TypeError: ephpm cannot store a value of type resource
value too large: Ephpm\StoreFull: Ephpm\Kv::set(): the store has no room for this value (%d bytes needed, one shard holds %d) even after evicting everything that may be evicted
getMany of arrays: TypeError: Ephpm\Kv::getMany(): Argument #1 ($keys) must contain only strings and integers
bad dsn: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "memcached" is not a store DSN: expected shm://, shm://NAME, redis://HOST[:PORT][/DB], rediss://HOST[:PORT][/DB], unix:///PATH, redis-sentinel://HOST[,HOST…]/MASTER, rediss-sentinel://HOST[,HOST…]/MASTER, redis-cluster://HOST[,HOST…], rediss-cluster://HOST[,HOST…] or cluster://[NAME]
bad store name: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "../etc" is not a valid store name: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'
cluster dsn names a store: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "127.0.0.1:7946" is not a valid store name: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'
bad cluster copies: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "cluster://web?copies=maybe": copies must be "sync" or "async", not "maybe"
ca without tls: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "redis://127.0.0.1?ca=/etc/ssl/ca.pem": unknown parameter "ca"
tls ca missing: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "rediss://127.0.0.1": cannot read ca /nonexistent/ca.pem: No such file or directory (os error 2)
bad redis parameter: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "redis://:***@127.0.0.1?colour=blue": unknown parameter "colour"
bad redis timeout: ValueError: Ephpm\Kv::__construct(): Argument #1 ($dsn) is not usable: "unix:///run/redis.sock?timeout=-1": timeout must be a number of seconds above 0 and at most 3600, not "-1"
function empty key: ValueError: ephpm_kv_set(): Argument #1 ($key) cannot be empty
function wait negative: ValueError: ephpm_kv_wait(): Argument #3 ($timeout_ms) must be between 0 and 1000000000000
string(3) "old"

Warning: ephpm_kv_set(): the store has no room for this value (%d bytes needed, one shard holds %d) even after evicting everything that may be evicted in %s on line %d
bool(false)
