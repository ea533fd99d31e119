<?php
/**
 * ephpm on redis:// against phpredis (Debian's php-redis), on the same redis-server and
 * the same unix socket, in the same run.
 *
 *   php -n -d extension=igbinary -d extension=redis -d extension=pcntl \
 *       -d extension=./target/ephpm.so bench/redis.php [reps=7] [iterations=20000] [wakes=200]
 *
 * The benchmark starts its own redis-server (a unix socket in a fresh folder, no
 * persistence). Each op runs `iterations` times, `reps` times, interleaved between the
 * two clients; the table shows the median µs/op and the ratio ephpm/phpredis (< 1.0:
 * ephpm is faster).
 *
 * - GET / SET 100 B: Ephpm\Kv::get/set against Redis::get/set.
 * - lock cycle: ephpm's Ephpm\MemoLock::acquire() + Lock::release() (SET NX PX and the
 *   fencing counter in one script; compare-and-delete and PUBLISH in another) against
 *   the usual phpredis lock: SET NX PX with a random token, then EVALSHA of the
 *   compare-and-delete script.
 * - Pub/Sub wake -> lock held: from the moment a holder releases until a waiter in
 *   another process holds the lock. ephpm: a waiter in MemoLock::acquire() is woken by
 *   the release (compare-and-delete and PUBLISH in one script) and takes the lock.
 *   phpredis, the same done by hand: the holder releases with a compare-and-delete +
 *   PUBLISH script; the waiter, blocked in subscribe(), gets the message and takes the
 *   lock with SET NX PX on its second connection.
 * - Pub/Sub wake, bare message (phpredis only, for reference): PUBLISH until the
 *   subscriber's callback runs, with nothing taken.
 *   Median and p90 of `wakes` samples; each process reports hrtime() (one monotonic
 *   clock for the machine).
 */
require __DIR__ . '/../php-tests/harness/redis.inc';

$opt = ['reps' => 7, 'iterations' => 20000, 'wakes' => 200];
foreach (array_slice($argv, 1) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = (int) $v;
}
if (!class_exists('Redis')) {
    fwrite(STDERR, "needs phpredis: -d extension=igbinary -d extension=redis\n");
    exit(2);
}
$server = new TestRedis();
$n = $opt['iterations'];
$kv = new Ephpm\Kv($server->dsn());
$memo = new Ephpm\MemoLock($kv);
$r = new Redis();
$r->connect($server->socket);
$v100 = str_repeat('v', 100);
$kv->set('e:hit', $v100);
$r->set('p:hit', $v100);
$cad = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end';
$cadSha = $r->script('load', $cad);

$ops = [
    'GET 100 B' => [
        function () use ($kv, $n) { for ($i = 0; $i < $n; $i++) { $kv->get('e:hit'); } },
        function () use ($r, $n) { for ($i = 0; $i < $n; $i++) { $r->get('p:hit'); } },
    ],
    'SET 100 B' => [
        function () use ($kv, $n, $v100) { for ($i = 0; $i < $n; $i++) { $kv->set('e:set', $v100); } },
        function () use ($r, $n, $v100) { for ($i = 0; $i < $n; $i++) { $r->set('p:set', $v100); } },
    ],
    'lock cycle (acquire + release by token)' => [
        function () use ($memo, $n) { for ($i = 0; $i < $n; $i++) { $memo->acquire('e:lock')->release(); } },
        function () use ($r, $n, $cadSha) {
            for ($i = 0; $i < $n; $i++) {
                $token = bin2hex(random_bytes(16));
                $r->set('p:lock', $token, ['nx', 'px' => 30000]);
                $r->evalSha($cadSha, ['p:lock', $token], 1);
            }
        },
    ],
];

function median(array $xs): float { return pct($xs, 0.5); }
function pct(array $xs, float $p): float { sort($xs); return $xs[(int) min(count($xs) - 1, floor($p * count($xs)))]; }

printf("redis: redis-server %s on a unix socket; %d iterations x %d reps; PHP %s, ephpm %s, phpredis %s\n\n",
    $r->info('server')['redis_version'], $n, $opt['reps'], PHP_VERSION, phpversion('ephpm'), phpversion('redis'));
printf("| %-40s | %14s | %14s | %8s |\n", 'op', 'ephpm µs/op', 'phpredis µs/op', 'ratio');
printf("|%s|%s|%s|%s|\n", str_repeat('-', 42), str_repeat('-', 16), str_repeat('-', 16), str_repeat('-', 10));
foreach ($ops as $name => [$ephpm, $phpredis]) {
    $e = $p = [];
    $ephpm(); $phpredis(); // warm up: connections, scripts
    for ($rep = 0; $rep < $opt['reps']; $rep++) {
        $t = hrtime(true); $ephpm(); $e[] = (hrtime(true) - $t) / $n / 1e3;
        $t = hrtime(true); $phpredis(); $p[] = (hrtime(true) - $t) / $n / 1e3;
    }
    printf("| %-40s | %14.1f | %14.1f | %8.2f |\n", $name, median($e), median($p), median($e) / median($p));
}

