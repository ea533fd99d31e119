<?php
// One round of the fuzzer (fuzz.sh runs several, each in its own process): calls every
// public entry point of the ephpm extension, found by Reflection, with binary, empty and
// huge strings, extreme ints and floats, wrong types and closures that call back in,
// for SECONDS seconds from SEED, each call in try/catch(\Throwable). Between calls it
// checks that binary keys and values round-trip exactly (set/get, setMany/getMany,
// ephpm_kv_set/get). It prints "BUG: ..." for an "internal error (a bug)" (a Rust panic
// caught at the boundary) and "ROUNDTRIP FAIL: ..." for a value that came back
// different, then one last line "fuzz-done calls=N bugs=N roundtrip-failures=N".
//   php fuzz.php SEED SECONDS
// Left out, because they block or destroy legitimately: long waits (an argument named
// like a wait — waitMs, waitTimeoutMs, timeout_ms — that is a valid number above 20
// becomes 20; the receivers of method calls are built with 20 ms waits; fuzz.sh sets
// ephpm.session.lock_wait to 50 ms), and ephpm_store_remove() of a store this round does
// not own (a valid name gets the prefix "fuzzgone"). Nothing called exits.

$seed = (int) ($argv[1] ?? 1);
$seconds = (float) ($argv[2] ?? 10);
mt_srand($seed);
echo "seed $seed\n";
$bugs = 0;
$roundtripFailures = 0;

/** Counts a caught Rust panic (the boundary turns it into this Error). */
function inspect(Throwable $e): void
{
    global $bugs;
    for (; $e; $e = $e->getPrevious()) {
        if (str_contains($e->getMessage(), 'internal error (a bug')) {
            $bugs++;
            echo 'BUG: ', get_class($e), ': ', $e->getMessage(), "\n", $e->getTraceAsString(), "\n";
        }
    }
}

// Warnings and notices are expected by the thousand (store failures of ephpm_kv_*, a
// logger-less StaleCache); only a bug is reported.
set_error_handler(function (int $no, string $message): bool {
    global $bugs;
    if (str_contains($message, 'internal error (a bug')) {
        $bugs++;
        echo "BUG: $message\n";
    }
    return true;
});

function pick(array $a): mixed
{
    return $a[array_rand($a)];
}

function random_key(): string
{
    $len = pick([1, 1, 2, 8, 16, 64, 300]);
    return match (mt_rand(0, 5)) {
        0 => (string) mt_rand(-1000, 100000),        // becomes an int array key
        1 => "\0" . random_bytes($len),
        2 => pick(["caf\xe9", "\xff\xfe", "-0", "0123", " 1", "9223372036854775808", "-9223372036854775808"]),
        default => random_bytes($len),
    };
}

function random_value(): mixed
{
    return match (mt_rand(0, 9)) {
        0 => '',
        1 => random_bytes(mt_rand(1, 3000)),
        2 => str_repeat(random_bytes(7), mt_rand(300, 150000)),
        3 => pick([PHP_INT_MAX, PHP_INT_MIN, -1, 0]),
        4 => pick([1e20, -0.0, INF, -INF, 0.1]),
        5 => pick([true, false, null]),
        6 => ["caf\xe9" => "\0", 5 => [1.5, null], 'o' => new ArrayObject([1])],
        default => random_bytes(mt_rand(1, 40)),
    };
}

/** A Symfony-like cache item and pool, for MemoLock::__invoke() and around(). */
final class FuzzItem
{
    public mixed $value = null;
    public function __construct(public mixed $key, public bool $hit = false) {}
    public function getKey(): mixed { return $this->key; }
    public function isHit(): bool { return $this->hit; }
    public function get(): mixed { return $this->value; }
    public function set(mixed $v): static { $this->value = $v; return $this; }
}

