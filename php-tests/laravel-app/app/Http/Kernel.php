<?php

namespace App\Http;

use Illuminate\Foundation\Http\Kernel as HttpKernel;

/**
 * Sessions only on the routes of the `web` group. The only global middleware is Laravel
 * 11's InvokeDeferredCallbacks, where there is one: it runs defer()'s callbacks (so
 * flexible()'s refresh) once the response has gone, as a Laravel 11 application does.
 */
final class Kernel extends HttpKernel
{
    public function __construct(\Illuminate\Contracts\Foundation\Application $app, \Illuminate\Routing\Router $router)
    {
        parent::__construct($app, $router);
        if (class_exists(\Illuminate\Foundation\Http\Middleware\InvokeDeferredCallbacks::class)) {
            $this->middleware[] = \Illuminate\Foundation\Http\Middleware\InvokeDeferredCallbacks::class;
        }
    }

    protected $middlewareGroups = [
        'web' => [Middleware\SessionLocking::class, \Illuminate\Session\Middleware\StartSession::class],
    ];
}
