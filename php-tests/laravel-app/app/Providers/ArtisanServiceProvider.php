<?php

namespace App\Providers;

use Illuminate\Cache\Console\ClearCommand;
use Illuminate\Support\ServiceProvider;

/**
 * cache:clear, bound as Laravel's own ArtisanServiceProvider binds it (a deferred
 * provider whose other commands need services this application does not have).
 */
final class ArtisanServiceProvider extends ServiceProvider
{
    public function register()
    {
        $this->app->singleton('command.cache.clear', fn ($app) => new ClearCommand($app['cache'], $app['files']));
        $this->commands(['command.cache.clear']);
    }
}
