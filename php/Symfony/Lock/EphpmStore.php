<?php

namespace Ephpm\Symfony\Lock;

use Ephpm\Kv;
use Ephpm\LockUnavailable;
use Ephpm\MemoLock;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Store\ExpiringStoreTrait;

/**
 * A symfony/lock store on ephpm's host-wide store: token locks shared by every PHP
 * process of the host. A blocking acquire is woken by the holder's release (a futex),
 * not by the Lock component's 100 ms poll.
 *
 *     $factory = new LockFactory(new EphpmStore());
 *     $lock = $factory->createLock('invoice-42', ttl: 30);
 *     $lock->acquire(true);
 */
final class EphpmStore implements BlockingStoreInterface
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

    public function save(Key $key)
    {
        $this->take($key, false);
    }

    public function waitAndSave(Key $key)
    {
        $this->take($key, true);
    }

    public function putOffExpiration(Key $key, float $ttl)
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

    public function delete(Key $key)
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

    private function take(Key $key, bool $blocking): void
    {
        if ($this->exists($key)) {
            return;
        }
        $key->reduceLifetime($this->initialTtl);
        do {
            // Each wait is woken by the holder's release; the loop only matters for a
            // holder that keeps its lock past a minute.
            $lock = $this->locks->acquire((string) $key, self::ms($this->initialTtl), $blocking ? 60000 : 0);
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