final class FuzzPool
{
    public array $saved = [];
    public mixed $wrapper = null;
    public function getItem(mixed $key): FuzzItem
    {
        return array_key_exists((string) $key, $this->saved) ? $this->saved[(string) $key] : new FuzzItem($key);
    }
    public function save(FuzzItem $item): bool { $item->hit = true; $this->saved[(string) $item->key] = $item; return true; }
    public function setCallbackWrapper(?callable $w): mixed { $old = $this->wrapper; $this->wrapper = $w; return $old; }
}

final class FuzzLogger
{
    public function warning(string $m, array $c = []): void {}
}

$depth = 0;
$strings = ['', 'k', "caf\xe9", "\0", "a\0b", "\xff\xfe\xfd", '123', '-0', '0x1A', '1e3', ' ',
    str_repeat('x', 65536), str_repeat('y', 65537), str_repeat("\x80", 1 << 20), 'shm://', 'redis://127.0.0.1:1?timeout=0.2',
    'memcached://x', 'shm://../etc', 'cluster://', 'warn', 'fail', 'session_lock:x'];
$ints = [PHP_INT_MAX, PHP_INT_MIN, -1, 0, 1, 2, 20, 1000000000, 1000000001, 1000000000000, 1000000000001];
$floats = [1e20, -1e20, -0.0, 0.0, NAN, INF, -INF, 0.5, 1e-9, 1e9, 1.5];
// shm:// even where ephpm.dsn names an unreachable server: the round trips need a store.
$kv = new Ephpm\Kv('shm://');
$kvPrefixed = new Ephpm\Kv('shm://', "p\0\xe9:");
$unreachable = new Ephpm\Kv('redis://127.0.0.1:1?timeout=0.2');
$memo = new Ephpm\MemoLock($kv, 200, 20, new FuzzLogger());
$closures = [
    fn () => 1,
    fn (...$a) => $a,
    function () { throw new RuntimeException('thrown by a fuzz closure'); },
    fn () => null,
    fn () => false,
    function (&$ttl = null) { $ttl = pick([PHP_INT_MAX, -1, NAN, 'soon', 0, 1, 0.5, [], 1e20]); return random_value(); },
    function ($k = null) { if (is_callable($k)) { $k(pick([null, 1, PHP_INT_MAX, -1, 1e20])); } return 'kept alive'; },
    function () { fuzz_one(); return 'nested'; },
    fn ($pool = null) => is_object($pool) && method_exists($pool, 'getItem') ? $pool->getItem(random_key())->get() : 1,
];

/** A value of any kind. */
function any_value(): mixed
{
    global $strings, $ints, $floats, $closures, $kv, $memo, $unreachable;
    return match (mt_rand(0, 11)) {
        0, 1 => pick($strings),
        2 => random_key(),
        3 => pick($ints),
        4 => pick($floats),
        5 => pick([true, false, null]),
        6 => pick([[], [1, 2], ["caf\xe9" => 1, "\0" => 2], [[1]], ['lock_wait' => PHP_INT_MAX], ['lock_ttl' => NAN],
            ['locking' => 'yes'], ['lifetime' => -1], [random_key() => random_value()], range(1, 200)]),
        7 => pick($closures),
        8 => pick([new stdClass(), $kv, $memo, $unreachable, new FuzzItem(random_key()), new FuzzPool(), new FuzzLogger(), new ArrayObject()]),
        9 => pick([STDIN, 'strlen', [new FuzzPool(), 'save'], 'no_such_function']),
        default => random_value(),
    };
}

