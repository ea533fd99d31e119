<?php
/**
 * The hot-key scenario of bench/stampede.php (modes=expiring,beta,swr): a key computed
 * in `resolverMs` is warm, and N worker processes arrive as its lifetime ends. Counts
 * origin calls, the requests that waited (get() took over 10 ms) and the wait p50/max.
 *
 *   expiring  Ephpm\MemoLock on Ephpm\Symfony\EphpmAdapter; requests just after expiry.
 *   beta      Symfony's probabilistic early expiration (β = 1, no lock: the CLI default)
 *             on the same pool; requests in a burst 100 ms before the item stops being a
 *             hit (Symfony stores whole seconds of lifetime: 1 s of the 2 asked for,
 *             while the metadata's expiry, which β compares with, says 1.7 s).
 *   swr       Ephpm\StaleCache (stale window 60 s); requests just after expiry. The
 *             elected process refreshes at its shutdown, after it has reported.
 *
 * Included by bench/stampede.php, which parses the options.
 */

const LIFETIME_S = 2;
const WAITED_MS = 10.0;

/** Makes the key warm, ending its lifetime LIFETIME_S from now; returns when it ends (hrtime ns). */
function warm(string $mode, int $resolverUs): int {
    $compute = function () use ($resolverUs) { usleep($resolverUs); return 'value'; };
    if ($mode === 'swr') {
        $cache = new Ephpm\StaleCache(new Ephpm\Kv('shm://bench_stampede_cache'), 60);
        $cache->get('hot', function (&$ttl) use ($compute) { $v = $compute(); $ttl = LIFETIME_S; return $v; });
    } else {
        $pool = new Ephpm\Symfony\EphpmAdapter('s', 0, 'shm://bench_stampede_cache');
        $pool->get('hot', function ($item) use ($compute) { $item->expiresAfter(LIFETIME_S); return $compute(); });
        // When the item stops being a hit: Symfony saves whole seconds of lifetime
        // (1 s here, since the computation ate 0.3 of the 2), not the metadata's expiry.
        $left = (new Ephpm\Kv('shm://bench_stampede_cache'))->ttl('s:hot');
        return hrtime(true) + (int) ($left * 1e9);
    }
    return hrtime(true) + LIFETIME_S * 1_000_000_000;
}

/** One worker's request: the value, and how long get() took (ms). */
function request(string $mode, int $resolverUs, Ephpm\Kv $meta): float {
    $origin = function () use ($resolverUs, $meta) { $meta->increment('origin'); usleep($resolverUs); return 'value'; };
    $t = hrtime(true);
    if ($mode === 'swr') {
        $cache = new Ephpm\StaleCache(new Ephpm\Kv('shm://bench_stampede_cache'), 60);
        $cache->get('hot', function (&$ttl) use ($origin) { $ttl = LIFETIME_S; return $origin(); });
    } else {
        $pool = new Ephpm\Symfony\EphpmAdapter('s', 0, 'shm://bench_stampede_cache');
        $pool->setCallbackWrapper($mode === 'expiring' ? new Ephpm\MemoLock(new Ephpm\Kv('shm://bench_stampede_locks'), 10000, 10000) : null);
        $pool->get('hot', function ($item) use ($origin) { $item->expiresAfter(LIFETIME_S); return $origin(); }, $mode === 'beta' ? 1.0 : 0.0);
    }
    return (hrtime(true) - $t) / 1e6;
}

function run_expiry_modes(array $modes, array $opt, Ephpm\Kv $meta): void {
    $workers = (int) $opt['workers'];
    $resolverUs = (int) $opt['resolverMs'] * 1000;
    printf("\nhot key at the end of its lifetime: %d workers, compute %d ms, %d runs\n\n", $workers, $opt['resolverMs'], $opt['runs']);
    printf("| %-9s | %12s | %14s | %11s | %11s |\n", 'mode', 'origin calls', 'waited (of N)', 'wait p50 ms', 'wait max ms');
    printf("|%s|%s|%s|%s|%s|\n", str_repeat('-', 11), str_repeat('-', 14), str_repeat('-', 16), str_repeat('-', 13), str_repeat('-', 13));
    foreach ($modes as $mode) {
        $origins = $waits = [];
        $waited = 0;
        for ($run = 0; $run < (int) $opt['runs']; $run++) {
            $meta->clear();
            (new Ephpm\Kv('shm://bench_stampede_locks'))->clear();
            (new Ephpm\Kv('shm://bench_stampede_cache'))->clear();
            $ends = warm($mode, $resolverUs);
            $arrive = $mode === 'beta' ? $ends - 100_000_000 : $ends + 5_000_000;
            $kids = [];
            for ($w = 0; $w < $workers; $w++) {
                if (($pid = pcntl_fork()) === 0) {
                    $meta2 = new Ephpm\Kv('shm://bench_stampede_meta');
                    while (hrtime(true) < $arrive - 2_000_000) { usleep(500); }
                    while (hrtime(true) < $arrive) { }
                    $meta2->set("wait:$w", request($mode, $resolverUs, $meta2));
                    $meta2->increment('reported');
                    $until = microtime(true) + 30; // see stampede.php
                    while ($meta2->get('reported') < $workers && microtime(true) < $until) { usleep(2000); }
                    exit(0);
                }
                $kids[] = $pid;
            }
            foreach ($kids as $pid) {
                pcntl_waitpid($pid, $status);
            }
            $origins[] = $meta->get('origin', 0);
            for ($w = 0; $w < $workers; $w++) {
                $waits[] = $ms = $meta->get("wait:$w");
                $waited += $ms > WAITED_MS ? 1 : 0;
            }
        }
        sort($origins);
        printf("| %-9s | %12s | %14s | %11.2f | %11.2f |\n", $mode,
            $origins[0] === end($origins) ? $origins[0] : "{$origins[0]}–" . end($origins),
            sprintf('%.1f of %d', $waited / (int) $opt['runs'], $workers), percentile($waits, 0.5), max($waits));
    }
}
