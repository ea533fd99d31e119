<?php

namespace App\Providers;

use Illuminate\Foundation\Support\Providers\RouteServiceProvider;
use Illuminate\Support\Facades\Route;

/** Loads routes/web.php, as a Laravel application's RouteServiceProvider does. */
final class AppServiceProvider extends RouteServiceProvider
{
    public function boot()
    {
        $this->routes(fn () => Route::group([], base_path('routes/web.php')));
    }
}
