<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\SharedLockStoreInterface;

/**
 * TracedLockStore for a store with read locks (SharedLockStoreInterface), so that
 * Lock::acquireRead() still takes read locks through it; read acquisitions are timed as
 * "read". A store that also blocks for read locks gets TracedBlockingSharedLockStore.
 */
class TracedSharedLockStore extends TracedLockStore implements SharedLockStoreInterface
{
    public function saveRead(Key $key): void
    {
        $this->timed($key, 'read', false, fn () => $this->store->saveRead($key));
    }
}
