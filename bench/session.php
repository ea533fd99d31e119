<?php
/**
 * 20 processes on one session, each holding it 10 ms: the wall time over the ideal
 * 200 ms, and the median hand-over (one request's close to the next one's read
 * returning). Handlers: PHP's files (flock), ephpm on shm://, and, against a
 * redis-server this script starts on a unix socket in a temporary folder (skipped when
 * redis-server or php-redis is missing), ephpm on unix:// and phpredis with
 * redis.session.locking_enabled=1.
 *
 *   php -n -d extension=$PWD/target/ephpm.so bench/session.php [requests=20] [holdMs=10] [runs=5]
 */
$opt = ['requests' => 20, 'holdMs' => 10, 'runs' => 5];
foreach (array_slice($argv, 1) as $a) {
    [$k, $v] = explode('=', $a, 2) + [1 => ''];
    $opt[$k] = (int) $v;
}
$tmp = sys_get_temp_dir() . '/ephpm-session-bench-' . getmypid();
@mkdir("$tmp/files", 0700, true);
$meta = new Ephpm\Kv('shm://bench_session_meta');

$handlers = ['files' => ['session.save_handler' => 'files', 'session.save_path' => "$tmp/files"],
             'ephpm' => ['session.save_handler' => 'ephpm', 'session.save_path' => '']];
$redis = null;
$redisExt = is_file(ini_get('extension_dir') . '/redis.so') ? '1' : '0';
if (is_executable('/usr/bin/redis-server') && $redisExt === '1') {
    $redis = proc_open(['/usr/bin/redis-server', '--port', '0', '--unixsocket', "$tmp/redis.sock", '--save', '', '--appendonly', 'no'],
        [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    for ($i = 0; $i < 100 && !file_exists("$tmp/redis.sock"); $i++) usleep(20000);
    $handlers['ephpm on redis (unix://)'] = ['session.save_handler' => 'ephpm', 'session.save_path' => "unix://$tmp/redis.sock"];
    $handlers['redis (phpredis, locking on)'] = ['session.save_handler' => 'redis', 'session.save_path' => "unix://$tmp/redis.sock",
        'redis.session.locking_enabled' => '1', 'redis.session.lock_retries' => '-1'];
}

// One run per handler in a child PHP (so each gets its own ini), which prints
// "wall handover handover ...".
$child = __DIR__ . '/session-worker.php';
printf("session hand-over: %d requests × %d ms on one session, %d runs, PHP %s\n\n", $opt['requests'], $opt['holdMs'], $opt['runs'], PHP_VERSION);
printf("| %-28s | %16s | %19s |\n", 'handler', 'wall − ideal, ms', 'hand-over p50, ms');
printf("|%s|%s|%s|\n", str_repeat('-', 30), str_repeat('-', 18), str_repeat('-', 21));
foreach ($handlers as $name => $ini) {
    $over = $handovers = [];
    for ($run = 0; $run < $opt['runs']; $run++) {
        $args = ['php', '-n', '-d', 'extension=' . realpath(__DIR__ . '/../target/ephpm.so'), '-d', 'session.use_cookies=0',
                 '-d', 'session.cache_limiter=', '-d', 'session.use_strict_mode=0'];
        if (str_starts_with($name, 'redis')) {
            array_push($args, '-d', 'extension=igbinary', '-d', 'extension=redis');
        }
        foreach ($ini as $k => $v) array_push($args, '-d', "$k=$v");
        array_push($args, $child, (string) $opt['requests'], (string) $opt['holdMs'], "bench$run" . md5($name));
        $out = explode(' ', trim((string) shell_exec(implode(' ', array_map('escapeshellarg', $args)))));
        $over[] = (float) array_shift($out) - $opt['requests'] * $opt['holdMs'];
        array_push($handovers, ...array_map('floatval', $out));
    }
    sort($over); sort($handovers);
    printf("| %-28s | %16.1f | %19.3f |\n", $name, $over[intdiv(count($over), 2)], $handovers[intdiv(count($handovers), 2)] ?? NAN);
}
if ($redis) {
    proc_terminate($redis);
    proc_close($redis);
}
exec('rm -rf ' . escapeshellarg($tmp));
