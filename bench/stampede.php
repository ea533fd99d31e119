<?php
/**
 * N worker processes released on a wall-clock barrier at a cold key whose computation
 * takes `resolverMs`; counts origin calls and how far behind the holder each waiter is
 * served. Every mode caches in the same pool — Symfony's FilesystemAdapter (tmpfs) or
 * Ephpm\Symfony\EphpmAdapter — so that only the stampede protection differs.
 *
 *   php -n -d extension=pcntl -d extension=./target/ephpm.so bench/stampede.php \
 *       [modes=nolock,symfony,symfony-hosts=4,memolock,poll] [workers=12] [resolverMs=300] \
 *       [runs=5] [keys=same|collide] [pool=filesystem|ephpm|redis|cluster] [hosts=1] [redis=DSN]
 *   ... bench/stampede.php modes=expiring,beta,swr   (a hot key whose lifetime ends: expiry.php)
 *   ... bench/stampede.php hosts=4 pool=redis modes=symfony,memolock,memolock-redis   (a fleet)
 *   ... bench/stampede.php hosts=3 pool=cluster modes=symfony,memolock,memolock-cluster
 *       (a fleet on ephpm's gossip cluster: one ephpm-node per simulated host)
 *
 * modes: nolock (Symfony's no-op wrapper), symfony (LockRegistry, enabled explicitly as
 * the CLI needs), symfony-hosts=N (workers split over N simulated hosts, each with its
 * own LockRegistry lock files), memolock (Ephpm\MemoLock), poll (add + 100 ms polling on
 * the same ephpm store, for scale), memolock-redis (Ephpm\MemoLock::fromDsn on Redis).
 * keys=collide gives 8 distinct keys that share one LockRegistry slot (workers spread
 * over them).
 *
 * hosts=N simulates a fleet on this machine: worker w belongs to host w % N, and each
 * host is its own process group with its own LockRegistry files and its own shm:// lock
 * store (and, with pool=filesystem or pool=ephpm, its own cache). pool=redis is the
 * fleet's usual setup: one Ephpm\Symfony\EphpmAdapter on Redis shared by every host.
 * Without redis=DSN the benchmark starts a redis-server of its own on a unix socket.
 *
 * lag = waiter's return − the end of the computation it waited for. Workers stay alive
 * until all have reported, so that no process's exit is counted in another's lag.
 */
require '/usr/share/php/Symfony/Component/Cache/autoload.php';
require __DIR__ . '/../php/autoload.php';
require __DIR__ . '/expiry.php';
require __DIR__ . '/../php-tests/harness/redis.inc';

use Symfony\Component\Cache\Adapter\FilesystemAdapter;
use Symfony\Component\Cache\LockRegistry;

$opt = ['modes' => 'nolock,symfony,symfony-hosts=4,memolock,poll', 'workers' => 12, 'resolverMs' => 300, 'runs' => 5, 'keys' => 'same', 'pool' => 'filesystem', 'hosts' => 1, 'redis' => ''];
foreach (array_slice($argv, 1) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = $v;
}
$workers = (int) $opt['workers'];
$hosts = max(1, (int) $opt['hosts']);
$ownRedis = null;
if ($opt['redis'] === '' && ($opt['pool'] === 'redis' || in_array('memolock-redis', explode(',', $opt['modes']), true))) {
    $ownRedis = new TestRedis();
    // A generous timeout: a 2-vCPU machine running 12 workers can stall a reply for
    // longer than the default second, and a timed-out lock call computes unprotected.
    $opt['redis'] = $ownRedis->dsn('?timeout=5');
}
$ownCluster = null;
if ($opt['pool'] === 'cluster' || in_array('memolock-cluster', explode(',', $opt['modes']), true)) {
    require_once __DIR__ . '/../php-tests/harness/cluster.inc';
    $ownCluster = new TestCluster($hosts, 'bench');
}
/** The cluster:// store of simulated host `$host` (its own node). */
function cluster_dsn(int $host): string {
    return $GLOBALS['ownCluster']->dsn($host + 1, '?timeout=5');
}
$resolverUs = (int) $opt['resolverMs'] * 1000;
$meta = new Ephpm\Kv('shm://bench_stampede_meta');
$dir = sys_get_temp_dir() . '/ephpm-stampede-' . getmypid();