/**
 * Wake-up latency: a child waits, the parent releases (or publishes) and records when;
 * the child records when it runs again. Returns the latencies in µs.
 */
function wakes(int $count, callable $prepare, callable $waiter, callable $waker, Ephpm\Kv $meta, callable $asleep): array {
    $lat = [];
    for ($i = 0; $i < $count; $i++) {
        $meta->delete('woke');
        $prepare();
        if (($pid = pcntl_fork()) === 0) {
            $waiter($meta);
            exit(0);
        }
        while (!$asleep()) { usleep(200); }
        usleep(1000);
        $t = $waker();
        pcntl_waitpid($pid, $status);
        $lat[] = ($meta->get('woke') - $t) / 1e3;
    }
    return $lat;
}

$meta = new Ephpm\Kv('shm://bench_redis_meta');
$held = null;
$ephpmWakes = wakes($opt['wakes'],
    function () use ($memo, &$held) { $held = $memo->acquire('e:wake'); },
    function (Ephpm\Kv $meta) use ($server) {
        $m = Ephpm\MemoLock::fromDsn($server->dsn());
        $m->acquire('warm', null, 0); // connect and load the scripts before the clock runs
        $lock = $m->acquire('e:wake', null, 10000);
        $meta->set('woke', hrtime(true));
        $lock?->release();
    },
    function () use (&$held) {
        $t = hrtime(true);
        $held->release();
        return $t;
    },
    // An ephpm waiter is asleep once its ticket is in the lock's line.
    $meta, fn () => $r->lLen('{e:wake}:ephpm:queue') >= 1
);
$release = 'if redis.call("get", KEYS[1]) == ARGV[1] then redis.call("del", KEYS[1]); '
    . 'redis.call("publish", KEYS[1], ""); return 1 end return 0';
$releaseSha = $r->script('load', $release);
$token = null;
/** A phpredis waiter: subscribes, and on a message (or nothing) runs `$then`. */
/** A phpredis waiter is asleep once its subscription is live. */
$subscribed = fn () => ($r->pubsub('numsub', ['p:wake'])['p:wake'] ?? 0) >= 1;
$subscriber = function (callable $then) use ($server) {
    return function (Ephpm\Kv $meta) use ($server, $then) {
        $cmd = new Redis();
        $cmd->connect($server->socket);
        $sub = new Redis();
        $sub->connect($server->socket);
        $sub->setOption(Redis::OPT_READ_TIMEOUT, 10);
        $sub->subscribe(['p:wake'], function () use ($meta, $cmd, $then) {
            $then($cmd);
            $meta->set('woke', hrtime(true));
            // phpredis waits out its read timeout closing a subscribed connection at
            // exit; the sample is taken, so the process just goes.
            exec('kill -9 ' . getmypid());
        });
    };
};
$phpredisLockWakes = wakes($opt['wakes'],
    function () use ($r, &$token) { $token = bin2hex(random_bytes(16)); $r->set('p:wake', $token, ['nx', 'px' => 30000]); },
    $subscriber(function (Redis $cmd) {
        if (!$cmd->set('p:wake', bin2hex(random_bytes(16)), ['nx', 'px' => 30000])) {
            throw new RuntimeException('woken, but the lock was not free');
        }
        $cmd->del('p:wake');
    }),
    function () use ($r, $releaseSha, &$token) {
        $t = hrtime(true);
        $r->evalSha($releaseSha, ['p:wake', $token], 1);
        return $t;
    },
    $meta, $subscribed
);
$phpredisWakes = wakes($opt['wakes'],
    function () {},
    $subscriber(function () {}),
    function () use ($r) {
        $t = hrtime(true);
        $r->publish('p:wake', 'released');
        return $t;
    },
    $meta, $subscribed
);
foreach (['median' => 0.5, 'p90' => 0.9] as $label => $p) {
    printf("| %-40s | %14.1f | %14.1f | %8.2f |\n", "Pub/Sub wake -> lock held, $label",
        pct($ephpmWakes, $p), pct($phpredisLockWakes, $p), pct($ephpmWakes, $p) / pct($phpredisLockWakes, $p));
}
foreach (['median' => 0.5, 'p90' => 0.9] as $label => $p) {
    printf("| %-40s | %14s | %14.1f | %8s |\n", "Pub/Sub wake, bare message, $label", '—', pct($phpredisWakes, $p), '—');
}
$meta->clear();