/** A value suited to a parameter's declared type (most of the time), or anything. */
function value_for(ReflectionParameter $p): mixed
{
    global $strings, $ints, $floats, $closures;
    $type = (string) $p->getType();
    $name = strtolower($p->getName());
    $v = mt_rand(0, 9) < 3 ? any_value() : match (true) {
        str_contains($type, 'Closure'), str_contains($type, 'callable') => pick($closures),
        str_contains($type, 'Kv') => pick([$GLOBALS['kv'], $GLOBALS['kvPrefixed'], $GLOBALS['unreachable'], null]),
        str_contains($type, 'MemoLock') => pick([$GLOBALS['memo'], null]),
        str_contains($type, 'array') => pick([[], ['lock_wait' => 0.01, 'lock_ttl' => 1], [random_key(), random_key()], [random_key() => random_value()]]),
        str_contains($type, 'bool') => pick([true, false]),
        $name === 'item' => new FuzzItem(mt_rand(0, 3) ? random_key() : pick([str_repeat('k', 70000), 5, null])),
        $name === 'pool' || str_contains($type, 'object') => pick([new FuzzPool(), new FuzzLogger(), new stdClass()]),
        str_contains($type, 'string') => mt_rand(0, 1) ? random_key() : pick($strings),
        str_contains($type, 'int') || str_contains($type, 'float') || $type === '' || $type === 'mixed' =>
            mt_rand(0, 2) ? pick(array_merge($ints, $floats, [mt_rand(0, 100)])) : random_value(),
        default => any_value(),
    };
    // Waits that are valid and long would block the round (legitimately).
    if ((str_contains($name, 'wait') || str_contains($name, 'timeout')) && is_numeric($v) && $v > 20 && $v <= 1e12) {
        $v = 20;
    }
    return $v;
}

/** A receiver of class $class built as an application would (short waits, a private store). */
function receiver(ReflectionClass $class): ?object
{
    global $kv, $kvPrefixed, $unreachable, $memo;
    switch ($class->getName()) {
        case 'Ephpm\Kv': return pick([$kv, $kvPrefixed, $kvPrefixed, $unreachable, $kv]);
        case 'Ephpm\MemoLock': return pick([$memo, $memo, Ephpm\MemoLock::fromDsn('redis://127.0.0.1:1?timeout=0.2', 200, 20)]);
        case 'Ephpm\Lock': return $memo->acquire(random_key(), pick([50, 200, 1000000]));
        case 'Ephpm\KeepAlive':
            $k = null;
            try { $memo->exclusively(random_key(), function ($keepAlive) use (&$k) { $k = $keepAlive; }); } catch (Throwable $e) { inspect($e); }
            return $k;   // used after the section: its lock is gone
        case 'Ephpm\StaleCache': return new Ephpm\StaleCache(pick([$kv, $kvPrefixed, $unreachable]), 1, 1, $memo, (bool) mt_rand(0, 1), pick([null, new FuzzLogger()]));
        case 'Ephpm\SessionHandler': return new Ephpm\SessionHandler(pick([$kv, $kvPrefixed, $unreachable]), ['lock_wait' => 0.02, 'lock_ttl' => 1]);
        default: return null;
    }
}

$ext = new ReflectionExtension('ephpm');
$callables = [];
foreach ($ext->getFunctions() as $f) {
    $callables[] = [null, $f];
}
foreach ($ext->getClasses() as $class) {
    $callables[] = [$class, null];   // construction
    foreach ($class->getMethods(ReflectionMethod::IS_PUBLIC) as $m) {
        if ($m->getDeclaringClass()->getName() === $class->getName() && $m->getName() !== '__construct') {
            $callables[] = [$class, $m];
        }
    }
}
echo count($callables), " entry points\n";

