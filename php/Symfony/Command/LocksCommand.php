<?php

namespace Ephpm\Symfony\Command;

use Ephpm\Kv;
use Ephpm\KvIterator;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * `ephpm:locks [NAME...]`: the locks held in a store, with their remaining TTL and
 * fencing number (Ephpm\KvIterator: a held lock is an entry with a fence). With names,
 * those locks, held or free. A symfony/lock resource's lock is its own name; a pool's
 * computation is `memo:<pool namespace>:memo:<item key>`, shown with the pool's name.
 */
final class LocksCommand extends StoreCommand
{
    protected static $defaultName = 'ephpm:locks';
    protected static $defaultDescription = 'Lists the locks held in an ephpm store, with their remaining TTL and fencing number';

    protected function configure(): void
    {
        $this->addStoreOption('The store the locks are on', false);
        $this->addOption('prefix', 'p', InputOption::VALUE_REQUIRED, 'Only the locks whose name starts with this', '');
        $this->addArgument('names', InputArgument::IS_ARRAY, 'Lock names to show, held or not; none: every held lock');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $io = new SymfonyStyle($input, $output);
        $prefix = (string) $input->getOption('prefix');
        $names = $input->getArgument('names');
        foreach ($this->stores($input, $io) as $name => $dsn) {
            $kv = new Kv($dsn);
            $rows = [];
            foreach ($names ?: [null] as $lock) {
                // A name is looked up as the prefix of a walk: only keys that start with it.
                $found = false;
                foreach (new KvIterator($kv, $prefix . $lock) as $key => $info) {
                    if (null !== $info['fence'] && (null === $lock || $key === $prefix . $lock)) {
                        $rows[] = [$key, 'held', null === $info['ttl'] ? 'none' : sprintf('%.3f s', $info['ttl']), $info['fence'], $this->poolOf($key, $dsn) ?? ''];
                        $found = true;
                    }
                }
                if (null !== $lock && !$found) {
                    $rows[] = [$prefix . $lock, 'free', '', '', $this->poolOf($prefix . $lock, $dsn) ?? ''];
                }
            }
            $io->section(sprintf('Store "%s" (%s)', $name, $kv->stats()['backend']));
            $rows ? $io->table(['lock', 'state', 'TTL left', 'fence', 'cache pool'], $rows) : $io->text('No lock is held.');
        }

        return 0;
    }
}
