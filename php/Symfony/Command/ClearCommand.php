<?php

namespace Ephpm\Symfony\Command;

use Ephpm\Kv;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Style\SymfonyStyle;

/** `ephpm:clear [--prefix=] [--store=]`: removes a store's keys, or those under a prefix (Kv::clear()). */
final class ClearCommand extends StoreCommand
{
    protected static $defaultName = 'ephpm:clear';
    protected static $defaultDescription = 'Removes the keys of an ephpm store, or only those starting with --prefix';

    protected function configure(): void
    {
        $this->addStoreOption('The store to clear', false);
        $this->addOption('prefix', 'p', InputOption::VALUE_REQUIRED, 'Only the keys starting with this (a cache pool\'s are "<namespace>:")', '');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $io = new SymfonyStyle($input, $output);
        $prefix = (string) $input->getOption('prefix');
        foreach ($this->stores($input, $io) as $name => $dsn) {
            $kv = new Kv($dsn, $prefix);
            $kv->clear();
            $io->success(sprintf('Removed %s from store "%s" (%s).', '' === $prefix ? 'every key' : sprintf('the keys starting with "%s"', $prefix), $name, $kv->stats()['backend']));
        }

        return 0;
    }
}
