<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\Key;

/** TracedSharedLockStore for a store whose read locks can be waited for (waitAndSaveRead). */
final class TracedBlockingSharedLockStore extends TracedSharedLockStore implements BlockingSharedLockStoreInterface
{
    public function waitAndSaveRead(Key $key): void
    {
        $this->timed($key, 'read', true, fn () => $this->store->waitAndSaveRead($key));
    }
}
