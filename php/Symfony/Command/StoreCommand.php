<?php

namespace Ephpm\Symfony\Command;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Exception\InvalidOptionException;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * What the ephpm:* commands share: the stores of `ephpm.stores` (plus "default", the
 * ephpm.dsn ini setting), a --store option to pick them, and the line saying whose
 * stores they are (StoreOwner).
 */
abstract class StoreCommand extends Command
{
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

        return $stores;
    }
}
