<?php

namespace Ephpm\Symfony\Lock;

use Ephpm\Kv;
use Ephpm\LockUnavailable;
use Ephpm\MemoLock;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Store\ExpiringStoreTrait;

/**
 * A symfony/lock store on ephpm's store: token locks shared by every PHP process of the
 * host (or the fleet, on a Redis or cluster store). A blocking acquire is woken by the
 * holder's release (a futex, Pub/Sub), not by the Lock component's 100 ms poll.
 *
 * Locks are read/write locks (SharedLockStoreInterface): acquireRead() takes a share
 * that other readers may hold too, acquire() the lock alone. As symfony/lock defines
 * them, acquire() after acquireRead() promotes the share (it waits for the other
 * readers, or fails without blocking), and acquireRead() after acquire() demotes it.
 *
 *     $factory = new LockFactory(new EphpmStore());
 *     $lock = $factory->createLock('invoice-42', ttl: 30);
 *     $lock->acquire(true);
 */
final class EphpmStore implements BlockingStoreInterface, BlockingSharedLockStoreInterface
{
    use ExpiringStoreTrait;

    private MemoLock $locks;
    private float $initialTtl;

    /**
     * @param Kv|null $store      The store whose locks these are; null: the default store.
     * @param float   $initialTtl Seconds a lock lives until putOffExpiration() (Lock::refresh()).
     */
    public function __construct(?Kv $store = null, float $initialTtl = 300.0)
    {
        if ($initialTtl <= 0) {
            throw new \Symfony\Component\Lock\Exception\InvalidTtlException(sprintf('"%s()" expects a strictly positive TTL. Got %f.', __METHOD__, $initialTtl));
        }
        $this->initialTtl = $initialTtl;
        $this->locks = new MemoLock($store, self::ms($initialTtl));
    }

    public function save(Key $key): void
    {
        $this->take($key, true, false);
    }

    public function waitAndSave(Key $key): void
    {
        $this->take($key, true, true);
    }

    public function saveRead(Key $key): void
    {
        $this->take($key, false, false);
    }

    public function waitAndSaveRead(Key $key): void
    {
        $this->take($key, false, true);
    }

    public function putOffExpiration(Key $key, float $ttl): void
    {
        if (!$this->exists($key)) {
            throw new LockConflictedException();
        }
        $key->reduceLifetime($ttl);
        try {
            $key->getState(__CLASS__)->extend(self::ms($ttl));
        } catch (LockUnavailable $e) {
            throw new LockConflictedException($e->getMessage(), 0, $e);
        }
        $this->checkNotExpired($key);
    }

    public function delete(Key $key): void
    {
        if ($key->hasState(__CLASS__)) {
            $key->getState(__CLASS__)->release();
            $key->removeState(__CLASS__);
        }
    }

    public function exists(Key $key): bool
    {
        return $key->hasState(__CLASS__) && $key->getState(__CLASS__)->isHeld();
    }

    /** Takes the lock for writing or reading, or promotes or demotes the share held. */
    private function take(Key $key, bool $write, bool $blocking): void
    {
        $wait = $blocking ? 60000 : 0;
        if ($this->exists($key)) {
            $lock = $key->getState(__CLASS__);
            if ($write === $lock->isWriteLocked()) {
                return;
            }
            $key->reduceLifetime($this->initialTtl);
            try {
                if (!$write) {
                    $lock->demote();
                } else {
                    // Each wait is woken by a release; the loop only matters for readers
                    // that keep their shares past a minute.
                    while (!$lock->promote($wait) && $blocking) {
                    }
                    if (!$lock->isWriteLocked()) {
                        throw new LockConflictedException();
                    }
                }
            } catch (LockUnavailable $e) {
                throw new LockConflictedException($e->getMessage(), 0, $e);
            }
            $this->checkNotExpired($key);

            return;
        }
        $key->reduceLifetime($this->initialTtl);
        do {
            // Each wait is woken by the holder's release; the loop only matters for a
            // holder that keeps its lock past a minute.
            $lock = $write
                ? $this->locks->acquireWrite((string) $key, self::ms($this->initialTtl), $wait)
                : $this->locks->acquireRead((string) $key, self::ms($this->initialTtl), $wait);
        } while ($blocking && null === $lock);
        if (null === $lock) {
            throw new LockConflictedException();
        }
        $key->setState(__CLASS__, $lock);
        $key->markUnserializable();
        $this->checkNotExpired($key);
    }

    private static function ms(float $seconds): int
    {
        return max(1, (int) ceil($seconds * 1000));
    }
}
