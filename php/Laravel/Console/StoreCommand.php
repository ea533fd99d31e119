<?php

namespace Ephpm\Laravel\Console;

use Illuminate\Console\Command;

/**
 * What the ephpm:* artisan commands share: the ephpm stores of config/cache.php (the
 * stores whose driver is `ephpm`, by name, each on its DSN), a --store option to pick
 * them, and StoreUser's check before any of them is opened: a store that is not
 * php-fpm's, or that does not exist, is named and skipped, never created.
 */
abstract class StoreCommand extends Command
{
    /** Whether a store was skipped for belonging to another user than php-fpm's. */
    private bool $refused = false;

    /**
     * The stores named by --store (none: `$all` ? every ephpm store : the default one)
     * that this process may open.
     *
     * @return array<string, ?string> Laravel store names ("a, b" when they share a DSN) => DSN (null: ephpm.dsn)
     */
    protected function stores(bool $all): array
    {
        $config = $this->laravel['config'];
        $ephpm = array_map(
            static fn (array $store) => $store['dsn'] ?? null,
            array_filter((array) $config->get('cache.stores'), static fn ($store) => ($store['driver'] ?? null) === 'ephpm'),
        );
        $names = (array) $this->option('store');
        if ($names === []) {
            $default = $config->get('cache.default');
            $names = $all ? array_keys($ephpm) : [array_key_exists($default, $ephpm) ? $default : array_key_first($ephpm)];
        }
        $user = new StoreUser((string) $config->get('ephpm.web_user', 'www-data'));
        // Stores that share a DSN are one ephpm store (their prefixes differ): asked
        // about, and shown, once, under their names together.
        $byDsn = [];
        foreach (array_unique(array_filter($names, static fn ($name) => $name !== null)) as $name) {
            if (!array_key_exists($name, $ephpm)) {
                $this->error(sprintf('No ephpm cache store named "%s" in config/cache.php: the ephpm stores are %s.', $name, implode(', ', array_keys($ephpm)) ?: 'none'));
                $this->refused = true;
                continue;
            }
            $byDsn[$ephpm[$name] ?? ''][] = $name;
        }
        $stores = [];
        foreach ($byDsn as $dsn => $together) {
            $dsn = $dsn === '' ? null : $dsn;
            $name = implode(', ', $together);
            if (($why = $user->wrongUser($dsn, (string) $this->getName())) !== null) {
                $this->warn(sprintf('Store "%s": %s', $name, $why));
                $this->refused = true;
            } elseif (($why = $user->missing($dsn)) !== null) {
                $this->line(sprintf('Store "%s": %s', $name, $why));
            } else {
                $stores[$name] = $dsn;
            }
        }
        return $stores;
    }

    /** The exit code: 1 when a store was refused (so that a deploy script notices). */
    protected function done(): int
    {
        return $this->refused ? 1 : 0;
    }
}
