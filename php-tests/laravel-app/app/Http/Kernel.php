<?php

namespace App\Http;

use Illuminate\Foundation\Http\Kernel as HttpKernel;

/** No global middleware; sessions only on the routes of the `web` group. */
final class Kernel extends HttpKernel
{
    protected $middlewareGroups = [
        'web' => [Middleware\SessionLocking::class, \Illuminate\Session\Middleware\StartSession::class],
    ];
}
