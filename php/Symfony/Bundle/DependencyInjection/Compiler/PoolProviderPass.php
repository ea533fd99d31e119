<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection\Compiler;

use Ephpm\Symfony\Bundle\DependencyInjection\EphpmExtension;
use Ephpm\Symfony\Bundle\DependencyInjection\Stores;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;

/**
 * Gives every ephpm pool (adapter cache.adapter.ephpm or ephpm.stale_cache_adapter) its store. Runs before Symfony's
 * CachePoolPass, which would turn a `provider` into a connection of its own
 * (AbstractAdapter::createConnection(), which knows no shm:// or cluster://): here the
 * provider — a store name of `ephpm.stores` or an ephpm DSN — becomes the pool's `$dsn`
 * argument and leaves the tag, so CachePoolPass only fills the namespace and the default
 * lifetime. Each ephpm pool is also tagged `ephpm.pool` (attribute `pool`: its name).
 */
final class PoolProviderPass implements CompilerPassInterface
{
    public function process(ContainerBuilder $container): void
    {
        // Every pool's DSN first: a pool inherits its parent pool's provider (a pool
        // whose adapter is cache.app), which must still be in the parent's tag.
        $dsns = [];
        foreach (Pools::all($container) as $id => $pool) {
            if (Pools::isEphpm($container, $pool)) {
                $tag = Pools::tag($container, $pool);
                $dsns[$id] = Stores::dsn($container, $tag['provider'] ?? null, sprintf('the provider of cache pool "%s"', $tag['name'] ?? $id));
            }
        }
        foreach ($dsns as $id => $dsn) {
            $pool = $container->getDefinition($id);
            foreach (Pools::chain($container, $pool) as $definition) {
                $tags = $definition->getTags();
                if (isset($tags['cache.pool'][0]['provider'])) {
                    unset($tags['cache.pool'][0]['provider']);
                    $definition->setTags($tags);
                }
            }
            $pool->setArgument('$dsn', $dsn);
            $pool->addTag(EphpmExtension::POOL_TAG, ['pool' => $pool->getTag('cache.pool')[0]['name'] ?? $id]);
        }
    }
}
