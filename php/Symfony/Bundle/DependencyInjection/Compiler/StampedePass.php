<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection\Compiler;

use Ephpm\Kv;
use Ephpm\MemoLock;
use Ephpm\Symfony\Bundle\DependencyInjection\EphpmExtension;
use Ephpm\Symfony\Bundle\DependencyInjection\Stores;
use Ephpm\Symfony\EphpmAdapter;
use Symfony\Component\Cache\Adapter\TagAwareAdapter;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\ContainerInterface;
use Symfony\Component\DependencyInjection\Definition;
use Symfony\Component\DependencyInjection\Reference;

/**
 * Sets the callback wrapper of the pools: each ephpm pool (and, with
 * `stampede_all_pools`, every pool that takes one) gets a MemoLock service of its own,
 * `ephpm.memo_lock.<pool id>` (tagged `ephpm.memo_lock`), whose locks live on the pool's
 * store under `memo:<pool namespace>:`, so two pools never wait for each other's
 * computation of an item with the same key. With `stampede: false` ephpm pools get no
 * wrapper at all. A TagAwareAdapter over such a pool (`tags: true`, the `.taggable`
 * services) gets the same wrapper: its get() computes through its own.
 *
 * Runs after Symfony's CachePoolPass, which decides each pool's namespace.
 */
final class StampedePass implements CompilerPassInterface
{
    public function process(ContainerBuilder $container): void
    {
        $protect = $container->getParameter('ephpm.stampede');
        $allPools = $container->getParameter('ephpm.stampede_all_pools');
        $wrappers = [];
        foreach (Pools::all($container) as $id => $pool) {
            // A StaleCacheAdapter pool has its own locks (the refresh election): no wrapper.
            $ephpm = Pools::is($container, $pool, EphpmAdapter::class);
            if ($ephpm && !$protect) {
                $wrappers[$id] = null;
            } elseif ($ephpm || ($allPools && method_exists(Pools::class($container, $pool) ?? '', 'setCallbackWrapper'))) {
                $wrappers[$id] = new Reference($this->registerMemoLock($container, $id, $pool, $ephpm));
            }
        }
        foreach ($wrappers as $id => $wrapper) {
            $container->getDefinition($id)->addMethodCall('setCallbackWrapper', [$wrapper]);
        }
        foreach ($container->getDefinitions() as $definition) {
            $inner = $definition->getArguments()[0] ?? null;
            if (TagAwareAdapter::class === $definition->getClass() && $inner instanceof Reference
                && \array_key_exists($target = $this->resolve($container, (string) $inner), $wrappers)) {
                $definition->addMethodCall('setCallbackWrapper', [$wrappers[$target]]);
            }
        }
    }

    private function registerMemoLock(ContainerBuilder $container, string $id, Definition $pool, bool $ephpm): string
    {
        $tag = Pools::tag($container, $pool);
        $name = $tag['name'] ?? $id;
        // Where CachePoolPass put the namespace: after the provider, when there is one.
        $namespace = Pools::argument($container, $pool, !$ephpm && isset($tag['provider']) ? 1 : 0);
        if (!\is_string($namespace) || '' === $namespace) {
            $namespace = $id; // a pool without a namespace (a chain of pools): its service id is unique
        }
        $dsn = $ephpm ? Pools::argument($container, $pool, '$dsn') : Stores::dsn($container, null, 'ephpm.stampede_all_pools');
        $container->register($memo = 'ephpm.memo_lock.' . $id, MemoLock::class)
            ->setArguments([
                new Definition(Kv::class, [$dsn, 'memo:' . $namespace . ':']),
                $container->getParameter('ephpm.stampede_lock_ttl_ms'),
                $container->getParameter('ephpm.stampede_wait_ms'),
                new Reference('logger', ContainerInterface::IGNORE_ON_INVALID_REFERENCE),
            ])
            ->addTag(EphpmExtension::MEMO_LOCK_TAG, ['pool' => $name]);

        return $memo;
    }

    private function resolve(ContainerBuilder $container, string $id): string
    {
        while ($container->hasAlias($id)) {
            $id = (string) $container->getAlias($id);
        }

        return $id;
    }
}
