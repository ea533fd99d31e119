<?php

namespace Ephpm\Laravel\Console;

use Ephpm\Kv;

/** `php artisan ephpm:stats [--store=NAME]...`: each ephpm store's counters (Kv::stats()), a column per store. */
final class StatsCommand extends StoreCommand
{
    protected $signature = 'ephpm:stats {--store=* : An ephpm cache store of config/cache.php; repeat for several; none: every one}';
    protected $description = 'Show the counters of the ephpm cache stores (memory, entries, hits, misses, evictions, repairs)';

    public function handle(): int
    {
        $stats = array_map(static fn (?string $dsn) => (new Kv($dsn))->stats(), $this->stores(true));
        if ($stats !== []) {
            $rows = [];
            // The scalar counters (a list such as shard_fill is the status page's).
            foreach (array_keys(array_filter(reset($stats), 'is_scalar')) as $counter) {
                $rows[] = array_merge([$counter], array_column($stats, $counter));
            }
            $this->table(array_merge(['store'], array_keys($stats)), $rows);
        }
        return $this->done();
    }
}
