<?php

namespace Ephpm\Laravel\Console;

use Illuminate\Cache\Console\ClearCommand;

/**
 * Laravel's `cache:clear`, which first asks StoreUser about an ephpm store: run as
 * another user than php-fpm's it would clear (and create) that user's shm:// store and
 * say "Application cache cleared!" while the site's cache stays as it was; instead it
 * warns and touches nothing (exit code 1). A store that does not exist is not created.
 * Other stores, and ephpm stores php-fpm's user clears, get Laravel's own command.
 */
final class CacheClearCommand extends ClearCommand
{
    public function handle()
    {
        $name = $this->argument('store') ?? $this->laravel['config']->get('cache.default');
        $store = $this->laravel['config']->get("cache.stores.$name");
        if (($store['driver'] ?? null) === 'ephpm') {
            $user = new StoreUser((string) $this->laravel['config']->get('ephpm.web_user', 'www-data'));
            if (($why = $user->wrongUser($store['dsn'] ?? null, (string) $this->getName())) !== null) {
                $this->warn(sprintf('Store "%s": %s', $name, $why));
                return 1;
            }
            if (($why = $user->missing($store['dsn'] ?? null)) !== null) {
                $this->line(sprintf('Store "%s": %s', $name, $why));
                return 0;
            }
        }
        return parent::handle();
    }
}
