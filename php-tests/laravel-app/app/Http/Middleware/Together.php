<?php

namespace App\Http\Middleware;

use Closure;
use Ephpm\Kv;
use Illuminate\Http\Request;

/**
 * Holds a request until ?together=N requests with the same ?key= are there (10 s at
 * most), so that N requests meet the code under test at once however slowly each one
 * started. As middleware, before another middleware (the rate limiter's).
 */
final class Together
{
    public function handle(Request $request, Closure $next)
    {
        self::wait($request);
        return $next($request);
    }

    public static function wait(Request $r): void
    {
        $kv = new Kv(null, 'test:');
        $arrived = 'arrived:' . $r->query('key') . ':' . $r->query('together', 1);
        $kv->increment($arrived);
        $deadline = microtime(true) + 10;
        while (($seen = $kv->wait($arrived)) !== false && $kv->get($arrived) < (int) $r->query('together', 1) && microtime(true) < $deadline) {
            $kv->wait($arrived, $seen, 0.5);
        }
    }
}