/** Lock files for a simulated host (LockRegistry locks files; a host is its own set). */
function host_files(string $dir, int $host): array {
    $files = [];
    @mkdir("$dir/locks-$host", 0700, true);
    for ($i = 0; $i < 26; $i++) {
        touch($files[] = "$dir/locks-$host/$i.lock");
    }
    return $files;
}

/** 8 keys whose crc32 lands on one LockRegistry slot (26 files). */
function colliding_keys(): array {
    $keys = [];
    for ($i = 0; count($keys) < 8; $i++) {
        if (abs(crc32("k$i")) % 26 === 0) {
            $keys[] = "k$i";
        }
    }
    return $keys;
}

/** A PSR-3 logger (duck-typed) for MemoLock: what ran unprotected, and why. */
final class StderrLogger {
    public function warning(string $message, array $context = []): void { fwrite(STDERR, "warning: $message\n"); }
}

/** The host-wide stores of simulated host `$host`. */
function host_store(string $what, int $host): string {
    return "shm://bench_stampede_{$what}_h$host";
}

function wrapper(string $mode, int $worker, string $dir, int $hosts, string $redis): ?callable {
    $host = $worker % $hosts;
    if ($mode === 'nolock') {
        return null;
    }
    if ($mode === 'symfony' || str_starts_with($mode, 'symfony-hosts=')) {
        $lockHosts = $mode === 'symfony' ? $hosts : (int) substr($mode, 14);
        LockRegistry::setFiles(host_files($dir, $worker % $lockHosts));
        return \Closure::fromCallable([LockRegistry::class, 'compute']);
    }
    if ($mode === 'memolock') {
        return new Ephpm\MemoLock(new Ephpm\Kv(host_store('locks', $host)), 10000, 10000);
    }
    if ($mode === 'memolock-redis') {
        return Ephpm\MemoLock::fromDsn($redis, 10000, 10000, new StderrLogger());
    }
    if ($mode === 'memolock-cluster') {
        return Ephpm\MemoLock::fromDsn(cluster_dsn($host), 10000, 10000, new StderrLogger());
    }
    // poll: add + 100 ms polling on the same ephpm store.
    $locks = new Ephpm\Kv(host_store('locks', $host));
    return function (callable $callback, $item, bool &$save, $pool) use ($locks) {
        $token = bin2hex(random_bytes(16));
        while (true) {
            if ($locks->add('poll:' . $item->getKey(), $token, 10)) {
                try {
                    $value = $callback($item, $save);
                    $pool->save($item->set($value));
                    $save = false;
                    return $value;
                } finally {
                    $locks->deleteIfEquals('poll:' . $item->getKey(), $token);
                }
            }
            usleep(100000);
            if (($hit = $pool->getItem($item->getKey()))->isHit()) {
                $save = false;
                return $hit->get();
            }
        }
    };
}

function percentile(array $xs, float $p): float {
    if (!$xs) return NAN;
    sort($xs);
    return $xs[(int) min(count($xs) - 1, floor($p * count($xs)))];
}

$modes = explode(',', $opt['modes']);
$hotModes = array_values(array_intersect($modes, ['expiring', 'beta', 'swr']));
$coldModes = array_values(array_diff($modes, $hotModes));
if ($hotModes) {
    run_expiry_modes($hotModes, $opt, $meta);
}
if (!$coldModes) {
    $meta->clear();
    exit(0);
}

$keys = $opt['keys'] === 'collide' ? colliding_keys() : ['cold'];
printf("stampede: %d workers on %d host(s), compute %d ms, %d runs, keys=%s (%d distinct), pool=%s, PHP %s, ephpm %s\n\n",
    $workers, $hosts, $opt['resolverMs'], $opt['runs'], $opt['keys'], count($keys), $opt['pool'], PHP_VERSION, phpversion('ephpm'));
