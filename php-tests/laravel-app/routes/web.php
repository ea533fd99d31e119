<?php
// The routes the suite requests through php-fpm. Counters and markers live in a raw
// Ephpm\Kv on the host's store under "test:", apart from the cache and the sessions.

use Illuminate\Http\Request;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\RateLimiter;
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

// Holds a request until ?together=N requests with the same key are there.
$together = static fn (Request $r) => App\Http\Middleware\Together::wait($r);

// A cold key with a slow origin (?ms=300) that counts its calls; ?tags=a,b: under tags.
Route::get('/remember', function (Request $r) use ($probe, $together) {
    $key = $r->query('key');
    $together($r);
    $cache = Cache::store($r->query('store', 'ephpm'));
    $cache = $r->query('tags') ? $cache->tags(explode(',', $r->query('tags'))) : $cache;
    return $cache->remember($key, 60, function () use ($key, $r, $probe) {
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
        // Laravel 11+ runs it through its defer() callbacks; Laravel 8 has none, and
        // ephpm runs it once the response is out.
        $frames = debug_backtrace(DEBUG_BACKTRACE_IGNORE_ARGS);
        $deferred = array_filter($frames, fn ($f) => ($f['class'] ?? '') === 'Illuminate\Support\Defer\DeferredCallbackCollection');
        $probe()->set("refresh by:$key", $deferred ? "Laravel's defer()" : 'ephpm after the response');
        return 'new';
    });
});

// What Cache::get() and many() read of a key flexible() wrote.
Route::get('/flexible/get', fn (Request $r) => json_encode([Cache::get($r->query('key')), Cache::many([$r->query('key')])]));

// RateLimiter::attempt() with a limit of ?max= on ?key=, its callback taking 20 ms (the
// work it guards), counting the runs.
Route::get('/attempt', function (Request $r) use ($probe, $together) {
    $key = $r->query('key');
    $together($r);
    $passed = RateLimiter::attempt("attempt:$key", (int) $r->query('max'), function () use ($key, $probe) {
        $probe()->increment("attempt ran:$key");
        usleep(20000);
    });
    return $passed ? 'passed' : 'refused';
});

// Laravel's throttle middleware (tooManyAttempts(), then hit()): 5 a minute.
Route::get('/throttled', fn () => 'passed')
    ->middleware([App\Http\Middleware\Together::class, Illuminate\Routing\Middleware\ThrottleRequests::class . ':5,1']);

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
