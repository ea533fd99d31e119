<?php

namespace Ephpm\Laravel\Console;

use Ephpm\Kv;
use Ephpm\KvIterator;

/**
 * `php artisan ephpm:locks [--store=NAME] [--prefix=P] [NAME...]`: the locks held in an
 * ephpm store, with their remaining TTL and fencing number (a held lock is an entry with
 * a fence: remember()'s `cache:<prefix>:remember:<key>`, a session's
 * `laravel_session:session_lock:<id>`, ...). With names, those locks, held or free.
 */
final class LocksCommand extends StoreCommand
{
    protected $signature = 'ephpm:locks {names?* : Lock names (full keys) to show, held or not; none: every held lock}
        {--store= : The ephpm cache store of config/cache.php whose backend to look in (default: the default store)}
        {--prefix= : Only the locks whose name starts with this}';
    protected $description = 'List the locks held in an ephpm store, with their remaining TTL and fencing number';

    public function handle(): int
    {
        $prefix = (string) $this->option('prefix');
        $names = $this->argument('names');
        foreach ($this->stores(false) as $store => $dsn) {
            $kv = new Kv($dsn);
            $rows = [];
            foreach ($names ?: [null] as $lock) {
                $found = false;
                foreach (new KvIterator($kv, $prefix . $lock) as $key => $info) {
                    if ($info['fence'] !== null && ($lock === null || $key === $prefix . $lock)) {
                        $rows[] = [$key, 'held', $info['ttl'] === null ? 'none' : sprintf('%.3f s', $info['ttl']), $info['fence']];
                        $found = true;
                    }
                }
                if ($lock !== null && !$found) {
                    $rows[] = [$prefix . $lock, 'free', '', ''];
                }
            }
            $this->line(sprintf('Store "%s" (%s)', $store, $kv->stats()['backend']));
            $rows ? $this->table(['lock', 'state', 'TTL left', 'fence'], $rows) : $this->line('No lock is held.');
        }
        return $this->done();
    }
}
