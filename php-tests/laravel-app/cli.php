<?php
// What the suite runs in CLI processes of the same application:
//   php cli.php add-race STORE PROCS ROUNDS   rounds with exactly one Cache::add() winner
//   php cli.php rate-limit PROCS HITS         hits lost when PROCS processes hit one limiter key HITS times
//   php cli.php contract STORE                one "name: value" line per store contract row
//   php cli.php tags put|get|flush TAGS [KEY [VALUE]]
//   php cli.php session-loop N                N requests through one kernel, lock keys seen between them
//   php cli.php discovered                    whether the provider came by auto-discovery
// Counters and markers live in a raw Ephpm\Kv on the host's store under "test:".

use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\RateLimiter;

function boot(): Illuminate\Foundation\Application
{
    $app = require __DIR__ . '/bootstrap/app.php';
    $app->make(Illuminate\Contracts\Http\Kernel::class)->bootstrap();
    return $app;
}

function probe(): Ephpm\Kv
{
    return new Ephpm\Kv(null, 'test:');
}

function show(string $name, mixed $value): void
{
    echo $name, ': ', json_encode($value), "\n";
}

/**
 * Forks $procs children; each boots its own application (nothing is shared across the
 * fork), then runs $body($round) for every round, all children entering a round together
 * (a barrier woken by the store, so they leave it within microseconds of each other).
 */
function race(int $procs, int $rounds, string $run, Closure $body): void
{
    $kids = [];
    for ($p = 0; $p < $procs; $p++) {
        if (($pid = pcntl_fork()) === 0) {
            boot();
            $kv = probe();
            for ($r = 0; $r < $rounds; $r++) {
                $ready = "ready:$run:$r";
                $kv->increment($ready);
                while (($seen = $kv->wait($ready)) !== false && $kv->get($ready) < $procs) {
                    $kv->wait($ready, $seen, 1.0);
                }
                $body($r);
            }
            exit(0);
        }
        $kids[] = $pid;
    }
    foreach ($kids as $pid) {
        pcntl_waitpid($pid, $status);
    }
}

$op = $argv[1] ?? '';
$run = bin2hex(random_bytes(4));
$kv = probe();
switch ($op) {
    case 'add-race':
        [$store, $procs, $rounds] = [$argv[2], (int) $argv[3], (int) $argv[4]];
        race($procs, $rounds, $run, function (int $r) use ($store, $run, $kv) {
            if (Cache::store($store)->add("race:$run:$r", getmypid(), 60)) {
                $kv->increment("winners:$run:$r");
            }
        });
        $one = 0;
        $most = 0;
        for ($r = 0; $r < $rounds; $r++) {
            $w = (int) $kv->get("winners:$run:$r");
            $one += $w === 1 ? 1 : 0;
            $most = max($most, $w);
        }
        echo "$one rounds of $rounds with one winner, at most $most winners\n";
        break;
    case 'rate-limit':
        // The limiter's key is made by a first hit (in a process of its own) before the
        // race: Laravel's hit() on a fresh key has a window of its own (a process that
        // did not add the key and counts 1 resets it with put()), whatever the store.
        [$procs, $hits] = [(int) $argv[2], (int) $argv[3]];
        race(1, 1, "$run-first", fn () => RateLimiter::hit("login:$run", 60));
        race($procs, 1, $run, function () use ($hits, $run) {
            for ($i = 0; $i < $hits; $i++) {
                RateLimiter::hit("login:$run", 60);
            }
        });
        boot();
        echo 1 + $procs * $hits - RateLimiter::attempts("login:$run"), " hits lost of ", 1 + $procs * $hits, "\n";
        break;
    case 'contract':
        require __DIR__ . '/contract.php';
        break;
    case 'tags':
        boot();
        $tags = Cache::store('ephpm')->tags(explode(',', $argv[3]));
        echo json_encode(match ($argv[2]) {
            'put' => $tags->put($argv[4], $argv[5], 60),
            'get' => $tags->get($argv[4]),
            'flush' => $tags->flush(),
        }), "\n";
        break;
    case 'session-loop':
        require __DIR__ . '/session-loop.php';
        break;
    case 'discovered':
        $app = boot();
        show('provider registered', $app->getProvider(Ephpm\Laravel\EphpmServiceProvider::class) !== null);
        show('listed in config/app.php', in_array(Ephpm\Laravel\EphpmServiceProvider::class, config('app.providers'), true));
        show('put', Cache::store('ephpm')->put("discovered:$run", 'found', 60));
        show('get', Cache::store('ephpm')->get("discovered:$run"));
        break;
    default:
        fwrite(STDERR, "unknown op '$op'\n");
        exit(2);
}
