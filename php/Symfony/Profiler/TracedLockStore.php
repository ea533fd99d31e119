<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Key;

/**
 * A symfony/lock store as the profiler sees it: each acquisition (save, waitAndSave) is
 * passed on and timed, with whether it got the lock (a LockConflictedException goes on
 * to the caller); everything else is passed on.
 */
class TracedLockStore implements BlockingStoreInterface
{
    public function __construct(
        protected BlockingStoreInterface $store,
        protected EphpmDataCollector $collector,
    ) {
    }

    public function save(Key $key): void
    {
        $this->timed($key, 'write', false, fn () => $this->store->save($key));
    }

    public function waitAndSave(Key $key): void
    {
        $this->timed($key, 'write', true, fn () => $this->store->waitAndSave($key));
    }

    public function putOffExpiration(Key $key, float $ttl): void
    {
        $this->store->putOffExpiration($key, $ttl);
    }

    public function delete(Key $key): void
    {
        $this->store->delete($key);
    }

    public function exists(Key $key): bool
    {
        return $this->store->exists($key);
    }

    protected function timed(Key $key, string $mode, bool $blocking, \Closure $acquire): void
    {
        $acquired = false;
        $start = hrtime(true);
        try {
            $acquire();
            $acquired = true;
        } finally {
            $this->collector->lockAcquisition((string) $key, $mode, $blocking, $acquired, (hrtime(true) - $start) / 1e6);
        }
    }
}
