<?php

namespace Ephpm\Symfony\Command;

use Ephpm\Kv;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * `ephpm:stats`: each store's counters (Kv::stats()), one column per store. A store that
 * does not exist is said so and left uncreated (StoreCommand::existing()).
 */
final class StatsCommand extends StoreCommand
{
    protected static $defaultName = 'ephpm:stats';
    protected static $defaultDescription = 'Shows the counters of ephpm\'s stores (memory, entries, hits, misses, evictions, repairs)';

    protected function configure(): void
    {
        $this->addStoreOption('A store to show; repeat for several; none: every store', true);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $io = new SymfonyStyle($input, $output);
        $stats = array_map(static fn (?string $dsn) => (new Kv($dsn))->stats(), $this->stores($input, $io));
        if (!$stats) {
            return 0;
        }
        $rows = [];
        // The scalar counters: a table cell cannot hold a list (shard_fill, not_counted
        // are the status page's).
        foreach (array_keys(array_filter(reset($stats), 'is_scalar')) as $counter) {
            $rows[] = array_merge([$counter], array_column($stats, $counter));
        }
        $io->table(array_merge(['store'], array_keys($stats)), $rows);

        return 0;
    }
}
