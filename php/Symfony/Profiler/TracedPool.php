<?php

namespace Ephpm\Symfony\Profiler;

use Psr\Cache\CacheItemInterface;
use Symfony\Component\Cache\Adapter\AdapterInterface;
use Symfony\Component\Cache\CacheItem;
use Symfony\Contracts\Cache\CacheInterface;
use Symfony\Contracts\Cache\ItemInterface;
use Symfony\Contracts\Service\ResetInterface;

/**
 * An ephpm pool as the profiler sees it: every call goes to the pool unchanged; reads
 * are counted. getItem()/getItems() count isHit(). A get() is a miss when its callback
 * ran here or when the stampede protection took it (this process waited for another's
 * computation: TracedMemoLock reported it); otherwise a hit, stale when the pool's
 * metadata says so (StaleCacheAdapter's `stale`). Other calls (setCallbackWrapper…)
 * are passed on.
 */
final class TracedPool implements AdapterInterface, CacheInterface, ResetInterface
{
    public function __construct(
        private AdapterInterface&CacheInterface $pool,
        private string $name,
        private EphpmDataCollector $collector,
    ) {
    }

    public function get(string $key, callable $callback, ?float $beta = null, ?array &$metadata = null): mixed
    {
        $ran = false;
        $protected = $this->collector->stampedeCount();
        $value = $this->pool->get($key, static function (ItemInterface $item, bool &$save) use ($callback, &$ran) {
            $ran = true;
            return $callback($item, $save);
        }, $beta, $metadata);
        $miss = $ran || $this->collector->stampedeCount() > $protected;
        $this->collector->poolRead($this->name, $miss ? 0 : 1, $miss ? 1 : 0, !$miss && !empty($metadata['stale']) ? 1 : 0);
        return $value;
    }

    public function getItem($key): CacheItem
    {
        $item = $this->pool->getItem($key);
        $this->collector->poolRead($this->name, $item->isHit() ? 1 : 0, $item->isHit() ? 0 : 1);
        return $item;
    }

    public function getItems(array $keys = []): iterable
    {
        $items = [];
        $hits = 0;
        foreach ($this->pool->getItems($keys) as $key => $item) {
            $items[$key] = $item;
            $hits += $item->isHit() ? 1 : 0;
        }
        $this->collector->poolRead($this->name, $hits, \count($items) - $hits);
        return $items;
    }

    public function hasItem($key): bool
    {
        return $this->pool->hasItem($key);
    }

    public function clear(string $prefix = ''): bool
    {
        return $this->pool->clear($prefix);
    }

    public function delete(string $key): bool
    {
        return $this->pool->delete($key);
    }

    public function deleteItem($key): bool
    {
        return $this->pool->deleteItem($key);
    }

    public function deleteItems(array $keys): bool
    {
        return $this->pool->deleteItems($keys);
    }

    public function save(CacheItemInterface $item): bool
    {
        return $this->pool->save($item);
    }

    public function saveDeferred(CacheItemInterface $item): bool
    {
        return $this->pool->saveDeferred($item);
    }

    public function commit(): bool
    {
        return $this->pool->commit();
    }

    public function reset(): void
    {
        if ($this->pool instanceof ResetInterface) {
            $this->pool->reset();
        }
    }

    public function __call(string $method, array $arguments): mixed
    {
        return $this->pool->$method(...$arguments);
    }
}
