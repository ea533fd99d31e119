<?php

namespace Ephpm\Symfony\Command;

use Ephpm\Kv;
use Ephpm\KvIterator;
use Symfony\Component\Console\Exception\InvalidOptionException;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * `ephpm:clear [--store=] [--prefix=] [--pool=]… [--sessions] [--locks]`: removes the
 * keys of an ephpm store (or those starting with --prefix) but, unless asked, not the
 * sessions (keys under `<ephpm.session.prefix>session:`) nor a lock that is held (an
 * entry with a fence: a running computation's MemoLock, a session's lock, a
 * symfony/lock lock): clearing a cache must not log users out, nor let a second process
 * into a section another one is in. `--pool` clears those cache pools only (each one's
 * `<namespace>:` keys). What it removed is counted by pool name.
 */
final class ClearCommand extends StoreCommand
{
    protected static $defaultName = 'ephpm:clear';
    protected static $defaultDescription = 'Removes the keys of an ephpm store, or of its cache pools, but not its sessions and held locks unless asked';

    /** Where sessions live in a store: `<ephpm.session.prefix>session:`. */
    private string $sessions = 'session:';

    public function setSessionPrefix(string $prefix): void
    {
        $this->sessions = $prefix . 'session:';
    }

    protected function configure(): void
    {
        $this->addStoreOption('The store to clear', false);
        $this->addOption('prefix', 'p', InputOption::VALUE_REQUIRED, 'Only the keys starting with this', '');
        $this->addOption('pool', null, InputOption::VALUE_REQUIRED | InputOption::VALUE_IS_ARRAY, 'Only the items of this ephpm cache pool (repeat for several)');
        $this->addOption('sessions', null, InputOption::VALUE_NONE, 'Remove the sessions too (everybody is logged out)');
        $this->addOption('locks', null, InputOption::VALUE_NONE, 'Remove held locks too (their holders lose them while they run)');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $io = new SymfonyStyle($input, $output);
        if ($pools = $input->getOption('pool')) {
            return $this->clearPools($pools, $io);
        }
        $prefix = (string) $input->getOption('prefix');
        foreach ($this->stores($input, $io) as $name => $dsn) {
            $kv = new Kv($dsn);
            $removed = [];
            $keptSessions = $keptLocks = 0;
            // Walked, not Kv::clear(): what to keep is decided key by key. A key that
            // becomes a lock between the walk and its delete is the one race left.
            foreach (new KvIterator($kv, $prefix) as $key => $info) {
                if (null !== $info['fence'] && !$input->getOption('locks')) {
                    ++$keptLocks;
                } elseif (str_starts_with($key, $this->sessions) && !$input->getOption('sessions')) {
                    ++$keptSessions;
                } elseif ($kv->delete($key)) {
                    $pool = $this->poolOf($key, $dsn) ?? '(not a pool)';
                    $removed[$pool] = ($removed[$pool] ?? 0) + 1;
                }
            }
            $io->success(sprintf('Removed %d key%s%s from store "%s" (%s).', $count = array_sum($removed), 1 === $count ? '' : 's',
                '' === $prefix ? '' : sprintf(' starting with "%s"', $prefix), $name, $kv->stats()['backend']));
            if ($removed) {
                ksort($removed);
                $io->table(['pool', 'keys removed'], array_map(null, array_keys($removed), array_values($removed)));
            }
            if ($keptSessions + $keptLocks > 0) {
                $io->text(sprintf('Kept %d session key%s (--sessions removes them) and %d held lock%s (--locks removes them).',
                    $keptSessions, 1 === $keptSessions ? '' : 's', $keptLocks, 1 === $keptLocks ? '' : 's'));
            }
        }

        return 0;
    }

    /** @param list<string> $names Pools of this app, each cleared on its own store with Kv::clear() on its prefix. */
    private function clearPools(array $names, SymfonyStyle $io): int
    {
        if ($unknown = array_diff($names, array_keys($this->pools))) {
            throw new InvalidOptionException(sprintf('No ephpm cache pool named "%s": the pools are %s.', implode('", "', $unknown), implode(', ', array_keys($this->pools)) ?: 'none'));
        }
        $pools = array_intersect_key($this->pools, array_flip($names));
        $dsns = [];
        foreach ($pools as $name => $pool) {
            $dsns['pool ' . $name] = $pool['dsn'];
        }
        StoreOwner::introduce($io, $dsns, $this->webUser(), (string) $this->getName());
        $existing = $this->existing($dsns, $io);
        foreach ($pools as $name => $pool) {
            if (\array_key_exists('pool ' . $name, $existing)) {
                (new Kv($pool['dsn'], $pool['prefix']))->clear();
                $io->success(sprintf('Cleared the cache pool "%s" (its keys "%s…").', $name, $pool['prefix']));
            }
        }

        return 0;
    }
}
