<?php

namespace Ephpm\Symfony\Command;

use Ephpm\Kv;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * `ephpm:locks NAME...`: whether each lock is held, its remaining TTL and its fencing
 * number. The store cannot list its keys, so the locks are named: a symfony/lock
 * resource is its own name (`--prefix` for a lock store with a prefix), a pool's
 * computation is `memo:<pool namespace>:memo:<item key>`.
 */
final class LocksCommand extends StoreCommand
{
    protected static $defaultName = 'ephpm:locks';
    protected static $defaultDescription = 'Shows whether named locks are held, with their remaining TTL and fencing number';

    protected function configure(): void
    {
        $this->addStoreOption('The store the locks are on', false);
        $this->addOption('prefix', 'p', InputOption::VALUE_REQUIRED, 'Put before every name (the prefix of the locks\' Kv)', '');
        $this->addArgument('names', InputArgument::IS_ARRAY | InputArgument::REQUIRED, 'Lock names');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $io = new SymfonyStyle($input, $output);
        foreach ($this->stores($input, $io) as $name => $dsn) {
            $kv = new Kv($dsn, (string) $input->getOption('prefix'));
            // On shm:// a lock's fencing number is its entry's version (ARCHITECTURE.md
            // §5.3); other backends keep it elsewhere and version entries by fingerprint.
            $fenced = StoreOwner::isShm($dsn);
            $rows = [];
            foreach ($input->getArgument('names') as $lock) {
                $ttl = $kv->ttl($lock);
                $rows[] = null === $ttl
                    ? [$lock, 'free', '', '']
                    : [$lock, 'held', $ttl < 0 ? 'none' : sprintf('%.3f s', $ttl), $fenced ? (string) $kv->wait($lock) : 'n/a'];
            }
            $io->section(sprintf('Store "%s" (%s)', $name, $kv->stats()['backend']));
            $io->table(['lock', 'state', 'TTL left', 'fence'], $rows);
        }

        return 0;
    }
}
