<?php

namespace App\Http\Middleware;

use Closure;
use Illuminate\Http\Request;

/**
 * `?locking=0` turns the ephpm session lock off for this request (before StartSession
 * builds the handler), so the suite can show what the lock prevents.
 */
final class SessionLocking
{
    public function handle(Request $request, Closure $next)
    {
        if ($request->query('locking') === '0') {
            config(['session.ephpm.locking' => false]);
        }
        return $next($request);
    }
}
