<?php

namespace Ephpm\Laravel\Console;

use Ephpm\Kv;
use Ephpm\KvIterator;

/**
 * `php artisan ephpm:clear [--store=NAME] [--prefix=P] [--sessions] [--locks]`: removes
 * the keys of an ephpm store (every key of its backend, or those starting with P) but,
 * unless asked, not the sessions (keys under session.ephpm.prefix) nor a lock that is
 * held (an entry with a fence: a running request's remember(), a session's lock):
 * clearing a cache must not log users out, nor let a second process into a computation
 * or a session that another one is in. `cache:clear` clears one cache store's keys only.
 */
final class ClearCommand extends StoreCommand
{
    protected $signature = 'ephpm:clear
        {--store= : The ephpm cache store of config/cache.php whose backend to clear (default: the default store)}
        {--prefix= : Only the keys starting with this (a cache store\'s are "cache:<prefix>:")}
        {--sessions : Remove the sessions too (everybody is logged out)}
        {--locks : Remove held locks too (their holders lose them while they run)}';
    protected $description = 'Remove the keys of an ephpm store, but not its sessions and held locks unless asked';

    public function handle(): int
    {
        $sessions = (string) ($this->laravel['config']->get('session.ephpm.prefix') ?? 'laravel_session:');
        foreach ($this->stores(false) as $store => $dsn) {
            $kv = new Kv($dsn);
            $removed = $keptSessions = $keptLocks = 0;
            // Walked, not Kv::clear(): what to keep is decided key by key. A key that
            // becomes a lock between the walk and its delete is the one race left.
            foreach (new KvIterator($kv, (string) $this->option('prefix')) as $key => $info) {
                if ($info['fence'] !== null && !$this->option('locks')) {
                    $keptLocks++;
                } elseif ($sessions !== '' && str_starts_with($key, $sessions) && !$this->option('sessions')) {
                    $keptSessions++;
                } elseif ($kv->delete($key)) {
                    $removed++;
                }
            }
            $this->info(sprintf('Store "%s" (%s): removed %d key%s%s.', $store, $kv->stats()['backend'], $removed, $removed === 1 ? '' : 's',
                $this->option('prefix') ? sprintf(' starting with "%s"', $this->option('prefix')) : ''));
            if ($keptSessions + $keptLocks > 0) {
                $this->line(sprintf('Kept %d session key%s (--sessions removes them) and %d held lock%s (--locks removes them).',
                    $keptSessions, $keptSessions === 1 ? '' : 's', $keptLocks, $keptLocks === 1 ? '' : 's'));
            }
        }
        return $this->done();
    }
}
