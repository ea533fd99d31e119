<?php
// The routes the suite requests through php-fpm. Counters and markers live in a raw
// Ephpm\Kv on the host's store under "test:", apart from the cache and the sessions.

use Illuminate\Http\Request;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Route;

$probe = static fn () => new Ephpm\Kv(null, 'test:');
// Waits (bounded) until the probe key exists; whether it does.
$await = static function (string $key, float $seconds) use ($probe): bool {
    $kv = $probe();
    $deadline = microtime(true) + $seconds;
    while (!$kv->has($key) && microtime(true) < $deadline) {
        usleep(2000);
    }
    return $kv->has($key);
};

// Holds a request until ?together=N requests with the same key are there (10 s at
// most), so that N requests meet the cache at once however slowly each one started.
$together = static function (Request $r) use ($probe): void {
    $kv = $probe();
    $arrived = 'arrived:' . $r->query('key') . ':' . $r->query('together', 1);
    $kv->increment($arrived);
    $deadline = microtime(true) + 10;
    while (($seen = $kv->wait($arrived)) !== false && $kv->get($arrived) < (int) $r->query('together', 1) && microtime(true) < $deadline) {
        $kv->wait($arrived, $seen, 0.5);
    }
};

// A cold key with a slow origin (?ms=300) that counts its calls.
Route::get('/remember', function (Request $r) use ($probe, $together) {
    $key = $r->query('key');
    $together($r);
    return Cache::store($r->query('store', 'ephpm'))->remember($key, 60, function () use ($key, $r, $probe) {
        $probe()->increment("origin:$key");
        usleep((int) $r->query('ms', 300) * 1000);
        return 'computed';
    });
});

// ?prime=1 stores "old", fresh for 1 s; afterwards the key is stale and is refreshed by
// a callback that counts its runs and waits for the client's word that it has every
// response (15 s at most), so it records whether it ran after the responses.
Route::get('/flexible', function (Request $r) use ($probe, $await, $together) {
    $key = $r->query('key');
    $together($r);
    if ($r->query('prime')) {
        return Cache::flexible($key, [1, 300], fn () => 'old');
    }
    return Cache::flexible($key, [60, 300], function () use ($key, $probe, $await) {
        $probe()->increment("refreshes:$key");
        $saw = $await("client has the responses:$key", 15) ? 'the client had the responses' : 'no responses after 15 s';
        $probe()->set("refresh saw:$key", $saw);
        return 'new';
    });
});

Route::middleware('web')->group(function () use ($probe, $await) {
    // Read, hold the session 10 ms, write counter + 1.
    Route::get('/session/incr', function (Request $r) {
        $n = $r->session()->get('n', 0);
        usleep(10000);
        $r->session()->put('n', $n + 1);
        return $n + 1;
    });
    // Saves the session, then keeps running until the second request (below) is done.
    Route::get('/session/save-then-wait', function (Request $r) use ($probe, $await) {
        $r->session()->put('from_first', 'saved by the first request');
        $r->session()->save();
        $probe()->set('first saved', 1);
        return $await('second done', 10) ? 'the second request finished first' : 'the second request did not finish within 10 s';
    });
    // Saves the session, waits until another request has saved it too, then changes it
    // again: Laravel writes it a second time at the end of the request.
    Route::get('/session/save-then-change', function (Request $r) use ($probe, $await) {
        $r->session()->put('first', 'kept');
        $r->session()->save();
        $probe()->set('late: first saved', 1);
        $await('late: second saved', 10);
        $r->session()->put('first, later', 'kept');
        return 'done';
    });
    Route::get('/session/put', function (Request $r) {
        $r->session()->put($r->query('key'), 'kept');
        return 'stored';
    });
    Route::get('/session/keys', fn (Request $r) => json_encode($r->session()->only(['first', 'second'])));
    Route::get('/session/read', function (Request $r) use ($probe) {
        $value = $r->session()->get('from_first', 'nothing');
        $probe()->set('second done', 1);
        return $value;
    });
});