/** Calls one entry point with generated arguments. */
function fuzz_one(): void
{
    global $callables, $depth;
    if ($depth > 2) {
        return;
    }
    $depth++;
    [$class, $fn] = pick($GLOBALS['callables']);
    if (getenv('FUZZ_TRACE')) { fwrite(STDERR, ($class?->getName() ?? '') . '::' . ($fn?->getName() ?? 'new') . "\n"); }
    $params = $fn ? $fn->getParameters() : ($class->getConstructor()?->getParameters() ?? []);
    $n = count($params);
    $count = match (mt_rand(0, 9)) { 0 => mt_rand(0, $n + 1), default => mt_rand($fn?->getNumberOfRequiredParameters() ?? 0, $n) };
    $args = [];
    for ($i = 0; $i < $count; $i++) {
        $args[] = isset($params[$i]) ? value_for($params[$i]) : any_value();
    }
    try {
        if ($fn === null) {
            $obj = $class->newInstanceArgs($args);
            object_actions($obj);
        } elseif ($fn instanceof ReflectionFunction) {
            if ($fn->getName() === 'ephpm_store_remove' && is_string($args[0] ?? null)) {
                // Never another user's store of this uid: a valid name becomes one of
                // the fuzzer's own (an invalid one stays invalid).
                $args[0] = 'fuzzgone' . $args[0];
            }
            $fn->getName()(...$args);
        } elseif ($fn->isStatic()) {
            $className = $class->getName();
            $method = $fn->getName();
            $className::$method(...$args);
        } else {
            $obj = receiver($class);
            if ($obj !== null) {
                $obj->{$fn->getName()}(...$args);
                object_actions($obj);
            }
        }
    } catch (Throwable $e) {
        inspect($e);
    } finally {
        $depth--;
    }
}

/** What else PHP code can do to an object: clone, (un)serialize, dump, write properties. */
function object_actions(object $obj): void
{
    $actions = [
        fn () => clone $obj,
        fn () => unserialize(serialize($obj)),
        fn () => unserialize('O:' . strlen(get_class($obj)) . ':"' . get_class($obj) . '":0:{}')?->{pick(['get', 'release', 'acquire', 'read', 'isHeld'])}(random_key()),
        fn () => (new ReflectionClass($obj))->newInstanceWithoutConstructor(),
        fn () => print_r($obj, true) . var_export($obj, true) . json_encode($obj),
        fn () => $obj->{pick(['name', 'token', 'fence', 'nope'])} = random_value(),
        fn () => [$obj->name ?? null, $obj->token ?? null, $obj->fence ?? null],
        function () use ($obj) { unset($obj->name); },
        fn () => get_object_vars($obj),
    ];
    if (mt_rand(0, 3) === 0) {
        try {
            pick($actions)();
        } catch (Throwable $e) {
            inspect($e);
        }
    }
}

/** Set then get, setMany then getMany, ephpm_kv_set then get: what comes back is what went in. */
function round_trips(): void
{
    global $kv, $kvPrefixed, $roundtripFailures;
    $fail = function (string $what, mixed $sent, mixed $got) use (&$roundtripFailures) {
        $roundtripFailures++;
        echo "ROUNDTRIP FAIL: $what: sent ", bin2hex(serialize($sent)), ' got ', bin2hex(serialize($got)), "\n";
    };
    try {
        $store = pick([$kv, $kvPrefixed]);
        $k = random_key();
        $v = random_value();
        $store->set($k, $v);
        $got = $store->get($k, '(missing)');
        if (serialize($got) !== serialize($v)) {
            $fail('set/get ' . bin2hex($k), $v, $got);
        }
        $pairs = [];
        for ($i = mt_rand(1, 8); $i > 0; $i--) {
            $pairs[random_key()] = random_value();
        }
        $store->setMany($pairs);
        $got = $store->getMany(array_keys($pairs));
        if (serialize($got) !== serialize($pairs)) {
            $fail('setMany/getMany', $pairs, $got);
        }
        $s = random_value();
        if (is_string($s) && ephpm_kv_set($k, $s) && ($got = ephpm_kv_get($k)) !== $s) {
            $fail('ephpm_kv_set/get ' . bin2hex($k), $s, $got);
        }
    } catch (Ephpm\StoreFull) {
        // A huge value in a small store: nothing to compare.
    } catch (Throwable $e) {
        inspect($e);
        $fail('round trip threw ' . get_class($e) . ': ' . $e->getMessage(), null, null);
    }
}

$calls = 0;
$deadline = hrtime(true) + (int) ($seconds * 1e9);
while (hrtime(true) < $deadline) {
    fuzz_one();
    $calls++;
    if ($calls % 10 === 0) {
        round_trips();
    }
}
echo "fuzz-done calls=$calls bugs=$bugs roundtrip-failures=$roundtripFailures\n";
