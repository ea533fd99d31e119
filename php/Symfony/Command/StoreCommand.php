<?php

namespace Ephpm\Symfony\Command;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Exception\InvalidOptionException;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * What the ephpm:* commands share: the stores of `ephpm.stores` (plus "default", the
 * ephpm.dsn ini setting), a --store option to pick them, the line saying whose stores
 * they are (StoreOwner), leaving out the shm:// stores that do not exist (looking never
 * creates one: ShmSegment), and the app's ephpm cache pools, to show a key by its pool's
 * name rather than its namespace.
 */
abstract class StoreCommand extends Command
{
    /** @var array<string, array{dsn: ?string, prefix: string}> pool name => its store and key prefix ("<namespace>:"). */
    protected array $pools = [];

    /**
     * @param array<string, ?string> $stores name => DSN, as in `ephpm.stores`.
     * @param string $webUser The web server's Unix user (`ephpm.web_user`).
     */
    public function __construct(private array $stores, private string $webUser)
    {
        parent::__construct();
    }

    protected function addStoreOption(string $help, bool $many): void
    {
        $this->addOption('store', 's', $many ? InputOption::VALUE_REQUIRED | InputOption::VALUE_IS_ARRAY : InputOption::VALUE_REQUIRED, $help . ' (' . implode(', ', array_keys($this->stores)) . ')', $many ? [] : 'default');
    }

    /**
     * The stores named by --store (every store when it is a list option left empty),
     * after saying whose stores they are.
     *
     * @return array<string, ?string> name => DSN
     */
    protected function stores(InputInterface $input, SymfonyStyle $io): array
    {
        $names = (array) $input->getOption('store') ?: array_keys($this->stores);
        if ($unknown = array_diff($names, array_keys($this->stores))) {
            throw new InvalidOptionException(sprintf('No ephpm store named "%s": the stores are %s.', implode('", "', $unknown), implode(', ', array_keys($this->stores))));
        }
        $stores = array_intersect_key($this->stores, array_flip($names));
        StoreOwner::introduce($io, $stores, $this->webUser, (string) $this->getName());

        return $this->existing($stores, $io);
    }

    /**
     * The stores of `$stores` that exist, saying which do not.
     *
     * @param array<string, ?string> $stores name => DSN
     *
     * @return array<string, ?string>
     */
    protected function existing(array $stores, SymfonyStyle $io): array
    {
        foreach ($stores as $name => $dsn) {
            if (ShmSegment::missing($dsn)) {
                $io->note(sprintf('The store "%s" does not exist for this user (no %s): nothing to show or remove, and none was created.', $name, ShmSegment::path($dsn)));
                unset($stores[$name]);
            }
        }

        return $stores;
    }

    /** The web server's Unix user (`ephpm.web_user`). */
    protected function webUser(): string
    {
        return $this->webUser;
    }

    /** Set by CommandPoolsPass once every pool's namespace is known. */
    public function setPools(array $pools): void
    {
        $this->pools = $pools;
    }

    /**
     * The pool a key belongs to: its items (`<namespace>:<key>`) and its MemoLock's locks
     * (`memo:<namespace>:…`); null for any other key.
     */
    protected function poolOf(string $key, ?string $dsn): ?string
    {
        foreach ($this->pools as $name => $pool) {
            if ($pool['dsn'] === $dsn && (str_starts_with($key, $pool['prefix']) || str_starts_with($key, 'memo:' . $pool['prefix']))) {
                return $name;
            }
        }

        return null;
    }
}
