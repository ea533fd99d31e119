<?php

namespace Ephpm\Symfony;

use Ephpm\Kv;
use Symfony\Component\Cache\Adapter\AbstractAdapter;
use Symfony\Component\Cache\CacheItem;

/**
 * A Symfony cache pool on ephpm's host-wide store: every PHP process of the host (FPM
 * workers, CLI, cron) shares its items. It extends AbstractAdapter, so
 * `$pool->setCallbackWrapper(new \Ephpm\MemoLock())` gives each cold key one computation
 * across all those processes.
 *
 *     $pool = new EphpmAdapter('app', 3600);
 *     $pool->setCallbackWrapper(new \Ephpm\MemoLock());
 *     $value = $pool->get('report', fn ($item) => build_report());
 */
final class EphpmAdapter extends AbstractAdapter
{
    private Kv $kv;
    private ?string $dsn;

    /**
     * @param string      $namespace       Put before every key (Symfony's rules for namespaces apply).
     * @param int         $defaultLifetime Seconds; 0 = no expiry.
     * @param string|null $dsn             The ephpm store (`shm://NAME`); null: `ephpm.dsn`.
     */
    public function __construct(string $namespace = '', int $defaultLifetime = 0, ?string $dsn = null)
    {
        $this->dsn = $dsn;
        $this->kv = new Kv($dsn);
        parent::__construct($namespace, $defaultLifetime);
    }

    protected function doFetch(array $ids): iterable
    {
        return $this->kv->getMany($ids);
    }

    protected function doHave(string $id): bool
    {
        return $this->kv->has($id);
    }

    protected function doClear(string $namespace): bool
    {
        return ('' === $namespace ? $this->kv : new Kv($this->dsn, $namespace))->clear();
    }

    protected function doDelete(array $ids): bool
    {
        foreach ($ids as $id) {
            $this->kv->delete($id);
        }

        return true;
    }

    protected function doSave(array $values, int $lifetime): array|bool
    {
        $failed = [];
        foreach ($values as $id => $value) {
            try {
                $this->kv->set((string) $id, $value, $lifetime);
            } catch (\Ephpm\StoreFull $e) {
                $failed[] = $id;
                CacheItem::log($this->logger, 'Failed to save key "{key}"', ['key' => $id, 'exception' => $e]);
            }
        }

        return $failed ?: true;
    }
}
