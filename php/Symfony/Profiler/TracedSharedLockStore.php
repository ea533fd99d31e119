<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\SharedLockStoreInterface;

/**
 * TracedLockStore for a store with read locks (SharedLockStoreInterface and
 * BlockingSharedLockStoreInterface), so that Lock::acquireRead() still takes read locks
 * through it; read acquisitions are timed as "read".
 */
final class TracedSharedLockStore extends TracedLockStore implements SharedLockStoreInterface, BlockingSharedLockStoreInterface
{
    public function saveRead(Key $key)
    {
        $this->timed($key, 'read', false, fn () => $this->store->saveRead($key));
    }

    public function waitAndSaveRead(Key $key)
    {
        $this->timed($key, 'read', true, fn () => $this->store->waitAndSaveRead($key));
    }
}