printf("| %-16s | %12s | %8s | %10s | %10s | %13s |\n", 'mode', 'origin calls', 'waiters', 'lag p50 ms', 'lag max ms', 'all done, ms');
printf("|%s|%s|%s|%s|%s|%s|\n", str_repeat('-', 18), str_repeat('-', 14), str_repeat('-', 10), str_repeat('-', 12), str_repeat('-', 12), str_repeat('-', 15));
foreach ($coldModes as $mode) {
    $origins = $lags = $done = [];
    $waiters = 0;
    for ($run = 0; $run < (int) $opt['runs']; $run++) {
        exec('rm -rf ' . escapeshellarg($dir));
        $meta->clear();
        for ($h = 0; $h < $hosts; $h++) {
            (new Ephpm\Kv(host_store('locks', $h)))->clear();
            (new Ephpm\Kv(host_store('cache', $h)))->clear();
        }
        if ($opt['redis'] !== '') {
            (new Ephpm\Kv($opt['redis']))->clear();
        }
        if ($ownCluster !== null) {
            (new Ephpm\Kv(cluster_dsn(0)))->clear();
        }
        $t0 = hrtime(true) + 300_000_000;
        $kids = [];
        for ($w = 0; $w < $workers; $w++) {
            if (($pid = pcntl_fork()) === 0) {
                $host = $w % $hosts;
                $pool = match ($opt['pool']) {
                    'ephpm' => new Ephpm\Symfony\EphpmAdapter('s', 0, host_store('cache', $host)),
                    'redis' => new Ephpm\Symfony\EphpmAdapter('s', 0, $opt['redis']),
                    'cluster' => new Ephpm\Symfony\EphpmAdapter('s', 0, cluster_dsn($host)),
                    default => new FilesystemAdapter('s', 0, "$dir/cache-$host"),
                };
                $pool->setCallbackWrapper(wrapper($mode, $w, $dir, $hosts, $opt['redis']));
                $key = $keys[$w % count($keys)];
                $meta2 = new Ephpm\Kv('shm://bench_stampede_meta');
                $computed = false;
                while (hrtime(true) < $t0 - 2_000_000) { usleep(500); }
                while (hrtime(true) < $t0) { }
                $pool->get($key, function () use ($meta2, $key, $resolverUs, &$computed) {
                    $computed = true;
                    $meta2->increment('origin');
                    usleep($resolverUs);
                    $meta2->set("end:$key", hrtime(true));
                    return 'value';
                });
                $meta2->set("ret:$w", [$computed, hrtime(true), $key]);
                // Stay until everyone has reported: an early finisher's exit costs CPU
                // that would otherwise be counted in the late waiters' lag.
                $meta2->increment('reported');
                // (At most 30 s: a build whose increment is broken on purpose loses
                // some, and must not leave workers behind.)
                $until = microtime(true) + 30;
                while ($meta2->get('reported') < $GLOBALS['workers'] && microtime(true) < $until) {
                    usleep(2000);
                }
                exit(0);
            }
            // Each simulated host is a process group, led by its first worker.
            if ($hosts > 1 && function_exists('posix_setpgid')) {
                posix_setpgid($pid, $w < $hosts ? $pid : $kids[$w % $hosts]);
            }
            $kids[] = $pid;
        }
        foreach ($kids as $pid) {
            pcntl_waitpid($pid, $status);
        }
        $origins[] = $meta->get('origin', 0);
        $last = 0;
        for ($w = 0; $w < $workers; $w++) {
            [$computed, $ret, $key] = $meta->get("ret:$w");
            $last = max($last, $ret);
            if (!$computed) {
                $waiters++;
                $lags[] = ($ret - $meta->get("end:$key")) / 1e6;
            }
        }
        $done[] = ($last - $t0) / 1e6;
    }
    sort($origins);
    printf("| %-16s | %12s | %8d | %10.2f | %10.2f | %13.1f |\n", $mode,
        $origins[0] === end($origins) ? $origins[0] : "{$origins[0]}–" . end($origins),
        $waiters, percentile($lags, 0.5), $lags ? max($lags) : NAN, percentile($done, 0.5));
}
exec('rm -rf ' . escapeshellarg($dir));
$meta->clear();
for ($h = 0; $h < $hosts; $h++) {
    foreach (['locks', 'cache'] as $what) {
        @unlink('/dev/shm/ephpm-' . posix_getuid_or_0() . '/' . substr(host_store($what, $h), 6));
    }
}

function posix_getuid_or_0(): int {
    return function_exists('posix_getuid') ? posix_getuid() : 0;
}
